// Runs one codec operation over one corpus part in a loop, for profilers:
//   swift build -c release --product TLCodecProfile
//   valgrind --tool=callgrind .build/release/TLCodecProfile objects decode 20
// Arguments: objects|requests, copy|decode|encode|serialize, passes (default 100); or `calls build N` (Calls.swift).
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
let partName = arguments.first ?? "objects"
let operation = arguments.dropFirst().first ?? "decode"
let passes = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 100
let part = partName == "requests" ? CorpusPart.requests : CorpusPart.objects
let buffer = Buffer(capacity: part.bytes)
var total = 0
for _ in 0..<passes {
    switch operation {
        case "copy": total &+= part.copy(into: buffer)
        case "encode": total &+= part.encode(into: buffer)
        case "serialize": total &+= part.serialize(into: buffer)
        default: total &+= part.decode()
    }
}
print("\(partName) \(operation): \(passes) passes over \(part.records.count) records (\(part.bytes) bytes, "
      + "\(part.replayed.count) generated writers), total \(total)")
