// Arithmetic modulo p = 2^255 − 19, just enough to produce the X25519 public keys a fake-TLS ClientHello carries.
// The key is never used for a real key exchange (the proxy does not answer with one), but deep packet inspection
// can check that it is a point on Curve25519, so it must be one. tdlib's recipe, written here from its
// description: draw 32 random bytes, clear the top bit of the last byte, read them big-endian as x; keep x if
// x^3 + 486662·x^2 + x is a square mod p (so x is on the curve, not its twist); double the point three times
// (clearing the cofactor); send x little-endian. Not constant time: nothing secret depends on it.
import MTProtoCrypto

struct FieldElement: Equatable {
    // Little-endian 64-bit limbs, always fully reduced (< p).
    var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64

    static let zero = FieldElement(l0: 0, l1: 0, l2: 0, l3: 0)
    static let one = FieldElement(l0: 1, l1: 0, l2: 0, l3: 0)
    static let p = FieldElement(l0: 0xffff_ffff_ffff_ffed, l1: .max, l2: .max, l3: 0x7fff_ffff_ffff_ffff)

    init(l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64) {
        self.l0 = l0
        self.l1 = l1
        self.l2 = l2
        self.l3 = l3
    }

    init(_ small: UInt64) { self.init(l0: small, l1: 0, l2: 0, l3: 0) }

    /// Reads 32 bytes as a big-endian number and reduces it.
    init(bigEndian bytes: [UInt8]) {
        var limbs: [UInt64] = [0, 0, 0, 0]
        for (index, byte) in bytes.prefix(32).enumerated() {
            let bit = (31 - index) * 8
            limbs[bit / 64] |= UInt64(byte) << UInt64(bit % 64)
        }
        self = FieldElement.reduce(limbs[0], limbs[1], limbs[2], limbs[3], 0)
    }

    /// Reads 32 bytes as a little-endian number and reduces it.
    init(littleEndian bytes: [UInt8]) { self.init(bigEndian: Array(bytes.prefix(32).reversed())) }

    var littleEndianBytes: [UInt8] {
        [l0, l1, l2, l3].flatMap { limb in (0..<8).map { UInt8(truncatingIfNeeded: limb >> UInt64($0 * 8)) } }
    }

    private var limbs: [UInt64] { [l0, l1, l2, l3] }

    private static func isAtLeastP(_ a: [UInt64]) -> Bool {
        let p = FieldElement.p.limbs
        for i in stride(from: 3, through: 0, by: -1) where a[i] != p[i] { return a[i] > p[i] }
        return true
    }

    private static func subtractP(_ a: inout [UInt64]) {
        let p = FieldElement.p.limbs
        var borrow: UInt64 = 0
        for i in 0..<4 {
            let (d1, o1) = a[i].subtractingReportingOverflow(p[i])
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            a[i] = d2
            borrow = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
    }

    /// Reduces a 256-bit value plus `carry`·2^256 (carry small) to canonical form.
    private static func reduce(_ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64, _ carry: UInt64) -> FieldElement {
        // 2^256 ≡ 38 and 2^255 ≡ 19 (mod p): fold the carry, then the top bit.
        var a = [a0, a1, a2, a3]
        var add = carry &* 38
        while add != 0 {
            var c = add
            for i in 0..<4 {
                let (s, o) = a[i].addingReportingOverflow(c)
                a[i] = s
                c = o ? 1 : 0
            }
            add = c &* 38
        }
        let top = a[3] >> 63
        a[3] &= 0x7fff_ffff_ffff_ffff
        var c = top &* 19
        for i in 0..<4 {
            let (s, o) = a[i].addingReportingOverflow(c)
            a[i] = s
            c = o ? 1 : 0
        }
        if isAtLeastP(a) { subtractP(&a) }
        return FieldElement(l0: a[0], l1: a[1], l2: a[2], l3: a[3])
    }

    static func + (x: FieldElement, y: FieldElement) -> FieldElement {
        let a = x.limbs, b = y.limbs
        var sum: [UInt64] = [0, 0, 0, 0]
        var carry: UInt64 = 0
        for i in 0..<4 {
            let (s1, o1) = a[i].addingReportingOverflow(b[i])
            let (s2, o2) = s1.addingReportingOverflow(carry)
            sum[i] = s2
            carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        return reduce(sum[0], sum[1], sum[2], sum[3], carry)
    }

    static func - (x: FieldElement, y: FieldElement) -> FieldElement {
        // x − y + p stays positive because both are < p.
        let a = x.limbs, b = y.limbs, p = FieldElement.p.limbs
        var out: [UInt64] = [0, 0, 0, 0]
        var borrow: UInt64 = 0
        var carry: UInt64 = 0
        for i in 0..<4 {
            let (s1, o1) = a[i].addingReportingOverflow(p[i])
            let (s2, o2) = s1.addingReportingOverflow(carry)
            carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
            let (d1, u1) = s2.subtractingReportingOverflow(b[i])
            let (d2, u2) = d1.subtractingReportingOverflow(borrow)
            borrow = (u1 ? 1 : 0) + (u2 ? 1 : 0)
            out[i] = d2
        }
        return reduce(out[0], out[1], out[2], out[3], carry &- borrow)
    }

    static func * (x: FieldElement, y: FieldElement) -> FieldElement {
        let a = x.limbs, b = y.limbs
        var t = [UInt64](repeating: 0, count: 8)
        for i in 0..<4 {
            var carry: UInt64 = 0
            for j in 0..<4 {
                let (hi, lo) = a[i].multipliedFullWidth(by: b[j])
                let (s1, o1) = lo.addingReportingOverflow(t[i + j])
                let (s2, o2) = s1.addingReportingOverflow(carry)
                t[i + j] = s2
                // a·b + t + carry < 2^128, so this cannot overflow.
                carry = hi &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
            }
            t[i + 4] = carry
        }
        // low + 38·high, with high·38 spilling into a fifth limb.
        var r: [UInt64] = [0, 0, 0, 0]
        var carry: UInt64 = 0
        for i in 0..<4 {
            let (hi, lo) = t[i + 4].multipliedFullWidth(by: 38)
            let (s1, o1) = lo.addingReportingOverflow(t[i])
            let (s2, o2) = s1.addingReportingOverflow(carry)
            r[i] = s2
            carry = hi &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
        }
        return reduce(r[0], r[1], r[2], r[3], carry)
    }

    /// self^exponent, exponent given as little-endian limbs.
    func power(_ exponent: [UInt64]) -> FieldElement {
        var result = FieldElement.one
        for limb in exponent.reversed() {
            for bit in stride(from: 63, through: 0, by: -1) {
                result = result * result
                if (limb >> UInt64(bit)) & 1 == 1 { result = result * self }
            }
        }
        return result
    }

    var inverse: FieldElement { power([0xffff_ffff_ffff_ffeb, .max, .max, 0x7fff_ffff_ffff_ffff]) }

    /// Euler's criterion: a nonzero square has self^((p−1)/2) = 1.
    var isSquare: Bool { power([0xffff_ffff_ffff_fff6, .max, .max, 0x3fff_ffff_ffff_ffff]) == .one }
}

enum Curve25519 {
    static let a = FieldElement(486_662)

    /// y^2 for the Montgomery curve y^2 = x^3 + 486662·x^2 + x.
    static func ySquared(_ x: FieldElement) -> FieldElement { ((x + a) * x + .one) * x }

    /// Whether the little-endian x coordinate names a point on the curve (not on its twist).
    static func isOnCurve(littleEndianX bytes: [UInt8]) -> Bool {
        guard bytes.count == 32 else { return false }
        return ySquared(FieldElement(littleEndian: bytes)).isSquare
    }

    /// x of the doubled point: (x^2 − 1)^2 / (4·y^2). Nil for the points of order 2, whose double is infinity.
    static func doubleX(_ x: FieldElement) -> FieldElement? {
        let denominator = FieldElement(4) * ySquared(x)
        guard denominator != .zero else { return nil }
        let numerator = x * x - .one
        return numerator * numerator * denominator.inverse
    }

    /// A random public key as tdlib makes them (see the file comment).
    static func randomPublicKey(random: any RandomSource) throws(TransportError) -> [UInt8] {
        // Half of all draws succeed; a source that fails 256 times in a row is broken.
        for _ in 0..<256 {
            var bytes = random.bytes(32)
            bytes[31] &= 0x7f
            var x = FieldElement(bigEndian: bytes)
            guard ySquared(x).isSquare else { continue }
            var valid = true
            for _ in 0..<3 {
                guard let doubled = doubleX(x) else {
                    valid = false
                    break
                }
                x = doubled
            }
            if valid { return x.littleEndianBytes }
        }
        throw .fakeTLS("the random source produced no X25519 point in 256 draws")
    }
}
