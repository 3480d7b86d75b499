// RSA keys and the two encryption schemes of the auth-key exchange (core.telegram.org/mtproto/auth_key,
// step 4). Telegram uses raw ("textbook") RSA on blocks it pads itself, so the RSA operation is the backend's
// modular exponentiation on the 256-byte block; keys are read by the backend's PEM and DER decoders.

/// An RSA public key: a server key a client encrypts p_q_inner_data to.
public struct RSAPublicKey: Sendable, Hashable {
    /// n, minimal big-endian bytes.
    public let modulus: [UInt8]
    /// e, minimal big-endian bytes.
    public let exponent: [UInt8]

    /// From n and e as big-endian bytes; the modulus must have 2048 bits (MTProto encrypts 256-byte blocks).
    public init(modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) {
        let n = try BigNum(bigEndian: modulus), e = try BigNum(bigEndian: exponent)
        try self.init(n: n, e: e)
    }

    /// From decimal strings, the form the test vectors and many key lists use.
    public init(modulusDecimal: String, exponentDecimal: String) throws(CryptoError) {
        try self.init(n: try BigNum(decimal: modulusDecimal), e: try BigNum(decimal: exponentDecimal))
    }

    /// From PEM: PKCS#1 (`BEGIN RSA PUBLIC KEY`, the form Telegram publishes) or SubjectPublicKeyInfo
    /// (`BEGIN PUBLIC KEY`).
    public init(pem: String) throws(CryptoError) {
        let key = try Backend.rsaKey(pem: pem, wantPrivate: false)
        try self.init(modulus: key.modulus, exponent: key.publicExponent)
    }

    init(n: BigNum, e: BigNum) throws(CryptoError) {
        // MTProto encrypts exactly 256-byte blocks, so only 2048-bit moduli work.
        guard n.bitCount == 2048 else { throw .invalidRSAKey("modulus has \(n.bitCount) bits, expected 2048") }
        guard !e.isZero, n.remainder(2) == 1 else { throw .invalidRSAKey("zero exponent or even modulus") }
        modulus = n.bigEndianBytes
        exponent = e.bigEndianBytes
    }

    /// Telegram's key fingerprint: the lower 64 bits of SHA1 of the bare TL `rsa_public_key n:bytes e:bytes`,
    /// read as a little-endian signed integer (the `long` in req_DH_params).
    public var fingerprint: Int64 {
        Int64(bitPattern: fingerprintBytes.reversed().reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// A fingerprint written as Telegram's key lists write it: `0x` and 16 hex digits.
    public static func hexFingerprint(_ fingerprint: Int64) -> String {
        let digits = String(UInt64(bitPattern: fingerprint), radix: 16)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The fingerprint as its 8 wire bytes.
    public var fingerprintBytes: [UInt8] {
        Array(Hash.sha1(tlBytes(modulus) + tlBytes(exponent))[12..<20])
    }

    /// block^e mod n for a 256-byte big-endian block below n, as 256 bytes.
    public func encryptRaw(_ block: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard block.count == 256 else { throw .invalidLength(what: "RSA block", expected: "256 bytes", actual: block.count) }
        let n = try BigNum(bigEndian: modulus)
        let m = try BigNum(bigEndian: block)
        guard BigNum.compare(m, n) < 0 else { throw .invalidLength(what: "RSA block (not below the modulus)", expected: "< n", actual: 256) }
        return try rsaResult(BigNum.modExp(m, try BigNum(bigEndian: exponent), n, secretExponent: false))
    }

    /// Whether a 256-byte big-endian block is below n.
    func isBelowModulus(_ block: [UInt8]) throws(CryptoError) -> Bool {
        BigNum.compare(try BigNum(bigEndian: block), try BigNum(bigEndian: modulus)) < 0
    }
}

/// An RSA private key, for the server side of the exchange (the test server).
public struct RSAPrivateKey: Sendable {
    /// The public half, whose fingerprint the server lists in resPQ.
    public let publicKey: RSAPublicKey
    private let privateExponent: [UInt8]

    /// From n, e and d as big-endian bytes.
    public init(modulus: [UInt8], publicExponent: [UInt8], privateExponent: [UInt8]) throws(CryptoError) {
        publicKey = try RSAPublicKey(modulus: modulus, exponent: publicExponent)
        let d = try BigNum(bigEndian: privateExponent)
        guard !d.isZero else { throw .invalidRSAKey("zero private exponent") }
        self.privateExponent = d.bigEndianBytes
    }

    /// From decimal strings, the form the test vectors use.
    public init(modulusDecimal: String, publicExponentDecimal: String, privateExponentDecimal: String) throws(CryptoError) {
        try self.init(modulus: try BigNum(decimal: modulusDecimal).bigEndianBytes,
                      publicExponent: try BigNum(decimal: publicExponentDecimal).bigEndianBytes,
                      privateExponent: try BigNum(decimal: privateExponentDecimal).bigEndianBytes)
    }

    /// From a PEM private key (`BEGIN RSA PRIVATE KEY` or `BEGIN PRIVATE KEY`).
    public init(pem: String) throws(CryptoError) {
        let key = try Backend.rsaKey(pem: pem, wantPrivate: true)
        guard let d = key.privateExponent else { throw .invalidPEM("the PEM holds no private exponent") }
        try self.init(modulus: key.modulus, publicExponent: key.publicExponent, privateExponent: d)
    }

    /// block^d mod n as 256 bytes (constant-time exponentiation).
    public func decryptRaw(_ block: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard block.count == 256 else { throw .invalidLength(what: "RSA block", expected: "256 bytes", actual: block.count) }
        let n = try BigNum(bigEndian: publicKey.modulus)
        let c = try BigNum(bigEndian: block)
        guard BigNum.compare(c, n) < 0 else { throw .invalidLength(what: "RSA block (not below the modulus)", expected: "< n", actual: 256) }
        return try rsaResult(BigNum.modExp(c, try BigNum(bigEndian: privateExponent), n, secretExponent: true))
    }
}

private func rsaResult(_ value: BigNum) throws(CryptoError) -> [UInt8] {
    guard let bytes = value.bigEndianBytes(paddedTo: 256) else {
        throw .invalidLength(what: "RSA result", expected: "256 bytes", actual: (value.bitCount + 7) / 8)
    }
    return bytes
}

/// TL `bytes` serialization: a 1-byte length (or 0xfe and 3 bytes LE from 254 on), data, zero pad to 4.
func tlBytes(_ data: [UInt8]) -> [UInt8] {
    var out: [UInt8]
    if data.count < 254 {
        out = [UInt8(data.count)]
    } else {
        out = [0xfe, UInt8(data.count & 0xff), UInt8(data.count >> 8 & 0xff), UInt8(data.count >> 16 & 0xff)]
    }
    out += data
    out += [UInt8](repeating: 0, count: (4 - out.count % 4) % 4)
    return out
}
