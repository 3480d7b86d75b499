// Parsing a boxed object whose type the caller does not know: the constructor ID picks the type.
//
// Generated modules build one registry each from (ID, metatype) pairs — no closures, which measured as the slowest
// thing to compile (compile-time.md) — and registries merge (MTProto service types + an API layer). Callers that
// know the type use its own static parse instead; this is for `Object` fields, transcripts and the `tl` tool.

/// A table from constructor ID to the generated type that parses it.
public struct TLRegistry: Sendable {
    /// Names the schema, for errors (`unknown constructor 0x… for TelegramApi`).
    public let name: String
    @usableFromInline let table: [UInt32: any TLRegistrable.Type]

    /// A registry of `entries`; when an ID repeats, the first entry wins.
    public init(name: String, entries: [(UInt32, any TLRegistrable.Type)]) {
        self.name = name
        var table: [UInt32: any TLRegistrable.Type] = [:]
        table.reserveCapacity(entries.count)
        for (id, type) in entries where table[id] == nil { table[id] = type }
        self.table = table
    }

    /// The union of `registries`; for an ID in several, the earliest registry wins.
    public init(merging registries: [TLRegistry]) {
        name = registries.map(\.name).joined(separator: "+")
        var table: [UInt32: any TLRegistrable.Type] = [:]
        for registry in registries {
            table.merge(registry.table) { first, _ in first }
        }
        self.table = table
    }

    /// Number of constructor IDs.
    public var count: Int { table.count }

    /// Every constructor ID, in no particular order.
    public var ids: Dictionary<UInt32, any TLRegistrable.Type>.Keys { table.keys }

    public func contains(_ id: UInt32) -> Bool { table[id] != nil }

    public func type(for id: UInt32) -> (any TLRegistrable.Type)? { table[id] }

    /// Reads a constructor ID and parses the object it names; `gzip_packed` is unwrapped transparently.
    public func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> any TLObject {
        try reader.withUnpackedGzip { (inner) throws(TLDecodingError) -> any TLObject in
            let at = inner.offset
            let id = try inner.readUInt32()
            guard let type = table[id] else {
                throw TLDecodingError(.unknownConstructor(id, type: name), offset: at)
            }
            return try type.parse(&inner, constructor: id)
        }
    }

    /// Parses exactly one object from `buffer`; trailing bytes are an error.
    public func parse(_ buffer: Buffer) throws(TLDecodingError) -> any TLObject {
        var reader = BufferReader(buffer)
        return try parseWhole(&reader)
    }

    /// Parses exactly one object from `bytes`; trailing bytes are an error.
    public func parse(bytes: [UInt8]) throws(TLDecodingError) -> any TLObject {
        var reader = BufferReader(bytes: bytes)
        return try parseWhole(&reader)
    }

    func parseWhole(_ reader: inout BufferReader) throws(TLDecodingError) -> any TLObject {
        let object = try parse(&reader)
        try reader.expectEnd()
        return object
    }
}
