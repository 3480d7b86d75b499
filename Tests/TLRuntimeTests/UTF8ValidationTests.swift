// The UTF-8 validators behind `readTLString` (the AVX2 and SSSE3 ones in `CUTF8`, each the CPU runs, and the
// scalar DFA) against the standard library's validation: every sequence of up to four bytes drawn from the edges of
// each UTF-8 byte class (at the start of the input, at every offset of the DFA's eight-byte steps and the vector
// validators' 16- and 32-byte blocks, at the end), long input with single bytes changed, and seeded random input. A
// string any of them wrongly accepted would become a `String` unchecked.
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

    /// The scalar DFA alone, which `check` uses below 16 bytes and on CPUs without SSSE3.
    static func checkedScalar(_ bytes: [UInt8]) -> UTF8Validity {
        bytes.withUnsafeBufferPointer { UTF8Validation.checkScalar($0) }
    }

    /// Whether `check` (the widest vector validator from 16 bytes), the scalar DFA and each vector validator the
    /// CPU runs, at any length, all give the standard library's verdict on `bytes`.
    static func allAgree(_ bytes: [UInt8]) -> Bool {
        let verdict = expected(bytes)
        guard checked(bytes) == verdict, checkedScalar(bytes) == verdict else { return false }
        return bytes.withUnsafeBufferPointer { buffer in
            UTF8Validation.vectorValidators.allSatisfy { validator in
                validator.level > UTF8Validation.vectorLevel
                    || UTF8Validation.checkVector(buffer, level: validator.level) == verdict
            }
        }
    }

    @Test func agreesWithTheStandardLibraryOnEveryShortSequenceOfClassEdges() {
        var mismatches: [[UInt8]] = []
        var sequence: [UInt8] = []
        func visit(_ length: Int) {
            if sequence.count == length {
                if !Self.allAgree(sequence) { mismatches.append(sequence) }
                // The same bytes after 0–31 ASCII bytes and before enough to fill further steps, so that every
                // sequence also starts at each position of the DFA's eight-byte step and of the vector
                // validators' 16- and 32-byte blocks and crosses into the next; and at the very end of a long
                // input (a sequence cut short there must fail, a complete one pass), through every validator.
                let shift = (sequence.reduce(0) { $0 &+ Int($1) } &+ length) & 31
                let padded = [UInt8](repeating: 0x61, count: shift) + sequence + [UInt8](repeating: 0x62, count: 33)
                if !Self.allAgree(padded) { mismatches.append(padded) }
                let atEnd = [UInt8](repeating: 0x63, count: 32 &+ shift) + sequence
                if !Self.allAgree(atEnd) { mismatches.append(atEnd) }
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
            if !Self.allAgree(bytes) { mismatches.append(bytes) }
        }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(5))")
    }

    /// Both validators on random text of several 16-byte blocks, with one byte at each position replaced in turn by
    /// a quarter of the edge bytes (a different quarter at each position modulo 4, to bound the run time): an
    /// error or a cut sequence anywhere in a long input, including across block boundaries.
    @Test func bothValidatorsAgreeOnLongInputWithOneByteChanged() {
        var random = SeededGenerator(state: 0xb10c)
        var mismatches: [[UInt8]] = []
        for _ in 0..<40 {
            let base = Self.randomText(pieces: 20...40, using: &random)
            for position in 0..<base.count {
                for byte in Self.edges where Int(byte) & 3 == position & 3 {
                    var bytes = base
                    bytes[position] = byte
                    if !Self.allAgree(bytes) { mismatches.append(bytes) }
                }
            }
        }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(3))")
    }

    /// On x86-64 a vector validator must be the one `check` runs (CI's CPUs have SSSE3), so the tests above compare
    /// different implementations; each level the CPU reports answers, and a level above it declines.
    @Test func theVectorValidatorsRunWhereTheCPUHasThem() {
        #if arch(x86_64)
        #expect(UTF8Validation.vectorAvailable)
        #endif
        let text = Array("well-formed text of more than 32 bytes: ✓ Привет".utf8)
        text.withUnsafeBufferPointer { buffer in
            for validator in UTF8Validation.vectorValidators {
                let verdict = UTF8Validation.checkVector(buffer, level: validator.level)
                #expect((verdict != nil) == (validator.level <= UTF8Validation.vectorLevel), "\(validator.name)")
                #expect(verdict == nil || verdict == .valid(isASCII: false), "\(validator.name)")
            }
        }
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
