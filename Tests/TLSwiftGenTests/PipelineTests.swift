// The emitter's promises beyond exact text: determinism, stable file assignment, headers that name the schema, and
// the pipeline's comparison with what is on disk.

import Foundation
import Testing
@testable import TLSchema
@testable import TLSwiftGen

/// Which file each generated type and request builder lands in: `Api.messages.Messages` -> `Api3.swift`.
func fileOfEachDeclaration(_ files: [GeneratedFile]) -> [String: String] {
    var result: [String: String] = [:]
    for file in files {
        var container: String?
        for line in file.contents.split(separator: "\n") {
            if line.hasPrefix("extension "), line.hasSuffix(" {") {
                container = String(line.dropFirst("extension ".count).dropLast(2))
                continue
            }
            guard let container else { continue }
            for prefix in ["    public enum ", "    public static func "] where line.hasPrefix(prefix) {
                let name = line.dropFirst(prefix.count).prefix { $0 != ":" && $0 != " " && $0 != "(" && $0 != "<" }
                // A function's builder and writer share a name and a file; a name in two files shows as both.
                let key = "\(container).\(name)"
                if result[key] != file.name { result[key, default: ""] += file.name }
            }
        }
    }
    return result
}

@Suite struct EmitterPropertyTests {
    static func mtproto() throws -> String { try readText(Paths.schema("mtproto.tl")) }

    @Test func emittingTwiceGivesIdenticalText() throws {
        let text = try Self.mtproto()
        let first = try GeneratorPipeline.emit(schemaText: text, displayName: "mtproto.tl", namespace: "MT", fileCount: 4,
                                               embedSchema: true)
        let second = try GeneratorPipeline.emit(schemaText: text, displayName: "mtproto.tl", namespace: "MT",
                                                fileCount: 4, embedSchema: true)
        #expect(first == second)
        for fixture in EmitterFixture.all { #expect(try fixture.emit() == fixture.emit()) }
    }

    @Test func addingTypesMovesNoExistingTypeToAnotherFile() throws {
        let text = try Self.mtproto()
        let before = fileOfEachDeclaration(try GeneratorPipeline.emit(
            schemaText: text, displayName: "mtproto.tl", namespace: "MT", fileCount: 8, embedSchema: false))
        let added = text + """

            ---types---
            aaaFirst x:int = AaaFirst;
            zzzNew a:int = ZzzNew;
            zzzNewOther = ZzzNew;
            help.extra y:long = help.Extra;
            ---functions---
            help.getExtra = help.Extra;
            aNewCall z:int = ZzzNew;
            """
        let after = fileOfEachDeclaration(try GeneratorPipeline.emit(
            schemaText: added, displayName: "mtproto.tl", namespace: "MT", fileCount: 8, embedSchema: false))
        // The parse found what it should: every type and request once, spread over more than one file.
        #expect(before.count == 43) // 33 types and 10 requests
        #expect(before.values.allSatisfy { $0.hasSuffix(".swift") && $0.count == "MT0.swift".count })
        #expect(Set(before.values).count > 3)
        #expect(before["MT.ResPQ"] != nil && before["MT.functions.req_pq"] != nil && before["MT.help.ConfigSimple"] != nil)
        for (name, file) in before { #expect(after[name] == file, "\(name) moved from \(file) to \(after[name] ?? "nowhere")") }
        #expect(Set(after.keys).subtracting(before.keys) == [
            "MT.AaaFirst", "MT.ZzzNew", "MT.help.Extra", "MT.functions.help.getExtra", "MT.functions.aNewCall",
        ])
    }

    @Test func aTypesFileDependsOnlyOnItsNameAndTheFileCount() {
        #expect(SwiftEmitter.fileIndex("User", of: 40) == SwiftEmitter.fileIndex("User", of: 40))
        #expect(SwiftEmitter.fileIndex("anything", of: 1) == 0)
        // FNV-1a 32 of "a" is 0xe40c292c.
        #expect(SwiftEmitter.fileIndex("a", of: 1_000_000) == Int(UInt32(0xE40C_292C) % 1_000_000))
    }

    @Test func fileNamesFollowTheFileCount() throws {
        let text = "a = A;\nb = B;\n"
        func names(_ count: Int) throws -> [String] {
            try GeneratorPipeline.emit(schemaText: text, displayName: "x.tl", namespace: "X", fileCount: count,
                                       embedSchema: false).map(\.name)
        }
        #expect(try names(1) == ["X.swift", "XTypes.swift"])
        #expect(try names(3) == ["X.swift", "X0.swift", "X1.swift", "X2.swift"])
        #expect(try names(11).prefix(3) == ["X.swift", "X00.swift", "X01.swift"])
        #expect(try names(11).last == "X10.swift")
    }

    // MARK: Headers

    @Test func onlyTheNamespaceFileNamesTheLayerAndTheHash() throws {
        let fixture = try #require(EmitterFixture.all.first { $0.name == "flags" })
        let text = try readText(fixture.schemaURL)
        let sha = SHA256.hex(Array(text.utf8))
        let files = try fixture.emit()
        #expect(files.count > 1)
        for file in files {
            let lines = file.contents.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count > 5)
            #expect(lines[0].hasPrefix("// "))
            let expected = file.name == "FlagsApi.swift"
                ? "// Generated by tlgen from flags.tl (layer 7, SHA-256 \(sha))."
                : "// Generated by tlgen from flags.tl; the layer and the schema's SHA-256 are in FlagsApi.swift."
            #expect(lines[1] == expected, "\(file.name)")
            #expect(lines[2] == "// Do not edit: change the schema or the generator and run `swift run tlgen`.")
            if file.name != "FlagsApi.swift" { #expect(!file.contents.contains(sha), "\(file.name)") }
        }
        let namespaceFile = try #require(files.first { $0.name == "FlagsApi.swift" })
        #expect(namespaceFile.contents.contains("public static let layer: Int32 = 7\n"))
        #expect(namespaceFile.contents.contains("public static let schemaSHA256 = \"\(sha)\"\n"))
    }

    @Test func aSchemaWithoutALayerSaysSo() throws {
        let files = try GeneratorPipeline.emit(schemaText: "a = A;", displayName: "x.tl", namespace: "X", fileCount: 1,
                                               embedSchema: false)
        let sha = SHA256.hex(Array("a = A;".utf8))
        #expect(files[0].contents.contains("// Generated by tlgen from x.tl (layer -, SHA-256 \(sha)).\n"))
        #expect(!files[0].contents.contains("static let layer"))
    }

    @Test func sha256KnownAnswers() throws {
        #expect(SHA256.hex(Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(SHA256.hex(Array(twoBlocks.utf8)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // The hash PROVENANCE.md records for api.tl.
        #expect(SHA256.hex(Array(try readText(Paths.schema("api.tl")).utf8))
            == "2818dd15fcea29bbe271d67f2e388b6186700229cfbaeb0b5f85c47c15fcea3f")
    }

    @Test func embeddedSchemaIsTheExactText() throws {
        let fixture = try #require(EmitterFixture.all.first { $0.embedSchema })
        let text = try readText(fixture.schemaURL)
        let namespaceFile = try #require(try fixture.emit().first)
        #expect(namespaceFile.contents.contains("public static var schemaSource: String {\n        #\"\"\"\n" + text + "\"\"\"#\n"))
    }

    @Test func theFactsOfALayerStayOutOfTheNamespaceEnumsBody() throws {
        // A new value in the enum's body recompiled every file of the module; in an extension it recompiles one.
        let fixture = try #require(EmitterFixture.all.first { $0.name == "flags" })
        let namespaceFile = try #require(try fixture.emit().first { $0.name == "FlagsApi.swift" }).contents
        let body = try #require(namespaceFile.range(of: "public enum FlagsApi {"))
        let end = try #require(namespaceFile.range(of: "\n}\n", range: body.upperBound..<namespaceFile.endIndex))
        let enumBody = namespaceFile[body.upperBound..<end.lowerBound]
        #expect(!enumBody.contains("layer") && !enumBody.contains("schemaSHA256"))
        #expect(namespaceFile[end.upperBound...].contains("public static let layer: Int32 = 7"))
    }

    @Test func specLinksNameEachDefinitionsPageOnlyWhenAsked() throws {
        let fixture = try #require(EmitterFixture.all.first { $0.name == "namespaces" })
        let text = try readText(fixture.schemaURL)
        func emitted(links: Bool) throws -> String {
            try GeneratorPipeline.emit(schemaText: text, displayName: "namespaces.tl", namespace: "NamespacesApi",
                                       fileCount: 1, embedSchema: false, specLinks: links).map(\.contents).joined()
        }
        let linked = try emitted(links: true)
        // The page follows the definition's TL line in the same doc comment, for a type, a constructor (on its case
        // and on its payload) and a function.
        let definition = "messages.messages#65e96239 messages:Vector<Message> count:int = messages.Messages;"
        let constructorDoc = "/// `\(definition)`\n        ///\n        /// <https://core.telegram.org/constructor/messages.messages>\n"
        #expect(linked.components(separatedBy: constructorDoc).count - 1 == 2)
        #expect(linked.contains("///\n    /// <https://core.telegram.org/type/messages.Messages>\n    public enum Messages"))
        #expect(linked.contains("/// <https://core.telegram.org/method/messages.getHistory>\n    public static func getHistory("))
        #expect(linked.contains("/// <https://core.telegram.org/constructor/future_salt>"))
        #expect(!(try emitted(links: false)).contains("core.telegram.org"))
    }

    @Test func outlineWritersKeepEveryNonGenericWriterOutOfItsBuilderOnlyWhenAsked() throws {
        let fixture = try #require(EmitterFixture.all.first { $0.name == "generics" })
        let text = try readText(fixture.schemaURL)
        func emitted(outline: Bool) throws -> String {
            try GeneratorPipeline.emit(schemaText: text, displayName: "generics.tl", namespace: "GenericsApi",
                                       fileCount: 1, embedSchema: false, outlineWriters: outline)
                .map(\.contents).joined()
        }
        let outlined = try emitted(outline: true)
        let writers = outlined.components(separatedBy: "\n").filter { $0.contains("(into buffer: Buffer") }
        let generic = writers.filter { $0.contains("static func") && $0.contains("<") }
        #expect(!writers.isEmpty && !generic.isEmpty && generic.count < writers.count)
        // Each writer's attribute is on the line before it: `@inline(never)` unless generic (then `@inlinable`).
        let lines = outlined.components(separatedBy: "\n")
        for (index, line) in lines.enumerated() where line.contains("(into buffer: Buffer") {
            let attribute = lines[index - 1].trimmingCharacters(in: .whitespaces)
            #expect(attribute == (line.contains("<") ? "@inlinable" : "@inline(never)"), "\(line)")
        }
        #expect(!(try emitted(outline: false)).contains("@inline(never)"))
    }

    @Test func unoptimizedColdCodeMarksBuildersAndHandInitsOnlyWhenAsked() throws {
        // `generics` has generic and plain requests, `flags` payloads with flag words.
        let fixtures = EmitterFixture.all.filter { ["generics", "flags"].contains($0.name) }
        #expect(fixtures.count == 2)
        func emitted(cold: Bool) throws -> [String] {
            try fixtures.flatMap { fixture in
                try GeneratorPipeline.emit(schemaText: try readText(fixture.schemaURL), displayName: "\(fixture.name).tl",
                                           namespace: fixture.namespace, fileCount: 1, embedSchema: false,
                                           outlineWriters: true, unoptimizedColdCode: cold)
                    .map(\.contents).joined().components(separatedBy: "\n")
            }
        }
        let lines = try emitted(cold: true)
        func attribute(before index: Int) -> String { lines[index - 1].trimmingCharacters(in: .whitespaces) }
        var marked = (writers: 0, builders: 0, inits: 0)
        for (index, line) in lines.enumerated() {
            // `func name<X>(`: a generic parameter before the parameter list (results name generic types too).
            let generic = line.contains("static func") && line.prefix { $0 != "(" }.contains("<")
            if line.contains("(into buffer: Buffer") {
                // Writers stay optimized: out of line (`outlineWriters`), or inlinable when generic.
                #expect(attribute(before: index) == (generic ? "@inlinable" : "@inline(never)"), "\(line)")
                if !generic { marked.writers += 1 }
            } else if line.contains("public static func") && line.contains("-> (FunctionDescription") {
                #expect((attribute(before: index) == "@_optimize(none)") == !generic, "\(line)")
                if !generic { marked.builders += 1 }
            } else if line.contains("public init(") {
                // Only the inits that compute a flag word: a reader calls the others, and they stay optimized.
                let computesFlags = lines[index + 1].contains(": Int32 = 0")
                #expect((attribute(before: index) == "@_optimize(none)") == computesFlags, "\(line)")
                if computesFlags { marked.inits += 1 }
            } else if line.contains("static func parse") || line.contains("func serialize(") {
                #expect(attribute(before: index) != "@_optimize(none)", "\(line)")
            }
        }
        #expect(marked.writers > 0 && marked.builders > 0 && marked.inits > 0)
        #expect(!(try emitted(cold: false)).contains { $0.contains("@_optimize(none)") })
    }

    @Test func aSchemaWithErrorsEmitsNothing() {
        #expect {
            try GeneratorPipeline.emit(schemaText: "a x:Foo = A;", displayName: "x.tl", namespace: "X", fileCount: 1,
                                       embedSchema: false)
        } throws: { error in
            guard case GeneratorError.invalidSchema(let errors) = error else { return false }
            return errors.diagnostics.map(\.description) == ["x.tl:1:5: error: unknown type 'Foo'"]
        }
    }
}

@Suite struct PipelineCompareTests {
    /// A scratch project: `Schemas/tlgen.json` and `Schemas/s.tl`, output in `Generated/S`.
    final class Project {
        let root: URL
        var configPath: String { root.appendingPathComponent("Schemas/tlgen.json").path }
        var output: URL { root.appendingPathComponent("Generated/S") }

        init(files: Int = 2) throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("tlgen-compare-\(UUID().uuidString)")
            let schemas = root.appendingPathComponent("Schemas")
            try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
            let config = """
                {
                  "modules": [
                    {
                      "module": "SmallApi",
                      "directory": "../Generated/S",
                      "schemas": [ { "schema": "s.tl", "namespace": "S", "files": \(files) } ]
                    }
                  ]
                }
                """
            try Data(config.utf8).write(to: schemas.appendingPathComponent("tlgen.json"))
            try Data("a x:int = A;\nb = B;\n---functions---\nf = A;\n// LAYER 3\n".utf8)
                .write(to: schemas.appendingPathComponent("s.tl"))
        }

        deinit { try? FileManager.default.removeItem(at: root) }
    }

    @Test func renderWriteAndCompare() throws {
        let project = try Project()
        let files = try GeneratorPipeline.render(configurationPath: project.configPath)
        #expect(files.map(\.path) == ["../Generated/S/S.swift", "../Generated/S/S0.swift", "../Generated/S/S1.swift"])
        #expect(try GeneratorPipeline.compare(files, configurationPath: project.configPath).map(\.description) == [
            "missing: ../Generated/S/S.swift", "missing: ../Generated/S/S0.swift", "missing: ../Generated/S/S1.swift",
        ])
        #expect(try GeneratorPipeline.write(files, configurationPath: project.configPath) == 3)
        #expect(try GeneratorPipeline.compare(files, configurationPath: project.configPath).isEmpty)
        #expect(try GeneratorPipeline.write(files, configurationPath: project.configPath) == 0)

        let fm = FileManager.default
        try Data("// edited by hand\n".utf8).write(to: project.output.appendingPathComponent("S0.swift"))
        try fm.removeItem(at: project.output.appendingPathComponent("S1.swift"))
        try Data("// left over\n".utf8).write(to: project.output.appendingPathComponent("Old.swift"))
        try Data("not Swift".utf8).write(to: project.output.appendingPathComponent("notes.txt"))
        let drifts = try GeneratorPipeline.compare(files, configurationPath: project.configPath)
        #expect(drifts == [
            .changed("../Generated/S/S0.swift"), .missing("../Generated/S/S1.swift"), .extra("../Generated/S/Old.swift"),
        ])
        #expect(drifts.map(\.description) == [
            "differs: ../Generated/S/S0.swift", "missing: ../Generated/S/S1.swift",
            "not generated (stale): ../Generated/S/Old.swift",
        ])

        #expect(try GeneratorPipeline.write(files, configurationPath: project.configPath) == 3)
        #expect(try GeneratorPipeline.compare(files, configurationPath: project.configPath).isEmpty)
        #expect(!fm.fileExists(atPath: project.output.appendingPathComponent("Old.swift").path))
        #expect(fm.fileExists(atPath: project.output.appendingPathComponent("notes.txt").path))
    }

    @Test func renderMatchesEmit() throws {
        let project = try Project(files: 1)
        let files = try GeneratorPipeline.render(configurationPath: project.configPath)
        let text = try readText(project.root.appendingPathComponent("Schemas/s.tl"))
        let emitted = try GeneratorPipeline.emit(schemaText: text, displayName: "s.tl", namespace: "S", fileCount: 1,
                                                 embedSchema: false)
        #expect(files.map(\.contents) == emitted.map(\.contents))
        #expect(files.first?.contents.contains("// Generated by tlgen from s.tl (layer 3, SHA-256 \(SHA256.hex(Array(text.utf8)))).") == true)
    }

    @Test func configurationErrors() throws {
        let project = try Project(files: 0)
        #expect {
            try GeneratorPipeline.render(configurationPath: project.configPath)
        } throws: { error in
            "\(error)" == "\(project.configPath): error: 'files' of s.tl must be at least 1"
        }
        let missing = project.root.appendingPathComponent("nope.json").path
        #expect {
            try GeneratorPipeline.render(configurationPath: missing)
        } throws: { error in
            "\(error)" == "\(missing): error: cannot read the file"
        }
    }

    @Test func theRepositoryConfigurationLoads() throws {
        let configuration = try GeneratorConfiguration.load(from: Paths.schema("tlgen.json").path)
        #expect(configuration.modules.map(\.module) == ["TelegramApi", "MTProtoApi", "SecretApi"])
        #expect(configuration.modules[0].schemas == [
            .init(schema: "api.tl", namespace: "Api", files: 40, embedSchema: true, specLinks: true,
                  outlineWriters: true, unoptimizedColdCode: true),
        ])
        // core.telegram.org has pages for the API's definitions only.
        #expect(configuration.modules.dropFirst().allSatisfy { $0.schemas.allSatisfy { $0.specLinks == nil } })
    }
}
