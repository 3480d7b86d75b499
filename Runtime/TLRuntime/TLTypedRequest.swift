// Requests as typed values, for a server: the generated server modules (`TelegramApiServer`) give every function of
// a schema a struct with its arguments as typed properties, read from the wire and written back byte for byte, and
// the type of its result. A client never needs these (it writes requests with the generated builders), so they live
// in modules of their own; the dynamic `TLRequest` stays for tools that take a method name from a user.

/// A function's request as a typed value: its arguments as properties, `Result` the type it is answered with.
public protocol TLTypedRequest: TLSerializable, Sendable, SendableMetatype {
    /// What the function returns: `Api.Updates` for `messages.sendMessage`, `[Api.User]` for `users.getUsers`;
    /// the inner call's answer as written (`[UInt8]`) for a wrapper such as `invokeWithLayer`.
    associatedtype Result: Sendable

    /// The function's constructor ID.
    static var tlConstructorID: UInt32 { get }
    /// The function's TL name with its namespace (`messages.sendMessage`).
    static var tlFunctionName: String { get }
    /// Reads the request's fields, its constructor ID already read; throws where the input breaks.
    static func parseFields(_ reader: inout BufferReader) throws(TLDecodingError) -> Self
    /// Writes a result of this function, boxed or bare as the schema gives it.
    static func writeResult(_ result: Result, into buffer: Buffer)
}

extension TLTypedRequest {
    /// Reads one request of this function (constructor ID first) from `reader`, with depth accounting.
    public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> Self {
        let id = try reader.readUInt32()
        guard id == tlConstructorID else { throw reader.unknownConstructor(id, type: "function") }
        try reader.enterObject()
        defer { reader.leaveObject() }
        return try parseFields(&reader)
    }

    /// Reads exactly one request of this function from `bytes` (a `gzip_packed` one unpacked); trailing bytes are
    /// an error.
    public static func parse(bytes: [UInt8]) throws(TLDecodingError) -> Self {
        try BufferReader.withReader(over: bytes[...]) { (reader) throws(TLDecodingError) -> Self in
            let request = try reader.withUnpackedGzip { (inner) throws(TLDecodingError) -> Self in try parse(&inner) }
            try reader.expectEnd()
            return request
        }
    }

    /// A result's wire bytes.
    public static func resultBytes(_ result: Result) -> [UInt8] {
        let buffer = Buffer()
        writeResult(result, into: buffer)
        return buffer.bytes
    }
}

/// The typed requests of a schema by constructor ID: what a server parses an incoming call with.
public struct TLRequestRegistry: Sendable {
    private let types: [UInt32: any TLTypedRequest.Type]

    /// A registry of `entries`; a later entry for an ID replaces an earlier one.
    public init(_ entries: [(UInt32, any TLTypedRequest.Type)]) {
        types = Dictionary(entries, uniquingKeysWith: { _, last in last })
    }

    /// How many functions the registry has.
    public var count: Int { types.count }

    /// Every function ID, in no particular order.
    public var ids: Dictionary<UInt32, any TLTypedRequest.Type>.Keys { types.keys }

    /// The request type of function `id`, if the registry has it.
    public func type(for id: UInt32) -> (any TLTypedRequest.Type)? { types[id] }

    /// Reads one request (constructor ID first); an ID that names no function here is an `unknownConstructor` error.
    public func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> any TLTypedRequest {
        let id = try reader.readUInt32()
        guard let type = types[id] else { throw reader.unknownConstructor(id, type: "function") }
        try reader.enterObject()
        defer { reader.leaveObject() }
        return try type.parseFields(&reader)
    }

    /// Reads exactly one request from `bytes` (a `gzip_packed` one unpacked); trailing bytes are an error.
    public func parse(bytes: [UInt8]) throws(TLDecodingError) -> any TLTypedRequest {
        try BufferReader.withReader(over: bytes[...]) { (reader) throws(TLDecodingError) -> any TLTypedRequest in
            let request = try reader.withUnpackedGzip { (inner) throws(TLDecodingError) -> any TLTypedRequest in
                try parse(&inner)
            }
            try reader.expectEnd()
            return request
        }
    }
}
