// The generated API's codec over the golden corpus split as the reference (grammers) measured it (`CodecCorpus`):
// object records and requests, each beside a plain byte copy of the same bytes into a reused `Buffer`; then the
// generator's wall time. Targets (the performance issue): objects decode ≥ 300 MB/s and encode ≥ 2.8 GB/s; requests
// encode at least as fast per byte as objects (through the generated writers, as an application writes them). The
// interleaved benchmark times copy, decode and encode of both parts back to back in every iteration, so the
// machine's load shifts them alike, and reports MB/s and ratios directly.
import Benchmark
import CodecCorpus
import Foundation
import TLRuntime
import TLSwiftGen

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
let objects = CorpusPart.objects
let requests = CorpusPart.requests

/// MB/s for `bytes` in `time`.
func megabytesPerSecond(_ bytes: Int, _ time: Duration) -> Int {
    let seconds = time / .seconds(1)
    return seconds > 0 ? Int(Double(bytes) / seconds / 1e6) : 0
}

let benchmarks: @Sendable () -> Void = {
    for (name, part) in [("objects", objects), ("requests", requests)] {
        print("\(name): \(part.records.count) records, \(part.bytes) bytes, \(part.decoded.count) decode, "
              + "\(part.replayed.count) generated writers")
    }
    let config = Benchmark.Configuration(metrics: [.wallClock, .throughput, .mallocCountTotal],
                                         maxDuration: .seconds(5), maxIterations: 500)

    for (name, part) in [("objects", objects), ("requests", requests)] {
        Benchmark("\(name): byte copy into a reused Buffer (baseline)", configuration: config) { benchmark in
            let buffer = Buffer(capacity: part.bytes)
            for _ in benchmark.scaledIterations { blackHole(part.copy(into: buffer)) }
        }
        Benchmark("\(name): decode (registry + generated parse)", configuration: config) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(part.decode()) }
        }
        Benchmark("\(name): encode into a reused Buffer", configuration: config) { benchmark in
            let buffer = Buffer(capacity: part.bytes)
            for _ in benchmark.scaledIterations { blackHole(part.encode(into: buffer)) }
        }
    }
    // Requests as a server re-encodes parsed ones: `TLRequest` interprets each definition.
    Benchmark("requests: re-encode parsed requests through TLRequest", configuration: config) { benchmark in
        let buffer = Buffer(capacity: requests.bytes)
        for _ in benchmark.scaledIterations { blackHole(requests.serialize(into: buffer)) }
    }

    // Copy, decode and encode of both parts timed back to back in each iteration: MB/s of each (the targets are
    // absolute), each as thousandths of the copy's time, and request encode per byte against object encode.
    let objectDecode = BenchmarkMetric.custom("objects decode MB/s", polarity: .prefersLarger, useScalingFactor: false)
    let objectEncode = BenchmarkMetric.custom("objects encode MB/s", polarity: .prefersLarger, useScalingFactor: false)
    let requestDecode = BenchmarkMetric.custom("requests decode MB/s", polarity: .prefersLarger, useScalingFactor: false)
    let requestEncode = BenchmarkMetric.custom("requests encode MB/s", polarity: .prefersLarger, useScalingFactor: false)
    let objectDecodeRatio = BenchmarkMetric.custom("objects decode ÷ copy ×1000", polarity: .prefersSmaller,
                                                   useScalingFactor: false)
    let objectEncodeRatio = BenchmarkMetric.custom("objects encode ÷ copy ×1000", polarity: .prefersSmaller,
                                                   useScalingFactor: false)
    let requestEncodeRatio = BenchmarkMetric.custom("requests encode ÷ copy ×1000", polarity: .prefersSmaller,
                                                    useScalingFactor: false)
    let perByte = BenchmarkMetric.custom("requests ÷ objects encode MB/s ×1000", polarity: .prefersLarger,
                                         useScalingFactor: false)
    // Each encode runs a second time at once: the first pass follows a decode, which leaves the caches full of
    // freed values, and a short pass (requests: ~70 µs) pays for that more per byte than a long one.
    let perByteAgain = BenchmarkMetric.custom("requests ÷ objects encode MB/s ×1000, 2nd pass",
                                              polarity: .prefersLarger, useScalingFactor: false)
    let metrics = [objectDecode, objectEncode, requestDecode, requestEncode, objectDecodeRatio, objectEncodeRatio,
                   requestEncodeRatio, perByte, perByteAgain]
    Benchmark("codec against the byte copy, interleaved",
              configuration: .init(metrics: metrics, maxDuration: .seconds(10), maxIterations: 300)) { benchmark in
        let clock = ContinuousClock()
        let buffer = Buffer(capacity: max(objects.bytes, requests.bytes))
        for _ in benchmark.scaledIterations {
            let objectCopy = clock.measure { blackHole(objects.copy(into: buffer)) }
            let objectDecodeTime = clock.measure { blackHole(objects.decode()) }
            let objectEncodeTime = clock.measure { blackHole(objects.encode(into: buffer)) }
            let objectEncodeAgain = clock.measure { blackHole(objects.encode(into: buffer)) }
            let requestCopy = clock.measure { blackHole(requests.copy(into: buffer)) }
            let requestDecodeTime = clock.measure { blackHole(requests.decode()) }
            let requestEncodeTime = clock.measure { blackHole(requests.encode(into: buffer)) }
            let requestEncodeAgain = clock.measure { blackHole(requests.encode(into: buffer)) }
            let objectEncodeRate = megabytesPerSecond(objects.bytes, objectEncodeTime)
            let requestEncodeRate = megabytesPerSecond(requests.bytes, requestEncodeTime)
            benchmark.measurement(objectDecode, megabytesPerSecond(objects.bytes, objectDecodeTime))
            benchmark.measurement(objectEncode, objectEncodeRate)
            benchmark.measurement(requestDecode, megabytesPerSecond(requests.bytes, requestDecodeTime))
            benchmark.measurement(requestEncode, requestEncodeRate)
            benchmark.measurement(objectDecodeRatio, Int(1000 * (objectDecodeTime / objectCopy)))
            benchmark.measurement(objectEncodeRatio, Int(1000 * (objectEncodeTime / objectCopy)))
            benchmark.measurement(requestEncodeRatio, Int(1000 * (requestEncodeTime / requestCopy)))
            benchmark.measurement(perByte, objectEncodeRate > 0 ? 1000 * requestEncodeRate / objectEncodeRate : 0)
            let objectAgainRate = megabytesPerSecond(objects.bytes, objectEncodeAgain)
            let requestAgainRate = megabytesPerSecond(requests.bytes, requestEncodeAgain)
            benchmark.measurement(perByteAgain, objectAgainRate > 0 ? 1000 * requestAgainRate / objectAgainRate : 0)
        }
    }

    Benchmark("tlgen: render every schema in Schemas/tlgen.json",
              configuration: .init(metrics: [.wallClock], maxDuration: .seconds(10), maxIterations: 10)) { benchmark in
        let path = root.appendingPathComponent("Schemas/tlgen.json").path
        for _ in benchmark.scaledIterations {
            blackHole(try GeneratorPipeline.render(configurationPath: path).count)
        }
    }
}
