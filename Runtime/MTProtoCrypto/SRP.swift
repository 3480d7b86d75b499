// Cloud passwords: SRP-2048 as Telegram specifies it for
// passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow (core.telegram.org/api/srp).
//   H = SHA-256, SH(data, salt) = H(salt | data | salt)
//   PH1 = SH(SH(password, salt1), salt2), PH2 = SH(PBKDF2-HMAC-SHA512(PH1, salt1, 100000), salt2), x = PH2
//   v = g^x, k = H(p | g), u = H(g_a | g_b), g_b = k·v + g^b (server)
//   client: t = g_b − k·v, s_a = t^(a + u·x), K_a = H(s_a)
//   server: s_b = (g_a · v^u)^b, K_b = H(s_b)
//   M1 = H(H(p) xor H(g) | H(salt1) | H(salt2) | g_a | g_b | K_a)
// Every number on the wire and inside a hash is 256 big-endian bytes. The checks the spec asks of the client (p a
// safe 2048-bit prime, g valid for it, g_b in range, u ≠ 0) are all made by `SRPChallenge.init` and
// `SRPChallenge.proof` before a value derived from the password is returned.

/// The server's SRP group and salts (`passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow`), with `p`
/// proven a 2048-bit safe prime and `g` a valid generator for it (the auth-key exchange's DH checks).
public struct SRPParameters: Sendable, Equatable {
    /// `salt1`: PH1's inner salt, and PBKDF2's.
    public let salt1: [UInt8]
    /// `salt2`: PH1's and PH2's outer salt.
    public let salt2: [UInt8]
    /// `p` and `g`, checked.
    public let group: DHParameters

    /// Checks `p` and `g` as the spec requires; throws `CryptoError.dhPrimeWrongSize`, `.dhPrimeNotSafe`,
    /// `.dhGeneratorOutOfRange` or `.dhGeneratorCondition`.
    public init(salt1: [UInt8], salt2: [UInt8], g: Int, p: [UInt8], cache: DHPrimeCache = .shared) throws(CryptoError) {
        self.salt1 = salt1
        self.salt2 = salt2
        group = try DHParameters(prime: p, g: g, cache: cache)
    }

    /// `p` as 256 big-endian bytes.
    public var p: [UInt8] { group.prime }

    /// `g` as 256 big-endian bytes, as it enters the hashes.
    var gPadded: [UInt8] { SRP.pad(withUnsafeBytes(of: UInt32(group.g).bigEndian) { Array($0) }) }

    /// k = H(p | g).
    public var k: [UInt8] { Hash.sha256(p, gPadded) }
}

extension DHParameters: Equatable {
    /// Same prime and generator.
    public static func == (a: DHParameters, b: DHParameters) -> Bool { a.prime == b.prime && a.g == b.g }
}

/// What `SRP.proof` sends in `inputCheckPasswordSRP`: `A = g_a` and `M1`.
public struct SRPProof: Sendable, Equatable {
    /// `A` = g^a mod p, 256 bytes.
    public let a: [UInt8]
    /// `M1`, 32 bytes.
    public let m1: [UInt8]

    /// A proof as received (the server's side).
    public init(a: [UInt8], m1: [UInt8]) {
        self.a = a
        self.m1 = m1
    }
}

/// A server's password challenge (`account.password`'s `current_algo` and `srp_B`), checked before the password is
/// touched: `p`, `g` (by `SRPParameters`) and `g_b` in range.
public struct SRPChallenge: Sendable {
    /// The checked group and salts.
    public let parameters: SRPParameters
    /// `srp_B`, 256 bytes.
    public let gB: [UInt8]

    /// Throws `CryptoError.dhValueOutOfRange` when `g_b` is outside 1 < g_b < p − 1 or
    /// 2^1984 < g_b < p − 2^1984 (core.telegram.org/api/srp: the client checks g_b as it checks DH values).
    public init(parameters: SRPParameters, gB: [UInt8]) throws(CryptoError) {
        let trimmed = Array(gB.drop { $0 == 0 })
        try parameters.group.checkPublicValue(trimmed, name: "srp_B")
        self.parameters = parameters
        self.gB = SRP.pad(trimmed)
    }

    /// `A` and `M1` for a password hash `x` (`SRP.passwordHash`) and a secret `a` (256 random bytes; a new one
    /// per attempt). Throws `CryptoError.srpHashZero` when u = H(g_a | g_b) is zero, and
    /// `CryptoError.dhValueOutOfRange` when `g_a` is out of range (draw another `a`).
    public func proof(passwordHash x: [UInt8], a: [UInt8]) throws(CryptoError) -> SRPProof {
        try proof(passwordHash: x, a: a) { Hash.sha256($0, $1) }
    }

    /// `proof` with u's hash given, so a test can make u zero (no real g_b does).
    func proof(passwordHash x: [UInt8], a: [UInt8],
               scrambler: ([UInt8], [UInt8]) -> [UInt8]) throws(CryptoError) -> SRPProof {
        let p = try BigNum(bigEndian: parameters.p)
        let g = try BigNum(UInt64(parameters.group.g))
        let secretA = try BigNum(bigEndian: a)
        let gA = try SRP.bytes(BigNum.modExp(g, secretA, p, secretExponent: true))
        try parameters.group.checkPublicValue(gA, name: "g_a")
        let uBytes = scrambler(gA, gB)
        let u = try BigNum(bigEndian: uBytes)
        guard !u.isZero else { throw .srpHashZero }
        let xNumber = try BigNum(bigEndian: x)
        let v = try BigNum.modExp(g, xNumber, p, secretExponent: true)
        let kv = try BigNum.modMul(try BigNum(bigEndian: parameters.k), v, p)
        let t = try BigNum.modSub(try BigNum(bigEndian: gB), kv, p)
        let exponent = try BigNum.add(secretA, try BigNum.multiply(u, xNumber))
        let s = try SRP.bytes(BigNum.modExp(t, exponent, p, secretExponent: true))
        return SRPProof(a: gA, m1: SRP.m1(parameters, gA: gA, gB: gB, key: Hash.sha256(s)))
    }
}

/// The password-side SRP computations (client and server).
public enum SRP {
    /// PBKDF2-HMAC-SHA512's iteration count in the algorithm's name.
    public static let iterations = 100_000

    /// x = PH2(password, salt1, salt2), 32 bytes. Runs 100,000 PBKDF2 iterations (tens of milliseconds): call it off
    /// any event loop.
    public static func passwordHash(_ password: String, salt1: [UInt8], salt2: [UInt8]) throws(CryptoError) -> [UInt8] {
        let ph1 = saltedHash(saltedHash(Array(password.utf8), salt1), salt2)
        return saltedHash(try pbkdf2SHA512(ph1, salt: salt1, iterations: iterations), salt2)
    }

    /// v = g^x mod p, 256 bytes: what a server keeps instead of the password.
    public static func verifier(passwordHash x: [UInt8], parameters: SRPParameters) throws(CryptoError) -> [UInt8] {
        try parameters.group.publicValue(exponent: x)
    }

    /// The server's `srp_B` = (k·v + g^b) mod p for a verifier `v` and a secret `b` (256 random bytes).
    public static func serverPublic(verifier v: [UInt8], b: [UInt8], parameters: SRPParameters) throws(CryptoError) -> [UInt8] {
        let p = try BigNum(bigEndian: parameters.p)
        let kv = try BigNum.modMul(try BigNum(bigEndian: parameters.k), try BigNum(bigEndian: v), p)
        let gb = try BigNum.modExp(try BigNum(UInt64(parameters.group.g)), try BigNum(bigEndian: b), p, secretExponent: true)
        return try bytes(BigNum.modAdd(kv, gb, p))
    }

    /// The server's check of a client's `A` and `M1` against the challenge it sent (`gB` from `serverPublic` with
    /// the same `b`): true when `M1` proves the client knows the password behind `v`. `A` is checked for range
    /// (`CryptoError.dhValueOutOfRange`); u = 0 throws `CryptoError.srpHashZero`.
    public static func serverVerifies(_ proof: SRPProof, verifier v: [UInt8], b: [UInt8], gB: [UInt8],
                                      parameters: SRPParameters) throws(CryptoError) -> Bool {
        let gA = Array(proof.a.drop { $0 == 0 })
        try parameters.group.checkPublicValue(gA, name: "A")
        let paddedA = pad(gA), paddedB = pad(Array(gB.drop { $0 == 0 }))
        let u = try BigNum(bigEndian: Hash.sha256(paddedA, paddedB))
        guard !u.isZero else { throw .srpHashZero }
        let p = try BigNum(bigEndian: parameters.p)
        let vu = try BigNum.modExp(try BigNum(bigEndian: v), u, p, secretExponent: false)
        let base = try BigNum.modMul(try BigNum(bigEndian: gA), vu, p)
        let s = try bytes(BigNum.modExp(base, try BigNum(bigEndian: b), p, secretExponent: true))
        let expected = m1(parameters, gA: paddedA, gB: paddedB, key: Hash.sha256(s))
        return constantTimeEquals(expected, proof.m1)
    }

    /// M1 = H(H(p) xor H(g) | H(salt1) | H(salt2) | g_a | g_b | K).
    static func m1(_ parameters: SRPParameters, gA: [UInt8], gB: [UInt8], key: [UInt8]) -> [UInt8] {
        let hp = Hash.sha256(parameters.p), hg = Hash.sha256(parameters.gPadded)
        let mixed = zip(hp, hg).map { $0 ^ $1 }
        return Hash.sha256(mixed, Hash.sha256(parameters.salt1), Hash.sha256(parameters.salt2), gA, gB, key)
    }

    /// SH(data, salt) = H(salt | data | salt).
    static func saltedHash(_ data: [UInt8], _ salt: [UInt8]) -> [UInt8] { Hash.sha256(salt, data, salt) }

    /// PBKDF2-HMAC-SHA512 with a 64-byte output.
    public static func pbkdf2SHA512(_ password: [UInt8], salt: [UInt8], iterations: Int) throws(CryptoError) -> [UInt8] {
        guard iterations > 0, iterations <= Int(Int32.max) else {
            throw .invalidLength(what: "PBKDF2 iterations", expected: "1...\(Int32.max)", actual: iterations)
        }
        return try Backend.pbkdf2SHA512(password, salt: salt, iterations: iterations)
    }

    /// Left-pads to 256 bytes (values here are below a 2048-bit p).
    static func pad(_ value: [UInt8]) -> [UInt8] {
        value.count >= 256 ? value : [UInt8](repeating: 0, count: 256 - value.count) + value
    }

    static func bytes(_ value: BigNum) throws(CryptoError) -> [UInt8] {
        guard let out = value.bigEndianBytes(paddedTo: 256) else {
            throw .invalidLength(what: "SRP value", expected: "at most 256 bytes", actual: (value.bitCount + 7) / 8)
        }
        return out
    }
}
