// The checked model of a schema: what the emitter needs and nothing about syntax. Built by `Checker`.

/// A resolved TL type.
public indirect enum TLType: Sendable, Hashable, CustomStringConvertible {
    /// TL `int`.
    case int
    /// TL `long`.
    case long
    /// TL `double`.
    case double
    /// TL `string`.
    case string
    /// TL `bytes`.
    case bytes
    /// TL `int128`.
    case int128
    /// TL `int256`.
    case int256
    /// Boxed `Bool` (`boolTrue#997275b5` / `boolFalse#bc799737`).
    /// Boxed `Bool` (`boolTrue#997275b5` / `boolFalse#bc799737`).
    case bool
    /// Bare `true`: a flag's presence, no bytes on the wire.
    case trueFlag
    /// `#`: a flags word.
    case nat
    /// `Vector<T>` (boxed) or `vector<T>` (bare).
    case vector(TLType, boxed: Bool)
    /// A boxed type by its full name, e.g. `messages.Messages`.
    case boxed(String)
    /// A constructor used bare (no ID on the wire), by its full name, e.g. `future_salt` or `%Message`'s `message`.
    case bare(String)
    /// `X` or `!X` of a generic function.
    case generic(String)
    /// MTProto's `Object`: any boxed value.
    case anyObject

    /// The type as the schema writes it.
    public var description: String {
        switch self {
        case .int: "int"
        case .long: "long"
        case .double: "double"
        case .string: "string"
        case .bytes: "bytes"
        case .int128: "int128"
        case .int256: "int256"
        case .bool: "Bool"
        case .trueFlag: "true"
        case .nat: "#"
        case .vector(let element, let boxed): "\(boxed ? "Vector" : "vector")<\(element)>"
        case .boxed(let name): name
        case .bare(let name): "%" + name
        case .generic(let name): "!" + name
        case .anyObject: "Object"
        }
    }
}

/// A field of a constructor or function, resolved.
public struct Field: Sendable, Hashable {
    /// The field's name, as written.
    public var name: String
    /// Its resolved type.
    public var type: TLType
    /// `flags.N?`: present only when bit `bit` of the `#` field `flagsField` is set.
    public var condition: (flagsField: String, bit: Int)?
    /// Where it is declared.
    public var location: SourceLocation

    /// Equal when the names, types and conditions are (locations do not count).
    public static func == (a: Field, b: Field) -> Bool {
        a.name == b.name && a.type == b.type && a.condition?.flagsField == b.condition?.flagsField
            && a.condition?.bit == b.condition?.bit
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(type)
        hasher.combine(condition?.flagsField)
        hasher.combine(condition?.bit)
    }
}

/// A constructor or a function.
public struct Combinator: Sendable, Hashable {
    /// Whether a combinator is a constructor or a function.
    public enum Kind: Sendable, Hashable {
        /// A constructor: builds a value of a boxed type.
        case constructor
        /// A function: a request, with a result type.
        case function
    }

    /// Constructor or function.
    public var kind: Kind
    /// Full name with namespace: `messages.sendMessage`.
    public var name: String
    /// The ID: written, or computed by the CRC rule.
    public var id: UInt32
    /// Whether the ID was written in the schema (otherwise it was computed by the CRC rule).
    public var hasExplicitID: Bool
    /// Declared generic parameters, `{X:Type}`.
    public var generics: [String]
    /// The fields, in order.
    public var fields: [Field]
    /// For constructors: the boxed type it builds (`User`). For functions: the result type.
    public var result: TLType
    /// The definition as written (normalized whitespace), for doc comments.
    public var definition: String
    /// Where it is declared.
    public var location: SourceLocation

    /// The namespace (`messages` in `messages.sendMessage`), or nil.
    public var namespace: String? { name.split(separator: ".").dropLast().first.map(String.init) }
    /// The name without its namespace.
    public var shortName: String { String(name.split(separator: ".").last ?? Substring(name)) }
}

/// A boxed type and its constructors.
public struct BoxedType: Sendable, Hashable {
    /// Full name with namespace: `messages.Messages`.
    public var name: String
    /// Constructor names in schema order.
    public var constructors: [String]
    /// Whether a value of this type can contain another value of this type (directly or through other types).
    public var isRecursive: Bool

    /// The namespace (`messages` in `messages.Messages`), or nil.
    public var namespace: String? { name.split(separator: ".").dropLast().first.map(String.init) }
    /// The name without its namespace.
    public var shortName: String { String(name.split(separator: ".").last ?? Substring(name)) }
}

/// A checked schema: every constructor, function and boxed type, resolved, with the problems found.
public struct Schema: Sendable {
    /// The file the schema came from.
    public var file: String
    /// The layer, from `// LAYER N`, if given.
    public var layer: Int?
    /// Every constructor, in schema order, including the language-owned ones (`vector`, `boolTrue`, …).
    public var constructors: [Combinator]
    /// Every function, in schema order.
    public var functions: [Combinator]
    /// Boxed types in order of first appearance. `Vector t` (the builtin) is not among them.
    public var types: [BoxedType]
    /// Every problem found, errors and warnings.
    public var diagnostics: [Diagnostic]

    /// The diagnostics that are errors; a schema with none is usable.
    public var errors: [Diagnostic] { diagnostics.filter { $0.severity == .error } }

    /// The constructor named `name` (full name), if any.
    public func constructor(named name: String) -> Combinator? {
        constructorIndex[name].map { constructors[$0] }
    }

    /// The boxed type named `name` (full name), if any.
    public func type(named name: String) -> BoxedType? {
        typeIndex[name].map { types[$0] }
    }

    var constructorIndex: [String: Int] = [:]
    var typeIndex: [String: Int] = [:]

    init(file: String, layer: Int?, constructors: [Combinator], functions: [Combinator], types: [BoxedType],
         diagnostics: [Diagnostic]) {
        self.file = file
        self.layer = layer
        self.constructors = constructors
        self.functions = functions
        self.types = types
        self.diagnostics = diagnostics
        for (i, c) in constructors.enumerated() where constructorIndex[c.name] == nil { constructorIndex[c.name] = i }
        for (i, t) in types.enumerated() { typeIndex[t.name] = i }
    }
}
