// The generated API's codec over the golden corpus (4,148 records, API layer 229 + MTProto), beside a plain
// byte copy of the same bytes in the same run, and the generator's wall time for every schema.
// MB/s = corpus bytes / p50 time; the corpus size is printed when the benchmark starts.
import Benchmark
import Foundation
import MTProtoApi
import TLJSON
import TLRuntime
import TLSwiftGen
import TelegramApi

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// Each record's wire bytes.
let corpus: [[UInt8]] = {
    let url = root.appendingPathComponent("Fixtures/corpus/tl_corpus.jsonl")
    guard let data = FileManager.default.contents(atPath: url.path) else { return [] }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
        guard case .string(let hex)? = (try? JSONParser.parse(String(line)))?["hex"] else { return nil }
        return Hex.decode(hex)
    }
}()
let corpusBytes = corpus.reduce(0) { $0 + $1.count }
let registry = TLRegistry(merging: [Api.registry, MT.registry])
let decoded: [any TLObject] = corpus.compactMap { try? registry.parse(bytes: $0) }

let benchmarks: @Sendable () -> Void = {
    print("corpus: \(corpus.count) records, \(corpusBytes) bytes, \(decoded.count) decode")
    let config = Benchmark.Configuration(metrics: [.wallClock, .throughput, .mallocCountTotal],
                                         maxDuration: .seconds(5), maxIterations: 200)

    Benchmark("byte copy baseline (corpus into a reused Buffer)", configuration: config) { benchmark in
        let buffer = Buffer(capacity: corpusBytes)
        for _ in benchmark.scaledIterations {
            buffer.removeAll(keepingCapacity: true)
            for record in corpus { buffer.appendRaw(record) }
            blackHole(buffer.count)
        }
    }

    Benchmark("decode corpus (generated parse of every record)", configuration: config) { benchmark in
        for _ in benchmark.scaledIterations {
            for record in corpus {
                var reader = BufferReader(bytes: record)
                blackHole(try? registry.parse(&reader))
            }
        }
    }

    Benchmark("encode corpus (generated serialize into a reused Buffer)", configuration: config) { benchmark in
        let buffer = Buffer(capacity: corpusBytes)
        for _ in benchmark.scaledIterations {
            buffer.removeAll(keepingCapacity: true)
            for object in decoded { object.serialize(buffer, true) }
            blackHole(buffer.count)
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
