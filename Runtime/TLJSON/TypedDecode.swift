// `tl decode --type T` and `mtcall`'s results: reading a value whose constructor ID is not on the wire (a bare vector in `rpc_result`, a
// bare constructor such as `%Message`, a plain `long`) by a TL type written on the command line. The type text is
// parsed here; the bytes are read by TLRuntime's interpreter, the one that reads requests and descriptions.

import TLRuntime
import TLSchema

/// What to read, from a TL type expression: `Vector<User>`, `vector<%Message>`, `long`, `messages.Messages`.
public indirect enum ValueType: Equatable, Sendable {
    /// A bare primitive.
    case int, long, double, string, bytes, int128, int256, bool
    /// `Vector<T>` (boxed, with its constructor ID) or `vector<T>` (bare).
    case vector(ValueType, boxed: Bool)
    /// A boxed type: the ID is on the wire and must name one of its constructors.
    case boxed(String)
    /// A constructor without its ID on the wire (`%Message`, `message`); `id` is put back to parse it.
    case bare(String, id: UInt32)
    /// MTProto's `Object`: any boxed value.
    case object

    /// Type text that names no type the schemas have.
    public struct SyntaxError: Error, CustomStringConvertible, Equatable {
        /// What was wrong, and where in the text.
        public var message: String
        /// The message.
        public var description: String { message }

        /// An error saying `message`.
        public init(message: String) { self.message = message }
    }

    static let maxNesting = 16

    /// Parses `text`; bare constructors are looked up in `schemas` (by constructor name, or `%Type` of a type with
    /// exactly one constructor).
    public static func parse(_ text: String, schemas: [Schema]) throws(SyntaxError) -> ValueType {
        try parse(Substring(text.filter { !$0.isWhitespace }), schemas: schemas, depth: 0)
    }

    private static func parse(_ text: Substring, schemas: [Schema], depth: Int) throws(SyntaxError) -> ValueType {
        guard depth < maxNesting else { throw SyntaxError(message: "type nested deeper than \(maxNesting)") }
        guard !text.isEmpty else { throw SyntaxError(message: "empty type") }
        for (prefix, boxed) in [("Vector<", true), ("vector<", false)] where text.hasPrefix(prefix) {
            guard text.hasSuffix(">") else { throw SyntaxError(message: "'\(text)': missing '>'") }
            let element = text.dropFirst(prefix.count).dropLast()
            return .vector(try parse(element, schemas: schemas, depth: depth + 1), boxed: boxed)
        }
        switch text {
        case "int", "#": return .int
        case "long": return .long
        case "double": return .double
        case "string": return .string
        case "bytes": return .bytes
        case "int128": return .int128
        case "int256": return .int256
        case "Bool": return .bool
        case "Object": return .object
        default: break
        }
        guard text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "%" }),
              !text.dropFirst().contains("%") else {
            throw SyntaxError(message: "'\(text)' is not a TL type")
        }
        let name = String(text.hasPrefix("%") ? text.dropFirst() : text)
        let shortName = name.split(separator: ".").last.map(String.init) ?? name
        let isTypeName = shortName.first?.isUppercase == true
        if !text.hasPrefix("%") && isTypeName {
            guard schemas.contains(where: { $0.type(named: name) != nil }) else {
                throw SyntaxError(message: "no type '\(name)' in the schema")
            }
            return .boxed(name)
        }
        if isTypeName {
            // `%Message`: the type's only constructor, in the first schema where it has exactly one (mtproto's
            // `Message` has one; the API's has dozens).
            let types = schemas.compactMap { schema in schema.type(named: name).map { (schema, $0) } }
            for (schema, type) in types where type.constructors.count == 1 {
                if let c = schema.constructor(named: type.constructors[0]) { return .bare(c.name, id: c.id) }
            }
            if let (_, type) = types.first {
                throw SyntaxError(message: "'%\(name)': a bare type needs exactly one constructor, \(name) has \(type.constructors.count)")
            }
        } else {
            for schema in schemas {
                if let c = schema.constructor(named: name) { return .bare(c.name, id: c.id) }
            }
        }
        throw SyntaxError(message: "no \(isTypeName ? "type" : "constructor") '\(name)' in the schema")
    }
}

/// Reads values by `ValueType`, boxed objects through the generated registry.
public struct TypedDecoder: Sendable {
    let registry: TLRegistry

    /// A decoder reading boxed values through `registry`.
    public init(registry: TLRegistry) { self.registry = registry }

    /// Exactly one value of `type` from `bytes`; trailing bytes are an error.
    public func decode(_ type: ValueType, bytes: [UInt8]) throws(TLDecodingError) -> TLValue {
        var reader = BufferReader(bytes: bytes)
        let value = try TLRequest.read(type.kind, from: &reader, registry: registry)
        try reader.expectEnd()
        return value
    }
}

extension ValueType {
    /// The type as the runtime's interpreter reads it (the reader requests and descriptions go through).
    var kind: TLValueKind {
        switch self {
        case .int: .int
        case .long: .long
        case .double: .double
        case .string: .string
        case .bytes: .bytes
        case .int128: .int128
        case .int256: .int256
        case .bool: .bool
        case .object: .object
        case .boxed(let name): .boxed(name)
        case .bare(let name, let id): .bare(name, id: id)
        case .vector(let element, let boxed): .vector(element.kind, boxed: boxed)
        }
    }
}
