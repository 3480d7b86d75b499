// Round trips and exact wire bytes of the fixed-size TL primitives, Bool and the Buffer itself.
import Synchronization
import Testing
@testable import TLRuntime

@Suite struct PrimitiveTests {
    @Test(arguments: [Int32.min, -1, 0, 1, 127, 128, 65536, Int32.max] as [Int32])
    func int32RoundTrip(_ v: Int32) throws {
        let buffer = Buffer()
        buffer.appendInt32(v)
        #expect(buffer.count == 4)
        var reader = BufferReader(buffer)
        #expect(try reader.readInt32() == v)
        try reader.expectEnd()
    }

    @Test func int32AndUInt32AreLittleEndian() throws {
        let buffer = Buffer()
        buffer.appendInt32(-2)
        buffer.appendUInt32(0x1cb5_c415)
        #expect(hex(buffer.bytes) == "feffffff15c4b51c")
        var reader = BufferReader(buffer)
        #expect(try reader.readUInt32() == 0xffff_fffe)
        #expect(try reader.readUInt32() == 0x1cb5_c415)
    }

    @Test(arguments: [Int64.min, -1, 0, 1, 1 << 32, -(1 << 32), (1 << 53) + 1, Int64.max] as [Int64])
    func int64RoundTrip(_ v: Int64) throws {
        let wire = encode(v)
        #expect(wire.count == 8)
        var reader = BufferReader(bytes: wire)
        #expect(try reader.readInt64() == v)
        #expect(reader.remaining == 0)
    }

    @Test func int64WireOrder() {
        #expect(hex(encode(Int64(0x0102_0304_0506_0708))) == "0807060504030201")
    }

    @Test(arguments: [0.0, -0.0, 1.0, -1.0, 0.1, -2.25, Double.pi, 1e16, Double.leastNonzeroMagnitude, 2.2250738585072014e-308,
                      Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude, .infinity, -.infinity] as [Double])
    func doubleRoundTripIsBitExact(_ v: Double) throws {
        var reader = BufferReader(bytes: encode(v))
        #expect(try reader.readDouble().bitPattern == v.bitPattern)
    }

    @Test func negativeZeroWireBytes() throws {
        #expect(hex(encode(-0.0)) == "0000000000000080")
        var reader = BufferReader(bytes: bytes("0000000000000080"))
        let d = try reader.readDouble()
        #expect(d == 0 && d.sign == .minus)
    }

    @Test func nanPayloadSurvives() throws {
        let nan = Double(bitPattern: 0x7ff8_0000_dead_beef)
        var reader = BufferReader(bytes: encode(nan))
        #expect(try reader.readDouble().bitPattern == 0x7ff8_0000_dead_beef)
    }

    @Test func int128WireOrderAndHex() throws {
        let wire = (0..<16).map { UInt8($0) }
        let v = try TLInt128(wireBytes: wire)
        #expect(v.description == "000102030405060708090a0b0c0d0e0f")
        #expect(v.wireBytes == wire)
        #expect(encode(v) == wire)
        #expect(v == TLInt128(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908))
        var reader = BufferReader(bytes: wire)
        #expect(try reader.readInt128() == v)
        #expect(TLInt128(hex: "000102030405060708090a0b0c0d0e0f") == v)
        #expect(TLInt128(hex: "0001") == nil)
        #expect(TLInt128(hex: "zz0102030405060708090a0b0c0d0e0f") == nil)
        #expect(throws: TLDecodingError(.invalidLength(15), offset: 0)) { try TLInt128(wireBytes: Array(wire.prefix(15))) }
    }

    @Test func int128EdgePatterns() throws {
        var last = [UInt8](repeating: 0, count: 16)
        last[15] = 0x80
        for wire in [[UInt8](repeating: 0, count: 16), [UInt8](repeating: 0xff, count: 16), last] {
            var reader = BufferReader(bytes: wire)
            let v = try reader.readInt128()
            #expect(v.wireBytes == wire)
            #expect(encode(v) == wire)
        }
    }

    @Test func int256WireOrderAndHex() throws {
        let wire = (0..<32).map { UInt8($0 * 3) }
        let v = try TLInt256(wireBytes: wire)
        #expect(v.description == hex(wire))
        #expect(encode(v) == wire)
        var reader = BufferReader(bytes: wire)
        #expect(try reader.readInt256() == v)
        #expect(TLInt256(hex: hex(wire)) == v)
        #expect(throws: TLDecodingError(.invalidLength(33), offset: 0)) { try TLInt256(wireBytes: wire + [0]) }
        #expect(Set([v, v, TLInt256.zero]).count == 2)
    }

    @Test func boolUsesBoxedIDs() throws {
        #expect(hex(encode(true)) == "b5757299")
        #expect(hex(encode(false)) == "379779bc")
        var reader = BufferReader(bytes: bytes("b5757299 379779bc"))
        #expect(try reader.readBool() == true)
        #expect(try reader.readBool() == false)
    }

    @Test func boolRejectsOtherIDs() {
        var reader = BufferReader(bytes: bytes("00000000 01000000"))
        _ = try? reader.readInt32()
        #expect(throws: TLDecodingError(.invalidBool(1), offset: 4)) { try reader.readBool() }
    }

    @Test func parsableConformancesMatchReaderMethods() throws {
        var reader = BufferReader(bytes: encode(Int32(7)) + encode(Int64(-8)) + encode(1.5) + encode("hi") + encode(true))
        #expect(try Int32.parse(&reader) == 7)
        #expect(try Int64.parse(&reader) == -8)
        #expect(try Double.parse(&reader) == 1.5)
        #expect(try String.parse(&reader) == "hi")
        #expect(try Bool.parse(&reader) == true)
        try reader.expectEnd()
    }
}

@Suite struct BufferTests {
    @Test func growsAcrossManyAppends() throws {
        let buffer = Buffer(capacity: 0)
        for i in 0..<10_000 { buffer.appendInt32(Int32(i)) }
        #expect(buffer.count == 40_000)
        #expect(buffer.capacity >= 40_000)
        var reader = BufferReader(buffer)
        for i in 0..<10_000 { #expect(try reader.readInt32() == Int32(i)) }
    }

    /// A run through `TLFieldWriter` writes the bytes the single appends write, however much of its reservation it
    /// uses, and grows the buffer when the reservation does not fit: at every fill level of a small buffer.
    @Test func fieldWriterMatchesTheSingleAppends() throws {
        let int128 = try TLInt128(wireBytes: (0..<16).map { UInt8($0 + 1) })
        let int256 = try TLInt256(wireBytes: (0..<32).map { UInt8(200 - $0) })
        for prefix in 0..<80 {
            for skipped in [false, true] {
                let expected = Buffer(capacity: 0), viaWriter = Buffer(capacity: 0)
                for buffer in [expected, viaWriter] { buffer.appendRaw([UInt8](repeating: 0xa5, count: prefix)) }
                expected.appendUInt32(0x1234_5678)
                expected.appendInt32(-2)
                if !skipped { expected.appendInt64(Int64.min + 3) }
                expected.appendDouble(-0.0)
                expected.appendBool(true)
                expected.appendBool(false)
                expected.appendInt128(int128)
                expected.appendInt256(int256)

                var w = viaWriter.fieldWriter(reserving: 4 + 4 + 8 + 8 + 4 + 4 + 16 + 32)
                w.uint32(0x1234_5678)
                w.int32(-2)
                if !skipped { w.int64(Int64.min + 3) }  // reserved, but not written
                w.double(-0.0)
                w.bool(true)
                w.bool(false)
                w.int128(int128)
                w.int256(int256)
                viaWriter.commit(w)
                #expect(viaWriter.bytes == expected.bytes, "after \(prefix) bytes, int64 \(skipped ? "skipped" : "written")")
                viaWriter.appendInt32(7)  // the count the run committed is where the next append goes
                #expect(viaWriter.count == expected.count + 4)
            }
        }
    }

    #if DEBUG
    /// A run that stores more than it reserved stops at the store in debug builds, before writing past the room.
    @Test func aFieldWriterStoringPastItsReservationTraps() async {
        await #expect(processExitsWith: .failure) {
            let buffer = Buffer()
            var w = buffer.fieldWriter(reserving: 6)
            w.int32(1)
            w.int32(2)
            buffer.commit(w)
        }
    }
    #endif

    @Test func removeAllKeepsOrReleasesCapacity() {
        let buffer = Buffer()
        buffer.appendRaw([UInt8](repeating: 1, count: 1000))
        let grown = buffer.capacity
        buffer.removeAll(keepingCapacity: true)
        #expect(buffer.count == 0 && buffer.capacity == grown)
        buffer.appendInt32(5)
        #expect(buffer.bytes == [5, 0, 0, 0])
        buffer.removeAll(keepingCapacity: false)
        #expect(buffer.count == 0 && buffer.capacity < grown)
    }

    @Test func appendsOtherBufferAndItself() {
        let a = Buffer(bytes: [1, 2, 3])
        let b = Buffer(bytes: [4])
        a.append(b)
        #expect(a.bytes == [1, 2, 3, 4])
        a.append(a)
        #expect(a.bytes == [1, 2, 3, 4, 1, 2, 3, 4])
        let big = Buffer(capacity: 0)
        big.appendRaw([UInt8](repeating: 9, count: 64))
        big.append(big)  // forces a reallocation while copying from itself
        #expect(big.bytes == [UInt8](repeating: 9, count: 128))
    }

    @Test func readerIsASnapshot() throws {
        let buffer = Buffer()
        buffer.appendInt64(42)
        var reader = BufferReader(buffer)
        buffer.removeAll(keepingCapacity: false)
        for _ in 0..<1000 { buffer.appendInt64(-1) }  // reallocates the buffer's region
        #expect(try reader.readInt64() == 42)
        #expect(reader.remaining == 0)
    }

    @Test func rawAppendsAndUnsafeAccess() {
        let buffer = Buffer()
        buffer.appendRaw([0xaa, 0xbb])
        [UInt8](arrayLiteral: 0xcc).withUnsafeBytes { buffer.appendRaw($0) }
        buffer.appendRaw([])
        #expect(buffer.withUnsafeBytes { Array($0) } == [0xaa, 0xbb, 0xcc])
        #expect(buffer.description == "Buffer(3 bytes: aabbcc)")
    }

    @Test func vectorHelpers() throws {
        let buffer = Buffer()
        buffer.appendVector([Int64(1), 2], boxed: true)
        buffer.appendBytesVector([[1], []], boxed: false)
        #expect(hex(buffer.bytes) == "15c4b51c" + "02000000" + "0100000000000000" + "0200000000000000"
                + "02000000" + "01010000" + "00000000")
        var reader = BufferReader(buffer)
        #expect(try reader.readVector(boxed: true, of: Int64.self) == [1, 2])
        #expect(try reader.readBytesVector(boxed: false) == [[1], []])
        try reader.expectEnd()
    }

    /// Vectors of a reference type, parsed into the array's storage and written in place: every element comes back
    /// in order, and a vector whose third element is rejected throws at that element and releases the two parsed.
    @Test func vectorsOfReferencesKeepOrderAndReleaseOnThrow() throws {
        let buffer = Buffer()
        for count in [0, 1, 2, 5, 64, 1000] {
            buffer.appendVector((0..<count).map { LiveCounted(Int32($0 * 10)) }, boxed: true)
        }
        #expect(LiveCounted.live.withLock { $0 } == 0)
        var reader = BufferReader(buffer)
        for count in [0, 1, 2, 5, 64, 1000] {
            let elements = try reader.readVector(boxed: true, of: LiveCounted.self)
            #expect(elements.map(\.value) == (0..<count).map { Int32($0 * 10) })
        }
        try reader.expectEnd()
        #expect(LiveCounted.live.withLock { $0 } == 0)

        let cut = Buffer()
        cut.appendVectorHeader(count: 3, boxed: false)
        cut.appendInt32(1)
        cut.appendInt32(2)
        cut.appendInt32(-1)
        var rejected = BufferReader(cut)
        #expect(throws: TLDecodingError(.invalidValue("negative"), offset: 12)) {
            try rejected.readVector(boxed: false, of: LiveCounted.self)
        }
        #expect(LiveCounted.live.withLock { $0 } == 0)
    }

    @Test func readerUtilities() throws {
        var reader = BufferReader(bytes: [1, 2, 3, 4, 5, 6])
        #expect(reader.peekUInt32() == 0x0403_0201)
        #expect(reader.offset == 0)
        #expect(try reader.readRaw(count: 2) == [1, 2])
        #expect(throws: TLDecodingError(.invalidLength(-1), offset: 2)) { try reader.readRaw(count: -1) }
        #expect(throws: TLDecodingError(.truncated(needed: 5, available: 4), offset: 2)) { try reader.readRaw(count: 5) }
        try reader.skip(count: 1)
        #expect(reader.peekUInt32() == nil)
        #expect(throws: TLDecodingError(.trailingBytes(3), offset: 3)) { try reader.expectEnd() }
        #expect(reader.readRemaining() == [4, 5, 6])
        #expect(reader.readRemaining() == [])
        try reader.expectEnd()
        #expect(throws: TLDecodingError(.truncated(needed: 4, available: 0), offset: 6)) { try reader.readInt32() }
    }

    @Test func emptyReader() {
        var reader = BufferReader(bytes: [])
        #expect(reader.remaining == 0)
        #expect(throws: TLDecodingError(.truncated(needed: 1, available: 0), offset: 0)) { try reader.readTLBytes() }
    }
}

/// A non-negative TL `int` in a class that counts its live instances, for the vector tests.
final class LiveCounted: TLParsable, TLSerializable {
    static let live = Mutex(0)
    let value: Int32

    init(_ value: Int32) {
        self.value = value
        Self.live.withLock { $0 += 1 }
    }

    deinit { Self.live.withLock { $0 -= 1 } }

    static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> LiveCounted {
        let value = try reader.readInt32()
        guard value >= 0 else { throw TLDecodingError(.invalidValue("negative"), offset: reader.offset - 4) }
        return LiveCounted(value)
    }

    func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendInt32(value) }
}
