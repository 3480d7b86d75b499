// Replays saved fuzz inputs through the fuzz targets' own properties (FuzzProperties), without libFuzzer or a
// sanitizer: every input that once broke something (Fuzz/regressions/TARGET/*) and the committed seeds
// (Fuzz/seeds/TARGET/*). A trap inside a decoder fails the run; a broken property fails the test.
import Foundation
import FuzzProperties
import Testing

enum SavedInputs {
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    /// (target, file name, bytes) for every file under `Fuzz/<folder>/<target>/`, at most `limit` per target.
    static func load(_ folder: String, limit: Int = .max) -> [(String, String, [UInt8])] {
        let root = fuzzFolder.appendingPathComponent(folder)
        let manager = FileManager.default
        guard let targets = try? manager.contentsOfDirectory(atPath: root.path) else { return [] }
        var out: [(String, String, [UInt8])] = []
        for target in targets.sorted() {
            let dir = root.appendingPathComponent(target)
            guard let files = try? manager.contentsOfDirectory(atPath: dir.path) else { continue }
            for file in files.sorted().prefix(limit) {
                guard let data = manager.contents(atPath: dir.appendingPathComponent(file).path) else { continue }
                out.append((target, file, Array(data)))
            }
        }
        return out
    }
}

@Suite struct FuzzRegressionTests {
    /// Runs every saved input under `Fuzz/<folder>/` through its target's property; returns how many ran.
    func replay(_ folder: String, limit: Int = .max) -> Int {
        let inputs = SavedInputs.load(folder, limit: limit)
        for (target, file, data) in inputs {
            do {
                let known = try checkProperty(of: target, data)
                #expect(known, "Fuzz/\(folder)/\(target) names no fuzz target")
            } catch {
                Issue.record("Fuzz/\(folder)/\(target)/\(file): \(error)")
            }
        }
        return inputs.count
    }

    @Test func everyFindingStaysFixed() {
        #expect(replay("regressions") >= 2)
    }

    /// The seeds satisfy every property too (a broken property would otherwise only show under the fuzzer).
    @Test func seedsSatisfyTheProperties() {
        #expect(replay("seeds", limit: 150) > 500)
    }

    @Test func everyTargetHasAProperty() {
        // The target list of Fuzz/Package.swift, less the AES-IGE differential (a crypto check, not a decoder).
        let manifest = (try? String(contentsOf: SavedInputs.fuzzFolder.appendingPathComponent("Package.swift"),
                                    encoding: .utf8)) ?? ""
        let names = manifest.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("    (\"Fuzz") else { return nil }
            return line.dropFirst(6).split(separator: "\"").first.map(String.init)
        }
        #expect(names.count > 15)
        #expect(Set(names) == Set(targetNames + ["FuzzAESIGE"]))
    }
}
