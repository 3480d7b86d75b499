import Testing
@testable import TLRuntime

/// A snapshot shares a buffer's region instead of copying it; the buffer copies before it writes again.
@Suite struct BufferSnapshotTests {
    static let original = [UInt8](1...40)

    /// Every way a buffer writes after a snapshot, with what the buffer then holds.
    static let ways: [(String, @Sendable (Buffer) -> Void, [UInt8])] = [
        ("append", { $0.appendInt32(-1) }, original + [0xff, 0xff, 0xff, 0xff]),
        ("removeAll keeping capacity, then append", {
            $0.removeAll(keepingCapacity: true)
            $0.appendRaw([UInt8](repeating: 0xee, count: 40))
        }, [UInt8](repeating: 0xee, count: 40)),
        ("removeAll", { $0.removeAll(keepingCapacity: false); $0.appendRaw([9]) }, [9]),
        ("rewind, then append", { $0._rewind(to: 8); $0.appendRaw([UInt8](repeating: 0xee, count: 8)) },
         Array(original[..<8]) + [UInt8](repeating: 0xee, count: 8)),
        ("store at an offset", { $0._storeInt32(-1, at: 0) }, [0xff, 0xff, 0xff, 0xff] + original[4...]),
        ("a field writer", { var w = $0.fieldWriter(reserving: 8); w.int64(-1); $0.commit(w) },
         original + [UInt8](repeating: 0xff, count: 8)),
        ("reserveCapacity, then append", { $0.reserveCapacity(1000); $0.appendTLString("x") },
         original + [1, 0x78, 0, 0]),
        ("append itself", { $0.append($0) }, original + original),
    ]

    @Test func aSnapshotKeepsItsBytesWhateverTheBufferWritesNext() {
        for (way, write, expected) in Self.ways {
            let buffer = Buffer(bytes: Self.original)
            let snapshot = buffer._snapshot()
            write(buffer)
            #expect(snapshot.bytes == Self.original, "\(way)")
            #expect(buffer.bytes == expected, "\(way)")
            buffer.appendRaw([7])
            #expect(buffer.bytes == expected + [7], "\(way), then more")
        }
    }

    @Test func eachOutlivesTheOther() {
        var snapshot: BufferSnapshot?
        do {
            let buffer = Buffer(bytes: [1, 2, 3])
            snapshot = buffer._snapshot()
        }
        #expect(snapshot?.bytes == [1, 2, 3])
        let buffer = Buffer(bytes: [4])
        do { _ = buffer._snapshot() }
        buffer.appendRaw([5])
        #expect(buffer.bytes == [4, 5])
    }

    @Test func unchangedBytesGiveTheSameSnapshot() {
        let buffer = Buffer(bytes: [1, 2])
        let first = buffer._snapshot()
        #expect(buffer._snapshot() === first)
        #expect(buffer.capacity == 2)  // held at the count: the next append copies
        buffer.appendRaw([3])
        let second = buffer._snapshot()
        #expect(second !== first && second.bytes == [1, 2, 3] && first.bytes == [1, 2])
        let empty = Buffer()._snapshot()
        #expect(empty.bytes.isEmpty)
    }
}
