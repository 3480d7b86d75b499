// Diffie–Hellman parameter and range checks, and pq factoring including its edge cases.
import Testing
@testable import MTProtoCrypto

@Suite struct DHTests {
    let prime = DHPrimeCache.telegramPrime

    @Test func telegramPrimePassesFullCheckWithEveryAllowedGenerator() throws {
        // An empty cache forces the Miller–Rabin tests; Telegram's prime satisfies the residue rules for g = 3, 4, 7
        // (p mod 8 = 3, p mod 3 = 2, p mod 5 = 3, p mod 24 = 11, p mod 7 = 6).
        let cache = DHPrimeCache()
        for g in [3, 4, 7] {
            _ = try DHParameters(prime: prime, g: g, cache: cache)
        }
        #expect(cache.contains(prime))
        #expect(throws: CryptoError.dhGeneratorCondition(g: 2)) { try DHParameters(prime: prime, g: 2, cache: cache) }
        #expect(throws: CryptoError.dhGeneratorCondition(g: 6)) { try DHParameters(prime: prime, g: 6, cache: cache) }
        #expect(throws: CryptoError.dhGeneratorCondition(g: 5)) { try DHParameters(prime: prime, g: 5, cache: cache) }
    }

    @Test func badPrimesAreRejected() throws {
        #expect(throws: CryptoError.dhGeneratorOutOfRange(1)) { try DHParameters(prime: prime, g: 1) }
        #expect(throws: CryptoError.dhGeneratorOutOfRange(8)) { try DHParameters(prime: prime, g: 8) }
        // Dropping the top byte 0xc7 leaves 0x1c… : 2037 bits.
        #expect(throws: CryptoError.dhPrimeWrongSize(bits: 2037)) { try DHParameters(prime: Array(prime.dropFirst()), g: 4) }
        #expect(throws: CryptoError.dhPrimeWrongSize(bits: 2049)) { try DHParameters(prime: [1] + prime, g: 4) }
        // prime + 4·3 keeps p mod 3 (so g = 3's residue rule holds) but is composite: the safe-prime test decides.
        var composite = prime
        composite[255] &+= 12      // last byte 0x5b + 12 does not carry
        #expect(throws: CryptoError.dhPrimeNotSafe) { try DHParameters(prime: composite, g: 4, cache: DHPrimeCache()) }
        var even = prime
        even[255] &-= 1
        #expect(throws: CryptoError.dhPrimeNotSafe) { try DHParameters(prime: even, g: 4, cache: DHPrimeCache()) }
    }

    @Test func publicValueRanges() throws {
        let dh = try DHParameters(prime: prime, g: 3)
        let one: [UInt8] = [1]
        #expect(throws: CryptoError.dhValueOutOfRange(what: "g_a must satisfy 1 < g_a < dh_prime − 1")) {
            try dh.checkPublicValue(one, name: "g_a")
        }
        var pMinusOne = prime
        pMinusOne[255] -= 1
        #expect(throws: CryptoError.dhValueOutOfRange(what: "g_a must satisfy 1 < g_a < dh_prime − 1")) {
            try dh.checkPublicValue(pMinusOne, name: "g_a")
        }
        // 2^1984 exactly: inside (1, p−1) but not above the safety margin.
        let low = [UInt8](repeating: 0, count: 7) + [1] + [UInt8](repeating: 0, count: 248)
        #expect(throws: CryptoError.dhValueOutOfRange(what: "g_b must satisfy 2^1984 < g_b < dh_prime − 2^1984")) {
            try dh.checkPublicValue(low, name: "g_b")
        }
        var highBad = prime
        highBad[7] -= 1            // p − 2^1984: byte 7 of p is 0x04, no borrow
        #expect(throws: CryptoError.dhValueOutOfRange(what: "g_a must satisfy 2^1984 < g_a < dh_prime − 2^1984")) {
            try dh.checkPublicValue(highBad, name: "g_a")
        }
        var justInside = low
        justInside[255] = 1
        try dh.checkPublicValue(justInside, name: "g_a")
        #expect(throws: CryptoError.dhValueOutOfRange(what: "g_a is wider than 2048 bits")) {
            try dh.checkPublicValue([1] + prime, name: "g_a")
        }
    }

    @Test func resultsAreLeftPaddedTo256Bytes() throws {
        let dh = try DHParameters(prime: prime, g: 3)
        // 3^1 = 3: a value with 255 leading zero bytes must still come back as 256 bytes.
        let small = try dh.publicValue(exponent: [1])
        #expect(small.count == 256)
        #expect(small == [UInt8](repeating: 0, count: 255) + [3])
        // Both sides agree on the shared key.
        let a = SystemRandom().bytes(256), b = SystemRandom().bytes(256)
        let gA = try dh.publicValue(exponent: a)
        let step = try dh.clientStep(gA: gA, b: b)
        #expect(try dh.sharedKey(peerPublicValue: step.gB, exponent: a) == step.authKey)
        #expect(step.authKey.count == 256)
    }
}

@Suite struct PQTests {
    @Test func docsSamples() throws {
        #expect(try PQFactorizer.factor(2694724800268887959) == (1513098571, 1780931429))
        #expect(try PQFactorizer.factor(0x17ED48941A08F981) == (0x494C553B, 0x53911073))
    }

    @Test func randomSemiprimes() throws {
        var generator = SystemRandomNumberGenerator()
        var checked = 0
        while checked < 30 {
            let p = UInt64.random(in: (1 << 30)...(1 << 31), using: &generator) | 1
            let q = UInt64.random(in: (1 << 31)...(1 << 32) - 1, using: &generator) | 1
            guard PQFactorizer.isPrime(p), PQFactorizer.isPrime(q), p != q else { continue }
            #expect(try PQFactorizer.factor(p * q) == (min(p, q), max(p, q)))
            checked += 1
        }
    }

    @Test func fullWidthAndSmallFactors() throws {
        // Two 32-bit primes whose product uses all 64 bits.
        let p: UInt64 = 4294967291, q: UInt64 = 4294967279
        #expect(try PQFactorizer.factor(p * q) == (q, p))
        #expect(try PQFactorizer.factor(15) == (3, 5))
        #expect(try PQFactorizer.factor(1 << 40) == (2, 1 << 39))
        #expect(try PQFactorizer.factor(49) == (7, 7))
    }

    @Test func edgeCasesAreTypedErrors() {
        #expect(throws: CryptoError.pqTooSmall(0)) { try PQFactorizer.factor(0) }
        #expect(throws: CryptoError.pqTooSmall(1)) { try PQFactorizer.factor(1) }
        #expect(throws: CryptoError.pqIsPrime(2147483647)) { try PQFactorizer.factor(2147483647) }
        #expect(throws: CryptoError.pqIsPrime(18446744073709551557)) { try PQFactorizer.factor(18446744073709551557) }
        #expect(throws: CryptoError.pqTooWide(bytes: 9)) { try PQFactorizer.factor(bigEndian: [1] + [UInt8](repeating: 0, count: 8)) }
        #expect(throws: CryptoError.pqTooSmall(0)) { try PQFactorizer.factor(bigEndian: []) }
        // Leading zero bytes are not width.
        #expect((try? PQFactorizer.factor(bigEndian: [0, 0, 0, 0, 0, 0, 0, 0, 0, 15])) ?? (0, 0) == (3, 5))
        // A bound too small to finish is an error, not a hang.
        #expect(throws: CryptoError.pqNotFactored(2694724800268887959)) {
            try PQFactorizer.factor(2694724800268887959, iterationBound: 10)
        }
    }

    @Test func millerRabinAgreesWithTrialDivision() {
        func slowIsPrime(_ n: UInt64) -> Bool {
            if n < 2 { return false }
            var d: UInt64 = 2
            while d * d <= n { if n % d == 0 { return false }; d += 1 }
            return true
        }
        for n: UInt64 in 0..<3000 { #expect(PQFactorizer.isPrime(n) == slowIsPrime(n), "n = \(n)") }
        #expect(!PQFactorizer.isPrime(3215031751))     // strong pseudoprime to bases 2, 3, 5, 7
    }
}
