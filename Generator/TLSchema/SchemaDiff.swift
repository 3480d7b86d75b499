// What a layer bump changes: constructors and functions added, removed, or redefined (same name, another
// definition). A definition can change without a new ID: bare `true` flags do not count in the ID's CRC.
// `tlgen diff OLD NEW` prints it, so a reviewer reads the schema change before the generated diff.

public struct SchemaDiff: Sendable {
    public struct Redefinition: Sendable {
        public var old: Combinator
        public var new: Combinator
    }

    public struct Section: Sendable {
        public var added: [Combinator] = []
        public var removed: [Combinator] = []
        public var redefined: [Redefinition] = []

        public var isEmpty: Bool { added.isEmpty && removed.isEmpty && redefined.isEmpty }

        init(old: [Combinator], new: [Combinator]) {
            var oldByName: [String: Combinator] = [:]
            for c in old where oldByName[c.name] == nil { oldByName[c.name] = c }
            var newNames: Set<String> = []
            for c in new {
                newNames.insert(c.name)
                if let before = oldByName[c.name] {
                    if before.definition != c.definition { redefined.append(Redefinition(old: before, new: c)) }
                } else {
                    added.append(c)
                }
            }
            removed = old.filter { !newNames.contains($0.name) }
        }
    }

    public var oldLayer: Int?
    public var newLayer: Int?
    public var constructors: Section
    public var functions: Section

    public init(old: Schema, new: Schema) {
        oldLayer = old.layer
        newLayer = new.layer
        constructors = Section(old: old.constructors, new: new.constructors)
        functions = Section(old: old.functions, new: new.functions)
    }

    public var isEmpty: Bool { constructors.isEmpty && functions.isEmpty }

    /// Plain text for a terminal or a review comment: a summary line per section, then `+`, `-` and `~` lines.
    public var rendered: String { rendered(entries: true) }

    /// - Parameter entries: whether to list each entry under its section's summary line.
    public func rendered(entries: Bool) -> String {
        func layer(_ value: Int?) -> String { value.map(String.init) ?? "-" }
        var lines = ["layer \(layer(oldLayer)) -> \(layer(newLayer))"]
        for (title, section) in [("constructors", constructors), ("functions", functions)] {
            lines.append("\(title): \(section.added.count) added, \(section.removed.count) removed, "
                         + "\(section.redefined.count) redefined")
            guard entries else { continue }
            for c in section.added { lines.append("+ \(c.definition)") }
            for c in section.removed { lines.append("- \(c.definition)") }
            for change in section.redefined {
                let ids = change.old.id == change.new.id ? "same ID" : "new ID"
                lines.append("~ \(change.new.name) (\(ids))")
                lines.append("    - \(change.old.definition)")
                lines.append("    + \(change.new.definition)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
