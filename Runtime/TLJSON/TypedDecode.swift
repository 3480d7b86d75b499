// `tl decode --type T` and `mtcall`'s results: reading a value whose constructor ID is not on the wire (a bare vector in `rpc_result`, a
// bare constructor such as `%Message`, a plain `long`) by a TL type written on the command line.

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
        let value = try read(type, &reader)
        try reader.expectEnd()
        return value
    }

    func read(_ type: ValueType, _ reader: inout BufferReader) throws(TLDecodingError) -> TLValue {
        switch type {
        case .int: return .int(try reader.readInt32())
        case .long: return .long(try reader.readInt64())
        case .double: return .double(try reader.readDouble())
        case .string: return .string(try reader.readTLString())
        case .bytes: return .bytes(try reader.readTLBytes())
        case .int128: return .int128(try reader.readInt128())
        case .int256: return .int256(try reader.readInt256())
        case .bool: return .bool(try reader.readBool())
        case .object: return .object(try registry.parse(&reader))
        case .boxed(let name):
            let at = reader.offset
            if let id = reader.peekUInt32(), let found = registry.type(for: id), found.tlTypeName != name {
                throw TLDecodingError(.invalidValue("expected \(name), found a \(found.tlTypeName)"), offset: at)
            }
            return .object(try registry.parse(&reader))
        case .bare(let name, let id):
            // The generated parsers start at the ID, so parse a copy with it put back, then skip what it used.
            var rest = reader
            var boxed = BufferReader(bytes: withUnsafeBytes(of: id.littleEndian, Array.init) + rest.readRemaining())
            let at = reader.offset
            do {
                let object = try registry.parse(&boxed)
                try reader.skip(count: boxed.offset - 4)
                return .object(object)
            } catch {
                throw TLDecodingError(.invalidValue("bare \(name): \(error)"), offset: at)
            }
        case .vector(let element, let boxed):
            try reader.enterObject()
            defer { reader.leaveObject() }
            let count = try reader.readVectorCount(boxed: boxed)
            var items: [TLValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try read(element, &reader)) }
            return .vector(items)
        }
    }
}
