// The request side of generated API functions, in Telegram-iOS's shape: a call is the triple
// (FunctionDescription for logs, the serialized request Buffer, DeserializeFunctionResponse for the result).

/// A request payload as logs see it: name and parameters, sensitive ones redacted when formatted.
public struct FunctionDescription: Sendable, CustomStringConvertible {
    public let function: any TLFunction

    public init(_ function: any TLFunction) {
        self.function = function
    }

    /// The TL name with its namespace, e.g. `messages.sendMessage`.
    public var name: String { function.descriptionFields().0 }

    /// Parameters in schema order, absent optionals omitted.
    public var parameters: [(String, TLValue)] { function.descriptionFields().1 }

    /// One line, redacted with `TLLogFormatter.telegram`.
    public var description: String { TLLogFormatter.telegram.format(self) }
}

/// How to read a function's result.
public struct DeserializeFunctionResponse<T>: Sendable {
    @usableFromInline let _parse: @Sendable (inout BufferReader) throws(TLDecodingError) -> T

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
