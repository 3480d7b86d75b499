// The request side of generated API functions, in Telegram-iOS's shape: a call is the triple
// (FunctionDescription for logs, the serialized request Buffer, DeserializeFunctionResponse for the result).

/// A request payload as logs see it: name and parameters, sensitive ones redacted when formatted.
///
/// Generated functions write the request directly, and the description shares the written bytes with the call's
/// `Buffer` (which copies them before it writes again); the parameters are read back from them (through the schema's
/// registry) only when asked for, so building a call costs no description and no copy.
public struct FunctionDescription: Sendable, CustomStringConvertible {
    enum Source: Sendable {
        case function(any TLFunction)
        case serialized(BufferSnapshot, TLRegistry)
    }

    let source: Source
    /// What a generated builder recorded as the call's target.
    private let recordedTarget: (any TLObject)?

    /// The description of a request value (its fields are read from the value itself).
    public init(_ function: any TLFunction) {
        source = .function(function)
        recordedTarget = nil
    }

    /// The request `buffer` holds (boxed, from its first byte), as `registry` reads it. Later writes to `buffer` do
    /// not change it. `target` is what the call acts on, as the builder was given it (see ``target``).
    public init(serialized buffer: Buffer, registry: TLRegistry, target: (any TLObject)? = nil) {
        source = .serialized(buffer._snapshot(), registry)
        recordedTarget = target
    }

    /// The peer or channel the call acts on: its `peer` or `channel` argument when that is an object. Generated
    /// builders record it as they write the call, so it is known without reading the bytes back; a description of
    /// a request value reads it from the value's fields. nil when the call has no such argument.
    public var target: (any TLObject)? {
        switch source {
        case .function(let function):
            for (name, value) in function.descriptionFields().1 where name == "peer" || name == "channel" {
                if case .object(let object) = value { return object }
            }
            return nil
        case .serialized:
            return recordedTarget
        }
    }

    /// The request as a value. One written by generated code is parsed from its bytes each time; bytes the
    /// registry cannot read (an inner call built by hand) come back as a `TLUnreadableRequest`.
    public var function: any TLFunction {
        switch source {
        case .function(let function):
            return function
        case .serialized(let snapshot, let registry):
            let bytes = snapshot.bytes
            do throws(TLDecodingError) {
                if let request = try registry.parseRequest(bytes: bytes) { return request }
                return TLUnreadableRequest(bytes: bytes, name: nil, error: nil)
            } catch {
                return TLUnreadableRequest(bytes: bytes, name: name, error: error)
            }
        }
    }

    /// The TL name with its namespace, e.g. `messages.sendMessage`.
    public var name: String {
        switch source {
        case .function(let function):
            return function.descriptionFields().0
        case .serialized(let snapshot, let registry):
            // The ID alone names the function: no need to read the parameters.
            let id = TLUnreadableRequest.id(of: UnsafeRawBufferPointer(start: snapshot.base, count: snapshot.count))
            return registry.functionDefinition(for: id).map(TLSignature.name(of:)) ?? TLUnreadableRequest.label(id)
        }
    }

    /// Parameters in schema order, absent optionals omitted.
    public var parameters: [(String, TLValue)] { function.descriptionFields().1 }

    /// One line, redacted with `TLLogFormatter.telegram`.
    public var description: String { TLLogFormatter.telegram.format(self) }
}

/// Request bytes a registry could not read back, kept as they are: writing it writes the same bytes.
public struct TLUnreadableRequest: TLFunction, CustomStringConvertible {
    /// The request as it was given, boxed (function ID first).
    public let bytes: [UInt8]
    /// The function's name, when the registry knows its ID.
    public let name: String?
    /// Why reading failed; nil when the ID is a constructor's, not a function's.
    public let error: TLDecodingError?

    /// Writes the kept bytes: all of them when `boxed`, without the function ID otherwise.
    public func serialize(_ buffer: Buffer, _ boxed: Bool) {
        (boxed ? bytes[...] : bytes.dropFirst(4)).withUnsafeBytes { buffer.appendRaw($0) }
    }

    /// The function's name (or its ID in hex) and the raw bytes as its one field.
    public func descriptionFields() -> (String, [(String, TLValue)]) {
        (name ?? Self.label(bytes.withUnsafeBytes(Self.id(of:))), [("bytes", .raw(bytes))])
    }

    /// The constructor ID the bytes start with (little-endian); 0 when there are fewer than 4.
    static func id(of bytes: UnsafeRawBufferPointer) -> UInt32 {
        bytes.count >= 4 ? bytes.loadUnaligned(as: UInt32.self).littleEndian : 0
    }

    static func label(_ id: UInt32) -> String {
        let digits = String(id, radix: 16)
        return "unknown#" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}

/// How to read a function's result.
public struct DeserializeFunctionResponse<T>: Sendable {
    @usableFromInline let _parse: @Sendable (inout BufferReader) throws(TLDecodingError) -> T

    /// A result reader from a parse function (generated code passes the result type's).
    public init(_ parse: @escaping @Sendable (inout BufferReader) throws(TLDecodingError) -> T) {
        _parse = parse
    }

    /// A boxed `Vector<E>` result.
    public static func vector<E: TLParsable>(of: E.Type) -> DeserializeFunctionResponse<[E]> {
        DeserializeFunctionResponse<[E]> { (reader: inout BufferReader) throws(TLDecodingError) -> [E] in
            try reader.readVector(boxed: true, of: E.self)
        }
    }

    /// A boxed `Vector<bytes>` result.
    public static func bytesVector() -> DeserializeFunctionResponse<[[UInt8]]> {
        DeserializeFunctionResponse<[[UInt8]]> { (reader: inout BufferReader) throws(TLDecodingError) -> [[UInt8]] in
            try reader.readBytesVector(boxed: true)
        }
    }

    /// Reads the result from `reader`. A `gzip_packed` result (every result is boxed) is inflated transparently.
    @inlinable
    public func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> T {
        if reader.peekUInt32() == TLConstructorID.gzipPacked {
            return try reader.withUnpackedGzip { (inner) throws(TLDecodingError) -> T in try _parse(&inner) }
        }
        return try _parse(&reader)
    }

    /// Reads the result filling all of `buffer`; trailing bytes are an error.
    public func parse(_ buffer: Buffer) throws(TLDecodingError) -> T {
        var reader = BufferReader(buffer)
        let value = try parse(&reader)
        try reader.expectEnd()
        return value
    }

    /// Reads the result filling all of `bytes`; trailing bytes are an error.
    public func parse(bytes: [UInt8]) throws(TLDecodingError) -> T {
        try parse(bytes: bytes[...])
    }

    /// Reads the result filling all of `bytes`, where they lie (no copy is made of them first); trailing bytes are
    /// an error.
    public func parse(bytes: ArraySlice<UInt8>) throws(TLDecodingError) -> T {
        try BufferReader.withReader(over: bytes) { (reader) throws(TLDecodingError) -> T in
            let value = try parse(&reader)
            try reader.expectEnd()
            return value
        }
    }
}

extension DeserializeFunctionResponse where T: TLParsable {
    /// A result of a type that parses itself (a generated boxed type, `Bool`, …).
    public init(_ type: T.Type) {
        self.init { (reader: inout BufferReader) throws(TLDecodingError) -> T in try T.parse(&reader) }
    }
}

extension TLFunction {
    /// The Telegram-iOS style triple for a request: its description, itself serialized boxed, and how to read the
    /// result.
    public func call<T>(
        _ response: DeserializeFunctionResponse<T>
    ) -> (FunctionDescription, Buffer, DeserializeFunctionResponse<T>) {
        let buffer = Buffer()
        serialize(buffer, true)
        return (FunctionDescription(self), buffer, response)
    }
}
