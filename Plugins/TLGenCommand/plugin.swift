// `swift package tlgen [check|generate|lint|diff …]`: runs this package's `tlgen` in the consuming package's
// directory, so its committed generated sources are regenerated (or checked) from its own schemas and
// configuration. With no arguments it runs `generate`; `--config` defaults to Schemas/tlgen.json, else tlgen.json.

import Foundation
import PackagePlugin

@main
struct TLGenCommand: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "tlgen")
        let root = context.package.directoryURL
        var arguments = arguments.isEmpty ? ["generate"] : arguments
        let configurable: Set<String> = ["generate", "check"]
        if let command = arguments.first, configurable.contains(command), !arguments.contains("--config") {
            let candidates = ["Schemas/tlgen.json", "tlgen.json"].map { root.appendingPathComponent($0).path }
            guard let config = candidates.first(where: FileManager.default.fileExists(atPath:)) else {
                Diagnostics.error("no tlgen configuration: looked for \(candidates.joined(separator: " and ")); pass --config PATH")
                return
            }
            arguments += ["--config", config]
        }
        let process = Process()
        process.executableURL = tool.url
        process.arguments = arguments
        process.currentDirectoryURL = root
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            Diagnostics.error("tlgen \(arguments.joined(separator: " ")) failed with status \(process.terminationStatus)")
            return
        }
    }
}
