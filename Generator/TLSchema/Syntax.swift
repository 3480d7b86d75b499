// The syntax tree of a TL schema, as written: names, IDs, parameters and type expressions with their positions.
// The checker resolves it into the semantic model (Model.swift).

/// A type as written: `int`, `Vector<long>`, `messages.Messages`, `%Message`, `!X`, `#`.
public struct TypeExpression: Sendable, Hashable, CustomStringConvertible {
    /// The type's name, with its namespace (`messages.Messages`).
    public var name: String
    /// Type arguments (`long` in `Vector<long>`).
    public var arguments: [TypeExpression]
    /// `!X`: a function call of the generic type X travels here.
    public var isBang: Bool
    /// `%T`: the bare form of boxed type T.
    public var isPercent: Bool
    /// Where it is written.
    public var location: SourceLocation
    /// Whether the arguments were written `T<A>` (true) or `T A` (false; only in result types like `Vector t`).
    public var angleBrackets: Bool

    /// A type expression.
    public init(name: String, arguments: [TypeExpression] = [], isBang: Bool = false, isPercent: Bool = false,
                location: SourceLocation, angleBrackets: Bool = true) {
        self.name = name
        self.arguments = arguments
        self.isBang = isBang
        self.isPercent = isPercent
        self.location = location
        self.angleBrackets = angleBrackets
    }

    /// As written in the schema, e.g. `Vector<long>`.
    public var description: String {
        let prefix = isBang ? "!" : (isPercent ? "%" : "")
        guard !arguments.isEmpty else { return prefix + name }
        if angleBrackets { return prefix + name + "<" + arguments.map(\.description).joined(separator: ",") + ">" }
        return prefix + ([name] + arguments.map(\.description)).joined(separator: " ")
    }

    /// The constructor-ID normal form: `<` becomes a space and `>` disappears (PROVENANCE.md, rule 3).
    var normalized: String {
        let prefix = isBang ? "!" : (isPercent ? "%" : "")
        return prefix + ([name] + arguments.map(\.normalized)).joined(separator: " ")
    }
}

/// `flags.3?` in `name:flags.3?Type`.
public struct FlagCondition: Sendable, Hashable {
    /// The `#` field the bit is in (`flags`).
    public var field: String
    /// The bit, 0…31.
    public var bit: Int
    /// Where the condition is written.
    public var location: SourceLocation
    /// Where the bit number is written.
    public var bitLocation: SourceLocation
}

/// One parameter of a declaration.
public struct Parameter: Sendable, Hashable {
    /// What kind of parameter.
    public enum Kind: Sendable, Hashable {
        /// `name:Type` or `name:flags.N?Type`.
        case field(name: String, type: TypeExpression, condition: FlagCondition?)
        /// `{X:Type}`.
        case generic(name: String, kind: TypeExpression)
        /// Builtin-only syntax such as the vector's `# [ t ]`, kept as normalized text.
        case raw(String)
    }

    /// What the parameter is.
    public var kind: Kind
    /// Where it is written.
    public var location: SourceLocation
}

/// One `name#id params = Result;` line of a schema, as written.
public struct Declaration: Sendable, Hashable {
    /// Whether a declaration is in the types part or after `---functions---`.
    public enum Section: String, Sendable, Hashable {
        /// Before `---functions---`: a constructor.
        case types
        /// After `---functions---`: a function.
        case functions
    }

    /// Full name including the namespace: `messages.sendMessage`.
    public var name: String
    /// The ID written after `#`, if any.
    public var explicitID: UInt32?
    /// Where the ID is written, if it is.
    public var idLocation: SourceLocation?
    /// Columns the `#id` token spans (IDs may be written without leading zeros: `#dbaeae9`).
    public var idLength: Int = 9
    /// The parameters, in order.
    public var parameters: [Parameter]
    /// The result type.
    public var result: TypeExpression
    /// Types or functions.
    public var section: Section
    /// Where the declaration starts.
    public var location: SourceLocation
    /// A declaration of a primitive (`int ? = Int;`, `bytes = Bytes;`, `int128 4*[ int ] = Int128;`):
    /// part of the language, not a constructor.
    public var isPrimitiveDeclaration: Bool

    /// The text whose CRC32 is the constructor ID (PROVENANCE.md, "Constructor-ID rule").
    /// - Parameter bytesAsString: rule 4 (`bytes` written as `string`); Telegram assigned a few IDs without it.
    public func normalizedText(bytesAsString: Bool = true) -> String {
        var parts = [name]
        for parameter in parameters {
            switch parameter.kind {
            case .generic(let name, let kind):
                parts.append("\(name):\(kind.normalized)")
            case .raw(let text):
                parts.append(text)
            case .field(let name, let type, let condition):
                if condition != nil, type.name == "true", type.arguments.isEmpty, !type.isBang, !type.isPercent {
                    continue // rule 2: bare `true` flags do not count
                }
                var typeText = type.normalized
                if bytesAsString, type.name == "bytes", type.arguments.isEmpty, !type.isPercent { typeText = "string" }
                let conditionText = condition.map { "\($0.field).\($0.bit)?" } ?? ""
                parts.append("\(name):\(conditionText)\(typeText)")
            }
        }
        parts.append("=")
        parts.append(result.normalized)
        return parts.joined(separator: " ")
    }

    /// The CRC-32 of ``normalizedText(bytesAsString:)``: the ID the rule gives.
    public var computedID: UInt32 { CRC32.checksum(normalizedText()) }
}
