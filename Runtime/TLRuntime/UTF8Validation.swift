// UTF-8 validation for reading TL strings, faster than the standard library's check, so that `readTLString` can
// validate once itself and build the `String` without a second check: 32 or 16 bytes at a time on AVX2 or SSSE3
// (`CUTF8`), else a scalar DFA (twice the standard library's speed on the corpus's text). All follow the
// well-formed byte sequences of the Unicode Standard, table 3-7 (no overlong forms, no surrogates, nothing above
// U+10FFFF); the tests compare each with the standard library's validation on every short sequence of byte
// classes, at every offset of each step size, and on random input. The answer decides whether bytes become a
// `String` unchecked, so it must never say valid for invalid input.

import CUTF8

/// What `UTF8Validation.check` found.
enum UTF8Validity: Equatable {
    case invalid
    case valid(isASCII: Bool)
}

enum UTF8Validation {
    // A "shift DFA": each state is a bit offset (a multiple of 6) into a 64-bit row per byte value, and the row's
    // 6 bits at that offset are the next state. One table load (independent of the state) and one shift per byte.
    // The error state is offset 0, whose bits are 0 in every row, so an error sticks.
    static let error: UInt64 = 0
    static let accept: UInt64 = 6
    private static let need1: UInt64 = 12
    private static let need2: UInt64 = 18
    private static let need3: UInt64 = 24
    private static let afterE0: UInt64 = 30  // the next byte is A0–BF (no overlong 3-byte forms)
    private static let afterED: UInt64 = 36  // 80–9F (no surrogates)
    private static let afterF0: UInt64 = 42  // 90–BF (no overlong 4-byte forms)
    private static let afterF4: UInt64 = 48  // 80–8F (nothing above U+10FFFF)

    /// The rows, one per byte value; allocated once, never written after, never freed.
    nonisolated(unsafe) static let rows: UnsafePointer<UInt64> = {
        let rows = UnsafeMutablePointer<UInt64>.allocate(capacity: 256)
        rows.initialize(repeating: 0, count: 256)
        func on(_ state: UInt64, _ bytes: ClosedRange<Int>, go next: UInt64) {
            for byte in bytes { rows[byte] |= next << state }
        }
        on(accept, 0x00...0x7f, go: accept)
        on(accept, 0xc2...0xdf, go: need1)
        on(accept, 0xe0...0xe0, go: afterE0)
        on(accept, 0xe1...0xec, go: need2)
        on(accept, 0xed...0xed, go: afterED)
        on(accept, 0xee...0xef, go: need2)
        on(accept, 0xf0...0xf0, go: afterF0)
        on(accept, 0xf1...0xf3, go: need3)
        on(accept, 0xf4...0xf4, go: afterF4)
        on(need1, 0x80...0xbf, go: accept)
        on(need2, 0x80...0xbf, go: need1)
        on(need3, 0x80...0xbf, go: need2)
        on(afterE0, 0xa0...0xbf, go: need1)
        on(afterED, 0x80...0x9f, go: need1)
        on(afterF0, 0x90...0xbf, go: need2)
        on(afterF4, 0x80...0x8f, go: need2)
        return UnsafePointer(rows)
    }()

    /// The widest vector validator the CPU runs (`CUTF8`: none, SSSE3 or AVX2); read once.
    static let vectorLevel = Int(cutf8_level())
    static var vectorAvailable: Bool { vectorLevel >= Int(CUTF8_SSSE3) }

    /// The vector validators by name and level, for the tests and the fuzz target, which compare each that the
    /// CPU runs.
    static let vectorValidators: [(name: String, level: Int)] = [("SSSE3", Int(CUTF8_SSSE3)), ("AVX2", Int(CUTF8_AVX2))]

    /// Whether `bytes` are well-formed UTF-8, and whether they are all ASCII: 32 bytes at a time where the CPU has
    /// AVX2, 16 where it has SSSE3 (on the corpus's strings, mostly not ASCII, the scalar loop was a tenth of
    /// decoding; AVX2 takes about half the instructions of SSSE3), else the DFA.
    static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> UTF8Validity {
        if bytes.count >= 16, vectorAvailable, let start = bytes.baseAddress {
            switch cutf8_validate(start, bytes.count) {
                case 1: return .valid(isASCII: true)
                case 0: return .valid(isASCII: false)
                case -1: return .invalid
                default: break
            }
        }
        return checkScalar(bytes)
    }

    /// The vector validator of `level` alone, at any length; nil when the CPU does not run it.
    static func checkVector(_ bytes: UnsafeBufferPointer<UInt8>, level: Int) -> UTF8Validity? {
        guard level <= vectorLevel else { return nil }
        let verdict = bytes.baseAddress.map { cutf8_validate_at($0, bytes.count, Int32(level)) } ?? 1
        switch verdict {
            case 1: return .valid(isASCII: true)
            case 0: return .valid(isASCII: false)
            case -1: return .invalid
            default: return nil
        }
    }

    /// The DFA alone (every architecture; the tests compare both paths).
    static func checkScalar(_ bytes: UnsafeBufferPointer<UInt8>) -> UTF8Validity {
        guard let start = bytes.baseAddress else { return .valid(isASCII: true) }
        let rows = Self.rows
        let count = bytes.count
        var state = accept
        var isASCII = true
        var index = 0
        // Eight bytes at a time: all ASCII between complete sequences skips the table.
        while index &+ 8 <= count {
            let word = UnsafeRawPointer(start + index).loadUnaligned(as: UInt64.self)
            if word & 0x8080_8080_8080_8080 != 0 || state != accept {
                isASCII = false
                for offset in 0..<8 { state = rows[Int(start[index &+ offset])] &>> state }
                state &= 63
                if state == error { return .invalid }
            }
            index &+= 8
        }
        while index < count {
            let byte = start[index]
            if byte >= 0x80 { isASCII = false }
            state = (rows[Int(byte)] &>> state) & 63
            index &+= 1
        }
        return state == accept ? .valid(isASCII: isASCII) : .invalid
    }
}

/// The validator's verdict on `bytes`, for the fuzz target that compares it with the standard library's
/// (`Fuzz/Properties/UTF8Target.swift`): whether they are well-formed UTF-8, and whether they are all ASCII. With
/// `scalar`, the DFA's alone (otherwise the widest vector validator's from 16 bytes, where the CPU has one).
@_spi(Fuzzing)
public func tlUTF8Verdict(_ bytes: [UInt8], scalar: Bool = false) -> (valid: Bool, isASCII: Bool) {
    bytes.withUnsafeBufferPointer {
        switch scalar ? UTF8Validation.checkScalar($0) : UTF8Validation.check($0) {
            case .invalid: (false, false)
            case .valid(let isASCII): (true, isASCII)
        }
    }
}

/// The verdict of each vector validator the CPU runs (SSSE3, AVX2) on `bytes` at any length, by name.
@_spi(Fuzzing)
public func tlUTF8VectorVerdicts(_ bytes: [UInt8]) -> [(validator: String, valid: Bool, isASCII: Bool)] {
    bytes.withUnsafeBufferPointer { buffer in
        UTF8Validation.vectorValidators.compactMap { validator in
            switch UTF8Validation.checkVector(buffer, level: validator.level) {
                case nil: nil
                case .invalid?: (validator.name, false, false)
                case .valid(let isASCII)?: (validator.name, true, isASCII)
            }
        }
    }
}
