// Diffie–Hellman checks and arithmetic for the auth-key exchange (core.telegram.org/mtproto/auth_key,
// "DH key exchange complete" and the security checks in step 6):
// - dh_prime is a safe 2048-bit prime: p and (p−1)/2 prime, 2^2047 < p < 2^2048;
// - g ∈ {2…7} generates the subgroup of order (p−1)/2, which by quadratic reciprocity is a condition on p:
//   g=2: p mod 8 = 7; g=3: p mod 3 = 2; g=4: none; g=5: p mod 5 ∈ {1,4}; g=6: p mod 24 ∈ {19,23};
//   g=7: p mod 7 ∈ {3,5,6};
// - 1 < g_a < p−1 and 2^(2048−64) < g_a < p − 2^(2048−64), the same for g_b.
import Foundation

/// Validated DH parameters (dh_prime, g) from server_DH_inner_data, and the modular arithmetic on them.
public struct DHParameters: Sendable {
    /// dh_prime as 256 big-endian bytes.
    public let prime: [UInt8]
    /// The generator, one of 2, 3, 4, 5, 6 or 7 (auth_key, "DH exchange initiation").
    public let g: Int

    /// Checks `prime` and `g` as the spec requires. The expensive primality tests are skipped for primes in
    /// `cache`, and a prime that passes is added to it.
    public init(prime: [UInt8], g: Int, cache: DHPrimeCache = .shared) throws(CryptoError) {
        guard (2...7).contains(g) else { throw .dhGeneratorOutOfRange(g) }
        let p = try BigNum(bigEndian: prime)
        guard p.bitCount == 2048 else { throw .dhPrimeWrongSize(bits: p.bitCount) }
        guard Self.generatorConditionHolds(g: g, prime: p) else { throw .dhGeneratorCondition(g: g) }
        let canonical = p.bigEndianBytes
        if !cache.contains(canonical) {
            guard try p.isProbablePrime(), try p.halved().isProbablePrime() else { throw .dhPrimeNotSafe }
            cache.insert(canonical)
        }
        self.prime = canonical
        self.g = g
    }

    /// Parameters taken without any check; only for replaying historical samples whose prime predates the
    /// current rules.
    init(unchecked prime: [UInt8], g: Int) {
        self.prime = prime
        self.g = g
    }

    private static func generatorConditionHolds(g: Int, prime p: BigNum) -> Bool {
        switch g {
        case 2: p.remainder(8) == 7
        case 3: p.remainder(3) == 2
        case 4: true
        case 5: [1, 4].contains(p.remainder(5))
        case 6: [19, 23].contains(p.remainder(24))
        case 7: [3, 5, 6].contains(p.remainder(7))
        default: false
        }
    }

    /// Checks a received or generated public value (g_a, g_b): 1 < v < p−1 and 2^1984 < v < p − 2^1984.
    /// - Parameters:
    ///   - value: the public value, big-endian bytes.
    ///   - name: used in the error, e.g. "g_a".
    public func checkPublicValue(_ value: [UInt8], name: String) throws(CryptoError) {
        guard value.count <= 256 else { throw .dhValueOutOfRange(what: "\(name) is wider than 2048 bits") }
        let v = try BigNum(bigEndian: value)
        let p = try BigNum(bigEndian: prime)
        let one = try BigNum(1)
        guard BigNum.compare(v, one) > 0, BigNum.compare(v, try BigNum.subtract(p, one)) < 0 else {
            throw .dhValueOutOfRange(what: "\(name) must satisfy 1 < \(name) < dh_prime − 1")
        }
        let bound = try BigNum.powerOfTwo(2048 - 64)
        guard BigNum.compare(v, bound) > 0, BigNum.compare(v, try BigNum.subtract(p, bound)) < 0 else {
            throw .dhValueOutOfRange(what: "\(name) must satisfy 2^1984 < \(name) < dh_prime − 2^1984")
        }
    }

    /// g^exponent mod dh_prime as 256 big-endian bytes (the exponent is secret: constant-time ladder).
    public func publicValue(exponent: [UInt8]) throws(CryptoError) -> [UInt8] {
        try power(base: try BigNum(UInt64(g)), exponent: exponent)
    }

    /// peer^exponent mod dh_prime as 256 big-endian bytes: the auth key. Checks `peer` first.
    public func sharedKey(peerPublicValue peer: [UInt8], exponent: [UInt8]) throws(CryptoError) -> [UInt8] {
        try checkPublicValue(peer, name: "peer public value")
        return try power(base: try BigNum(bigEndian: peer), exponent: exponent)
    }

    /// The client's side of step 9 of the exchange: checks g_a, computes g_b = g^b and checks it, and
    /// computes auth_key = g_a^b. Both results are 256 bytes.
    public func clientStep(gA: [UInt8], b: [UInt8]) throws(CryptoError) -> (gB: [UInt8], authKey: [UInt8]) {
        try checkPublicValue(gA, name: "g_a")
        let p = try BigNum(bigEndian: prime)
        let exponent = try BigNum(bigEndian: b)
        let gB = try padded(BigNum.modExp(try BigNum(UInt64(g)), exponent, p, secretExponent: true))
        try checkPublicValue(gB, name: "g_b")
        let key = try padded(BigNum.modExp(try BigNum(bigEndian: gA), exponent, p, secretExponent: true))
        return (gB, key)
    }

    private func power(base: BigNum, exponent: [UInt8]) throws(CryptoError) -> [UInt8] {
        let p = try BigNum(bigEndian: prime)
        return try padded(BigNum.modExp(base, try BigNum(bigEndian: exponent), p, secretExponent: true))
    }

    private func padded(_ value: BigNum) throws(CryptoError) -> [UInt8] {
        // A value reduced mod a 2048-bit prime always fits in 256 bytes.
        guard let bytes = value.bigEndianBytes(paddedTo: 256) else {
            throw .invalidLength(what: "DH result", expected: "at most 256 bytes", actual: (value.bitCount + 7) / 8)
        }
        return bytes
    }
}

/// dh_prime values already proven safe, so the Miller–Rabin tests run once per prime and process (the spec
/// suggests caching the check). Thread-safe. Starts with the prime Telegram's servers send.
public final class DHPrimeCache: @unchecked Sendable {
    /// The process-wide cache the exchange uses unless given another.
    public static let shared = DHPrimeCache(knownGood: [telegramPrime])

    /// The 2048-bit safe prime Telegram's production and test servers send (g = 3 in the documented sample).
    public static let telegramPrime: [UInt8] = Array(hexString: """
        c71caeb9c6b1c9048e6c522f70f13f73980d40238e3e21c14934d037563d930f48198a0aa7c14058229493d22530f4dbfa336f6e0ac92513\
        9543aed44cce7c3720fd51f69458705ac68cd4fe6b6b13abdc9746512969328454f18faf8c595f642477fe96bb2a941d5bcd1d4ac8cc4988\
        0708fa9b378e3c4f3a9060bee67cf9a4a4a695811051907e162753b56b0f6b410dba74d8a84b2a14b3144e0ef1284754fd17ed950d5965b4\
        b9dd46582db1178d169c6bc465b0d6ff9ca3928fef5b9ae4e418fc15e83ebea0f87fa9ff5eed70050ded2849f47bf959d956850ce929851f\
        0d8115f635b105ee2e4e15d04b2454bf6f4fadf034b10403119cd8e3b92fcc5b
        """)

    private let lock = NSLock()
    private var primes: Set<[UInt8]>

    /// - Parameter knownGood: primes trusted without testing (only pass values proven safe elsewhere).
    public init(knownGood: [[UInt8]] = []) {
        primes = Set(knownGood)
    }

    /// Whether `prime` (big-endian bytes) was already proven safe.
    public func contains(_ prime: [UInt8]) -> Bool {
        lock.withLock { primes.contains(prime) }
    }

    /// Records `prime` as proven safe; call only after the full check passed.
    public func insert(_ prime: [UInt8]) {
        _ = lock.withLock { primes.insert(prime) }
    }
}

extension Array where Element == UInt8 {
    /// Decodes constant hex text written in this module; non-hex characters are skipped.
    init(hexString: String) {
        var out: [UInt8] = []
        var high: UInt8?
        for c in hexString.utf8 {
            guard let v = UInt8(String(UnicodeScalar(c)), radix: 16) else { continue }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        self = out
    }
}
