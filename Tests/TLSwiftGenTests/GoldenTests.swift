// Golden tests in the style of swift-protobuf's `Reference/`: each small schema in Fixtures/emitter/NAME.tl has its
// expected Swift output committed in Fixtures/emitter/NAME/. The test regenerates every fixture and compares the
// text exactly.
//
// To accept a deliberate change of the emitter's output, regenerate the expected files and review the diff:
//
//     TLGEN_UPDATE_GOLDEN=1 swift test --filter TLSwiftGenTests.GoldenTests
//
// With TLGEN_UPDATE_GOLDEN=1 the test writes the files (removing stale ones) instead of comparing.

import Foundation
import Testing
@testable import TLSwiftGen

/// One fixture schema and the options it is emitted with.
struct EmitterFixture: Sendable, CustomTestStringConvertible {
    var name: String
    var namespace: String
    var files: Int
    var embedSchema: Bool

    var testDescription: String { "\(name).tl" }
    var schemaURL: URL { Paths.emitterFixtures.appendingPathComponent("\(name).tl") }
    var expectedDirectory: URL { Paths.emitterFixtures.appendingPathComponent(name) }

    static let all: [EmitterFixture] = [
        EmitterFixture(name: "flags", namespace: "FlagsApi", files: 1, embedSchema: false),
        EmitterFixture(name: "generics", namespace: "GenericsApi", files: 1, embedSchema: false),
        EmitterFixture(name: "namespaces", namespace: "NamespacesApi", files: 3, embedSchema: true),
        EmitterFixture(name: "keywords", namespace: "KeywordsApi", files: 1, embedSchema: false),
    ]

    func emit() throws -> [GeneratedFile] {
        try GeneratorPipeline.emit(schemaText: try readText(schemaURL), displayName: "\(name).tl",
                                   namespace: namespace, fileCount: files, embedSchema: embedSchema)
    }
}

@Suite struct GoldenTests {
    static var updating: Bool { ProcessInfo.processInfo.environment["TLGEN_UPDATE_GOLDEN"] == "1" }

    @Test(arguments: EmitterFixture.all)
    func generatedCodeMatchesTheCommittedFiles(_ fixture: EmitterFixture) throws {
        let generated = try fixture.emit()
        let fm = FileManager.default
        let directory = fixture.expectedDirectory
        if Self.updating {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true)
            for name in try fm.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".swift") {
                try fm.removeItem(at: directory.appendingPathComponent(name))
            }
            for file in generated {
                try Data(file.contents.utf8).write(to: directory.appendingPathComponent(file.name))
            }
            return
        }
        let committed = ((try? fm.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".swift") }
        let hint = "run `TLGEN_UPDATE_GOLDEN=1 swift test --filter TLSwiftGenTests.GoldenTests` and review the diff"
        #expect(Set(committed) == Set(generated.map(\.name)),
                "files in Fixtures/emitter/\(fixture.name)/ differ from the generated set; \(hint)")
        for file in generated {
            guard let expected = try? readText(directory.appendingPathComponent(file.name)) else { continue }
            let difference = firstDifference(expected: expected, actual: file.contents)
            #expect(difference.isEmpty, "Fixtures/emitter/\(fixture.name)/\(file.name): \(difference)\n\(hint)")
        }
    }

    @Test func theFixturesCoverEverySchemaInTheFolder() throws {
        let schemas = try FileManager.default.contentsOfDirectory(atPath: Paths.emitterFixtures.path)
            .filter { $0.hasSuffix(".tl") }.sorted()
        #expect(schemas == EmitterFixture.all.map { "\($0.name).tl" }.sorted())
    }

    @Test func differenceReportPointsAtTheFirstDifferentLine() {
        let report = firstDifference(expected: "a\nb\nc\n", actual: "a\nB\nc\n", context: 1)
        #expect(report == """
            first difference at line 2 (expected 4 lines, generated 4):
            --- expected
                  1 | a
            -     2 | b
                  3 | c
            +++ generated
                  1 | a
            +     2 | B
                  3 | c
            """)
        #expect(firstDifference(expected: "same", actual: "same").isEmpty)
    }
}
