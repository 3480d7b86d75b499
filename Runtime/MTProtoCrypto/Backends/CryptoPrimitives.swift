// The seam between MTProtoCrypto and the library that computes its primitives. Everything above it (message
// encryption, the key-exchange checks, SRP, RSA_PAD) is written once; below it are two backends:
// - OpenSSLBackend (COpenSSL): Linux only, the default there;
// - PortableBackend (swift-crypto and BigInt): the only one on Apple platforms, and the default on Linux when the
//   package trait `PortableCrypto` is enabled.
// On Linux the portable one is compiled only with the trait `PortableCryptoBackend` (which `PortableCrypto` enables),
// so a default Linux build compiles neither swift-crypto nor BigInt; with both, the tests hold them to the same
// answers.

/// The library that computes MTProtoCrypto's hashes, ciphers and big-number arithmetic in this build.
public enum CryptoBackend: Sendable, Hashable, CaseIterable {
    /// The system's OpenSSL 3 (libcrypto). Linux only; the default there.
    case openSSL
    /// apple/swift-crypto (`Crypto`, `_CryptoExtras`) and attaswift/BigInt, with this module's constant-time
    /// Montgomery exponentiation. The only backend on Apple platforms; on Linux, the default with the package trait
    /// `PortableCrypto`.
    case portable

    /// The backend every MTProtoCrypto operation uses in this build.
    public static var current: CryptoBackend { Backend.kind }

    /// The backends compiled into this build, the current one first. On Linux the portable one is compiled only
    /// with the package trait `PortableCryptoBackend` (or `PortableCrypto`, which enables it).
    public static var compiled: [CryptoBackend] {
        #if canImport(COpenSSL) && PortableCryptoBackend
        current == .openSSL ? [.openSSL, .portable] : [.portable, .openSSL]
        #elseif canImport(COpenSSL)
        [.openSSL]
        #else
        [.portable]
        #endif
    }
}

#if canImport(COpenSSL) && !PortableCrypto
typealias Backend = OpenSSLBackend
#else
typealias Backend = PortableBackend
#endif

/// The numbers for RSA, Diffie–Hellman and SRP: non-negative integers, big-endian bytes at the edges.
typealias BigNum = Backend.Integer

/// The operations MTProtoCrypto takes from a cryptography library. Static, so the default path has no dispatch.
protocol CryptoPrimitives {
    associatedtype Integer: BackendInteger
    associatedtype Keystream: CTRKeystream
    associatedtype SHA256Hasher: IncrementalSHA256

    static var kind: CryptoBackend { get }

    static func sha1(_ data: [UInt8]) -> [UInt8]
    static func sha1(parts: [[UInt8]]) -> [UInt8]
    static func sha256(_ data: [UInt8]) -> [UInt8]
    static func sha256(parts: [[UInt8]]) -> [UInt8]
    /// SHA-256 of `first ‖ second`.
    static func sha256(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> [UInt8]
    static func md5(_ data: [UInt8]) -> [UInt8]
    static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8]
    /// PBKDF2-HMAC-SHA512 with a 64-byte output; `iterations` is already checked to be in 1...Int32.max.
    static func pbkdf2SHA512(_ password: [UInt8], salt: [UInt8], iterations: Int) throws(CryptoError) -> [UInt8]
    /// Fills `buffer` from the library's CSPRNG; false when it could not.
    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) -> Bool
    /// Equality in time that depends only on the (equal) lengths.
    static func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool

    /// AES-IGE composed around the library's AES, in place; the key is 16, 24 or 32 bytes, the IV 32, and the
    /// buffer's length a multiple of 16 (all checked by `AES256IGE`).
    static func igeEncrypt(key: [UInt8], iv: [UInt8], _ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError)
    static func igeDecrypt(key: [UInt8], iv: [UInt8], _ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError)

    /// n, e and (for a private key) d of an RSA key in PEM: PKCS#1 or SubjectPublicKeyInfo for public keys, PKCS#1 or
    /// PKCS#8 for private ones.
    static func rsaKey(pem: String, wantPrivate: Bool) throws(CryptoError) -> RSAKeyNumbers
}

/// An RSA key's numbers, minimal big-endian bytes.
struct RSAKeyNumbers: Equatable {
    var modulus: [UInt8]
    var publicExponent: [UInt8]
    var privateExponent: [UInt8]?
}

/// A running AES-256-CTR keystream (the IV is the initial 128-bit big-endian counter block).
protocol CTRKeystream: AnyObject {
    init(key: [UInt8], iv: [UInt8]) throws(CryptoError)
    /// XORs `buffer` in place with the next `buffer.count` keystream bytes.
    func process(_ buffer: UnsafeMutableRawBufferPointer)
}

/// SHA-256 over pieces.
protocol IncrementalSHA256: AnyObject {
    init()
    func update(_ bytes: UnsafeRawBufferPointer)
    func finish() -> [UInt8]
}

/// A non-negative integer of a few thousand bits. Operations whose result would be negative throw.
protocol BackendInteger {
    init(bigEndian bytes: [UInt8]) throws(CryptoError)
    init(_ value: UInt64) throws(CryptoError)
    /// From a decimal string; only digits are accepted.
    init(decimal: String) throws(CryptoError)

    var bitCount: Int { get }
    var isZero: Bool { get }
    /// Minimal big-endian bytes (empty for zero).
    var bigEndianBytes: [UInt8] { get }
    /// Big-endian bytes left-padded with zeros to exactly `length`, or nil if the value is wider.
    /// MTProto sends DH values and RSA blocks at full width; dropping leading zeros breaks 1 exchange in 256.
    func bigEndianBytes(paddedTo length: Int) -> [UInt8]?

    /// −1, 0 or 1 as a is below, equal to or above b.
    static func compare(_ a: Self, _ b: Self) -> Int
    /// base^exponent mod modulus. `secretExponent` asks for an exponentiation whose sequence of operations does not
    /// depend on the exponent's bits.
    static func modExp(_ base: Self, _ exponent: Self, _ modulus: Self, secretExponent: Bool) throws(CryptoError) -> Self
    /// a − b; throws when b > a.
    static func subtract(_ a: Self, _ b: Self) throws(CryptoError) -> Self
    static func add(_ a: Self, _ b: Self) throws(CryptoError) -> Self
    static func multiply(_ a: Self, _ b: Self) throws(CryptoError) -> Self
    static func modMul(_ a: Self, _ b: Self, _ m: Self) throws(CryptoError) -> Self
    static func modAdd(_ a: Self, _ b: Self, _ m: Self) throws(CryptoError) -> Self
    /// (a − b) mod m, non-negative.
    static func modSub(_ a: Self, _ b: Self, _ m: Self) throws(CryptoError) -> Self
    /// 2^bits.
    static func powerOfTwo(_ bits: Int) throws(CryptoError) -> Self
    /// self mod m for a small nonzero m.
    func remainder(_ m: UInt) -> UInt
    /// self >> 1.
    func halved() throws(CryptoError) -> Self
    /// Probable-prime test, error probability at most 2^−128 for any input.
    func isProbablePrime() throws(CryptoError) -> Bool
}
