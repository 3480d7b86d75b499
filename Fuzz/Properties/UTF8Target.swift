// TLRuntime validates the UTF-8 of TL strings itself and builds a `String` from bytes it calls valid without a second
// check, so a false "valid" would put malformed UTF-8 inside a `String`. Two properties, at each of the first 32
// start offsets (every position of the vector validators' 16- and 32-byte blocks and the DFA's 8-byte step): the
// verdicts (valid, all ASCII) of every validator the CPU runs equal the standard library's, and a string read by
// `readTLString` has the same UTF-8 as `String(decoding:)` of the same bytes (invalid input repaired with U+FFFD
// the same way).
@_spi(Fuzzing) import TLRuntime

/// Input: any bytes.
public func fuzzUTF8(_ data: [UInt8]) throws(Violation) {
    for start in 0..<min(32, data.count + 1) {
        let bytes = Array(data[start...])
        let verdict = tlUTF8Verdict(bytes)
        let valid = String(validating: bytes, as: UTF8.self) != nil
        guard verdict.valid == valid else {
            throw Violation("UTF-8 verdict \(verdict.valid), standard library \(valid), at offset \(start)")
        }
        guard tlUTF8Verdict(bytes, scalar: true) == verdict else {
            throw Violation("the scalar and vector validators disagree on \(bytes.count) bytes at offset \(start)")
        }
        for vector in tlUTF8VectorVerdicts(bytes) where (vector.valid, vector.isASCII) != verdict {
            throw Violation("the \(vector.validator) validator disagrees on \(bytes.count) bytes at offset \(start)")
        }
        let ascii = bytes.allSatisfy { $0 < 0x80 }
        guard !valid || verdict.isASCII == ascii else {
            throw Violation("isASCII \(verdict.isASCII) for bytes that are \(ascii ? "" : "not ")all ASCII")
        }
        let tl = Buffer()
        tl.appendTLBytes(bytes)
        var reader = BufferReader(tl)
        let read: String
        do {
            read = try reader.readTLString()
        } catch {
            throw Violation("readTLString refused its own encoding of \(bytes.count) bytes: \(error)")
        }
        guard Array(read.utf8) == Array(String(decoding: bytes, as: UTF8.self).utf8) else {
            throw Violation("readTLString differs from String(decoding:) at offset \(start)")
        }
    }
}
