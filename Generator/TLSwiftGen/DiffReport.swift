// `tlgen diff`'s report: the field-level schema diff plus its Swift source compatibility, as plain text for a
// terminal or as Markdown to paste into a pull request.

import TLSchema

/// What a layer bump changes: on the wire (`SchemaDiff`) and in the generated Swift (``SourceCompatibility``),
/// rendered as text or Markdown.
public struct DiffReport: Sendable {
    /// How a report is rendered.
    public enum Format: String, Sendable, CaseIterable {
        /// Plain text for a terminal.
        case text
        /// Markdown for a pull request.
        case markdown
    }

    /// The wire-level difference between the two schemas.
    public var diff: SchemaDiff
    /// What the difference does to code using the generated API.
    public var compatibility: SourceCompatibility

    /// Compares `old` with `new`; `namespace` is the Swift namespace the symbols are named in (`Api`).
    public init(old: Schema, new: Schema, namespace: String) {
        diff = SchemaDiff(old: old, new: new)
        compatibility = SourceCompatibility(diff: diff, old: old, new: new, namespace: namespace)
    }

    var sourceSummary: String {
        "Swift source: \(compatibility.breaking.count) breaking, \(compatibility.compatible.count) compatible"
    }

    /// The report as text or Markdown; `entries: false` keeps only the summary lines.
    public func rendered(_ format: Format, entries: Bool = true) -> String {
        switch format {
        case .text: text(entries: entries)
        case .markdown: markdown(entries: entries)
        }
    }

    func text(entries: Bool) -> String {
        var lines = [diff.rendered(entries: entries), sourceSummary]
        if entries { lines += compatibility.breaking.map(\.description) + compatibility.compatible.map(\.description) }
        return lines.joined(separator: "\n")
    }

    func markdown(entries: Bool) -> String {
        var out: [String] = []
        out.append("## TL layer \(SchemaDiff.layerText(diff.oldLayer)) → \(SchemaDiff.layerText(diff.newLayer))")
        out.append("")
        let breaks = compatibility.breaking.count
        out.append(breaks == 0
                   ? "**Swift source compatible**: no change breaks code using the generated API."
                   : "**\(breaks) Swift source break\(breaks == 1 ? "" : "s")** (listed below); "
                     + "\(compatibility.compatible.count) compatible change\(compatibility.compatible.count == 1 ? "" : "s").")
        out.append("")
        out.append("| | added | removed | redefined |")
        out.append("|---|---:|---:|---:|")
        out.append("| types | \(diff.addedTypes.count) | \(diff.removedTypes.count) | |")
        for (title, section) in [("constructors", diff.constructors), ("functions", diff.functions)] {
            out.append("| \(title) | \(section.added.count) | \(section.removed.count) | \(section.redefined.count) |")
        }
        guard entries else { return out.joined(separator: "\n") }
        func list(_ heading: String, _ items: [String]) {
            guard !items.isEmpty else { return }
            out += ["", "### \(heading)", ""] + items.map { "- \($0)" }
        }
        list("Swift source breaks", compatibility.breaking.map { "`\($0.symbol)`: \($0.change)" })
        list("Added types", diff.addedTypes.map { "`\($0)`" })
        list("Removed types", diff.removedTypes.map { "`\($0)`" })
        for (title, section) in [("constructors", diff.constructors), ("functions", diff.functions)] {
            list("Added \(title)", section.added.map { "`\($0.definition)`" })
            list("Removed \(title)", section.removed.map { "`\($0.definition)`" })
            list("Redefined \(title)", section.redefined.map { change in
                var item = "**`\(change.new.name)`** (\(change.idText))"
                if change.resultChanged { item += "\n  - result: `\(change.old.result)` → `\(change.new.result)`" }
                for field in change.fieldChanges { item += "\n  - \(Self.markdown(field))" }
                return item
            })
        }
        list("Compatible Swift changes", compatibility.compatible.map { "`\($0.symbol)`: \($0.change)" })
        return out.joined(separator: "\n")
    }

    static func markdown(_ change: SchemaDiff.FieldChange) -> String {
        switch change {
        case .added(let f): "added `\(f.text)`"
        case .removed(let f): "removed `\(f.text)`"
        case .retyped(let old, let new): "`\(new.name)`: `\(old.typeText)` → `\(new.typeText)`"
        case .moved(let old, let new): "`\(new.name)` moved: `\(old.conditionText ?? "-")` → `\(new.conditionText ?? "-")`"
        case .reordered(let old, let new): "order: `\(old.joined(separator: " "))` → `\(new.joined(separator: " "))`"
        }
    }
}
