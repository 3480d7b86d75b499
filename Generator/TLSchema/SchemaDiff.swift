// What a layer bump changes, down to fields: types, constructors and functions added or removed, and for each
// redefined entry (same name, another definition) the fields added, removed, retyped or moved to another flag bit,
// and whether its ID changed. A definition can change without a new ID: bare `true` flags do not count in the CRC.
// `tlgen diff OLD NEW` renders it; TLSwiftGen adds what the change means for Swift code using the generated API.

/// What changed between two schemas: types, constructors and functions added, removed and redefined, field by
/// field, and whether IDs changed.
public struct SchemaDiff: Sendable {
    /// One field-level change inside a redefined constructor or function.
    public enum FieldChange: Sendable, Equatable, CustomStringConvertible {
        /// A field that is new.
        case added(Field)
        /// A field that is gone.
        case removed(Field)
        /// Another type, or optional <-> required (the condition appeared or went away).
        case retyped(old: Field, new: Field)
        /// The same type on another flag bit (or another `#` word): a wire change only.
        case moved(old: Field, new: Field)
        /// The common fields keep their names and types but come in another order.
        case reordered(old: [String], new: [String])

        /// `+ FIELD`, `- FIELD`, `~ FIELD: OLD -> NEW`, as in the report.
        public var description: String {
            switch self {
            case .added(let f): "+ \(f.text)"
            case .removed(let f): "- \(f.text)"
            case .retyped(let old, let new): "~ \(new.name): \(old.typeText) -> \(new.typeText)"
            case .moved(let old, let new): "~ \(new.name): \(old.conditionText ?? "-") -> \(new.conditionText ?? "-") (moved)"
            case .reordered(let old, let new): "~ order: \(old.joined(separator: " ")) -> \(new.joined(separator: " "))"
            }
        }
    }

    /// A constructor or function present in both schemas with another definition.
    public struct Redefinition: Sendable {
        /// The old definition.
        public var old: Combinator
        /// The new definition.
        public var new: Combinator
        /// Whether the ID changed.
        public var idChanged: Bool { old.id != new.id }
        /// Whether the result type changed.
        public var resultChanged: Bool { old.result != new.result }
        /// What changed in the fields.
        public var fieldChanges: [FieldChange]

        init(old: Combinator, new: Combinator) {
            self.old = old
            self.new = new
            fieldChanges = Self.compare(old.fields, new.fields)
        }

        static func compare(_ old: [Field], _ new: [Field]) -> [FieldChange] {
            let oldByName = Dictionary(old.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let newNames = Set(new.map(\.name))
            var changes: [FieldChange] = []
            for field in new {
                guard let before = oldByName[field.name] else {
                    changes.append(.added(field))
                    continue
                }
                if before.type != field.type || (before.condition == nil) != (field.condition == nil) {
                    changes.append(.retyped(old: before, new: field))
                } else if before.conditionText != field.conditionText {
                    changes.append(.moved(old: before, new: field))
                }
            }
            changes += old.filter { !newNames.contains($0.name) }.map { .removed($0) }
            let commonOld = old.map(\.name).filter(newNames.contains)
            let commonNew = new.map(\.name).filter { oldByName[$0] != nil }
            if commonOld != commonNew { changes.append(.reordered(old: commonOld, new: commonNew)) }
            return changes
        }
    }

    /// Changes to constructors, or to functions.
    public struct Section: Sendable {
        /// Entries only the new schema has.
        public var added: [Combinator] = []
        /// Entries only the old schema has.
        public var removed: [Combinator] = []
        /// Entries both have, defined differently.
        public var redefined: [Redefinition] = []

        /// Whether nothing changed.
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

    /// The old schema's layer, if it gives one.
    public var oldLayer: Int?
    /// The new schema's layer, if it gives one.
    public var newLayer: Int?
    /// Boxed types by name: new ones, and ones no constructor builds any more.
    public var addedTypes: [String]
    /// Boxed types no constructor of the new schema builds.
    public var removedTypes: [String]
    /// Changes to constructors.
    public var constructors: Section
    /// Changes to functions.
    public var functions: Section

    /// Compares `old` with `new`.
    public init(old: Schema, new: Schema) {
        oldLayer = old.layer
        newLayer = new.layer
        let oldTypes = Set(old.types.map(\.name)), newTypes = Set(new.types.map(\.name))
        addedTypes = new.types.map(\.name).filter { !oldTypes.contains($0) }
        removedTypes = old.types.map(\.name).filter { !newTypes.contains($0) }
        constructors = Section(old: old.constructors, new: new.constructors)
        functions = Section(old: old.functions, new: new.functions)
    }

    /// Whether the schemas define the same constructors and functions.
    public var isEmpty: Bool { constructors.isEmpty && functions.isEmpty }

    /// Plain text for a terminal or a review comment: summary lines, then `+`, `-` and `~` lines, a redefined entry
    /// with its field changes indented below it.
    public var rendered: String { rendered(entries: true) }

    /// - Parameter entries: whether to list each entry under the summary lines.
    public func rendered(entries: Bool) -> String {
        var lines = ["layer \(Self.layerText(oldLayer)) -> \(Self.layerText(newLayer))",
                     "types: \(addedTypes.count) added, \(removedTypes.count) removed"]
        for (title, section) in [("constructors", constructors), ("functions", functions)] {
            lines.append("\(title): \(section.added.count) added, \(section.removed.count) removed, "
                         + "\(section.redefined.count) redefined")
        }
        guard entries else { return lines.joined(separator: "\n") }
        for name in addedTypes { lines.append("+ type \(name)") }
        for name in removedTypes { lines.append("- type \(name)") }
        for section in [constructors, functions] {
            for c in section.added { lines.append("+ \(c.definition)") }
            for c in section.removed { lines.append("- \(c.definition)") }
            for change in section.redefined {
                lines.append("~ \(change.new.name) (\(change.idText))")
                if change.resultChanged { lines.append("    ~ result: \(change.old.result) -> \(change.new.result)") }
                for field in change.fieldChanges { lines.append("    \(field)") }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A layer as text, `-` when there is none.
    public static func layerText(_ value: Int?) -> String { value.map(String.init) ?? "-" }
}

extension SchemaDiff.Redefinition {
    /// `same ID 0x…` or `ID 0x… -> 0x…`.
    public var idText: String {
        idChanged ? "ID \(hexID(old.id)) -> \(hexID(new.id))" : "same ID \(hexID(new.id))"
    }
}

/// `#1cb5c415` style, as the schema writes it.
public func hexID(_ id: UInt32) -> String {
    let digits = String(id, radix: 16)
    return "#" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

extension Field {
    /// `flags.3` or nil for an unconditional field.
    public var conditionText: String? { condition.map { "\($0.flagsField).\($0.bit)" } }
    /// The field's type as the schema writes it, with its condition: `flags.3?Vector<long>`.
    public var typeText: String { conditionText.map { "\($0)?\(type)" } ?? type.description }
    /// `name:flags.3?Vector<long>`.
    public var text: String { "\(name):\(typeText)" }
}
