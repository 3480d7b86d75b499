// TL schema front end: parse + check of Schemas/api.tl (layer 229, ≈2470 definitions, ≈280 KB), the work
// `tlgen lint` and `tlgen generate` do before emitting. Target: under 50 ms (p50, release).
// References in the same run, so the ratio means something on a noisy machine: a plain UTF-8 scan that counts
// lines (the floor for touching every byte once), and the decode into Unicode scalars the lexer starts with.
//
// Run: cd Benchmarks && swift package --scratch-path /tmp/bench-schema benchmark --target TLSchemaBenchmarks
import Benchmark
import Foundation
import TLSchema

/// Schemas/api.tl, found from this file: Benchmarks/Benchmarks/TLSchemaBenchmarks/<file> is four levels below the root.
func apiSchemaText() -> String {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    url.appendPathComponent("Schemas/api.tl")
    guard let data = FileManager.default.contents(atPath: url.path) else { fatalError("cannot read \(url.path)") }
    return String(decoding: data, as: UTF8.self)
}

let benchmarks: @Sendable () -> Void = {
    let text = apiSchemaText()
    let bytes = text.utf8.count
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .one,
                                                maxDuration: .seconds(5), maxIterations: 200)

    Benchmark("Parse+check api.tl (\(bytes) bytes)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            let schema = Checker.check(file: "api.tl", text: text)
            precondition(schema.errors.isEmpty && schema.constructors.count == 1658)
            blackHole(schema)
        }
    }

    Benchmark("Parse only api.tl (\(bytes) bytes)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(Parser.parse(file: "api.tl", text: text))
        }
    }

    Benchmark("Reference: UTF-8 scan counting lines (\(bytes) bytes)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            var lines = 0
            for byte in text.utf8 where byte == UInt8(ascii: "\n") { lines += 1 }
            blackHole(lines)
        }
    }

    Benchmark("Reference: decode into [Unicode.Scalar] (\(bytes) bytes)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(Array(text.unicodeScalars))
        }
    }
}
