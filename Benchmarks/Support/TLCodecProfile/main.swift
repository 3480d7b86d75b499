// Runs one codec operation over one corpus part in a loop, for profilers:
//   swift build -c release --product TLCodecProfile
//   valgrind --tool=callgrind .build/release/TLCodecProfile objects decode 20
// Arguments: objects|requests, copy|decode|reject|encode|serialize|describe, passes (default 100); or `calls build N`
// (Calls.swift); or `targets [ROUNDS] [SECONDS] [requests-first]`, the codec against issue 14's targets in one process (Targets.swift).
// For requests, `encode` runs the generated writers and `serialize` re-encodes the parsed requests through `TLRequest`.
import CodecCorpus
import Foundation
import TLRuntime

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "calls" {
    let passes = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 1000
    let upload = arguments.dropFirst().first == "upload"
    print("calls \(upload ? "upload" : "build"): \(passes) passes, total \(upload ? buildUploads(passes) : buildCalls(passes))")
    exit(0)
}
if arguments.first == "targets" {
    let rounds = arguments.dropFirst().first.flatMap { Int($0) } ?? 5
    let seconds = arguments.dropFirst(2).first.flatMap { Double($0) } ?? 0.5
    let requestsFirst = arguments.dropFirst(3).first == "requests-first"
    for line in measureTargets(rounds: rounds, seconds: seconds, requestsFirst: requestsFirst) { print(line) }
    exit(0)
}
let partName = arguments.first ?? "objects"
let operation = arguments.dropFirst().first ?? "decode"
let passes = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 100
let part = partName == "requests" ? CorpusPart.requests : CorpusPart.objects
let buffer = Buffer(capacity: part.bytes)
var total = 0
// Each pass timed: the least is what a pass costs when nothing else runs (these machines are shared).
var times: [Duration] = []
times.reserveCapacity(passes)
let clock = ContinuousClock()
for _ in 0..<passes {
    let time = clock.measure {
        switch operation {
            case "copy": total &+= part.copy(into: buffer)
            case "encode": total &+= part.encode(into: buffer)
            case "serialize": total &+= part.serialize(into: buffer)
            case "describe": total &+= part.describe()
            case "reject": total &+= part.reject()
            default: total &+= part.decode()
        }
    }
    times.append(time)
}
times.sort()
func microseconds(_ time: Duration) -> String { String(format: "%.1f", time / .microseconds(1)) }
let timing = times.isEmpty
    ? "" : ", per pass µs: least \(microseconds(times[0])), median \(microseconds(times[times.count / 2]))"
print("\(partName) \(operation): \(passes) passes over \(part.records.count) records (\(part.bytes) bytes, "
      + "\(part.replayed.count) generated writers), total \(total)\(timing)")
