// The client and server sessions of the pipelined benchmark in memory, for `valgrind --tool=callgrind`: batches of
// 100 calls through both ends (containers, acks, encryption), as `SessionBenchmarks` times them.
//   swift build -c release --product SessionProfile
//   cp .build/release/SessionProfile /tmp/sp && strip --strip-debug /tmp/sp    # valgrind gives up on its DWARF
//   valgrind --tool=callgrind --toggle-collect='$s14SessionProfile5batchyyF' /tmp/sp 50
// Arguments: batches (default 1,000).
import Foundation
import MTProto
import MTProtoCrypto

let batches = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000
let authKey = try AuthKey([UInt8](repeating: 0x5a, count: 256))
var client = Session(role: .client, authKey: authKey, salt: 1, timeOffset: 0, random: SeededRandom(seed: 1))
var server = Session(role: .server, authKey: authKey, sessionID: client.sessionID, salt: 1, now: 1_700_000_000,
                     random: SeededRandom(seed: 2))
let request: [UInt8] = [0x01, 0xee, 0xff, 0xc0] + [UInt8](repeating: 7, count: 60)
let answer: [UInt8] = [0x02, 0xee, 0xff, 0xc0] + [UInt8](repeating: 9, count: 60)
var now = 1_700_000_000.0
var results = 0

/// One batch: 100 requests out of the client, answered by the server, read back by the client. The three parts are
/// functions of their own so callgrind can collect one side (`--toggle-collect` on `clientSends`, `serverAnswers` or
/// `clientReceives`).
@MainActor @inline(never) func batch() {
    do {
        let frames = try clientSends()
        let answers = try serverAnswers(frames)
        try clientReceives(answers)
    } catch {
        print("session pair failed: \(error)")
        exit(1)
    }
    now += 0.01
}

@MainActor @inline(never) func clientSends() throws -> [OutgoingFrame] {
    for _ in 0..<100 { _ = try client.send(request) }
    return client.outgoing(now: now)
}

@MainActor @inline(never) func serverAnswers(_ frames: [OutgoingFrame]) throws -> [OutgoingFrame] {
    for frame in frames {
        for case .request(let id, _) in try server.receive(frame: frame.bytes, now: now) {
            server.answer(id, result: answer)
        }
    }
    return server.outgoing(now: now)
}

@MainActor @inline(never) func clientReceives(_ frames: [OutgoingFrame]) throws {
    for frame in frames {
        for case .result in try client.receive(frame: frame.bytes, now: now) { results += 1 }
    }
}

for _ in 0..<batches { batch() }
print("\(batches) batches, \(results) results, server requests in progress \(server.requestsInProgress)")
