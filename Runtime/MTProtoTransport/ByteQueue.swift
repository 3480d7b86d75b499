// A growable FIFO of bytes for incremental decoders: appended at the back, consumed from the front, compacted
// lazily so that consuming is O(1) amortised. A decoder that knows a large message is coming says so (`expect`),
// and the message is then handed out in the storage it arrived in rather than copied. Every accessor checks
// bounds, so a decoder that miscounts gets `nil`, never a trap.

/// Bytes received but not yet consumed by a decoder.
public struct ByteQueue: Sendable {
    private var storage: [UInt8] = []
    private var head = 0

    /// An empty queue.
    public init() {}

    /// A queue holding `bytes`.
    public init(_ bytes: [UInt8]) { storage = bytes }

    /// How many bytes are waiting.
    public var count: Int { storage.count - head }

    /// Whether no byte is waiting.
    public var isEmpty: Bool { count == 0 }

    /// Appends bytes at the back.
    public mutating func append(_ bytes: [UInt8]) {
        makeRoom()
        storage.append(contentsOf: bytes)
    }

    /// Appends the bytes of a raw buffer.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        makeRoom()
        storage.append(contentsOf: bytes)
    }

    /// Drops the consumed front before an append: all of it without copying when nothing is left, or once it is
    /// over 4 KiB and more than half the storage.
    private mutating func makeRoom() {
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// Appends part of an array.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { append($0) }
    }

    /// The byte `offset` positions from the front.
    public func byte(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < count else { return nil }
        return storage[head + offset]
    }

    /// A little-endian UInt32 starting `offset` bytes from the front.
    public func uint32LE(at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= count else { return nil }
        let i = head + offset
        return UInt32(storage[i]) | UInt32(storage[i + 1]) << 8 | UInt32(storage[i + 2]) << 16
            | UInt32(storage[i + 3]) << 24
    }

    /// A copy of `length` bytes starting `offset` from the front, without consuming them.
    public func peek(_ length: Int, at offset: Int = 0) -> [UInt8]? {
        guard offset >= 0, length >= 0, offset + length <= count else { return nil }
        return Array(storage[(head + offset)..<(head + offset + length)])
    }

    /// Removes and returns the first `length` bytes. After `expect(length)` the storage itself is handed out
    /// (whatever arrived behind the message moves to fresh storage), so a large message is not copied.
    public mutating func read(_ length: Int) -> [UInt8]? {
        guard length >= 0, length <= count else { return nil }
        if head == 0, length >= Self.handOverThreshold, storage.count - length <= length {
            var message = storage
            storage = Array(storage[length...])
            message.removeLast(message.count - length)
            return message
        }
        let bytes = Array(storage[head..<(head + length)])
        head += length
        return bytes
    }

    /// Messages at least this large are handed out in place by `read` once `expect`ed.
    static let handOverThreshold = 64 << 10

    /// Says a message of `length` bytes starts at the front and is not all here yet. For a large one, the waiting
    /// bytes move to the front of storage with room for the whole message and a read's worth behind it, so it
    /// arrives without the storage regrowing (each regrowth copies everything) and `read` can hand it out.
    public mutating func expect(_ length: Int) {
        guard length >= Self.handOverThreshold, storage.capacity < length + Self.handOverThreshold else { return }
        var room = [UInt8]()
        room.reserveCapacity(length + Self.handOverThreshold)
        storage.withUnsafeBytes { room.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[head...])) }
        storage = room
        head = 0
    }

    /// Drops the first `length` bytes.
    @discardableResult
    public mutating func skip(_ length: Int) -> Bool {
        guard length >= 0, length <= count else { return false }
        head += length
        return true
    }

    /// Removes and returns everything.
    public mutating func readAll() -> [UInt8] {
        let bytes = Array(storage[head...])
        storage.removeAll(keepingCapacity: true)
        head = 0
        return bytes
    }

    /// Calls `body` with the waiting bytes, without copying.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[head...])) }
    }
}

extension Array where Element == UInt8 {
    mutating func appendUInt32LE(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 24))
    }

    mutating func appendUInt16BE(_ value: Int) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Reads a big-endian UInt16 at `offset`; nil when out of bounds.
    func uint16BE(at offset: Int) -> Int? {
        guard offset >= 0, offset + 2 <= count else { return nil }
        return Int(self[offset]) << 8 | Int(self[offset + 1])
    }
}

extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// Reads a little-endian UInt32 at `index`, one of the collection's own indices (for arrays and their slices,
    /// whose indices are consecutive integers: an offset into an array, not into a slice); nil when out of bounds.
    func uint32LE(at index: Int) -> UInt32? {
        guard index >= startIndex, index + 4 <= endIndex else { return nil }
        return UInt32(self[index]) | UInt32(self[index + 1]) << 8 | UInt32(self[index + 2]) << 16
            | UInt32(self[index + 3]) << 24
    }
}
