// The bounds-checked cursor that generated parse functions read TL values through.
//
// Every read checks the remaining length first and throws `TLDecodingError.truncated` with the read's start offset,
// so malformed input never traps. The bytes live in an immutable object that the reader retains (`CopiedBytes`, or
// `ReaderStorage` for inflated `gzip_packed` data): `BufferReader(buffer)` copies the buffer's bytes once into one
// allocation together with their owner, which gives snapshot semantics — later appends to, or reallocation of, the
// `Buffer` cannot affect the reader — and lets reads go through a stored pointer with unaligned little-endian loads,
// inlined into the generated code.

/// Immutable bytes in a separate region (inflated `gzip_packed` data) that readers point into; freed when the last
/// reader is gone.
@usableFromInline
final class ReaderStorage: @unchecked Sendable {  // Sendable: the bytes are never written after init.
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let count: Int

    /// Storage that frees `base` (allocated with `UnsafeMutableRawPointer.allocate`) when it goes.
    init(owning base: UnsafeRawPointer, count: Int) {
        // Bound as bytes, so strings can be decoded through a typed `UInt8` pointer without rebinding.
        self.base = UnsafeRawPointer(UnsafeMutableRawPointer(mutating: base).bindMemory(to: UInt8.self, capacity: count))
        self.count = count
    }

    deinit {
        UnsafeMutableRawPointer(mutating: base).deallocate()
    }
}

/// A copy of some bytes in the same allocation as the object that owns them: a reader over a copied record costs
/// one allocation instead of two (a tenth of decoding small records went to the copy). The elements of a
/// `ManagedBuffer` stay where they are for the object's lifetime, so a reader may keep a pointer to them while it
/// holds the object.
typealias CopiedBytes = ManagedBuffer<Void, UInt8>

/// The owner of a reader over bytes it borrows for the length of a call (`BufferReader.withReader(over:_:)`).
final class BorrowedBytes: Sendable {
    static let marker = BorrowedBytes()
}

/// A cursor over immutable TL bytes. Generated code passes it `inout`.
public struct BufferReader: @unchecked Sendable {  // Sendable: `_base` points into `_storage`, immutable and retained.
    /// What owns the bytes: a `ReaderStorage` or `CopiedBytes`.
    @usableFromInline let _storage: AnyObject
    @usableFromInline let _base: UnsafeRawPointer
    @usableFromInline let _end: Int
    @usableFromInline var _position: Int

    @usableFromInline var _depth: Int = 0
    /// How deeply boxed objects may nest before decoding fails, so hostile input cannot exhaust the stack.
    public var maxDepth: Int = 64
    /// The most bytes one `gzip_packed` value may inflate to.
    public var maxUnpackedSize: Int = GZip.defaultMaxSize

    /// A reader over a snapshot of `buffer`'s current bytes (copied once).
    public init(_ buffer: Buffer) {
        self = buffer.withUnsafeBytes { BufferReader(copying: $0) }
    }

    /// A reader over a copy of `bytes`.
    public init(bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { BufferReader(copying: $0) }
    }

    /// A reader over a copy of `bytes`.
    public init(copying bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        let copy = CopiedBytes.create(minimumCapacity: count) { _ in }
        let base = copy.withUnsafeMutablePointerToElements { elements in
            if count > 0, let source = bytes.baseAddress {
                UnsafeMutableRawPointer(elements).copyMemory(from: source, byteCount: count)
            }
            return UnsafeRawPointer(elements)
        }
        self.init(owner: copy, base: base, count: count)
    }

    /// Calls `body` with a reader over `bytes` where they lie, without copying them (a 512 KB file part in the
    /// frame it was decrypted in, a record to parse). The reader must not outlive `body`: it holds no reference to
    /// the bytes.
    @inline(__always)
    package static func withReader<R, E: Error>(
        over bytes: ArraySlice<UInt8>, _ body: (inout BufferReader) throws(E) -> R
    ) throws(E) -> R {
        if #available(macOS 26, iOS 26, watchOS 26, tvOS 26, visionOS 26, *) {
            return try bytes.span.withUnsafeBytes { (raw) throws(E) -> R in
                var reader = raw.baseAddress.map { BufferReader(owner: BorrowedBytes.marker, base: $0, count: raw.count) }
                    ?? BufferReader(bytes: [])  // an empty slice may have no address
                return try body(&reader)
            }
        }
        var reader = BufferReader(bytes: Array(bytes))
        return try body(&reader)
    }

    init(storage: ReaderStorage) {
        self.init(owner: storage, base: storage.base, count: storage.count)
    }

    init(owner: AnyObject, base: UnsafeRawPointer, count: Int) {
        _storage = owner
        _base = base
        _end = count
        _position = 0
    }

    /// Bytes consumed so far: the offset of the next read.
    @inlinable public var offset: Int { _position }

    /// Objects currently entered (`enterObject` minus `leaveObject`).
    @inlinable public var depth: Int { _depth }

    /// Bytes not yet read.
    @inlinable public var remaining: Int { _end &- _position }

    // MARK: Fixed-size reads

    /// Consumes `n` bytes and returns where they start, or throws `.truncated` without consuming anything.
    @inlinable @inline(__always)
    mutating func _take(_ n: Int) throws(TLDecodingError) -> Int {
        let start = _position
        guard n <= _end &- start else { throw Self._truncated(needed: n, available: _end &- start, at: start) }
        _position = start &+ n
        return start
    }

    @usableFromInline @inline(never)
    static func _truncated(needed: Int, available: Int, at offset: Int) -> TLDecodingError {
        TLDecodingError(.truncated(needed: needed, available: available), offset: offset)
    }

    @inlinable @inline(__always)
    mutating func _load<T: FixedWidthInteger>(_: T.Type) throws(TLDecodingError) -> T {
        let at = try _take(MemoryLayout<T>.size)
        return T(littleEndian: _base.loadUnaligned(fromByteOffset: at, as: T.self))
    }

    /// TL `int`.
    @inlinable public mutating func readInt32() throws(TLDecodingError) -> Int32 { try _load(Int32.self) }

    /// A constructor ID or a `#` (flags) field.
    @inlinable public mutating func readUInt32() throws(TLDecodingError) -> UInt32 { try _load(UInt32.self) }

    /// TL `long`.
    @inlinable public mutating func readInt64() throws(TLDecodingError) -> Int64 { try _load(Int64.self) }

    /// TL `double`, bit-exact.
    @inlinable public mutating func readDouble() throws(TLDecodingError) -> Double {
        Double(bitPattern: try _load(UInt64.self))
    }

    /// TL `int128`.
    public mutating func readInt128() throws(TLDecodingError) -> TLInt128 {
        let at = try _take(16)
        return TLInt128(
            UInt64(littleEndian: _base.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
            UInt64(littleEndian: _base.loadUnaligned(fromByteOffset: at &+ 8, as: UInt64.self)))
    }

    /// TL `int256`.
    public mutating func readInt256() throws(TLDecodingError) -> TLInt256 {
        let at = try _take(32)
        return TLInt256(
            UInt64(littleEndian: _base.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
            UInt64(littleEndian: _base.loadUnaligned(fromByteOffset: at &+ 8, as: UInt64.self)),
            UInt64(littleEndian: _base.loadUnaligned(fromByteOffset: at &+ 16, as: UInt64.self)),
            UInt64(littleEndian: _base.loadUnaligned(fromByteOffset: at &+ 24, as: UInt64.self)))
    }

    /// TL `Bool` (always boxed); any ID other than `boolTrue`/`boolFalse` is an error.
    public mutating func readBool() throws(TLDecodingError) -> Bool {
        let at = _position
        let id = try _load(UInt32.self)
        switch id {
        case TLConstructorID.boolTrue: return true
        case TLConstructorID.boolFalse: return false
        default: throw TLDecodingError(.invalidBool(id), offset: at)
        }
    }

    /// The next 4 bytes as a constructor ID, without consuming them; nil when fewer than 4 are left.
    @inlinable public func peekUInt32() -> UInt32? {
        guard _end &- _position >= 4 else { return nil }
        return UInt32(littleEndian: _base.loadUnaligned(fromByteOffset: _position, as: UInt32.self))
    }

    // MARK: Variable-size reads

    /// Reads a TL `bytes`/`string` header and consumes the whole value; returns where the data starts and its length.
    ///
    /// Prefix byte ≤ 253 is the length; 0xfe is followed by a 3-byte little-endian length; 0xff is invalid. The
    /// padding (to a multiple of 4, counting the prefix) must be present but its content is not checked.
    @inlinable @inline(__always)
    mutating func _takeTLBytes() throws(TLDecodingError) -> (start: Int, count: Int) {
        let at = _position
        let available = _end &- at
        guard available >= 1 else { throw Self._truncated(needed: 1, available: available, at: at) }
        let first = _base.load(fromByteOffset: at, as: UInt8.self)
        let header: Int
        let length: Int
        if first < 0xfe {
            header = 1
            length = Int(first)
        } else if first == 0xfe {
            guard available >= 4 else { throw Self._truncated(needed: 4, available: available, at: at) }
            header = 4
            length = Int(UInt32(littleEndian: _base.loadUnaligned(fromByteOffset: at, as: UInt32.self)) >> 8)
        } else {
            throw TLDecodingError(.invalidValue("TL bytes length prefix 0xff"), offset: at)
        }
        let total = (header &+ length &+ 3) & ~3
        guard total <= available else { throw Self._truncated(needed: total, available: available, at: at) }
        _position = at &+ total
        return (at &+ header, length)
    }

    /// TL `bytes`.
    public mutating func readTLBytes() throws(TLDecodingError) -> [UInt8] {
        let (start, count) = try _takeTLBytes()
        return _copy(from: start, count: count)
    }

    /// TL `string`. Invalid UTF-8 is repaired with U+FFFD rather than rejected, as Telegram's clients do.
    public mutating func readTLString() throws(TLDecodingError) -> String {
        let (start, count) = try _takeTLBytes()
        let utf8 = UnsafeBufferPointer(start: (_base + start).assumingMemoryBound(to: UInt8.self), count: count)
        // Validated here, the bytes become a String without the standard library's own check (a third of decoding
        // the corpus went to it; ours is about twice as fast). Short strings and invalid text take the usual path.
        if count > 15, #available(macOS 26, iOS 26, watchOS 26, tvOS 26, visionOS 26, *),
           case .valid(let isASCII) = UTF8Validation.check(utf8) {
            return unsafe String(copying: UTF8Span(unchecked: utf8.span, isKnownASCII: isASCII))
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// `count` bytes as they are.
    public mutating func readRaw(count: Int) throws(TLDecodingError) -> [UInt8] {
        guard count >= 0 else { throw TLDecodingError(.invalidLength(count), offset: _position) }
        let at = try _take(count)
        return _copy(from: at, count: count)
    }

    /// Everything not yet read (an opaque trailing `Object`, for example).
    @inlinable public mutating func readRemaining() -> [UInt8] {
        let at = _position
        _position = _end
        return _copy(from: at, count: _end &- at)
    }

    /// Skips `count` bytes.
    @inlinable public mutating func skip(count: Int) throws(TLDecodingError) {
        guard count >= 0 else { throw TLDecodingError(.invalidLength(count), offset: _position) }
        _ = try _take(count)
    }

    /// A copy of `count` bytes from `start`, through the sequence initializer, which allocates inline (as
    /// `Buffer.bytes` explains, `init(unsafeUninitializedCapacity:)` costs a metadata lookup per array).
    @inlinable
    func _copy(from start: Int, count: Int) -> [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: _base + start, count: count))
    }

    // MARK: Vectors

    /// A vector's element count, after checking `vector#1cb5c415` when boxed.
    ///
    /// Every TL element takes at least 4 bytes, so a count above `remaining / 4` (or below 0) is rejected before
    /// anything is allocated for it.
    public mutating func readVectorCount(boxed: Bool) throws(TLDecodingError) -> Int {
        if boxed {
            let at = _position
            let id = try _load(UInt32.self)
            guard id == TLConstructorID.vector else { throw TLDecodingError(.invalidVectorID(id), offset: at) }
        }
        let at = _position
        let count = try _load(Int32.self)
        guard count >= 0, Int(count) <= (_end &- _position) / 4 else {
            throw TLDecodingError(.invalidCount(Int64(count)), offset: at)
        }
        return Int(count)
    }

    /// A vector of TL-parsable elements.
    ///
    /// Only the array's allocation is specialized where this is called (inlined into the generated parse functions);
    /// the element loop is one generic copy in the runtime (`_parseElements`). Unspecialized, making the array looked
    /// its types up in the runtime's metadata cache four times per vector (~330 instructions each, 13 % of decoding
    /// the corpus's objects); specialized, each is a load from the accessor's cache. The whole function specialized
    /// per element type cost ~20 % of `TelegramApi`'s release build (`821da7d`, reverted).
    @inlinable
    public mutating func readVector<T: TLParsable>(boxed: Bool, of: T.Type) throws(TLDecodingError) -> [T] {
        let count = try readVectorCount(boxed: boxed)
        if count == 0 { return [] }
        if count == 1 { return [try T.parse(&self)] }  // a literal's storage type comes from a cached accessor
        return try [T](unsafeUninitializedCapacity: count) { (elements, initialized) throws(TLDecodingError) in
            try _parseElements(elements.baseAddress, count: count, initialized: &initialized)
        }
    }

    /// Parses `count` elements into `base`, counting them in `initialized` as they land so that a throw leaves the
    /// parsed ones for the array to release.
    @usableFromInline @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    mutating func _parseElements<T: TLParsable>(
        _ base: UnsafeMutablePointer<T>?, count: Int, initialized: inout Int
    ) throws(TLDecodingError) {
        guard let base else { return }
        while initialized < count {
            (base + initialized).initialize(to: try T.parse(&self))
            initialized &+= 1
        }
    }

    /// A vector of TL `bytes` (`Vector<bytes>`), which is not `TLParsable` because `[UInt8]` is an array.
    public mutating func readBytesVector(boxed: Bool) throws(TLDecodingError) -> [[UInt8]] {
        let count = try readVectorCount(boxed: boxed)
        var result: [[UInt8]] = []
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(try readTLBytes()) }
        return result
    }

    // MARK: Structure

    /// Marks entry into a nested boxed object; fails once more than `maxDepth` are open.
    @inlinable public mutating func enterObject() throws(TLDecodingError) {
        guard _depth < maxDepth else { throw TLDecodingError(.depthExceeded(limit: maxDepth), offset: _position) }
        _depth &+= 1
    }

    /// Marks the end of the object opened by the matching `enterObject`.
    @inlinable public mutating func leaveObject() {
        if _depth > 0 { _depth &-= 1 }
    }

    /// The error for a constructor ID just read (the last 4 bytes) that `type` does not have: what a generated
    /// `parse` throws. `mutating` only so that a debug build passes the reader by address instead of copying it.
    public mutating func unknownConstructor(_ id: UInt32, type: StaticString) -> TLDecodingError {
        TLDecodingError(.unknownConstructor(id, type: type.description), offset: Swift.max(_position &- 4, 0))
    }

    /// Fails when bytes are left over.
    @inlinable public func expectEnd() throws(TLDecodingError) {
        guard _position == _end else {
            throw TLDecodingError(.trailingBytes(_end &- _position), offset: _position)
        }
    }
}
