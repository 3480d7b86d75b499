// The growable byte buffer that TL serialization appends into.
//
// Generated `serialize(_ buffer:, _ boxed:)` methods write every field through the `append…` methods below, so they
// are `@inlinable` and touch a manually managed region directly: the common case is one capacity compare, one
// unaligned store and one add. Growth doubles, so appends are amortized O(1); the region is freed in `deinit`.
// `Buffer` is a mutable class shared by reference (like Telegram-iOS's `Buffer`) and is deliberately not `Sendable`.

/// A growable, contiguous byte buffer with little-endian TL appends.
public final class Buffer {
    // Dynamic exclusivity checks on these three cost ~15 % of encode time (measured); no method of `Buffer` holds an
    // access to one of them across a call that could touch it again, so the checks could never fire.

    /// Start of the allocated region; always a valid allocation of `_capacity` bytes and `tailSlack` more.
    @exclusivity(unchecked) @usableFromInline var _base: UnsafeMutableRawPointer
    /// Number of bytes written.
    @exclusivity(unchecked) @usableFromInline var _count: Int
    /// Number of bytes the region holds for contents (`tailSlack` more are allocated).
    @exclusivity(unchecked) @usableFromInline var _capacity: Int

    /// While set, the region is also a snapshot's (`_snapshot()`): it is never written again, and the snapshot frees
    /// it. `_capacity` is held at `_count` meanwhile, so the next append reallocates (copy on write) without the
    /// inlined fast path checking anything more.
    var _sharedWith: BufferSnapshot?

    /// Smallest allocation, so that tiny buffers do not regrow on their first few appends.
    @usableFromInline static let minimumCapacity = 64

    /// Bytes allocated past the capacity, which `appendTLString` may write beyond a value (its small-string path
    /// stores whole words); never part of the contents.
    static let tailSlack = 16

    static func _allocateRegion(_ capacity: Int) -> UnsafeMutableRawPointer {
        .allocate(byteCount: capacity + tailSlack, alignment: 16)
    }

    /// An empty buffer.
    public convenience init() {
        self.init(capacity: Buffer.minimumCapacity)
    }

    /// An empty buffer that can hold `capacity` bytes before it grows.
    public init(capacity: Int) {
        let capacity = Swift.max(capacity, Buffer.minimumCapacity)
        _base = Buffer._allocateRegion(capacity)
        _count = 0
        _capacity = capacity
    }

    /// A buffer holding a copy of `bytes`.
    public convenience init(bytes: [UInt8]) {
        self.init(capacity: bytes.count)
        appendRaw(bytes)
    }

    deinit {
        if _sharedWith == nil { _base.deallocate() }
    }

    /// Number of bytes written so far.
    @inlinable public var count: Int { _count }

    /// Number of bytes the buffer can hold before it reallocates.
    @inlinable public var capacity: Int { _capacity }

    /// A copy of the written bytes.
    public var bytes: [UInt8] {
        // Not `init(unsafeUninitializedCapacity:)`: that enters the standard library's unspecialized allocation,
        // which looks the storage type up in the runtime's metadata cache (~430 instructions, measured); the
        // sequence initializer allocates inline.
        [UInt8](UnsafeRawBufferPointer(start: _base, count: _count))
    }

    /// Calls `body` with the written bytes; the pointer is valid only inside `body`, and `body` must not append.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: _base, count: _count))
    }

    /// Makes room for at least `n` bytes in total.
    public func reserveCapacity(_ n: Int) {
        if n > _capacity { _reallocate(capacity: n) }
    }

    /// Forgets the written bytes; with `keepingCapacity`, the allocation is reused (the encode-into-reused-buffer path).
    public func removeAll(keepingCapacity: Bool) {
        if _sharedWith != nil {
            // The region is the snapshot's: start a new one rather than write over it.
            _sharedWith = nil
            _base = Buffer._allocateRegion(Buffer.minimumCapacity)
            _capacity = Buffer.minimumCapacity
        }
        _count = 0
        if !keepingCapacity && _capacity > Buffer.minimumCapacity {
            _base.deallocate()
            _base = Buffer._allocateRegion(Buffer.minimumCapacity)
            _capacity = Buffer.minimumCapacity
        }
    }

    // MARK: Growth

    /// Ensures `n` more bytes fit; the slow path is out of line so the inlined appends stay small.
    @inlinable @inline(__always)
    func _reserveAdditional(_ n: Int) {
        if _capacity &- _count < n { _grow(adding: n) }
    }

    @usableFromInline @inline(never)
    func _grow(adding n: Int) {
        let needed = _count + n
        _reallocate(capacity: Swift.max(needed, _capacity &* 2))
    }

    @usableFromInline
    func _reallocate(capacity: Int) {
        let newBase = Buffer._allocateRegion(capacity)
        newBase.copyMemory(from: _base, byteCount: _count)
        if _sharedWith == nil { _base.deallocate() } else { _sharedWith = nil }
        _base = newBase
        _capacity = capacity
    }

    /// The written bytes as an immutable snapshot that shares the region instead of copying it (a request's
    /// `FunctionDescription`, which a 512 KiB upload part would otherwise double). The buffer copies the region
    /// before it next writes; until then, further snapshots are the same one.
    func _snapshot() -> BufferSnapshot {
        if let shared = _sharedWith, shared.count == _count { return shared }
        _unshare()
        let snapshot = BufferSnapshot(base: _base, count: _count)
        _sharedWith = snapshot
        _capacity = _count
        return snapshot
    }

    /// Sets the count back to `count` (a writer discarding what it wrote since), away from a snapshot's bytes.
    func _rewind(to count: Int) {
        _unshare()
        _count = count
    }

    /// Copies the region if a snapshot shares it, before a write that does not go through `_reserveAdditional`.
    func _unshare() {
        if _sharedWith != nil { _reallocate(capacity: Swift.max(_capacity, Buffer.minimumCapacity)) }
    }

    // MARK: Fixed-size appends

    @inlinable @inline(__always)
    func _store<T: FixedWidthInteger>(_ v: T) {
        _reserveAdditional(MemoryLayout<T>.size)
        (_base + _count).storeBytes(of: v.littleEndian, as: T.self)
        _count &+= MemoryLayout<T>.size
    }

    /// Overwrites 4 bytes already written at `offset` (a `#` word filled in after the fields it describes).
    func _storeInt32(_ v: Int32, at offset: Int) {
        guard offset >= 0, offset <= _count &- 4 else { return }
        _unshare()
        (_base + offset).storeBytes(of: v.littleEndian, as: Int32.self)
    }

    // The integer appends are forced inline: left to the optimizer, the release build of the generated API kept them
    // as calls (a fifth of encoding); inlined, its build time did not change measurably (Benchmarks/HISTORY.md).

    /// TL `int`.
    @inlinable @inline(__always) public func appendInt32(_ v: Int32) { _store(v) }

    /// A constructor ID or a `#` (flags) field.
    @inlinable @inline(__always) public func appendUInt32(_ v: UInt32) { _store(v) }

    /// TL `long`.
    @inlinable @inline(__always) public func appendInt64(_ v: Int64) { _store(v) }

    /// TL `double`: the IEEE-754 bit pattern, little-endian, so -0.0 and every payload survive.
    @inlinable @inline(__always) public func appendDouble(_ v: Double) { _store(v.bitPattern) }

    /// TL `int128`, in wire order.
    public func appendInt128(_ v: TLInt128) {
        var writer = fieldWriter(reserving: 16)
        writer.int128(v)
        commit(writer)
    }

    /// TL `int256`, in wire order.
    public func appendInt256(_ v: TLInt256) {
        var writer = fieldWriter(reserving: 32)
        writer.int256(v)
        commit(writer)
    }

    /// TL `Bool`, which is always boxed: `boolTrue#997275b5` or `boolFalse#bc799737`.
    public func appendBool(_ v: Bool) {
        var writer = fieldWriter(reserving: 4)
        writer.bool(v)
        commit(writer)
    }

    /// A vector prefix: `vector#1cb5c415` when boxed, then the element count as an `int`.
    public func appendVectorHeader(count: Int, boxed: Bool) {
        _writeVectorHeader(count: count, boxed: boxed)
    }

    @inline(__always)
    func _writeVectorHeader(count: Int, boxed: Bool) {
        _reserveAdditional(8)  // one capacity check for both words
        var p = _base + _count
        if boxed {
            p.storeBytes(of: TLConstructorID.vector.littleEndian, as: UInt32.self)
            p += 4
        }
        p.storeBytes(of: Int32(truncatingIfNeeded: count).littleEndian, as: Int32.self)
        _count = p + 4 - _base
    }

    // MARK: Runs of fixed-size fields

    /// Room for a run of fixed-size fields (constructor ID, `#` words, integers, doubles, `Bool`s): generated
    /// serializers reserve the most the run can write, store each field through the writer and `commit` it, so the
    /// run pays one capacity check and one count update instead of one per field. Nothing else may append to the
    /// buffer between the two calls.
    @inlinable @inline(__always)
    public func fieldWriter(reserving n: Int) -> TLFieldWriter {
        _reserveAdditional(n)
        let start = _base + _count
        return TLFieldWriter(start, end: start + n)
    }

    /// Ends a run begun with `fieldWriter(reserving:)`: the fields written through `writer` become part of the buffer.
    @inlinable @inline(__always)
    public func commit(_ writer: TLFieldWriter) {
        assert(writer._next <= writer._end, "a run of fields wrote more than it reserved")
        _count = writer._next - _base
    }

    // MARK: Variable-size appends

    /// Bytes as they are, without a length prefix or padding.
    @inlinable public func appendRaw(_ v: [UInt8]) {
        v.withUnsafeBytes { appendRaw($0) }
    }

    /// Bytes as they are, without a length prefix or padding.
    @inlinable public func appendRaw(_ v: UnsafeRawBufferPointer) {
        let n = v.count
        guard n > 0, let src = v.baseAddress else { return }
        _reserveAdditional(n)
        (_base + _count).copyMemory(from: src, byteCount: n)
        _count &+= n
    }

    /// Everything written to `other` (which may be `self`).
    public func append(_ other: Buffer) {
        let n = other._count
        guard n > 0 else { return }
        _reserveAdditional(n)
        // After a reallocation of `self`, `other._base` is the new region too when `other === self`.
        (_base + _count).copyMemory(from: other._base, byteCount: n)
        _count &+= n
    }

    /// TL `bytes`: length prefix, data, zero padding to a multiple of 4 counting the prefix.
    public func appendTLBytes(_ v: [UInt8]) {
        v.withUnsafeBytes { appendTLBytes($0) }
    }

    /// TL `string`: the UTF-8 encoding as TL `bytes`. A call, not inlined into every generated string field by
    /// cross-module optimization (compile time).
    ///
    /// The corpus's string lengths spread evenly from 0 to past 32 bytes, so a branch per length class mispredicted
    /// about once a string. The two common shapes, up to 15 bytes and 16 to 32, each take one path with no branch on
    /// the length; the rest, and strings without contiguous UTF-8, go out of line.
    @inline(never)
    public func appendTLString(_ v: String) {
        #if _pointerBitWidth(_64) && _endian(little)
        // A string of at most 15 bytes lives in the `String` value itself (the stable ABI's small form: bit 61 of
        // the second word set, bit 60 clear, the count in bits 56–59). Its 16 bytes are the UTF-8, zeros (the
        // standard library keeps unused bytes zero: small strings compare by their bits) and a discriminator byte.
        // Stored after the length byte they are the data and its padding (at most 16 bytes in all), and the
        // discriminator lands past the value: in room the next append overwrites, or in `tailSlack`. Nothing is
        // dereferenced, so a misreading could only write wrong bytes; `BytesTests` pins the layout.
        let raw = unsafeBitCast(v, to: (UInt64, UInt64).self)
        if raw.1 >> 60 & 0b11 == 0b10 {
            let n = Int(truncatingIfNeeded: raw.1 >> 56 & 0xf)
            let total = (n &+ 4) & ~3
            // Without room the string takes the general path, which grows the buffer: with no call here, this path
            // needs no stack frame (24 instructions; 32 with the call).
            if _capacity &- _count >= total {
                let p = _base + _count
                p.storeBytes(of: UInt8(truncatingIfNeeded: n), as: UInt8.self)
                (p + 1).storeBytes(of: raw.0, as: UInt64.self)
                (p + 9).storeBytes(of: raw.1, as: UInt64.self)
                _count &+= total
                return
            }
        }
        #endif
        _appendTLStringGeneral(v)
    }

    /// Any string; apart from `appendTLString`, whose small path it would otherwise burden with saving registers.
    @inline(never)
    func _appendTLStringGeneral(_ v: String) {
        // The length first (O(1) for native strings), so that nothing inside the closure can call out: with the
        // capacity check inside it, the optimizer retained and released the string around it.
        // The rest go to their own function, so that this path makes no call (`memcpy`) but to grow the buffer.
        let n = v.utf8.count
        guard n >= 16, n <= 32 else { return _appendTLStringOutOfLine(v, count: n) }
        let data = _beginTLBytes(count: n)
        let written: Void? = v.utf8.withContiguousStorageIfAvailable {
            guard let src = $0.baseAddress else { return }
            // Two overlapping 16-byte copies: a call to `memcpy` cost as much as the rest of such a string's encoding.
            let head = UnsafeRawPointer(src).loadUnaligned(as: SIMD16<UInt8>.self)
            let tail = UnsafeRawPointer(src + (n &- 16)).loadUnaligned(as: SIMD16<UInt8>.self)
            data.start.storeBytes(of: head, as: SIMD16<UInt8>.self)
            (data.start + (n &- 16)).storeBytes(of: tail, as: SIMD16<UInt8>.self)
        }
        if written == nil { _copyUTF8(of: v, to: data.start) }
        _count &+= data.total
    }

    /// Any string: over 32 bytes, short but not in the small form (on other platforms, or a native string shortened
    /// in place), a small one when the buffer must grow first, or one without contiguous UTF-8.
    @inline(never)
    func _appendTLStringOutOfLine(_ v: String, count n: Int) {
        let data = _beginTLBytes(count: n)
        let written: Void? = v.utf8.withContiguousStorageIfAvailable {
            guard let src = $0.baseAddress else { return }
            data.start.copyMemory(from: UnsafeRawPointer(src), byteCount: n)
        }
        if written == nil { _copyUTF8(of: v, to: data.start) }
        _count &+= data.total
    }

    /// The bytes of a string without contiguous UTF-8 (bridged from Objective-C), one by one.
    @inline(never)
    func _copyUTF8(of v: String, to start: UnsafeMutableRawPointer) {
        for (i, byte) in v.utf8.enumerated() { start.storeBytes(of: byte, toByteOffset: i, as: UInt8.self) }
    }

    /// TL `bytes` from raw memory.
    ///
    /// A length of 2^24 or more cannot be expressed by the 3-byte prefix; Telegram caps payloads far below that, so
    /// such a value is a programming error and traps rather than writing a corrupt stream.
    @inlinable public func appendTLBytes(_ v: UnsafeRawBufferPointer) {
        let n = v.count
        let data = _beginTLBytes(count: n)
        if n > 0, let src = v.baseAddress {
            data.start.copyMemory(from: src, byteCount: n)
        }
        _count &+= data.total
    }

    /// Makes room for TL `bytes` of length `n` and writes their length prefix and zero padding; the caller copies
    /// the data to `start` and adds `total` to the count.
    @inlinable @inline(__always)
    func _beginTLBytes(count n: Int) -> (start: UnsafeMutableRawPointer, total: Int) {
        let header = n <= 253 ? 1 : 4
        let total = (header &+ n &+ 3) & ~3
        _reserveAdditional(total)
        let p = _base + _count
        // The padding (0–3 bytes) lies in the last word, so zero that word first and let the prefix and the data
        // overwrite it: one store instead of a `memset` call per value.
        (p + (total &- 4)).storeBytes(of: 0, as: UInt32.self)
        if header == 1 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: n), as: UInt8.self)
        } else {
            precondition(n < 1 << 24, "TL bytes longer than 16 MiB cannot be encoded")
            p.storeBytes(of: (UInt32(truncatingIfNeeded: n) << 8 | 0xfe).littleEndian, as: UInt32.self)
        }
        return (p + header, total)
    }

    /// A vector of serializable elements, with its header, each element serialized boxed (`Vector<User>`; integers
    /// and strings ignore that).
    ///
    /// One generic copy in the runtime, not specialized per element type in the generated module (that cost ~20 %
    /// of its release build). Without the two attributes, the release build's cross-module optimization specialized
    /// this body into `TelegramApi` anyway (133 copies). Two entry points rather than a defaulted `boxedElements`:
    /// callers in other modules called the default's generator function for every vector.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    public func appendVector<T: TLSerializable>(_ elements: [T], boxed: Bool) {
        _appendVector(elements, boxed: boxed, boxedElements: true)
    }

    /// A vector with its header, each element serialized boxed or bare as `boxedElements` says (`vector<%Message>`
    /// holds bare ones).
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    public func appendVector<T: TLSerializable>(_ elements: [T], boxed: Bool, boxedElements: Bool) {
        _appendVector(elements, boxed: boxed, boxedElements: boxedElements)
    }

    @inline(__always)
    func _appendVector<T: TLSerializable>(_ elements: [T], boxed: Bool, boxedElements: Bool) {
        let count = Buffer._count(of: elements)
        _writeVectorHeader(count: count, boxed: boxed)
        if count == 0 { return }  // a fifth of the corpus's vectors
        // Not `withUnsafeBufferPointer`: unspecialized, its generic closure cost more per vector than the elements.
        // `elements` is borrowed for the whole call, so its storage stays put.
        guard let base = elements._baseAddressIfContiguous else {
            for element in elements { element.serialize(self, boxedElements) }
            return
        }
        _serializeElements(base, count: count, boxed: boxedElements)
    }

    /// An array's count in unspecialized code: `Array.count` there is a call into the standard library, where
    /// `span.count` is two loads.
    @inline(__always)
    static func _count<T>(of elements: borrowing [T]) -> Int {
        if #available(macOS 26, iOS 26, watchOS 26, tvOS 26, visionOS 26, *) { return elements.span.count }
        return elements.count
    }

    /// `serialize` on each of `count` values from `base`, in place. Over a `~Copyable` `T` the compiler cannot copy an
    /// element before the call; over copyable `T`, unspecialized code copied and destroyed every element through its
    /// value witnesses (two indirect calls and a retain and release each; ~9 % of encoding the corpus's objects).
    /// Inlined into `appendVector`, it keeps that: the loop is compiled over `~Copyable` before it is inlined.
    @inline(__always)
    func _serializeElements<T: TLSerializable & ~Copyable>(_ base: UnsafePointer<T>, count: Int, boxed: Bool) {
        var index = 0
        while index < count {
            base[index].serialize(self, boxed)
            index &+= 1
        }
    }

    /// A vector of TL `bytes` (`Vector<bytes>`), with its header.
    public func appendBytesVector(_ elements: [[UInt8]], boxed: Bool) {
        appendVectorHeader(count: elements.count, boxed: boxed)
        for element in elements { appendTLBytes(element) }
    }
}

/// Stores fixed-size TL fields, little-endian, into room a `Buffer` reserved (`Buffer.fieldWriter(reserving:)`), for
/// generated serializers. Only debug builds check the room (the generator reserves the largest size the run can
/// write, and the run's writes are fixed by the schema, not by data); storing past it corrupts memory.
@frozen public struct TLFieldWriter {
    @usableFromInline var _next: UnsafeMutableRawPointer
    @usableFromInline let _end: UnsafeMutableRawPointer

    @inlinable init(_ start: UnsafeMutableRawPointer, end: UnsafeMutableRawPointer) {
        _next = start
        _end = end
    }

    @inlinable @inline(__always)
    mutating func _store<T: FixedWidthInteger>(_ v: T) {
        assert(_end - _next >= MemoryLayout<T>.size, "a run of fields wrote more than it reserved")
        _next.storeBytes(of: v.littleEndian, as: T.self)
        _next += MemoryLayout<T>.size
    }

    /// TL `int`.
    @inlinable @inline(__always) public mutating func int32(_ v: Int32) { _store(v) }
    /// A constructor ID.
    @inlinable @inline(__always) public mutating func uint32(_ v: UInt32) { _store(v) }
    /// TL `long`.
    @inlinable @inline(__always) public mutating func int64(_ v: Int64) { _store(v) }
    /// TL `double`: the IEEE-754 bit pattern.
    @inlinable @inline(__always) public mutating func double(_ v: Double) { _store(v.bitPattern) }
    /// TL `Bool`: `boolTrue` or `boolFalse`.
    @inlinable @inline(__always) public mutating func bool(_ v: Bool) {
        _store(v ? TLConstructorID.boolTrue : TLConstructorID.boolFalse)
    }
    /// TL `int128`, in wire order.
    @inlinable @inline(__always) public mutating func int128(_ v: TLInt128) {
        _store(v._w0)
        _store(v._w1)
    }
    /// TL `int256`, in wire order.
    @inlinable @inline(__always) public mutating func int256(_ v: TLInt256) {
        _store(v._w0)
        _store(v._w1)
        _store(v._w2)
        _store(v._w3)
    }
}

extension Buffer: CustomStringConvertible {
    /// The length and the leading bytes in hex, for debugging.
    public var description: String {
        withUnsafeBytes { "Buffer(\($0.count) bytes: \(Hex.short($0, limit: 32)))" }
    }
}

/// Constructor IDs the runtime itself knows.
public enum TLConstructorID {
    /// `boolTrue#997275b5 = Bool`
    @inlinable public static var boolTrue: UInt32 { 0x9972_75b5 }
    /// `boolFalse#bc799737 = Bool`
    @inlinable public static var boolFalse: UInt32 { 0xbc79_9737 }
    /// `vector#1cb5c415 {t:Type} # [ t ] = Vector t`
    @inlinable public static var vector: UInt32 { 0x1cb5_c415 }
    /// `gzip_packed#3072cfa1 packed_data:bytes = Object`
    @inlinable public static var gzipPacked: UInt32 { 0x3072_cfa1 }
}

/// Bytes a `Buffer` wrote, shared with it until it writes again (`Buffer._snapshot()`); never written, freed here.
final class BufferSnapshot: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int

    init(base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    deinit {
        base.deallocate()
    }

    var bytes: [UInt8] { [UInt8](UnsafeRawBufferPointer(start: base, count: count)) }
}
