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
    /// Functions by ID, as their TL definitions: requests parse into `TLRequest` (a server decodes them).
    @usableFromInline let functions: [UInt32: StaticString]

    /// A registry of `entries` (constructors) and `functions`; when an ID repeats, the first entry wins.
    public init(name: String, entries: [(UInt32, any TLRegistrable.Type)], functions: [(UInt32, StaticString)] = []) {
        self.name = name
        var table: [UInt32: any TLRegistrable.Type] = [:]
        table.reserveCapacity(entries.count)
        for (id, type) in entries where table[id] == nil { table[id] = type }
        self.table = table
        var definitions: [UInt32: StaticString] = [:]
        definitions.reserveCapacity(functions.count)
        for (id, definition) in functions where table[id] == nil && definitions[id] == nil { definitions[id] = definition }
        self.functions = definitions
    }

    /// The union of `registries`; for an ID in several, the earliest registry wins.
    public init(merging registries: [TLRegistry]) {
        name = registries.map(\.name).joined(separator: "+")
        var table: [UInt32: any TLRegistrable.Type] = [:]
        var functions: [UInt32: StaticString] = [:]
        for registry in registries {
            table.merge(registry.table) { first, _ in first }
            functions.merge(registry.functions) { first, _ in first }
        }
        self.table = table
        self.functions = functions.filter { table[$0.key] == nil }
    }

    /// Number of constructor and function IDs.
    public var count: Int { table.count + functions.count }

    /// Every constructor ID, in no particular order.
    public var ids: Dictionary<UInt32, any TLRegistrable.Type>.Keys { table.keys }

    public func contains(_ id: UInt32) -> Bool { table[id] != nil || functions[id] != nil }

    /// The TL definition of function `id`, if this registry has it.
    public func functionDefinition(for id: UInt32) -> StaticString? { functions[id] }

    public func type(for id: UInt32) -> (any TLRegistrable.Type)? { table[id] }

    /// Reads a constructor ID and parses the object it names; `gzip_packed` is unwrapped transparently.
    public func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> any TLObject {
        try reader.withUnpackedGzip { (inner) throws(TLDecodingError) -> any TLObject in
            let at = inner.offset
            let id = try inner.readUInt32()
            if let type = table[id] { return try type.parse(&inner, constructor: id) }
            if let definition = functions[id] { return try TLRequest.parse(&inner, definition: definition, registry: self) }
            throw TLDecodingError(.unknownConstructor(id, type: name), offset: at)
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
