// The checked model of a schema: what the emitter needs and nothing about syntax. Built by `Checker`.

/// A resolved TL type.
public indirect enum TLType: Sendable, Hashable, CustomStringConvertible {
    case int, long, double, string, bytes, int128, int256
    /// Boxed `Bool` (`boolTrue#997275b5` / `boolFalse#bc799737`).
    case bool
    /// Bare `true`: a flag's presence, no bytes on the wire.
    case trueFlag
    /// `#`: a flags word.
    case nat
    case vector(TLType, boxed: Bool)
    /// A boxed type by its full name, e.g. `messages.Messages`.
    case boxed(String)
    /// A constructor used bare (no ID on the wire), by its full name, e.g. `future_salt` or `%Message`'s `message`.
    case bare(String)
    /// `X` or `!X` of a generic function.
    case generic(String)
    /// MTProto's `Object`: any boxed value.
    case anyObject

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

public struct Field: Sendable, Hashable {
    public var name: String
    public var type: TLType
    /// `flags.N?`: present only when bit `bit` of the `#` field `flagsField` is set.
    public var condition: (flagsField: String, bit: Int)?
    public var location: SourceLocation

    public static func == (a: Field, b: Field) -> Bool {
        a.name == b.name && a.type == b.type && a.condition?.flagsField == b.condition?.flagsField
            && a.condition?.bit == b.condition?.bit
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(type)
        hasher.combine(condition?.flagsField)
        hasher.combine(condition?.bit)
    }
}

/// A constructor or a function.
public struct Combinator: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case constructor
        case function
    }

    public var kind: Kind
    /// Full name with namespace: `messages.sendMessage`.
    public var name: String
    public var id: UInt32
    /// Whether the ID was written in the schema (otherwise it was computed by the CRC rule).
    public var hasExplicitID: Bool
    /// Declared generic parameters, `{X:Type}`.
    public var generics: [String]
    public var fields: [Field]
    /// For constructors: the boxed type it builds (`User`). For functions: the result type.
    public var result: TLType
    /// The definition as written (normalized whitespace), for doc comments.
    public var definition: String
    public var location: SourceLocation

    public var namespace: String? { name.split(separator: ".").dropLast().first.map(String.init) }
    public var shortName: String { String(name.split(separator: ".").last ?? Substring(name)) }
}

public struct BoxedType: Sendable, Hashable {
    /// Full name with namespace: `messages.Messages`.
    public var name: String
    /// Constructor names in schema order.
    public var constructors: [String]
    /// Whether a value of this type can contain another value of this type (directly or through other types).
    public var isRecursive: Bool

    public var namespace: String? { name.split(separator: ".").dropLast().first.map(String.init) }
    public var shortName: String { String(name.split(separator: ".").last ?? Substring(name)) }
}

public struct Schema: Sendable {
    public var file: String
    public var layer: Int?
    /// Every constructor, in schema order, including the language-owned ones (`vector`, `boolTrue`, …).
    public var constructors: [Combinator]
    public var functions: [Combinator]
    /// Boxed types in order of first appearance. `Vector t` (the builtin) is not among them.
    public var types: [BoxedType]
    public var diagnostics: [Diagnostic]

    public var errors: [Diagnostic] { diagnostics.filter { $0.severity == .error } }

    public func constructor(named name: String) -> Combinator? {
        constructorIndex[name].map { constructors[$0] }
    }

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
