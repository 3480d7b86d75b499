// TL `bytes`/`string` framing at every length boundary, and vector headers and counts.
import Testing
import TLRuntime

/// The expected TL encoding of `n` bytes of data, from the rule rather than from the implementation.
private func expectedEncodedCount(_ n: Int) -> Int {
    let prefix = n <= 253 ? 1 : 4
    return (prefix + n + 3) / 4 * 4
}

@Suite struct BytesTests {
    @Test(arguments: [0, 1, 2, 3, 4, 5, 7, 8, 250, 251, 252, 253, 254, 255, 256, 257, 508, 509, 1000, 65535, 65536, 131072])
    func bytesRoundTrip(_ n: Int) throws {
        let data = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let buffer = Buffer()
        buffer.appendTLBytes(data)
        #expect(buffer.count == expectedEncodedCount(n))
        #expect(buffer.count % 4 == 0)
        let wire = buffer.bytes
        if n <= 253 {
            #expect(wire[0] == UInt8(n))
        } else {
            #expect(Array(wire[0..<4]) == [0xfe, UInt8(n & 0xff), UInt8(n >> 8 & 0xff), UInt8(n >> 16)])
        }
        let prefix = n <= 253 ? 1 : 4
        #expect(Array(wire[prefix..<prefix + n]) == data)
        #expect(wire[(prefix + n)...].allSatisfy { $0 == 0 })
        var reader = BufferReader(buffer)
        #expect(try reader.readTLBytes() == data)
        try reader.expectEnd()
    }

    @Test func exactWireBytesAtTheBoundaries() {
        #expect(hex(encode(bytesValue: [])) == "00000000")
        #expect(hex(encode(bytesValue: [0xab])) == "01ab0000")
        #expect(hex(encode(bytesValue: [1, 2, 3])) == "03010203")
        #expect(hex(encode(bytesValue: [1, 2, 3, 4])) == "0401020304000000")
        let d253 = [UInt8](repeating: 0x11, count: 253)
        #expect(encode(bytesValue: d253) == [0xfd] + d253 + [0, 0])  // 1 + 253 = 254, padded to 256
        let d254 = [UInt8](repeating: 0x22, count: 254)
        #expect(encode(bytesValue: d254) == [0xfe, 0xfe, 0x00, 0x00] + d254 + [0, 0])  // 4 + 254 = 258 → 260
        let d255 = [UInt8](repeating: 0x33, count: 255)
        #expect(encode(bytesValue: d255) == [0xfe, 0xff, 0x00, 0x00] + d255 + [0])
        let d256 = [UInt8](repeating: 0x44, count: 256)
        #expect(encode(bytesValue: d256) == [0xfe, 0x00, 0x01, 0x00] + d256)
        let d65536 = [UInt8](repeating: 0x55, count: 65536)
        #expect(Array(encode(bytesValue: d65536).prefix(4)) == [0xfe, 0x00, 0x00, 0x01])
    }

    @Test(arguments: ["", "a", "ab", "abc", "abcd", "абв", "日本語テキスト", "👨‍👩‍👧", "a\u{0}b", "tab\tnew\nline"])
    func stringRoundTrip(_ s: String) throws {
        let wire = encode(s)
        #expect(wire.count == expectedEncodedCount(s.utf8.count))
        var reader = BufferReader(bytes: wire)
        #expect(try reader.readTLString() == s)
        try reader.expectEnd()
    }

    @Test(arguments: [253, 254, 255, 256, 508, 65536])
    func longStringsMixingWidths(_ n: Int) throws {
        // Build exactly n UTF-8 bytes from 1- to 4-byte characters.
        var s = ""
        while s.utf8.count < n {
            let left = n - s.utf8.count
            s += left >= 4 ? ["a", "é", "語", "😀"][s.utf8.count % 4] : String(repeating: "z", count: left)
        }
        #expect(s.utf8.count == n)
        var reader = BufferReader(bytes: encode(s))
        #expect(try reader.readTLString() == s)
    }

    /// Every length up to 300 and the prefix boundaries, as small (inline), native and literal strings of ASCII and
    /// multi-byte text, written after 0–3 bytes into memory that held 0xff bytes: the same bytes as `appendTLBytes` of
    /// the string's UTF-8, so each copy (a small string's raw words, 16 to 32 bytes as two 16-byte halves, the rest
    /// with `memcpy`) and the zero padding hold at every length and offset.
    @Test func stringsOfEveryLengthMatchTheirBytes() {
        let literals = ["", "z", "fifteen bytes!!", "sixteen bytes!!!", "seventeen bytes!!",
                        "thirty-two bytes of a literal...", "thirty-three bytes of a literal...",
                        "Жизнь — это то, что случается, пока строишь планы"]
        var strings = literals
        for n in Array(0...300) + [508, 509, 1000, 65536] {
            strings.append(String(repeating: "x", count: n))
            strings.append(String((0..<n).map { Character(Unicode.Scalar(UInt8(0x61 + $0 % 26))) }))
            if n >= 2 { strings.append(String(repeating: "é", count: n / 2) + (n % 2 == 1 ? "y" : "")) }
        }
        let garbage = Buffer()
        for s in strings {
            for offset in 0..<4 {
                for _ in 0..<(offset + s.utf8.count + 8) / 4 + 2 { garbage.appendUInt32(0xffff_ffff) }
                garbage.removeAll(keepingCapacity: true)
                for _ in 0..<offset { garbage.appendRaw([0x55]) }
                garbage.appendTLString(s)
                let expected = Array(repeating: 0x55, count: offset) + encode(bytesValue: Array(s.utf8))
                #expect(garbage.bytes == expected, "string of \(s.utf8.count) bytes at offset \(offset)")
                garbage.removeAll(keepingCapacity: true)
            }
        }
    }

    /// `appendTLString` stores a small string's two raw words, trusting that its unused bytes are zero. Small strings
    /// made by every route that shortens, slices, maps or rebuilds text, and native strings shortened in place below
    /// 16 bytes (not small: they go out of line), each encode to exactly their UTF-8, after bytes that were 0xff.
    @Test func shortStringsFromEveryConstructionMatchTheirBytes() {
        var made: [String] = []
        for n in 0...15 {
            let ascii = String((0..<n).map { Character(Unicode.Scalar(UInt8(0x41 + $0))) })
            made.append(ascii)
            made.append(ascii.lowercased())
            made.append(String(ascii.reversed()))
            made.append(String(decoding: Array(ascii.utf8), as: UTF8.self))
            made.append(String(Substring(ascii)))
            made.append("\(n)" + ascii.prefix(max(0, n - 2)))
            var shortened = ascii + "0123456789abcdef"  // 16 or more bytes: native storage
            shortened.removeLast(16)
            made.append(shortened)
            var grown = String(ascii.prefix(n / 2))
            grown.append(contentsOf: ascii.suffix(n - n / 2))
            made.append(grown)
            var native = String(repeating: "é", count: 20)  // 40 bytes, native; shortened in place to n bytes
            native.removeLast(20 - n / 2)
            if n % 2 == 1 { native.append("y") }
            made.append(native)
            made.append(String(repeating: "é", count: n / 2) + (n % 2 == 1 ? "z" : ""))
            if n >= 4 { made.append(String(repeating: "😀", count: n / 4)) }
            made.append(ascii.map { $0 == "B" ? "ß" : String($0) }.joined())
        }
        let garbage = Buffer()
        for s in made {
            for _ in 0..<12 { garbage.appendUInt32(0xffff_ffff) }
            garbage.removeAll(keepingCapacity: true)
            garbage.appendTLString(s)
            #expect(garbage.bytes == encode(bytesValue: Array(s.utf8)), "\(s.debugDescription), \(s.utf8.count) bytes")
            garbage.removeAll(keepingCapacity: true)
        }
    }

    /// A small string's word stores reach past its value; they land in the allocation's slack, so a buffer filled
    /// to its capacity by short strings neither grows nor writes outside its region (run under ASan to see the latter);
    /// the next one grows it.
    @Test func shortStringsFillABufferToItsCapacity() {
        let buffer = Buffer(capacity: 64)
        #expect(buffer.capacity == 64)
        for _ in 0..<16 { buffer.appendTLString("abc") }
        #expect(buffer.count == 64)
        #expect(buffer.capacity == 64)
        #expect(buffer.bytes == Array(repeating: [3, 0x61, 0x62, 0x63] as [UInt8], count: 16).flatMap { $0 })
        buffer.appendTLString("xyz")  // no room: the general path grows the buffer
        #expect(buffer.capacity > 64)
        #expect(buffer.bytes.suffix(8) == [3, 0x61, 0x62, 0x63, 3, 0x78, 0x79, 0x7a])
    }

    @Test func nonNativeStringsEncodeToo() throws {
        // A bridged-looking substring-derived string still goes through the contiguous path or the fallback.
        let s = String("xxhello, world".dropFirst(2))
        #expect(encode(s) == encode(bytesValue: Array("hello, world".utf8)))
    }

    @Test func invalidUTF8IsRepairedNotFatal() throws {
        var reader = BufferReader(bytes: [3, 0x61, 0xff, 0x62])
        #expect(try reader.readTLString() == "a\u{FFFD}b")
    }

    @Test func lengthPrefix0xffIsAnError() {
        var reader = BufferReader(bytes: [0xff, 0, 0, 0, 0, 0, 0, 0])
        #expect(throws: TLDecodingError(.invalidValue("TL bytes length prefix 0xff"), offset: 0)) {
            try reader.readTLBytes()
        }
    }

    @Test func declaredLengthBeyondTheInput() {
        var short = BufferReader(bytes: [5, 1, 2, 3])
        #expect(throws: TLDecodingError(.truncated(needed: 8, available: 4), offset: 0)) { try short.readTLBytes() }
        var long = BufferReader(bytes: [0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0])
        #expect(throws: TLDecodingError(.truncated(needed: 16_777_220, available: 8), offset: 0)) {
            try long.readTLBytes()
        }
        var cutHeader = BufferReader(bytes: [0xfe, 0x01])
        #expect(throws: TLDecodingError(.truncated(needed: 4, available: 2), offset: 0)) { try cutHeader.readTLBytes() }
        var missingPadding = BufferReader(bytes: [1, 0xaa])
        #expect(throws: TLDecodingError(.truncated(needed: 4, available: 2), offset: 0)) {
            try missingPadding.readTLBytes()
        }
        // A failed read consumes nothing.
        #expect(missingPadding.offset == 0)
    }
}

private func encode(bytesValue: [UInt8]) -> [UInt8] {
    let buffer = Buffer()
    buffer.appendTLBytes(bytesValue)
    return buffer.bytes
}

@Suite struct VectorTests {
    @Test func boxedAndBareHeaders() throws {
        let boxed = Buffer()
        boxed.appendVector([Int32(1), 2, 3], boxed: true)
        #expect(hex(boxed.bytes) == "15c4b51c03000000010000000200000003000000")
        let bare = Buffer()
        bare.appendVector([Int32(1), 2, 3], boxed: false)
        #expect(hex(bare.bytes) == "03000000010000000200000003000000")
        var reader = BufferReader(boxed)
        #expect(try reader.readVector(boxed: true, of: Int32.self) == [1, 2, 3])
        var bareReader = BufferReader(bare)
        #expect(try bareReader.readVector(boxed: false, of: Int32.self) == [1, 2, 3])
    }

    @Test func emptyVectors() throws {
        var reader = BufferReader(bytes: bytes("15c4b51c 00000000 00000000"))
        #expect(try reader.readVector(boxed: true, of: String.self) == [])
        #expect(try reader.readVector(boxed: false, of: Int64.self) == [])
        try reader.expectEnd()
    }

    @Test func wrongVectorIDIsAnError() {
        var reader = BufferReader(bytes: bytes("00000000 15c4b51d 00000000"))
        _ = try? reader.readInt32()
        #expect(throws: TLDecodingError(.invalidVectorID(0x1db5_c415), offset: 4)) {
            try reader.readVectorCount(boxed: true)
        }
    }

    @Test func negativeCountIsAnError() {
        var reader = BufferReader(bytes: bytes("15c4b51c ffffffff"))
        #expect(throws: TLDecodingError(.invalidCount(-1), offset: 4)) { try reader.readVector(boxed: true, of: Int32.self) }
    }

    @Test func hugeCountIsRejectedBeforeAllocating() {
        var reader = BufferReader(bytes: bytes("ffffff7f 00000000"))
        #expect(throws: TLDecodingError(.invalidCount(Int64(Int32.max)), offset: 0)) {
            try reader.readVector(boxed: false, of: Int64.self)
        }
    }

    @Test func countIsBoundedByRemainingOverFour() throws {
        // 2 elements claimed, 8 bytes left: plausible (each element ≥ 4 bytes).
        var fits = BufferReader(bytes: bytes("02000000 01000000 02000000"))
        #expect(try fits.readVectorCount(boxed: false) == 2)
        // 3 claimed with 8 left: impossible.
        var tooMany = BufferReader(bytes: bytes("03000000 01000000 02000000"))
        #expect(throws: TLDecodingError(.invalidCount(3), offset: 0)) { try tooMany.readVectorCount(boxed: false) }
        // Plausible count but the elements are cut short: the element read reports it.
        var cut = BufferReader(bytes: bytes("02000000 0100000000000000"))
        #expect(throws: TLDecodingError(.truncated(needed: 8, available: 0), offset: 12)) {
            try cut.readVector(boxed: false, of: Int64.self)
        }
    }

    @Test(arguments: [0, 1, 2, 3, 100, 1000])
    func longVectorsRoundTrip(_ n: Int) throws {
        let values = (0..<n).map { Int64($0) * -7_777_777_777 }
        let buffer = Buffer()
        buffer.appendVector(values, boxed: true)
        #expect(buffer.count == 8 + 8 * n)
        var reader = BufferReader(buffer)
        #expect(try reader.readVector(boxed: true, of: Int64.self) == values)
    }

    @Test func vectorOfObjects() throws {
        let users: [TestApi.User] = [.userEmpty(id: 1), .user(.init(id: 2, phone: "+1", photo: nil))]
        let buffer = Buffer()
        buffer.appendVector(users, boxed: true)
        var reader = BufferReader(buffer)
        let parsed = try reader.readVector(boxed: true, of: TestApi.User.self)
        #expect(parsed.map { encode($0) } == users.map { encode($0) })
    }
}
