// A minimal owner of OpenSSL BIGNUMs for the RSA and DH math. Internal: the public API speaks big-endian bytes.
import COpenSSL

final class BigNum {
    let raw: OpaquePointer

    init() throws(CryptoError) {
        guard let raw = BN_new() else { throw openSSLFailure("BN_new") }
        self.raw = raw
    }

    /// From big-endian bytes (empty means zero).
    convenience init(bigEndian bytes: [UInt8]) throws(CryptoError) {
        try self.init()
        let ok = bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), raw) != nil }
        guard ok else { throw openSSLFailure("BN_bin2bn") }
    }

    convenience init(_ value: UInt64) throws(CryptoError) {
        try self.init(bigEndian: withUnsafeBytes(of: value.bigEndian) { Array($0) })
    }

    /// From a decimal string; only digits are accepted.
    convenience init(decimal: String) throws(CryptoError) {
        guard !decimal.isEmpty, decimal.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
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

    /// Minimal big-endian bytes (empty for zero).
    var bigEndianBytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: (bitCount + 7) / 8)
        out.withUnsafeMutableBufferPointer { _ = BN_bn2bin(raw, $0.baseAddress) }
        return out
    }

    /// Big-endian bytes left-padded with zeros to exactly `length`, or nil if the value is wider.
    /// MTProto sends DH values and RSA blocks at full width; dropping leading zeros breaks 1 exchange in 256.
    func bigEndianBytes(paddedTo length: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: length)
        let written = out.withUnsafeMutableBufferPointer { BN_bn2binpad(raw, $0.baseAddress, Int32(length)) }
        return written == Int32(length) ? out : nil
    }

    static func compare(_ a: BigNum, _ b: BigNum) -> Int { Int(BN_cmp(a.raw, b.raw)) }

    /// base^exponent mod modulus. `secretExponent` selects OpenSSL's constant-time ladder.
    static func modExp(_ base: BigNum, _ exponent: BigNum, _ modulus: BigNum,
                       secretExponent: Bool) throws(CryptoError) -> BigNum {
        let result = try BigNum()
        guard let ctx = BN_CTX_new() else { throw openSSLFailure("BN_CTX_new") }
        defer { BN_CTX_free(ctx) }
        let ok = secretExponent
            ? BN_mod_exp_mont_consttime(result.raw, base.raw, exponent.raw, modulus.raw, ctx, nil)
            : BN_mod_exp(result.raw, base.raw, exponent.raw, modulus.raw, ctx)
        guard ok == 1 else { throw openSSLFailure("BN_mod_exp") }
        return result
    }

    static func subtract(_ a: BigNum, _ b: BigNum) throws(CryptoError) -> BigNum {
        let result = try BigNum()
        guard BN_sub(result.raw, a.raw, b.raw) == 1 else { throw openSSLFailure("BN_sub") }
        return result
    }

    /// 2^bits.
    static func powerOfTwo(_ bits: Int) throws(CryptoError) -> BigNum {
        let result = try BigNum()
        guard BN_set_bit(result.raw, Int32(bits)) == 1 else { throw openSSLFailure("BN_set_bit") }
        return result
    }

    /// self mod m for a small word-sized m.
    func remainder(_ m: UInt) -> UInt { UInt(BN_mod_word(raw, numericCast(m))) }

    /// self >> 1.
    func halved() throws(CryptoError) -> BigNum {
        let result = try BigNum()
        guard BN_rshift1(result.raw, raw) == 1 else { throw openSSLFailure("BN_rshift1") }
        return result
    }

    /// Probable-prime test with OpenSSL's default rounds for the size (error probability ≤ 2^−128).
    func isProbablePrime() throws(CryptoError) -> Bool {
        guard let ctx = BN_CTX_new() else { throw openSSLFailure("BN_CTX_new") }
        defer { BN_CTX_free(ctx) }
        let result = BN_check_prime(raw, ctx, nil)
        guard result >= 0 else { throw openSSLFailure("BN_check_prime") }
        return result == 1
    }
}
