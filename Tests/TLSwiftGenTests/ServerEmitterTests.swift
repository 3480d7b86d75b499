import Testing
@testable import TLSchema
@testable import TLSwiftGen

/// The server side's files of the layer: deterministic, spread over the API's file count by the function's name,
/// every function a typed request in the registry, an inner call read through the registry as a typed request.
@Suite struct ServerEmitterTests {
    static func files(fileCount: Int) throws -> [GeneratedFile] {
        try GeneratorPipeline.emitter(
            schemaText: try readText(Paths.schema("api.tl")), displayName: "api.tl", namespace: "Api",
            fileCount: fileCount, embedSchema: false, layer: nil, exceptions: KnownIDException.all)
            .serverFiles(module: "TelegramApi")
    }

    @Test func theServerFilesAreDeterministicAndSpreadAsTheAPIsFunctions() throws {
        let files = try Self.files(fileCount: 40)
        #expect(try Self.files(fileCount: 40) == files)
        #expect(files.first?.name == "ApiRequests.swift")
        // Each function in the file with the same index as its builder's: the same hash of `functions.<name>`.
        for (name, type) in [("invokeWithLayer", "InvokeWithLayer"), ("messages.sendMessage", "SendMessage"),
                             ("help.getConfig", "GetConfig")] {
            let index = SwiftEmitter.fileIndex("functions." + name, of: 40)
            let suffix = index < 10 ? "0\(index)" : "\(index)"
            let file = try #require(files.first { $0.name == "ApiRequests\(suffix).swift" }, "\(name)")
            #expect(file.contents.contains("public struct \(type): TLTypedRequest"), "\(name)")
            #expect(file.contents.contains("public static var tlFunctionName: String { \"\(name)\" }"), "\(name)")
        }
    }

    @Test func aRequestHasTypedFieldsAResultAndAnInnerCallReadAsATypedRequest() throws {
        let text = try Self.files(fileCount: 1).map(\.contents).joined()
        #expect(text.contains("public typealias Result = Api.Updates"))
        #expect(text.contains("public typealias Result = [Api.User]"))
        #expect(text.contains("public typealias Result = [UInt8]"))  // a generic wrapper: the inner answer's bytes
        #expect(text.contains("public let query: any TLTypedRequest"))
        #expect(text.contains("let _query = try Api.requests.parse(&reader)"))
        #expect(text.contains("public var silent: Bool { tlFlagIsSet(flags, 0x20) }"))
        #expect(text.contains("public let randomId: Int64"))
        for id in ["0xda9b0d0d", "0xfef48f62", "0xc4f9186b"] {
            #expect(text.contains("(\(id), Api.functions"), "\(id) is not in the registry")
        }
    }
}
