import ArgumentParser
import Foundation
import TLSwiftGen

struct ConfigurationOption: ParsableArguments {
    @Option(name: .customLong("config"), help: "The generator configuration.", completion: .file(extensions: ["json"]))
    var path = "Schemas/tlgen.json"

    func validate() throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ValidationError("no configuration at '\(path)'; run from the package root or pass --config PATH")
        }
    }
}

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Regenerate Generated/ from Schemas/ (the default command).",
        // Here too: as the default subcommand it is the one that reads a bare `tlgen --version`.
        discussion: "Writes only files whose text changed and removes stale ones, so the diff is what the schema change means.",
        version: GeneratorPipeline.version)

    @OptionGroup var config: ConfigurationOption

    func run() throws {
        let start = Date()
        let files = try GeneratorPipeline.render(configurationPath: config.path)
        let changed = try GeneratorPipeline.write(files, configurationPath: config.path)
        let ms = Int(Date().timeIntervalSince(start) * 1000)
        print("tlgen: \(files.count) files, \(changed) changed (\(ms) ms)")
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fail if Generated/ differs from what `tlgen generate` would write.")

    @OptionGroup var config: ConfigurationOption

    func run() throws {
        let files = try GeneratorPipeline.render(configurationPath: config.path)
        let drifts = try GeneratorPipeline.compare(files, configurationPath: config.path)
        if drifts.isEmpty {
            print("tlgen check: \(files.count) generated files are up to date")
            return
        }
        for drift in drifts { print("tlgen check: \(drift)") }
        print("tlgen check: \(drifts.count) file(s) out of date; run `swift run tlgen` and commit the result")
        throw ExitCode.failure
    }
}

struct Emit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate one schema into a directory (what the SwiftPM build-tool plugin runs).",
        discussion: "Writes <namespace>.swift and the type files, always (the build system runs it only when its inputs change).")

    @Argument(help: "The schema.", completion: .file(extensions: ["tl"]))
    var schema: String

    @Option(help: "The Swift namespace (a caseless enum) the types live in.")
    var namespace: String

    @Option(help: "How many files the types are spread over.")
    var files = 1

    @Option(help: "The layer, for a schema without a `// LAYER` line.")
    var layer: Int?

    @Flag(help: "Embed the schema text as <namespace>.schemaSource.")
    var embedSchema = false

    @OptionGroup var exceptions: ExceptionsOption

    @Option(help: "The output directory.", completion: .directory)
    var output: String

    func validate() throws {
        guard files >= 1 else { throw ValidationError("--files must be at least 1") }
    }

    func run() throws {
        let text = try readText(schema)
        let generated = try GeneratorPipeline.emit(
            schemaText: text, displayName: (schema as NSString).lastPathComponent, namespace: namespace,
            fileCount: files, embedSchema: embedSchema, layer: layer, exceptions: try exceptions.load())
        let fm = FileManager.default
        try fm.createDirectory(atPath: output, withIntermediateDirectories: true)
        for file in generated {
            let path = (output as NSString).appendingPathComponent(file.name)
            try Data(file.contents.utf8).write(to: URL(fileURLWithPath: path))
        }
    }
}
