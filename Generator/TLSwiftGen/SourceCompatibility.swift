// What a schema change means for Swift code that uses the generated API, judged on the Swift this emitter writes:
// each boxed type is an enum (a new case breaks exhaustive `switch`es), a constructor's fields are a payload class
// whose `init` gives `true` flags and optional fields default values (so a new one is not a break, wherever it sits),
// and a request builder's parameters, and its writer's (`into:`, the same list and defaults), follow the same rule.
// Anything a caller could name that goes away or changes type is a break; a change only the wire sees (a new ID, a
// moved flag bit) is not.

import TLSchema

/// One change to the generated Swift API, and whether it breaks code using it.
public struct SourceImpact: Sendable, Equatable, CustomStringConvertible {
    /// The Swift symbol affected: `Api.InputPeer`, `Api.functions.messages.sendMessage`.
    public var symbol: String
    /// What changed, in words (`new required parameter \`dc: Int32\``).
    public var change: String
    /// Whether code using the symbol stops compiling.
    public var breaking: Bool

    /// `! SYMBOL: CHANGE` for a breaking change, `  SYMBOL: CHANGE` otherwise.
    public var description: String { "\(breaking ? "!" : " ") \(symbol): \(change)" }
}

/// The changes a schema difference makes to the generated Swift API, by the emitter's rules.
public struct SourceCompatibility: Sendable {
    /// Every change, in the order of the schema difference.
    public var impacts: [SourceImpact]
    /// The changes that break code using the API.
    public var breaking: [SourceImpact] { impacts.filter(\.breaking) }
    /// The changes that do not.
    public var compatible: [SourceImpact] { impacts.filter { !$0.breaking } }

    /// The changes `diff` makes to the generated API.
    /// - Parameters:
    ///   - diff: the schema difference.
    ///   - old: the schema before.
    ///   - new: the schema after.
    ///   - namespace: the configured Swift namespace (`Api`), the prefix of every symbol.
    public init(diff: SchemaDiff, old: Schema, new: Schema, namespace: String) {
        let before = Surface(schema: old, namespace: namespace)
        let after = Surface(schema: new, namespace: namespace)
        var impacts: [SourceImpact] = []
        func add(_ symbol: String, _ change: String, breaking: Bool) {
            impacts.append(SourceImpact(symbol: symbol, change: change, breaking: breaking))
        }

        for name in before.namespaces.subtracting(after.namespaces).sorted() {
            add("\(namespace).\(name)", "namespace removed (renamed?): every use breaks", breaking: true)
        }
        for name in after.namespaces.subtracting(before.namespaces).sorted() {
            add("\(namespace).\(name)", "new namespace", breaking: false)
        }
        let removedTypes = Set(diff.removedTypes), addedTypes = Set(diff.addedTypes)
        for name in diff.removedTypes where !SwiftEmitter.builtinTypes.contains(name) {
            add(before.emitter.qualified(name), "type removed", breaking: true)
        }
        for name in diff.addedTypes where !SwiftEmitter.builtinTypes.contains(name) {
            add(after.emitter.qualified(name), "new type", breaking: false)
        }

        // Constructors: enum cases and their payload classes.
        for c in diff.constructors.added where !SwiftEmitter.builtinConstructors.contains(c.name) {
            guard let type = c.result.typeName, !addedTypes.contains(type) else { continue }
            add(after.emitter.qualified(type), "new case .\(after.emitter.caseName(c)) breaks exhaustive `switch`es",
                breaking: true)
        }
        for c in diff.constructors.removed where !SwiftEmitter.builtinConstructors.contains(c.name) {
            guard let type = c.result.typeName, !removedTypes.contains(type) else { continue }
            add(before.emitter.qualified(type), "case .\(before.emitter.caseName(c)) removed", breaking: true)
        }
        for change in diff.constructors.redefined where !SwiftEmitter.builtinConstructors.contains(change.new.name) {
            let oldType = change.old.result.typeName ?? "", newType = change.new.result.typeName ?? ""
            let symbol = after.emitter.qualified(newType) + "." + after.emitter.caseName(change.new)
            if oldType != newType {
                add(symbol, "moved from \(before.emitter.qualified(oldType)) to \(after.emitter.qualified(newType))",
                    breaking: true)
                continue
            }
            let oldFields = before.emitter.emittedFields(change.old), newFields = after.emitter.emittedFields(change.new)
            if oldFields.isEmpty != newFields.isEmpty {
                add(symbol, newFields.isEmpty ? "the case lost its payload" : "the case gained a payload (\(after.emitter.consName(change.new)))",
                    breaking: true)
                continue
            }
            let cons = after.emitter.qualified(newType) + "." + after.emitter.consName(change.new)
            var fieldImpacts = Self.parameters(old: before.parameters(change.old), new: after.parameters(change.new))
            // Properties: every field is a `public` property (flags words too); one gone or retyped breaks readers.
            let newProperties = after.properties(change.new)
            for (name, type) in before.properties(change.old) where fieldImpacts[name]?.breaking != true {
                if let now = newProperties.first(where: { $0.name == name }) {
                    if now.type != type { fieldImpacts[name] = (true, "property `\(name)` is now \(now.type), was \(type)") }
                } else {
                    fieldImpacts[name] = (true, "property `\(name)` removed")
                }
            }
            for (_, impact) in fieldImpacts.sorted(by: { $0.key < $1.key }) {
                add(cons, impact.change, breaking: impact.breaking)
            }
            if fieldImpacts.isEmpty { add(cons, Self.wireOnly(change), breaking: false) }
        }

        // Functions: request builders and their writers, which take the same parameters.
        for f in diff.functions.added { add(after.emitter.functionSymbol(f), "new function", breaking: false) }
        for f in diff.functions.removed { add(before.emitter.functionSymbol(f), "function removed", breaking: true) }
        for change in diff.functions.redefined {
            let symbol = after.emitter.functionSymbol(change.new)
            var fieldImpacts = Self.parameters(old: before.parameters(change.old), new: after.parameters(change.new))
            let oldResult = before.emitter.swiftType(change.old.result), newResult = after.emitter.swiftType(change.new.result)
            if oldResult != newResult { fieldImpacts["->"] = (true, "result is now \(newResult), was \(oldResult)") }
            for (_, impact) in fieldImpacts.sorted(by: { $0.key < $1.key }) {
                add(symbol, impact.change, breaking: impact.breaking)
            }
            if fieldImpacts.isEmpty { add(symbol, Self.wireOnly(change), breaking: false) }
        }
        self.impacts = impacts
    }

    static func wireOnly(_ change: SchemaDiff.Redefinition) -> String {
        change.idChanged ? "wire only (\(change.idText))" : "wire only (same Swift signature)"
    }

    typealias Parameter = (label: String, type: String, hasDefault: Bool)

    /// Whether every call written against `old` still compiles against `new`: each old parameter still there with
    /// its type, none that callers may omit became required, new ones have defaults, and the order is kept.
    static func parameters(old: [Parameter], new: [Parameter]) -> [String: (breaking: Bool, change: String)] {
        var result: [String: (breaking: Bool, change: String)] = [:]
        let newByLabel = Dictionary(new.map { ($0.label, $0) }, uniquingKeysWith: { first, _ in first })
        let oldLabels = Set(old.map(\.label))
        for p in old {
            guard let now = newByLabel[p.label] else {
                result[p.label] = (true, "parameter and property `\(p.label)` removed")
                continue
            }
            if now.type != p.type {
                result[p.label] = (true, "`\(p.label)` is now \(now.type), was \(p.type)")
            } else if p.hasDefault && !now.hasDefault {
                result[p.label] = (true, "`\(p.label)` is now required (no default)")
            } else if !p.hasDefault && now.hasDefault {
                result[p.label] = (false, "`\(p.label)` now has a default")
            }
        }
        for p in new where !oldLabels.contains(p.label) {
            result[p.label] = p.hasDefault
                ? (false, "new parameter `\(p.label): \(p.type)` with a default")
                : (true, "new required parameter `\(p.label): \(p.type)`")
        }
        let commonOld = old.map(\.label).filter { newByLabel[$0] != nil }
        let commonNew = new.map(\.label).filter(oldLabels.contains)
        if commonOld != commonNew { result["(order)"] = (true, "parameter order changed: labelled arguments must follow it") }
        return result
    }

    /// The Swift names the schema's types and functions live in.
    struct Surface {
        let emitter: SwiftEmitter
        let namespaces: Set<String>

        init(schema: Schema, namespace: String) {
            emitter = SwiftEmitter(schema: schema, options: EmitOptions(namespace: namespace, fileCount: 1,
                                                                       schemaName: schema.file, schemaSHA256: ""))
            namespaces = Set(emitter.namespaces).union(emitter.functionNamespaces.map { "functions.\($0)" })
        }

        func parameters(_ c: Combinator) -> [Parameter] {
            emitter.emittedFields(c).filter(\.isStored).map { f in
                let type = if case .generic = f.field.type, let generic = c.generics.first {
                    SwiftEmitter.callType(generic)
                } else {
                    f.declaredType
                }
                return (f.swiftName, type, f.isTrueFlag || f.isOptional)
            }
        }

        func properties(_ c: Combinator) -> [(name: String, type: String)] {
            emitter.emittedFields(c).map { ($0.swiftName, $0.declaredType) }
                + emitter.natFields(c).map { (Naming.fieldName($0.name), "Int32") }
        }
    }
}

extension SwiftEmitter {
    /// `Api.functions.messages.sendMessage`.
    func functionSymbol(_ f: Combinator) -> String { "\(functionContainer(f)).\(Naming.escaped(f.shortName))" }
}

extension TLType {
    /// The boxed type a constructor builds.
    var typeName: String? {
        switch self {
        case .boxed(let name): name
        case .bool: "Bool"
        default: nil
        }
    }
}
