// Parsing a boxed object whose type the caller does not know: the constructor ID picks the type.
//
// Generated modules build one registry each from (ID, metatype) pairs — no closures, which measured as the slowest
// thing to compile (compile-time.md) — and registries merge (MTProto service types + an API layer). Callers that
// know the type use its own static parse instead; this is for `Object` fields, transcripts and the `tl` tool.

import Synchronization

/// A table from constructor ID to the generated type that parses it.
public struct TLRegistry: Sendable {
    /// Names the schema, for errors (`unknown constructor 0x… for TelegramApi`).
    public let name: String
    @usableFromInline let table: [UInt32: any TLRegistrable.Type]
    /// Functions by ID, as their TL definitions: requests parse into `TLRequest` (a server decodes them).
    @usableFromInline let functions: [UInt32: StaticString]
    /// Constructors by ID, as their TL definitions: descriptions read a value's fields through them
    /// (`TLSchemaDescribed`).
    let constructors: [UInt32: DefinitionEntry]
    /// `table` and `functions` again, for `parse`: a `Dictionary` lookup hashes the ID with SipHash, which was about
    /// 5 % of decoding the corpus (callgrind); this table hashes it with one multiply.
    let lookup: IDTable

    enum Entry: Sendable {
        case constructor(any TLRegistrable.Type)
        case function(DefinitionEntry)
    }

    /// A function's or constructor's definition and its signature, parsed on first use and then read with one
    /// atomic load: a server reads every request through here (and a description every value), and
    /// `TLSignature.cached` takes a lock and hashes with SipHash.
    final class DefinitionEntry: Sendable {
        let definition: StaticString
        /// The signature's object pointer, retained once (0 until first use). Not `AtomicLazyReference`: its `load`
        /// is not specialized across modules and instantiated generic metadata on every call (perf).
        private let parsed = Atomic<UInt>(0)

        init(_ definition: StaticString) { self.definition = definition }

        deinit {
            let bits = parsed.load(ordering: .acquiring)
            if let pointer = UnsafeRawPointer(bitPattern: bits) { Unmanaged<TLSignature>.fromOpaque(pointer).release() }
        }

        var signature: TLSignature {
            if let pointer = UnsafeRawPointer(bitPattern: parsed.load(ordering: .acquiring)) {
                return Unmanaged<TLSignature>.fromOpaque(pointer).takeUnretainedValue()
            }
            let signature = TLSignature.cached(definition)
            let retained = Unmanaged.passRetained(signature)
            let bits = UInt(bitPattern: retained.toOpaque())
            let (stored, current) = parsed.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing)
            if stored { return signature }
            // Another thread stored its signature first: keep that one.
            retained.release()
            guard let pointer = UnsafeRawPointer(bitPattern: current) else { return signature }
            return Unmanaged<TLSignature>.fromOpaque(pointer).takeUnretainedValue()
        }
    }

    /// A registry of `entries` (constructors), `functions` and the `constructors`' TL definitions; when an ID
    /// repeats, the first entry wins.
    public init(name: String, entries: [(UInt32, any TLRegistrable.Type)], functions: [(UInt32, StaticString)] = [],
                constructors: [(UInt32, StaticString)] = []) {
        self.name = name
        var table: [UInt32: any TLRegistrable.Type] = [:]
        table.reserveCapacity(entries.count)
        for (id, type) in entries where table[id] == nil { table[id] = type }
        self.table = table
        var definitions: [UInt32: StaticString] = [:]
        definitions.reserveCapacity(functions.count)
        for (id, definition) in functions where table[id] == nil && definitions[id] == nil { definitions[id] = definition }
        self.functions = definitions
        var constructorDefinitions: [UInt32: DefinitionEntry] = [:]
        constructorDefinitions.reserveCapacity(constructors.count)
        for (id, definition) in constructors where constructorDefinitions[id] == nil {
            constructorDefinitions[id] = DefinitionEntry(definition)
        }
        self.constructors = constructorDefinitions
        lookup = Self.lookupTable(table, definitions)
    }

    static func lookupTable(_ table: [UInt32: any TLRegistrable.Type], _ functions: [UInt32: StaticString]) -> IDTable {
        IDTable(table.map { ($0.key, Entry.constructor($0.value)) }
                + functions.map { ($0.key, Entry.function(DefinitionEntry($0.value))) })
    }

    /// The union of `registries`; for an ID in several, the earliest registry wins.
    public init(merging registries: [TLRegistry]) {
        name = registries.map(\.name).joined(separator: "+")
        var table: [UInt32: any TLRegistrable.Type] = [:]
        var functions: [UInt32: StaticString] = [:]
        var constructors: [UInt32: DefinitionEntry] = [:]
        for registry in registries {
            table.merge(registry.table) { first, _ in first }
            functions.merge(registry.functions) { first, _ in first }
            constructors.merge(registry.constructors) { first, _ in first }
        }
        self.table = table
        self.constructors = constructors
        self.functions = functions.filter { table[$0.key] == nil }
        lookup = Self.lookupTable(table, self.functions)
    }

    /// Number of constructor and function IDs.
    public var count: Int { table.count + functions.count }

    /// Every constructor ID, in no particular order.
    public var ids: Dictionary<UInt32, any TLRegistrable.Type>.Keys { table.keys }

    /// Every function ID, in no particular order.
    public var functionIDs: Dictionary<UInt32, StaticString>.Keys { functions.keys }

    /// Whether `id` is a constructor or a function this registry knows.
    public func contains(_ id: UInt32) -> Bool { table[id] != nil || functions[id] != nil }

    /// The TL definition of function `id`, if this registry has it.
    public func functionDefinition(for id: UInt32) -> StaticString? { functions[id] }

    /// The generated type constructor `id` belongs to, if this registry has it.
    public func type(for id: UInt32) -> (any TLRegistrable.Type)? { table[id] }

    /// The TL definition of constructor `id`, if this registry has it.
    public func constructorDefinition(for id: UInt32) -> StaticString? { constructors[id]?.definition }

    /// The ID of the function named `name` (`help.getConfig`), if this registry has it; a scan of every function.
    public func functionID(named name: String) -> UInt32? {
        functions.first { TLSignature.definition($0.value, isNamed: name) }?.key
    }

    /// Reads a constructor ID and parses the object it names; `gzip_packed` is unwrapped transparently.
    public func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> any TLObject {
        // Most values are not compressed: read those without the closure, which copied the registry per object.
        if reader.peekUInt32() != TLConstructorID.gzipPacked { return try parseUnpacked(&reader) }
        return try reader.withUnpackedGzip { (inner) throws(TLDecodingError) -> any TLObject in try parseUnpacked(&inner) }
    }

    func parseUnpacked(_ reader: inout BufferReader) throws(TLDecodingError) -> any TLObject {
        let at = reader.offset
        let id = try reader.readUInt32()
        switch lookup[id] {
        case .constructor(let type)?: return try type.parse(&reader, constructor: id)
        case .function(let entry)?:
            return try TLRequest.parse(&reader, definition: entry.definition, signature: entry.signature,
                                       registry: self)
        case nil: throw TLDecodingError(.unknownConstructor(id, type: name), offset: at)
        }
    }

    /// Parses exactly one object from `buffer`; trailing bytes are an error.
    public func parse(_ buffer: Buffer) throws(TLDecodingError) -> any TLObject {
        var reader = BufferReader(buffer)
        return try parseWhole(&reader)
    }

    /// Parses exactly one object from `bytes`; trailing bytes are an error.
    public func parse(bytes: [UInt8]) throws(TLDecodingError) -> any TLObject {
        // Parsed values copy out what they keep (inflated `gzip_packed` data has storage of its own), so the reader
        // may read the array where it lies: no copy and no allocation per record.
        try BufferReader.withReader(over: bytes[...]) { (reader) throws(TLDecodingError) in try parseWhole(&reader) }
    }

    /// A request read as `parse(bytes:)` reads it, for a server: nil when `bytes` hold a constructor, not a
    /// function. The request comes back as itself, not in an `any TLObject` box (an allocation and a dynamic cast
    /// per request).
    public func parseRequest(bytes: [UInt8]) throws(TLDecodingError) -> TLRequest? {
        try BufferReader.withReader(over: bytes[...]) { (reader) throws(TLDecodingError) -> TLRequest? in
            let request = try reader.withUnpackedGzip { (inner) throws(TLDecodingError) -> TLRequest? in
                let at = inner.offset
                let id = try inner.readUInt32()
                switch lookup[id] {
                case .function(let entry)?:
                    return try TLRequest.parse(&inner, definition: entry.definition, signature: entry.signature,
                                               registry: self)
                case .constructor?: return nil
                case nil: throw TLDecodingError(.unknownConstructor(id, type: name), offset: at)
                }
            }
            guard let request else { return nil }
            try reader.expectEnd()
            return request
        }
    }

    func parseWhole(_ reader: inout BufferReader) throws(TLDecodingError) -> any TLObject {
        let object = try parse(&reader)
        try reader.expectEnd()
        return object
    }
}

/// A read-only open-addressing hash table from constructor IDs to registry entries (linear probing, at most half
/// full). Constructor IDs are CRC32s, so a multiplicative (Fibonacci) hash of the ID spreads them well. A class, so
/// that copying a `TLRegistry` (parse's closure captures it) retains one reference.
final class IDTable: Sendable {
    typealias Value = TLRegistry.Entry
    private let keys: [UInt32]
    private let values: [Value?]
    private let shift: UInt32
    private let mask: Int

    /// The table of `entries`; for a repeated ID, the first entry wins.
    init(_ entries: [(UInt32, Value)]) {
        var bits: UInt32 = 4
        while 1 << bits < 2 * entries.count { bits += 1 }
        let capacity = 1 << bits
        var keys = [UInt32](repeating: 0, count: capacity)
        var values = [Value?](repeating: nil, count: capacity)
        let shift = 32 - bits
        for (id, value) in entries {
            var slot = Self.slot(id, shift)
            while values[slot] != nil && keys[slot] != id { slot = (slot + 1) & (capacity - 1) }
            if values[slot] == nil {
                keys[slot] = id
                values[slot] = value
            }
        }
        self.keys = keys
        self.values = values
        self.shift = shift
        self.mask = capacity - 1
    }

    private static func slot(_ id: UInt32, _ shift: UInt32) -> Int {
        Int((id &* 0x9E37_79B1) >> shift)
    }

    subscript(id: UInt32) -> Value? {
        var slot = Self.slot(id, shift)
        // At most half full, so an empty slot ends every probe.
        while let value = values[slot] {
            if keys[slot] == id { return value }
            slot = (slot &+ 1) & mask
        }
        return nil
    }
}
