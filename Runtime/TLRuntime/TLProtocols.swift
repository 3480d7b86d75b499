// The protocols generated code conforms to, the conformances of the TL primitives, and `TLValue`, the field-value
// view used by logs and tl-json. Generated types implement `serialize` and `parse` with the `Buffer` and
// `BufferReader` primitives; the runtime only needs these protocols where it handles values generically (vectors,
// function results, the registry, descriptions).

/// A value that can be read in the form it takes as a vector element or a function result.
///
/// `SendableMetatype`: result parsers are `@Sendable` closures that use the element type.
public protocol TLParsable: SendableMetatype {
    /// Reads one value, boxed or bare as the type's form requires; throws a `TLDecodingError` that says where the
    /// input broke.
    static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> Self
}

/// A value that can append itself to a buffer; `boxed` says whether a constructor ID goes first.
///
/// The protocol does not require `Copyable` so that generic code can be written over `T: TLSerializable & ~Copyable`:
/// such code calls `serialize` on a value in place, where code over copyable `T` that is not specialized copies each
/// value first through the type's value witnesses (`Buffer.appendVector`). Every generated type is copyable.
public protocol TLSerializable: ~Copyable {
    /// Appends the value's wire form to `buffer`, with its constructor ID first when `boxed`.
    func serialize(_ buffer: Buffer, _ boxed: Bool)
}

extension TLSerializable {
    /// The value's wire bytes, boxed (constructor ID first).
    public var boxedBytes: [UInt8] {
        let buffer = Buffer()
        serialize(buffer, true)
        return buffer.bytes
    }
}

/// A value that can describe itself field by field, for logs.
public protocol TypeConstructorDescription {
    /// The constructor or function TL name with its namespace (`"messages.sendMessage"`), and its fields in schema
    /// order, absent optional fields omitted.
    func descriptionFields() -> (String, [(String, TLValue)])
}

/// A generated constructor or function value.
///
/// Generated types also conform to `CustomStringConvertible` through ``description``, so `print(value)` and
/// `"\(value)"` show the constructor and its fields, nested, as a log line does.
///
/// `TLObject` does not refine `CustomStringConvertible` itself: a protocol that refines one of the standard library's
/// makes every conforming type's witness table an instantiated one, reached through a lazy accessor wherever it is
/// used, which cost the generated API about a twentieth of its release build (Benchmarks/BuildTime.md).
public protocol TLObject: TypeConstructorDescription, TLSerializable, Sendable {}

extension TLObject {
    /// The constructor and its fields, nested objects described the same way, as ``TLLogFormatter/telegram``
    /// writes them: its sensitive fields redacted, long vectors, strings and bytes elided. One implementation for
    /// every generated type, through `descriptionFields()`, rather than one per type; it is their
    /// `CustomStringConvertible` witness.
    public var description: String { TLLogFormatter.telegram.format(self) }
}

/// A request payload; `serialize(_, true)` writes its ID and parameters.
public protocol TLFunction: TLObject {}

/// A type the registry can parse once the constructor ID has been read.
///
/// Depth accounting belongs to the implementation: it should call `reader.enterObject()` first and
/// `reader.leaveObject()` when done. `TLRegistry` does not change the depth itself.
public protocol TLRegistrable: TLObject {
    /// Reads the fields of constructor `id`, which the caller has already read; throws on malformed input.
    static func parse(_ reader: inout BufferReader, constructor id: UInt32) throws(TLDecodingError) -> Self
    /// The boxed TL type with its namespace (`"messages.Messages"`), to check an object read through the registry
    /// is of the type a field expects.
    static var tlTypeName: String { get }
}

/// A TL field value, as logs and tl-json see it. Only the large payloads are boxed (`indirect`): the value stays
/// 17 bytes and loadable, so reading an `int` or a `string` argument of a request retains nothing or only the string
/// (every case boxed: a retain of the box per read; none boxed: an existential inline, copied through metadata).
public enum TLValue: Sendable {
    /// A TL `int`.
    case int(Int32)
    /// A TL `long`.
    case long(Int64)
    /// A TL `double`.
    case double(Double)
    /// A TL `int128`.
    case int128(TLInt128)
    /// A TL `int256`.
    indirect case int256(TLInt256)
    /// A TL `string`.
    case string(String)
    /// A TL `bytes`.
    case bytes([UInt8])
    /// A TL `Bool`.
    case bool(Bool)
    /// A `#` field.
    case flags(UInt32)
    /// A set `flags.N?true` field.
    case trueFlag
    /// A TL vector, of any element type.
    case vector([TLValue])
    /// A nested constructor's value.
    indirect case object(any TLObject)
    /// An opaque embedded object (MTProto `Object`), as serialized.
    case raw([UInt8])
}

// MARK: Primitive conformances

/// TL `int`.
extension Int32: TLParsable, TLSerializable {
    /// Reads a little-endian TL `int`.
    @inlinable public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> Int32 {
        try reader.readInt32()
    }

    /// Appends a little-endian TL `int` (never boxed).
    @inlinable public func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendInt32(self) }
}

/// TL `long`.
extension Int64: TLParsable, TLSerializable {
    /// Reads a little-endian TL `long`.
    @inlinable public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> Int64 {
        try reader.readInt64()
    }

    /// Appends a little-endian TL `long` (never boxed).
    @inlinable public func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendInt64(self) }
}

/// TL `double`.
extension Double: TLParsable, TLSerializable {
    /// Reads a TL `double` (IEEE 754, little-endian).
    @inlinable public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> Double {
        try reader.readDouble()
    }

    /// Appends a TL `double` (never boxed).
    @inlinable public func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendDouble(self) }
}

/// TL `string`.
extension String: TLParsable, TLSerializable {
    /// Reads a TL `string`: its length, UTF-8 bytes and padding; invalid UTF-8 is an error.
    @inlinable public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> String {
        try reader.readTLString()
    }

    /// Appends a TL `string` with its length and padding.
    @inlinable public func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendTLString(self) }
}

/// TL `Bool`, which only exists boxed: `boxed` is ignored.
extension Bool: TLParsable, TLSerializable {
    /// Reads `boolTrue` or `boolFalse`; any other ID is an error.
    @inlinable public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> Bool {
        try reader.readBool()
    }

    /// Appends `boolTrue` or `boolFalse`.
    @inlinable public func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendBool(self) }
}

extension TLInt128: TLParsable, TLSerializable {
    /// Reads 16 bytes as a TL `int128`.
    @inlinable public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> TLInt128 {
        try reader.readInt128()
    }

    /// Appends the 16 bytes of a TL `int128`.
    @inlinable public func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendInt128(self) }
}

extension TLInt256: TLParsable, TLSerializable {
    /// Reads 32 bytes as a TL `int256`.
    @inlinable public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> TLInt256 {
        try reader.readInt256()
    }

    /// Appends the 32 bytes of a TL `int256`.
    @inlinable public func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendInt256(self) }
}
