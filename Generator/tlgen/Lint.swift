import ArgumentParser
import Foundation
import TLSchema
import TLSwiftGen

struct Lint: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Parse and check TL schema files.",
        discussion: """
            Prints every error as FILE:LINE:COLUMN: error: MESSAGE with the source line, then one summary line per \
            file: FILE: layer N, C constructors, F functions, E errors. Exits non-zero if any file has errors.
            """)

    @Argument(help: "TL schema files to check.", completion: .file(extensions: ["tl"]))
    var files: [String]

    @Flag(name: .customLong("quiet"), help: "Print only the summary lines.")
    var quiet = false

    @OptionGroup var exceptions: ExceptionsOption

    func run() throws {
        var failed = false
        let accepted = try exceptions.load()
        for file in files {
            let schema: Schema
            do {
                schema = try loadSchema(file, exceptions: accepted)
            } catch {
                print("\(file): error: \(error)")
                failed = true
                continue
            }
            let errors = schema.errors
            if !quiet { for diagnostic in errors { print(diagnostic.rendered) } }
            print("\(file): \(summary(schema))")
            if !errors.isEmpty { failed = true }
        }
        if failed { throw ExitCode.failure }
    }
}

func summary(_ schema: Schema) -> String {
    let errors = schema.errors.count
    return "layer \(schema.layer.map(String.init) ?? "-"), \(schema.constructors.count) constructors, "
        + "\(schema.functions.count) functions, \(errors) error\(errors == 1 ? "" : "s")"
}

struct FileReadError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "cannot read '\(path)': \(reason)" }
}

func readText(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
        let reason = FileManager.default.fileExists(atPath: path) ? "permission denied or not a regular file" : "no such file"
        throw FileReadError(path: path, reason: reason)
    }
    guard let text = String(data: data, encoding: .utf8) else {
        throw FileReadError(path: path, reason: "not valid UTF-8")
    }
    return text
}

func loadSchema(_ path: String, exceptions: [KnownIDException] = KnownIDException.all) throws -> Schema {
    Checker.check(file: path, text: try readText(path), exceptions: exceptions)
}

/// `--id-exceptions CONFIG`: check with a configuration's declared ID exceptions as well as the built-in ones.
struct ExceptionsOption: ParsableArguments {
    @Option(name: .customLong("id-exceptions"), help: "A JSON file (tlgen.json) whose idExceptions apply (TDLib's file needs them).",
            completion: .file(extensions: ["json"]))
    var configuration: String?

    func load() throws -> [KnownIDException] {
        guard let configuration else { return KnownIDException.all }
        return try GeneratorConfiguration.exceptions(fromFile: configuration)
    }
}
