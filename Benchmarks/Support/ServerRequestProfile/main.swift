// A server reading the corpus's requests of the API schema: through the registry's dynamic reader (`TLRequest`, what
// every call was read with before the typed handlers) and through the generated typed requests (`Api.requests`),
// in one process, alternating which goes first, each pass timed. Depends on the two API modules only, so a release
// build of it is short beside the benchmark package's.
//   swift build -c release --product ServerRequestProfile
//   .build/release/ServerRequestProfile 15 200            # rounds, passes per round and reader
//   valgrind --tool=callgrind .build/release/ServerRequestProfile typed 20     # or dynamic: one reader alone
import Foundation
import TLRuntime
import TelegramApi
import TelegramApiServer

/// The request records of the corpus (sections function-random, -all-flags, -no-flags) that are API functions.
let records: [[UInt8]] = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let url = root.appendingPathComponent("Fixtures/corpus/tl_corpus.jsonl")
    let text = FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) } ?? ""
    let sections = ["\"function-random\"", "\"function-all-flags\"", "\"function-no-flags\""]
    return text.split(separator: "\n").compactMap { line -> [UInt8]? in
        guard sections.contains(where: { line.contains("\"section\": \($0)") || line.contains("\"section\":\($0)") }),
              let hexKey = line.range(of: "\"hex\"", options: .backwards) else { return nil }
        let rest = line[hexKey.upperBound...].drop { $0 == ":" || $0 == " " || $0 == "\"" }
        let hex = rest.prefix { $0 != "\"" }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex),
              let byte = UInt8(hex[index..<next], radix: 16) {
            bytes.append(byte)
            index = next
        }
        guard bytes.count >= 4 else { return nil }
        let id = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
        return Api.registry.functionDefinition(for: id) != nil ? bytes : nil
    }
}()
let totalBytes = records.reduce(0) { $0 + $1.count }

func dynamicPass() -> Int {
    var parsed = 0
    for record in records where ((try? Api.registry.parseRequest(bytes: record)) ?? nil) != nil { parsed &+= 1 }
    return parsed
}

func typedPass() -> Int {
    var parsed = 0
    for record in records where (try? Api.requests.parse(bytes: record)) != nil { parsed &+= 1 }
    return parsed
}

let arguments = Array(CommandLine.arguments.dropFirst())
if let reader = arguments.first, reader == "typed" || reader == "dynamic" {
    let passes = arguments.dropFirst().first.flatMap { Int($0) } ?? 20
    var total = 0
    for _ in 0..<passes { total &+= reader == "typed" ? typedPass() : dynamicPass() }
    print("\(reader): \(passes) passes over \(records.count) requests (\(totalBytes) bytes), \(total) parsed")
    exit(0)
}
let rounds = arguments.first.flatMap { Int($0) } ?? 15
let passes = arguments.dropFirst().first.flatMap { Int($0) } ?? 200
print("\(records.count) API requests, \(totalBytes) bytes; typed \(typedPass()) and dynamic \(dynamicPass()) parse")
let clock = ContinuousClock()
var ratios: [Double] = []
var sink = 0
for round in 0..<rounds {
    // Each reader's least pass of the round: what a pass costs when nothing else ran during it.
    var typed = Duration.seconds(1_000), dynamic = Duration.seconds(1_000)
    for pass in 0..<passes {
        if (round + pass) % 2 == 0 {
            typed = min(typed, clock.measure { sink &+= typedPass() })
            dynamic = min(dynamic, clock.measure { sink &+= dynamicPass() })
        } else {
            dynamic = min(dynamic, clock.measure { sink &+= dynamicPass() })
            typed = min(typed, clock.measure { sink &+= typedPass() })
        }
    }
    ratios.append(typed / dynamic)
    let mbs = { (time: Duration) in Double(totalBytes) / (time / .seconds(1)) / 1e6 }
    print(String(format: "round %2d: typed %.1f µs (%.0f MB/s), dynamic %.1f µs (%.0f MB/s), typed / dynamic %.3f",
                 round + 1, typed / .microseconds(1), mbs(typed), dynamic / .microseconds(1), mbs(dynamic),
                 typed / dynamic))
}
ratios.sort()
print(String(format: "typed / dynamic over %d rounds: min %.3f, median %.3f, max %.3f (%d)", rounds, ratios[0],
             ratios[ratios.count / 2], ratios[ratios.count - 1], sink % 2))
