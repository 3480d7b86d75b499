// What the typed handlers promise at compile time: the compiler is run on the fixtures in Fixtures/typed-handlers
// against the modules this test was built with. A handler returning another type than its function's result, and
// one reading a field its function does not have, do not compile; the control beside them does.
import Foundation
import Testing

@Suite struct TypedHandlerCompileTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/typed-handlers")

    /// The build directory holding `Modules/TelegramApiServer.swiftmodule`: where this test binary lies, or above.
    static var buildDirectory: URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent(
                "Modules/TelegramApiServer.swiftmodule").path) { return directory }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// `swiftc -typecheck` of one fixture: its exit status and what it printed.
    static func typecheck(_ fixture: String) throws -> (status: Int32, output: String) {
        let build = try #require(buildDirectory,
                                 "no Modules/TelegramApiServer.swiftmodule near \(CommandLine.arguments[0])")
        let files = FileManager.default
        // The C modules the Swift ones were built against: SwiftPM's generated maps, the checkouts' and our own.
        var maps = try files.contentsOfDirectory(atPath: build.path)
            .filter { $0.hasSuffix(".build") && !$0.contains("-tool") }
            .map { build.appendingPathComponent($0).appendingPathComponent("module.modulemap").path }
        let checkouts = build.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts")
        for package in (try? files.contentsOfDirectory(atPath: checkouts.path)) ?? [] {
            let sources = checkouts.appendingPathComponent(package).appendingPathComponent("Sources")
            for target in (try? files.contentsOfDirectory(atPath: sources.path)) ?? [] {
                maps.append(sources.appendingPathComponent(target).appendingPathComponent("include/module.modulemap").path)
            }
        }
        let runtime = fixtures.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Runtime")
        for target in try files.contentsOfDirectory(atPath: runtime.path) {
            maps.append(runtime.appendingPathComponent(target).appendingPathComponent("module.modulemap").path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-typecheck", "-swift-version", "6",
                             "-I", build.appendingPathComponent("Modules").path]
            + maps.filter { files.fileExists(atPath: $0) }.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] }
            + [fixtures.appendingPathComponent(fixture).path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test func theControlCompiles() throws {
        let (status, output) = try Self.typecheck("Compiles.swift")
        #expect(status == 0, "\(output)")
    }

    @Test func aHandlerReturningAnotherTypeThanTheResultDoesNotCompile() throws {
        let (status, output) = try Self.typecheck("WrongResultType.swift")
        #expect(status != 0)
        let error = "WrongResultType.swift:8:9: error: cannot convert value of type 'Bool' to closure result type"
        #expect(output.contains(error), "\(output)")
        #expect(output.contains("Api.Updates"), "\(output)")
    }

    @Test func readingAFieldTheFunctionLacksDoesNotCompile() throws {
        let (status, output) = try Self.typecheck("MissingField.swift")
        #expect(status != 0)
        #expect(output.contains("error: value of type 'Api.functions.messages.SendMessage' has no member 'text'"),
                "\(output)")
    }
}
