import ArgumentParser
import TLSchema

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what changes between two schemas (a layer bump): added, removed and redefined entries.",
        discussion: "Both files must check without errors. Example: tlgen diff ../shared/schemas/history/api228_tdlib.tl Schemas/api.tl")

    @Argument(help: "The older schema.", completion: .file(extensions: ["tl"]))
    var old: String

    @Argument(help: "The newer schema.", completion: .file(extensions: ["tl"]))
    var new: String

    @Flag(help: "Only the summary lines.")
    var summary = false

    @Flag(help: "Accept schemas with errors (e.g. TDLib's preamble ID mismatches); entries still compare by name and ID.")
    var allowErrors = false

    func run() throws {
        let before = try loadSchema(old)
        let after = try loadSchema(new)
        for schema in [before, after] where !schema.errors.isEmpty && !allowErrors {
            for diagnostic in schema.errors { print(diagnostic.rendered) }
            print("\(schema.file): \(schema.errors.count) error(s); fix them or pass --allow-errors")
            throw ExitCode.failure
        }
        print(SchemaDiff(old: before, new: after).rendered(entries: !summary))
    }
}
