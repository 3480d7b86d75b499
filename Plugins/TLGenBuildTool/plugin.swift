// The build-tool plugin: every `.tl` file in a target becomes Swift at build time, through this package's `tlgen emit`
// (the same library as the `tlgen` command). Options per schema come from an optional `tlgen-plugin.json` in the
// target: `{"schemas": [{"schema": "chat.tl", "namespace": "Chat", "files": 1, "layer": 3}], "idExceptions": […]}`,
// the `idExceptions` in tlgen.json's format. Without an entry a schema's namespace is its file name, capitalized.

import Foundation
import PackagePlugin

@main
struct TLGenBuildTool: BuildToolPlugin {
    struct Options: Decodable {
        struct Schema: Decodable {
            var schema: String
            var namespace: String
            var files: Int?
            var layer: Int?
            var embedSchema: Bool?
        }
        var schemas: [Schema]?
    }

    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "tlgen")
        let optionsURL = target.directoryURL.appendingPathComponent("tlgen-plugin.json")
        var options = Options(schemas: nil)
        if let data = FileManager.default.contents(atPath: optionsURL.path) {
            options = try JSONDecoder().decode(Options.self, from: data)
        }
        return target.sourceFiles(withSuffix: "tl").map { file in
            let name = file.url.lastPathComponent
            let entry = options.schemas?.first { $0.schema == name }
            let base = file.url.deletingPathExtension().lastPathComponent
            let namespace = entry?.namespace ?? base.prefix(1).uppercased() + base.dropFirst()
            let files = max(1, entry?.files ?? 1)
            let output = context.pluginWorkDirectoryURL.appendingPathComponent(base)
            var arguments = ["emit", file.url.path, "--namespace", namespace, "--files", String(files), "--output", output.path]
            if let layer = entry?.layer { arguments += ["--layer", String(layer)] }
            if entry?.embedSchema == true { arguments.append("--embed-schema") }
            var inputs = [file.url]
            if FileManager.default.fileExists(atPath: optionsURL.path) {
                arguments += ["--id-exceptions", optionsURL.path]
                inputs.append(optionsURL)
            }
            return .buildCommand(
                displayName: "tlgen \(name) -> \(namespace)", executable: tool.url, arguments: arguments,
                inputFiles: inputs,
                outputFiles: Self.outputNames(namespace: namespace, files: files).map { output.appendingPathComponent($0) })
        }
    }

    /// The files `tlgen emit` writes; the same rule as SwiftEmitter's file names (a plugin cannot import it).
    static func outputNames(namespace: String, files: Int) -> [String] {
        guard files > 1 else { return ["\(namespace).swift", "\(namespace)Types.swift"] }
        let digits = String(files - 1).count
        return ["\(namespace).swift"] + (0..<files).map { index in
            let number = String(index)
            return "\(namespace)\(String(repeating: "0", count: digits - number.count))\(number).swift"
        }
    }
}
