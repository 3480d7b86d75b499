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
        discussion: "Writes only files whose text changed and removes stale ones, so the diff is what the schema change means.")

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
