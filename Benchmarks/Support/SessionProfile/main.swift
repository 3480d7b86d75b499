// The client and server sessions of the pipelined benchmark in memory (`SessionPair`), for callgrind: one side of
// each batch at a time.
//   swift build -c release --product SessionProfile
//   cp .build/release/SessionProfile /tmp/sp && strip --strip-debug /tmp/sp    # valgrind gives up on its DWARF
//   valgrind --tool=callgrind \
//     --toggle-collect='$s16BenchmarkSupport11SessionPairV11clientSendsSay7MTProto13OutgoingFrameVGyKF' /tmp/sp 50
// (`serverAnswers` and `clientReceives` likewise; `nm /tmp/sp | grep SessionPair` lists the names.)
// Arguments: batches (default 1,000).
import BenchmarkSupport
import Foundation
import MTProtoCrypto

let batches = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000
var pair = SessionPair(authKey: try AuthKey([UInt8](repeating: 0x5a, count: 256)))
do {
    for _ in 0..<batches { try pair.batch() }
} catch {
    print("session pair failed: \(error)")
    exit(1)
}
print("\(batches) batches, \(pair.results) results, server requests in progress \(pair.server.requestsInProgress)")
