// Checker: declarations -> `Schema`. Resolves every type reference, checks flag references, duplicate names and
// IDs, and verifies each constructor ID against the CRC rule. Every problem is reported; none stops the run.

/// Turns declarations into a checked ``Schema``, reporting every problem as a ``Diagnostic`` (none stops the run).
public enum Checker {
    /// Names the language defines; `bytes = Bytes;` style re-declarations of them are not constructors.
    static let primitiveNames: Set<String> = ["int", "long", "double", "string", "bytes", "int128", "int256", "nat"]

    /// Parse and check one schema file.
    public static func check(file: String, text: String, exceptions: [KnownIDException] = KnownIDException.all) -> Schema {
        check(Parser.parse(file: file, text: text), exceptions: exceptions)
    }

    /// Checks parsed declarations; `exceptions` lists the constructor IDs the CRC rule may not reproduce.
    public static func check(_ parsed: ParsedSchema, exceptions: [KnownIDException] = KnownIDException.all) -> Schema {
        var context = Context(parsed: parsed, exceptions: exceptions)
        return context.run()
    }
}

private struct Context {
    let parsed: ParsedSchema
    let exceptions: [KnownIDException]
    var diagnostics: [Diagnostic] = []

    /// Constructors by name, and boxed types (result names of constructors), known before any type is resolved.
    var constructorDeclarations: [String: Declaration] = [:]
    var constructorsOfType: [String: [String]] = [:]

    init(parsed: ParsedSchema, exceptions: [KnownIDException]) {
        self.parsed = parsed
        self.exceptions = exceptions
        self.diagnostics = parsed.diagnostics
    }

    mutating func error(_ message: String, at location: SourceLocation, length: Int = 1) {
        diagnostics.append(Diagnostic(.error, message, at: location, sourceLine: parsed.sourceLine(location.line),
                                      length: length))
    }

    static func isBuiltinVector(_ d: Declaration) -> Bool {
        d.name == "vector" && d.result.name == "Vector"
    }

    mutating func run() -> Schema {
        let declarations = parsed.declarations.filter { !$0.isPrimitiveDeclaration }
        var typeOrder: [String] = []
        for d in declarations where d.section == .types {
            if constructorDeclarations[d.name] == nil { constructorDeclarations[d.name] = d }
            if Self.isBuiltinVector(d) { continue }
            let typeName = d.result.name
            if constructorsOfType[typeName] == nil {
                constructorsOfType[typeName] = []
                typeOrder.append(typeName)
            }
            constructorsOfType[typeName, default: []].append(d.name)
        }

        checkDuplicates(declarations)

        var constructors: [Combinator] = []
        var functions: [Combinator] = []
        for d in declarations {
            let combinator = resolve(d)
            if d.section == .types { constructors.append(combinator) } else { functions.append(combinator) }
        }

        let recursive = recursiveTypes(constructors: constructors)
        let types = typeOrder.map { name in
            BoxedType(name: name, constructors: constructorsOfType[name] ?? [], isRecursive: recursive.contains(name))
        }
        diagnostics.sort { $0.location < $1.location }
        return Schema(file: parsed.file, layer: parsed.layer, constructors: constructors, functions: functions,
                      types: types, diagnostics: diagnostics)
    }

    // MARK: Names and IDs

    mutating func checkDuplicates(_ declarations: [Declaration]) {
        var names: [Declaration.Section: [String: Declaration]] = [:]
        var ids: [UInt32: Declaration] = [:]
        for d in declarations {
            if let first = names[d.section]?[d.name] {
                let what = d.section == .types ? "constructor" : "function"
                error("duplicate \(what) name '\(d.name)' (first declared at \(first.location))", at: d.location,
                      length: d.name.count)
            } else {
                names[d.section, default: [:]][d.name] = d
            }
            let id = d.explicitID ?? d.computedID
            if let first = ids[id] {
                // A reused ID where either side fails its CRC is reported once, as that mismatch
                // (e.g. TDLib's *Prefix helpers reuse the IDs of the invokeWith* wrappers).
                if idIsValid(d) && idIsValid(first) && !sharesDeliberately(d, first) {
                    error("duplicate constructor ID #\(hex(id)) of '\(d.name)': already used by '\(first.name)' at \(first.location)",
                          at: d.idLocation ?? d.location, length: d.explicitID == nil ? d.name.count : d.idLength)
                }
            } else {
                ids[id] = d
            }
        }
    }

    /// Whether an exception declares that `a` reuses `b`'s ID or the reverse.
    func sharesDeliberately(_ a: Declaration, _ b: Declaration) -> Bool {
        exceptions.contains { ($0.name == a.name && $0.sharedWith == b.name) || ($0.name == b.name && $0.sharedWith == a.name) }
    }

    func idIsValid(_ d: Declaration) -> Bool {
        guard let id = d.explicitID else { return true }
        return id == d.computedID || exceptions.contains { $0.accepts(d) }
    }

    mutating func checkID(_ d: Declaration) {
        guard let id = d.explicitID, !idIsValid(d) else { return }
        let computed = d.computedID
        error("constructor ID #\(hex(id)) of '\(d.name)' does not match CRC32 of its normalized definition, #\(hex(computed)) (\"\(d.normalizedText())\")",
              at: d.idLocation ?? d.location, length: d.idLength)
    }

    // MARK: Resolution

    mutating func resolve(_ d: Declaration) -> Combinator {
        checkID(d)
        var generics: [String] = []
        var fields: [Field] = []
        var nats: [String: Int] = [:]  // `#` fields by name -> index among parameters
        for (index, parameter) in d.parameters.enumerated() {
            switch parameter.kind {
            case .generic(let name, let kind):
                if kind.name != "Type" {
                    error("generic parameter '\(name)' must be of kind 'Type', found '\(kind)'", at: kind.location,
                          length: kind.description.count)
                }
                generics.append(name)
            case .raw:
                continue
            case .field(let name, let typeExpression, let condition):
                if let condition { checkCondition(condition, nats: nats, fieldIndex: index, in: d) }
                let type = resolveType(typeExpression, generics: generics, allowTrue: true) ?? .nat
                if type == .nat { nats[name] = index }
                fields.append(Field(name: name, type: type,
                                    condition: condition.map { ($0.field, $0.bit) }, location: parameter.location))
            }
        }
        let result: TLType
        if d.section == .types {
            if Context.isBuiltinVector(d) {
                result = .vector(.generic("t"), boxed: true)
            } else {
                if Checker.primitiveNames.contains(d.result.name) || d.result.isBang || d.result.isPercent
                    || !d.result.arguments.isEmpty {
                    error("constructor '\(d.name)' must build a boxed type, found '\(d.result)'", at: d.result.location,
                          length: d.result.description.count)
                }
                result = .boxed(d.result.name)
            }
        } else {
            result = resolveType(d.result, generics: generics, allowTrue: false) ?? .anyObject
        }
        let id = d.explicitID ?? d.computedID
        return Combinator(kind: d.section == .types ? .constructor : .function, name: d.name, id: id,
                          hasExplicitID: d.explicitID != nil, generics: generics, fields: fields, result: result,
                          definition: definitionText(d, id: id), location: d.location)
    }

    mutating func checkCondition(_ condition: FlagCondition, nats: [String: Int], fieldIndex: Int, in d: Declaration) {
        if nats[condition.field] == nil {
            let declaredLater = d.parameters[fieldIndex...].contains {
                if case .field(let name, let type, _) = $0.kind { return name == condition.field && type.name == "#" }
                return false
            }
            let isOtherField = d.parameters.contains {
                if case .field(let name, let type, _) = $0.kind { return name == condition.field && type.name != "#" }
                return false
            }
            let message: String
            if declaredLater {
                message = "flag field '\(condition.field)' is declared after the field that uses it; a '#' field must come first"
            } else if isOtherField {
                message = "'\(condition.field)' is not a '#' field, so it cannot hold flags"
            } else {
                message = "unknown flag field '\(condition.field)'; declare it first as '\(condition.field):#'"
            }
            error(message, at: condition.location, length: condition.field.count)
        }
        if !(0...31).contains(condition.bit) {
            error("flag bit \(condition.bit == Int.max ? "out of range" : String(condition.bit)) is outside 0...31",
                  at: condition.bitLocation, length: String(condition.bit).count)
        }
    }

    mutating func resolveType(_ t: TypeExpression, generics: [String], allowTrue: Bool) -> TLType? {
        if t.name == "#" { return .nat }
        if t.isBang {
            guard generics.contains(t.name) else {
                error("generic '\(t.name)' is used but not declared; add '{\(t.name):Type}' before it", at: t.location,
                      length: t.description.count)
                return nil
            }
            return .generic(t.name)
        }
        if generics.contains(t.name), t.arguments.isEmpty { return .generic(t.name) }
        if t.name == "Vector" || t.name == "vector" {
            guard t.arguments.count == 1 else {
                error("'\(t.name)' takes exactly one type argument, as in '\(t.name)<long>'", at: t.location,
                      length: t.description.count)
                return nil
            }
            guard let element = resolveType(t.arguments[0], generics: generics, allowTrue: false) else { return nil }
            return .vector(element, boxed: t.name == "Vector")
        }
        if !t.arguments.isEmpty {
            error("type '\(t.name)' does not take type arguments", at: t.location, length: t.description.count)
            return nil
        }
        if t.isPercent {
            guard let names = constructorsOfType[t.name] else {
                error("unknown type '\(t.name)' in '%\(t.name)'", at: t.location, length: t.description.count)
                return nil
            }
            guard names.count == 1, let only = names.first else {
                error("'%\(t.name)' needs a type with exactly one constructor; '\(t.name)' has \(names.count)",
                      at: t.location, length: t.description.count)
                return nil
            }
            return .bare(only)
        }
        switch t.name {
        case "int", "Int": return .int
        case "long", "Long": return .long
        case "double", "Double": return .double
        case "string", "String": return .string
        case "bytes", "Bytes": return .bytes
        case "int128", "Int128": return .int128
        case "int256", "Int256": return .int256
        case "Bool": return .bool
        case "Object": return .anyObject
        case "true":
            if allowTrue { return .trueFlag }
        default:
            break
        }
        if constructorsOfType[t.name] != nil { return .boxed(t.name) }
        if constructorDeclarations[t.name] != nil { return .bare(t.name) }
        error("unknown type '\(t.name)'", at: t.location, length: t.name.count)
        return nil
    }

    func definitionText(_ d: Declaration, id: UInt32) -> String {
        var parts = ["\(d.name)#\(hex(id))"]
        for parameter in d.parameters {
            switch parameter.kind {
            case .generic(let name, let kind): parts.append("{\(name):\(kind)}")
            case .raw(let text): parts.append(text)
            case .field(let name, let type, let condition):
                parts.append("\(name):\(condition.map { "\($0.field).\($0.bit)?" } ?? "")\(type)")
            }
        }
        return (parts + ["=", d.result.description]).joined(separator: " ") + ";"
    }

    // MARK: Recursion

    /// Boxed types that can contain themselves: a cycle in the graph "type -> types its fields use".
    func recursiveTypes(constructors: [Combinator]) -> Set<String> {
        var byName: [String: Combinator] = [:]
        for c in constructors { byName[c.name] = c }
        func referenced(_ type: TLType) -> [String] {
            switch type {
            case .boxed(let name): return [name]
            case .bare(let constructor):
                if case .boxed(let name)? = byName[constructor]?.result { return [name] }
                return []
            case .vector(let element, _): return referenced(element)
            default: return []
            }
        }
        var edges: [String: Set<String>] = [:]
        for c in constructors {
            guard case .boxed(let owner) = c.result else { continue }
            for field in c.fields { edges[owner, default: []].formUnion(referenced(field.type)) }
        }
        var result: Set<String> = []
        for start in edges.keys {
            var stack = Array(edges[start] ?? [])
            var seen: Set<String> = []
            while let next = stack.popLast() {
                if next == start {
                    result.insert(start)
                    break
                }
                if seen.insert(next).inserted { stack.append(contentsOf: edges[next] ?? []) }
            }
        }
        return result
    }
}

func hex(_ id: UInt32) -> String {
    let digits = String(id, radix: 16)
    return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}
