// Issue 14's codec targets in one process (`TLCodecProfile targets [ROUNDS] [SECONDS] [requests-first]`): the byte
// copy, objects decode and encode, and requests encode, run in turn for ROUNDS rounds of about SECONDS each, so the
// machine's load shifts them alike; each reports its least pass, which repeats better on a shared machine than any
// percentile. The part loaded second has its values allocated among the first part's freed temporaries; that moved
// requests encode by ~2 % in alternating runs of one build (2026-11-28), so the order is a choice and is printed.
import CodecCorpus
import Foundation
import TLRuntime

/// The least pass of each operation over alternating rounds, as lines for a terminal.
func measureTargets(rounds: Int, seconds: Double, requestsFirst: Bool) -> [String] {
    // The parts are lazy statics: the first one touched is loaded first.
    if requestsFirst { _ = CorpusPart.requests }
    let objects = CorpusPart.objects, requests = CorpusPart.requests
    let buffer = Buffer(capacity: max(objects.bytes, requests.bytes))
    let operations: [(name: String, bytes: Int, run: () -> Int)] = [
        ("objects byte copy (baseline)", objects.bytes, { objects.copy(into: buffer) }),
        ("objects decode", objects.bytes, { objects.decode() }),
        ("objects encode", objects.bytes, { objects.encode(into: buffer) }),
        ("requests encode", requests.bytes, { requests.encode(into: buffer) }),
    ]
    let clock = ContinuousClock()
    var least = [Duration](repeating: .seconds(1_000), count: operations.count)
    var sink = 0
    for _ in 0..<max(1, rounds) {
        for (index, operation) in operations.enumerated() {
            let end = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
            var passes = 0
            // At least 10 passes a round, however slow the machine, and at most 100,000.
            while passes < 10 || (clock.now < end && passes < 100_000) {
                let time = clock.measure { sink &+= operation.run() }
                least[index] = min(least[index], time)
                passes += 1
            }
        }
    }
    func rate(_ index: Int) -> Double { Double(operations[index].bytes) / (least[index] / .seconds(1)) }
    func microseconds(_ index: Int) -> String { String(format: "%.1f µs", least[index] / .microseconds(1)) }
    let decode = rate(1) / 1e6, encode = rate(2) / 1e9, perByte = rate(3) / rate(2)
    return [
        "\(operations[0].name): \(microseconds(0))",
        "objects decode: \(microseconds(1)), \(String(format: "%.0f", decode)) MB/s (target ≥ 300): "
            + (decode >= 300 ? "met" : "not met"),
        "objects encode: \(microseconds(2)), \(String(format: "%.3f", encode)) GB/s (target ≥ 2.8): "
            + (encode >= 2.8 ? "met" : "not met"),
        "requests encode: \(microseconds(3)), \(String(format: "%.3f", rate(3) / 1e9)) GB/s, "
            + "\(String(format: "%.3f", perByte)) of objects per byte (target ≥ 1): " + (perByte >= 1 ? "met" : "not met"),
        "(least pass of each over \(max(1, rounds)) alternating rounds of ~\(seconds) s, "
            + "\(requestsFirst ? "requests" : "objects") loaded first; checksum \(sink))",
    ]
}
