// The UTF-8 validator behind `readTLString` against the standard library's validation: every sequence of up to four
// bytes drawn from the edges of each UTF-8 byte class (at the start of the input and across the validator's
// eight-byte steps), and seeded random input. A string it wrongly accepted would become a `String` unchecked.
import Testing
@testable import TLRuntime

@Suite struct UTF8ValidationTests {
    /// The first and last byte of every range that table 3-7 of the Unicode Standard treats differently.
    static let edges: [UInt8] = [
        0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef,
        0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff,
    ]

    static func expected(_ bytes: [UInt8]) -> UTF8Validity {
        String(validating: bytes, as: UTF8.self) == nil ? .invalid : .valid(isASCII: bytes.allSatisfy { $0 < 0x80 })
    }

    static func checked(_ bytes: [UInt8]) -> UTF8Validity {
        bytes.withUnsafeBufferPointer { UTF8Validation.check($0) }
    }

    @Test func agreesWithTheStandardLibraryOnEveryShortSequenceOfClassEdges() {
        var mismatches: [[UInt8]] = []
        var sequence: [UInt8] = []
        func visit(_ length: Int) {
            if sequence.count == length {
                if Self.checked(sequence) != Self.expected(sequence) { mismatches.append(sequence) }
                // The same bytes after 0–7 ASCII bytes and before enough to fill several steps, so that every
                // sequence also starts at each position of an eight-byte step and crosses into the next.
                let shift = (sequence.reduce(0) { $0 &+ Int($1) } &+ length) & 7
                let padded = [UInt8](repeating: 0x61, count: shift) + sequence + [UInt8](repeating: 0x62, count: 17)
                if Self.checked(padded) != Self.expected(padded) { mismatches.append(padded) }
                return
            }
            for byte in Self.edges {
                sequence.append(byte)
                visit(length)
                sequence.removeLast()
            }
        }
        for length in 0...4 { visit(length) }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(5))")
    }

    /// Up to `pieces` random pieces: any byte (mostly invalid), printable ASCII, or a valid scalar of 1–4 bytes
    /// that is sometimes cut short.
    static func randomText(pieces: ClosedRange<Int>, using random: inout SeededGenerator) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: pieces, using: &random) {
            switch Int.random(in: 0..<10, using: &random) {
            case 0: bytes.append(UInt8.random(in: 0...255, using: &random))
            case 1...3: bytes.append(UInt8.random(in: 0x20...0x7e, using: &random))
            default:
                let scalar = Unicode.Scalar(UInt32.random(in: 0x80...0x10_ffff, using: &random)) ?? "\u{FFFD}"
                var encoded = Array(String(scalar).utf8)
                if Int.random(in: 0..<16, using: &random) == 0 { encoded.removeLast() }
                bytes += encoded
            }
        }
        return bytes
    }

    @Test func agreesWithTheStandardLibraryOnRandomText() {
        var random = SeededGenerator(state: 0x5eed)
        var mismatches: [[UInt8]] = []
        for _ in 0..<20_000 {
            let bytes = Self.randomText(pieces: 0...24, using: &random)
            if Self.checked(bytes) != Self.expected(bytes) { mismatches.append(bytes) }
        }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(5))")
    }

    /// What `readTLString` returns is byte for byte what `String(decoding:as:)` makes of the same bytes, valid or
    /// not, short (the standard library's path) or long (validated here, built unchecked).
    @Test func readTLStringMatchesTheStandardLibraryByteForByte() throws {
        var random = SeededGenerator(state: 0xdec0de)
        let inputs = (0..<5_000).map { _ in Self.randomText(pieces: 0...40, using: &random) }
        let buffer = Buffer()
        for bytes in inputs { buffer.appendTLBytes(bytes) }
        var reader = BufferReader(buffer)
        var mismatches: [[UInt8]] = []
        for bytes in inputs where try Array(reader.readTLString().utf8) != Array(String(decoding: bytes, as: UTF8.self).utf8) {
            mismatches.append(bytes)
        }
        #expect(reader.remaining == 0)
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(3))")
    }

    @Test func readTLStringKeepsLongTextAndRepairsInvalidText() throws {
        let text = "Привет, мир! 👋🏽 ラテン文字 and some ASCII after it"
        let buffer = Buffer()
        buffer.appendTLString(text)
        var bad = Array("a long string that is not UTF-8: ".utf8)
        bad += [0xed, 0xa0, 0x80, 0x62]  // an encoded surrogate
        buffer.appendTLBytes(bad)
        var reader = BufferReader(buffer)
        #expect(try reader.readTLString() == text)
        #expect(try reader.readTLString() == String(decoding: bad, as: UTF8.self))
        #expect(String(decoding: bad, as: UTF8.self).hasSuffix("\u{FFFD}\u{FFFD}\u{FFFD}b"))
    }
}
