// `tlgen diff OLD NEW`: the field-level change between two schemas and what it breaks in Swift code using the
// generated API; `--format markdown` for a pull request, `--breaking` to fail CI on source breaks.

import ArgumentParser
import TLSchema
import TLSwiftGen

extension DiffReport.Format: ExpressibleByArgument {}

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a layer bump changes, field by field, and which changes break Swift code.",
        discussion: """
            Both files must check without errors. Redefined entries list their fields added, removed, retyped and \
            moved to another flag bit, and whether the ID changed; then every change to the generated Swift API, \
            `!` marking source breaks. Example: tlgen diff Schemas/history/api228_tdlib.tl Schemas/api.tl
            """)

    @Argument(help: "The older schema.", completion: .file(extensions: ["tl"]))
    var old: String

    @Argument(help: "The newer schema.", completion: .file(extensions: ["tl"]))
    var new: String

    @Option(help: "text or markdown (a pull-request changelog).")
    var format: DiffReport.Format = .text

    @Option(help: "The Swift namespace the schema generates into, as in tlgen.json.")
    var namespace = "Api"

    @Flag(help: "Only the summary lines.")
    var summary = false

    @Flag(help: "Exit with status 2 when a change breaks Swift code using the generated API (for CI).")
    var breaking = false

    @OptionGroup var exceptions: ExceptionsOption

    @Flag(help: "Accept schemas with errors (e.g. TDLib's preamble ID mismatches); entries still compare by name and ID.")
    var allowErrors = false

    func run() throws {
        let accepted = try exceptions.load()
        let before = try loadSchema(old, exceptions: accepted)
        let after = try loadSchema(new, exceptions: accepted)
        for schema in [before, after] where !schema.errors.isEmpty && !allowErrors {
            for diagnostic in schema.errors { print(diagnostic.rendered) }
            print("\(schema.file): \(schema.errors.count) error(s); fix them or pass --allow-errors")
            throw ExitCode.failure
        }
        let report = DiffReport(old: before, new: after, namespace: namespace)
        print(report.rendered(format, entries: !summary))
        if breaking && !report.compatibility.breaking.isEmpty { throw ExitCode(2) }
    }
}
