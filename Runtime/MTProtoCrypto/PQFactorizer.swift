// Factoring the server's pq (core.telegram.org/mtproto/auth_key, step 2: "decompose pq into prime factors
// such that p < q"). pq is a product of two ~31-bit primes; Pollard's rho with Brent's cycle detection finds
// a factor in about √p steps. Arithmetic is Montgomery multiplication on 64-bit words (no division in the
// loop), and every loop is bounded so hostile input fails with an error instead of spinning.

/// Splits a server's pq into p < q.
public enum PQFactorizer {
    /// Default bound on iterations of x ↦ x² + c over all attempts: far above the ~10^5 a 64-bit
    /// semiprime with balanced factors needs, small enough to fail in milliseconds.
    public static let defaultIterationBound = 1 << 24

    /// Factors pq given as its TL `bytes` content (big-endian, leading zeros allowed).
    public static func factor(bigEndian bytes: [UInt8],
                              iterationBound: Int = defaultIterationBound) throws(CryptoError) -> (p: UInt64, q: UInt64) {
        let significant = bytes.drop { $0 == 0 }
        guard significant.count <= 8 else { throw .pqTooWide(bytes: significant.count) }
        return try factor(significant.reduce(0) { $0 << 8 | UInt64($1) }, iterationBound: iterationBound)
    }

    /// Factors pq into p ≤ q with p · q = pq and p > 1.
    public static func factor(_ pq: UInt64, iterationBound: Int = defaultIterationBound) throws(CryptoError) -> (p: UInt64, q: UInt64) {
        guard pq > 1 else { throw .pqTooSmall(pq) }
        if pq % 2 == 0 { return (2, pq / 2) }
        guard !isPrime(pq) else { throw .pqIsPrime(pq) }
        let field = Montgomery(modulus: pq)
        var budget = iterationBound
        var c: UInt64 = 1
        while budget > 0 && c < pq {
            if let d = brent(field, c: c, budget: &budget), d != 1, d != pq {
                let other = pq / d
                return (min(d, other), max(d, other))
            }
            c += 1
        }
        throw .pqNotFactored(pq)
    }

    /// Deterministic Miller–Rabin: these 12 bases decide primality for every n < 2^64. Public for the server
    /// side of the exchange, which draws pq's primes, and for the client's check that the factors are prime.
    public static func isPrime(_ n: UInt64) -> Bool {
        if n < 2 { return false }
        let bases: [UInt64] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
        for p in bases where n % p == 0 { return n == p }
        var d = n - 1
        var s = 0
        while d % 2 == 0 { d /= 2; s += 1 }
        let field = Montgomery(modulus: n)
        let one = field.one, minusOne = field.subtract(0, field.one)
        witness: for a in bases {
            var x = field.power(field.toMontgomery(a), d)
            if x == one || x == minusOne { continue }
            for _ in 1..<max(s, 1) {
                x = field.multiply(x, x)
                if x == minusOne { continue witness }
            }
            return false
        }
        return true
    }

    /// One Brent run with constant c; nil when it fails or the budget runs out. Works on Montgomery
    /// representatives throughout: gcd(x·R⁻¹ mod n, n) = gcd(x, n) because R = 2^64 is coprime to n.
    private static func brent(_ field: Montgomery, c: UInt64, budget: inout Int) -> UInt64? {
        let n = field.modulus
        let batch = 128
        let cm = field.toMontgomery(c)
        var y = field.toMontgomery(2), x = y, ys = y
        var product = field.one
        var g: UInt64 = 1
        var r = 1
        func step(_ v: UInt64) -> UInt64 { field.add(field.multiply(v, v), cm) }
        while g == 1 {
            x = y
            for _ in 0..<r { y = step(y) }
            budget -= r
            var k = 0
            while k < r && g == 1 {
                ys = y
                let count = min(batch, r - k)
                for _ in 0..<count {
                    y = step(y)
                    product = field.multiply(product, x > y ? x - y : y - x)
                }
                budget -= count
                g = gcd(product, n)
                k += batch
            }
            r *= 2
            if budget <= 0 && g == 1 { return nil }
        }
        if g == n {
            // The batch overshot; redo it one step at a time from its start.
            repeat {
                ys = step(ys)
                budget -= 1
                g = gcd(x > ys ? x - ys : ys - x, n)
            } while g == 1 && budget > 0
        }
        return g
    }

    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var a = a, b = b
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}

/// Arithmetic modulo an odd n < 2^64 in Montgomery form with R = 2^64.
struct Montgomery {
    let modulus: UInt64
    /// n⁻¹ mod 2^64.
    private let inverse: UInt64
    /// R² mod n, to enter Montgomery form.
    private let rSquared: UInt64
    let one: UInt64

    init(modulus n: UInt64) {
        modulus = n
        // Newton's iteration doubles the correct low bits each step; n·n ≡ 1 mod 8 gives 3 to start.
        var inv = n
        for _ in 0..<5 { inv = inv &* (2 &- n &* inv) }
        inverse = inv
        let r = (UInt64.max % n &+ 1) % n                       // 2^64 mod n
        one = r
        rSquared = n.dividingFullWidth(r.multipliedFullWidth(by: r)).remainder
    }

    /// REDC(a·b) = a·b·R⁻¹ mod n, for a, b < n.
    func multiply(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let t = a.multipliedFullWidth(by: b)
        let m = t.low &* inverse
        let mn = m.multipliedFullWidth(by: modulus).high
        // t − m·n is divisible by R and (t − m·n)/R = t.high − mn lies in (−n, n).
        return t.high >= mn ? t.high - mn : t.high &- mn &+ modulus
    }

    func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (s, overflow) = a.addingReportingOverflow(b)
        return overflow || s >= modulus ? s &- modulus : s
    }

    func subtract(_ a: UInt64, _ b: UInt64) -> UInt64 {
        a >= b ? a - b : a &- b &+ modulus
    }

    func toMontgomery(_ a: UInt64) -> UInt64 { multiply(a % modulus, rSquared) }

    func power(_ base: UInt64, _ exponent: UInt64) -> UInt64 {
        var result = one, b = base, e = exponent
        while e > 0 {
            if e & 1 == 1 { result = multiply(result, b) }
            b = multiply(b, b)
            e >>= 1
        }
        return result
    }
}
