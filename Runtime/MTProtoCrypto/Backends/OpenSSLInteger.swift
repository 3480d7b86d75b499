// A minimal owner of OpenSSL BIGNUMs for the RSA, DH and SRP math.
#if canImport(COpenSSL)
import COpenSSL

final class OpenSSLInteger: BackendInteger {
    let raw: OpaquePointer

    init() throws(CryptoError) {
        guard let raw = BN_new() else { throw openSSLFailure("BN_new") }
        self.raw = raw
    }

    convenience init(bigEndian bytes: [UInt8]) throws(CryptoError) {
        try self.init()
        let ok = bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), raw) != nil }
        guard ok else { throw openSSLFailure("BN_bin2bn") }
    }

    convenience init(_ value: UInt64) throws(CryptoError) {
        try self.init(bigEndian: withUnsafeBytes(of: value.bigEndian) { Array($0) })
    }

    convenience init(decimal: String) throws(CryptoError) {
        guard decimal.isDecimalDigits else {
            throw .invalidLength(what: "decimal number", expected: "digits only", actual: decimal.utf8.count)
        }
        try self.init()
        var pointer: OpaquePointer? = raw
        let parsed = BN_dec2bn(&pointer, decimal)
        guard parsed == Int32(decimal.utf8.count) else { throw openSSLFailure("BN_dec2bn") }
    }

    deinit { BN_clear_free(raw) }

    var bitCount: Int { Int(BN_num_bits(raw)) }
    var isZero: Bool { BN_is_zero(raw) == 1 }

    var bigEndianBytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: (bitCount + 7) / 8)
        out.withUnsafeMutableBufferPointer { _ = BN_bn2bin(raw, $0.baseAddress) }
        return out
    }

    func bigEndianBytes(paddedTo length: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: length)
        let written = out.withUnsafeMutableBufferPointer { BN_bn2binpad(raw, $0.baseAddress, Int32(length)) }
        return written == Int32(length) ? out : nil
    }

    static func compare(_ a: OpenSSLInteger, _ b: OpenSSLInteger) -> Int { Int(BN_cmp(a.raw, b.raw)) }

    /// `secretExponent` selects OpenSSL's constant-time Montgomery ladder.
    static func modExp(_ base: OpenSSLInteger, _ exponent: OpenSSLInteger, _ modulus: OpenSSLInteger,
                       secretExponent: Bool) throws(CryptoError) -> OpenSSLInteger {
        try withContext("BN_mod_exp") { result, ctx in
            secretExponent
                ? BN_mod_exp_mont_consttime(result, base.raw, exponent.raw, modulus.raw, ctx, nil)
                : BN_mod_exp(result, base.raw, exponent.raw, modulus.raw, ctx)
        }
    }

    static func subtract(_ a: OpenSSLInteger, _ b: OpenSSLInteger) throws(CryptoError) -> OpenSSLInteger {
        guard compare(a, b) >= 0 else { throw .invalidLength(what: "difference", expected: "non-negative", actual: -1) }
        let result = try OpenSSLInteger()
        guard BN_sub(result.raw, a.raw, b.raw) == 1 else { throw openSSLFailure("BN_sub") }
        return result
    }

    static func add(_ a: OpenSSLInteger, _ b: OpenSSLInteger) throws(CryptoError) -> OpenSSLInteger {
        let result = try OpenSSLInteger()
        guard BN_add(result.raw, a.raw, b.raw) == 1 else { throw openSSLFailure("BN_add") }
        return result
    }

    static func multiply(_ a: OpenSSLInteger, _ b: OpenSSLInteger) throws(CryptoError) -> OpenSSLInteger {
        try withContext("BN_mul") { BN_mul($0, a.raw, b.raw, $1) }
    }

    static func modMul(_ a: OpenSSLInteger, _ b: OpenSSLInteger, _ m: OpenSSLInteger) throws(CryptoError) -> OpenSSLInteger {
        try withContext("BN_mod_mul") { BN_mod_mul($0, a.raw, b.raw, m.raw, $1) }
    }

    static func modAdd(_ a: OpenSSLInteger, _ b: OpenSSLInteger, _ m: OpenSSLInteger) throws(CryptoError) -> OpenSSLInteger {
        try withContext("BN_mod_add") { BN_mod_add($0, a.raw, b.raw, m.raw, $1) }
    }

    static func modSub(_ a: OpenSSLInteger, _ b: OpenSSLInteger, _ m: OpenSSLInteger) throws(CryptoError) -> OpenSSLInteger {
        try withContext("BN_mod_sub") { BN_mod_sub($0, a.raw, b.raw, m.raw, $1) }
    }

    static func powerOfTwo(_ bits: Int) throws(CryptoError) -> OpenSSLInteger {
        let result = try OpenSSLInteger()
        guard BN_set_bit(result.raw, Int32(bits)) == 1 else { throw openSSLFailure("BN_set_bit") }
        return result
    }

    func remainder(_ m: UInt) -> UInt { UInt(BN_mod_word(raw, numericCast(m))) }

    func halved() throws(CryptoError) -> OpenSSLInteger {
        let result = try OpenSSLInteger()
        guard BN_rshift1(result.raw, raw) == 1 else { throw openSSLFailure("BN_rshift1") }
        return result
    }

    /// OpenSSL's default rounds for the size (error probability ≤ 2^−128).
    func isProbablePrime() throws(CryptoError) -> Bool {
        guard let ctx = BN_CTX_new() else { throw openSSLFailure("BN_CTX_new") }
        defer { BN_CTX_free(ctx) }
        let result = BN_check_prime(raw, ctx, nil)
        guard result >= 0 else { throw openSSLFailure("BN_check_prime") }
        return result == 1
    }

    private static func withContext(_ name: String, _ body: (OpaquePointer, OpaquePointer) -> Int32) throws(CryptoError) -> OpenSSLInteger {
        let result = try OpenSSLInteger()
        guard let ctx = BN_CTX_new() else { throw openSSLFailure("BN_CTX_new") }
        defer { BN_CTX_free(ctx) }
        guard body(result.raw, ctx) == 1 else { throw openSSLFailure(name) }
        return result
    }
}
#endif

extension String {
    /// Non-empty and only ASCII digits.
    var isDecimalDigits: Bool {
        !isEmpty && utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
