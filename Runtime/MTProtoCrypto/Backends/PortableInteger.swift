// The portable backend's numbers: attaswift/BigInt for parsing, comparison and the cheap arithmetic, and a
// Montgomery exponentiation of our own (CMontgomery) for every modular power with an odd modulus (BigInt's
// `power(_:modulus:)` divides after each step and branches on the exponent's bits).
//
// Secret exponents (DH's a and b, SRP's a, b and x, RSA's d) take a fixed 4-bit window over as many limbs as the
// modulus has, a multiplication for every window (by 1 where the digit is 0), and the table entry read by scanning
// all 16 with masks, so the sequence of operations and the memory it touches do not depend on the exponent. The
// Montgomery product itself has no branch on the data (its final subtraction is masked), and the scratch holding
// the table is wiped after each call. What is not constant:
// BigInt's conversions at the edges, which depend on the values' lengths only; and an exponent wider than the
// modulus (SRP's a + u·x) takes its own limb count, which says whether a + u·x passed 2^2048.
#if PortableCryptoBackend || !canImport(COpenSSL)
#if os(Linux)
import PortableCryptoLinux  // BigInt, re-exported (Package.swift)
#else
import BigInt
#endif
import CMontgomery
import Foundation

struct PortableInteger: BackendInteger {
    let value: BigUInt

    init(value: BigUInt) { self.value = value }

    init(bigEndian bytes: [UInt8]) throws(CryptoError) { value = BigUInt(Data(bytes)) }

    init(_ value: UInt64) throws(CryptoError) { self.value = BigUInt(value) }

    init(decimal: String) throws(CryptoError) {
        guard decimal.isDecimalDigits, let parsed = BigUInt(decimal, radix: 10) else {
            throw .invalidLength(what: "decimal number", expected: "digits only", actual: decimal.utf8.count)
        }
        value = parsed
    }

    var bitCount: Int { value.bitWidth }
    var isZero: Bool { value.isZero }
    var bigEndianBytes: [UInt8] { Array(value.serialize()) }

    func bigEndianBytes(paddedTo length: Int) -> [UInt8]? {
        let bytes = bigEndianBytes
        guard bytes.count <= length else { return nil }
        return [UInt8](repeating: 0, count: length - bytes.count) + bytes
    }

    static func compare(_ a: PortableInteger, _ b: PortableInteger) -> Int {
        a.value < b.value ? -1 : (a.value == b.value ? 0 : 1)
    }

    static func modExp(_ base: PortableInteger, _ exponent: PortableInteger, _ modulus: PortableInteger,
                       secretExponent: Bool) throws(CryptoError) -> PortableInteger {
        guard !modulus.isZero else { throw .invalidLength(what: "modulus", expected: "nonzero", actual: 0) }
        if modulus.value == 1 { return PortableInteger(value: BigUInt(0)) }
        guard let field = MontgomeryField(modulus: modulus.value) else {
            // Only odd moduli occur in MTProto (RSA moduli, DH primes); an even one is public and takes BigInt's way.
            guard !secretExponent else {
                throw .invalidLength(what: "modulus of a secret exponentiation", expected: "odd", actual: 0)
            }
            return PortableInteger(value: base.value.power(exponent.value, modulus: modulus.value))
        }
        return PortableInteger(value: field.power(base.value, exponent.value, secret: secretExponent))
    }

    static func subtract(_ a: PortableInteger, _ b: PortableInteger) throws(CryptoError) -> PortableInteger {
        guard a.value >= b.value else { throw .invalidLength(what: "difference", expected: "non-negative", actual: -1) }
        return PortableInteger(value: a.value - b.value)
    }

    static func add(_ a: PortableInteger, _ b: PortableInteger) throws(CryptoError) -> PortableInteger {
        PortableInteger(value: a.value + b.value)
    }

    static func multiply(_ a: PortableInteger, _ b: PortableInteger) throws(CryptoError) -> PortableInteger {
        PortableInteger(value: a.value * b.value)
    }

    static func modMul(_ a: PortableInteger, _ b: PortableInteger, _ m: PortableInteger) throws(CryptoError) -> PortableInteger {
        try nonzero(m)
        return PortableInteger(value: (a.value * b.value) % m.value)
    }

    static func modAdd(_ a: PortableInteger, _ b: PortableInteger, _ m: PortableInteger) throws(CryptoError) -> PortableInteger {
        try nonzero(m)
        return PortableInteger(value: (a.value + b.value) % m.value)
    }

    static func modSub(_ a: PortableInteger, _ b: PortableInteger, _ m: PortableInteger) throws(CryptoError) -> PortableInteger {
        try nonzero(m)
        return PortableInteger(value: (a.value % m.value + m.value - b.value % m.value) % m.value)
    }

    static func powerOfTwo(_ bits: Int) throws(CryptoError) -> PortableInteger {
        guard bits >= 0 else { throw .invalidLength(what: "power of two", expected: "a non-negative exponent", actual: bits) }
        return PortableInteger(value: BigUInt(1) << bits)
    }

    func remainder(_ m: UInt) -> UInt {
        guard m != 0 else { return 0 }
        return UInt(value % BigUInt(m))
    }

    func halved() throws(CryptoError) -> PortableInteger { PortableInteger(value: value >> 1) }

    /// Trial division by the primes below 256, then 64 Miller–Rabin rounds with random bases: each lets a composite
    /// through with probability at most 1/4, so 4^−64 = 2^−128 for any input, however it was chosen.
    func isProbablePrime() throws(CryptoError) -> Bool {
        let n = value
        if n < 2 { return false }
        for p in Self.smallPrimes {
            if n == BigUInt(p) { return true }
            if n % BigUInt(p) == 0 { return false }
        }
        guard let field = MontgomeryField(modulus: n) else { return false }
        let nMinusOne = n - 1
        let s = nMinusOne.trailingZeroBitCount
        let d = nMinusOne >> s
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<64 {
            let a = BigUInt.randomInteger(lessThan: n - 3, using: &generator) + 2
            var x = field.power(a, d, secret: false)
            if x == BigUInt(1) || x == nMinusOne { continue }
            var witnessed = true
            for _ in 1..<max(s, 1) {
                x = (x * x) % n
                if x == nMinusOne { witnessed = false; break }
            }
            if witnessed { return false }
        }
        return true
    }

    private static let smallPrimes: [UInt] = (2..<256).filter { c in (2..<c).allSatisfy { c % $0 != 0 } }

    private static func nonzero(_ m: PortableInteger) throws(CryptoError) {
        guard !m.isZero else { throw .invalidLength(what: "modulus", expected: "nonzero", actual: 0) }
    }
}

/// Montgomery arithmetic modulo an odd n of k 64-bit limbs (little-endian), R = 2^(64k); the loops are CMontgomery's.
struct MontgomeryField {
    private let n: [UInt64]
    private let modulus: BigUInt
    /// −n^−1 mod 2^64.
    private let n0: UInt64
    /// R² mod n, to bring a number into Montgomery form.
    private let rSquared: [UInt64]

    init?(modulus: BigUInt) {
        guard modulus > 1, modulus[bitAt: 0] else { return nil }
        let limbs = Self.limbs(of: modulus)
        n = limbs
        self.modulus = modulus
        // Newton's iteration for the inverse of an odd number mod 2^64: x = n is right to 3 bits, and each step
        // doubles that (3, 6, 12, 24, 48, 96).
        var inverse = limbs[0]
        for _ in 0..<5 { inverse = inverse &* (2 &- limbs[0] &* inverse) }
        n0 = 0 &- inverse
        rSquared = Self.limbs(of: (BigUInt(1) << (128 * limbs.count)) % modulus, count: limbs.count)
    }

    /// base^exponent mod n. With `secret`, the operations and memory reads do not depend on the exponent's bits, and
    /// the exponent takes at least as many limbs as the modulus whatever its value.
    func power(_ base: BigUInt, _ exponent: BigUInt, secret: Bool) -> BigUInt {
        let k = n.count
        let reduced = Self.limbs(of: base % modulus, count: k)
        let exponentLimbs = Self.limbs(of: exponent, count: secret ? max(k, Self.limbCount(exponent)) : nil)
        var out = [UInt64](repeating: 0, count: k)
        var scratch = [UInt64](repeating: 0, count: cmont_scratch_limbs(k))
        cmont_power(&out, reduced, exponentLimbs, exponentLimbs.count, n, n0, rSquared, k, secret ? 1 : 0, &scratch)
        return Self.number(out)
    }

    private static func limbCount(_ value: BigUInt) -> Int { max(1, (value.bitWidth + 63) / 64) }

    /// Little-endian 64-bit limbs of `value`, zero-extended to `count` (or as many as it needs).
    private static func limbs(of value: BigUInt, count: Int? = nil) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: max(count ?? 0, limbCount(value)))
        let bytes = Array(value.serialize())
        for (index, byte) in bytes.reversed().enumerated() {
            out[index / 8] |= UInt64(byte) << UInt64(8 * (index % 8))
        }
        return out
    }

    private static func number(_ limbs: [UInt64]) -> BigUInt {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(limbs.count * 8)
        for limb in limbs.reversed() { withUnsafeBytes(of: limb.bigEndian) { bytes += $0 } }
        return BigUInt(Data(bytes))
    }
}
#endif
