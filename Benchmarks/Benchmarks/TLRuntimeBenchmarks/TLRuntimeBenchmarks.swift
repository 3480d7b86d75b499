// TLRuntime throughput: decode and encode of a 100-message `benchMessages` (≈16 KB, the shape of a
// `messages.getHistory` result), next to a plain byte copy of the same bytes as the baseline. Throughput is reported
// per scaled iteration; MB/s = wire bytes × iterations per second.
import Benchmark
import TLRuntime

let benchmarks: @Sendable () -> Void = {
    let messages = benchMessages(count: 100)
    let wireBuffer = Buffer()
    serializeMessages(messages, into: wireBuffer)
    let wire = wireBuffer.bytes
    let configuration = Benchmark.Configuration(metrics: [.throughput, .wallClock, .mallocCountTotal],
                                                scalingFactor: .kilo, maxDuration: .seconds(3))

    Benchmark("TL decode benchMessages (\(wire.count) bytes)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            var reader = BufferReader(bytes: wire)
            blackHole(try parseMessages(&reader))
        }
    }

    Benchmark("TL encode benchMessages into a reused Buffer (\(wire.count) bytes)", configuration: configuration) {
        benchmark in
        let buffer = Buffer(capacity: wire.count)
        for _ in benchmark.scaledIterations {
            buffer.removeAll(keepingCapacity: true)
            serializeMessages(messages, into: buffer)
            blackHole(buffer.count)
        }
    }

    Benchmark("Byte copy baseline (\(wire.count) bytes)", configuration: configuration) { benchmark in
        let buffer = Buffer(capacity: wire.count)
        for _ in benchmark.scaledIterations {
            buffer.removeAll(keepingCapacity: true)
            buffer.appendRaw(wire)
            blackHole(buffer.count)
        }
    }

    Benchmark("gzip_packed unpack (\(wire.count) bytes inflated)", configuration: configuration) { benchmark in
        let packed = GZip.packedObject(wire)
        for _ in benchmark.scaledIterations {
            var reader = BufferReader(bytes: packed)
            blackHole(try reader.unpackingGzip()?.remaining)
        }
    }
}
