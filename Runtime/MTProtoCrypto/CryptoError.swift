// The one error type MTProtoCrypto throws. Every case says what was wrong with which input, so a failed
// handshake or a rejected message can be logged without guessing.

/// Why a cryptographic operation refused its input or failed.
public enum CryptoError: Error, Sendable, Equatable {
    // MARK: Lengths and formats
    /// A key had the wrong number of bytes (`what` names it, e.g. "AES-256 key").
    case invalidKeyLength(what: String, expected: Int, actual: Int)
    /// An IV had the wrong number of bytes.
    case invalidIVLength(what: String, expected: Int, actual: Int)
    /// Block-mode input that is not a whole number of 16-byte blocks.
    case notBlockAligned(length: Int)
    /// An input whose size is outside what the operation accepts.
    case invalidLength(what: String, expected: String, actual: Int)
    /// OpenSSL reported a failure; `function` names the call, `detail` is OpenSSL's error string.
    case openSSL(function: String, detail: String)
    /// swift-crypto (the portable backend) reported a failure; `function` names the call, `detail` its error.
    case swiftCrypto(function: String, detail: String)
    /// An implementation this CPU or build cannot run, e.g. AES-NI requested on a CPU without it.
    case implementationUnavailable(String)

    // MARK: MTProto message encryption
    /// The received msg_key does not match SHA-256 of the decrypted plaintext (tampering, wrong key or direction).
    case msgKeyMismatch
    /// The auth_key_id at the start of an encrypted message is not the one of the key in use.
    case authKeyIdMismatch
    /// The declared message_data_length does not fit the decrypted plaintext.
    case messageLengthMismatch(declared: Int, available: Int)
    /// Padding outside 12...1024 bytes (MTProto 2.0) or 0...15 (MTProto 1.0).
    case invalidPaddingLength(Int)

    // MARK: RSA
    /// PEM text that could not be decoded into an RSA key.
    case invalidPEM(String)
    /// The RSA key is not usable (wrong algorithm, modulus too small or too big).
    case invalidRSAKey(String)
    /// No temp_key produced a value below the modulus within the attempt limit (RSA_PAD).
    case rsaPadExhausted(attempts: Int)
    /// Decrypted RSA_PAD data whose hash does not match: not for this key, or tampered.
    case rsaPadHashMismatch
    /// Decrypted legacy `SHA1(data) ‖ data ‖ padding` block whose SHA-1 does not match.
    case rsaLegacyHashMismatch

    // MARK: Diffie–Hellman
    /// dh_prime is not a 2048-bit number (its bit length is given).
    case dhPrimeWrongSize(bits: Int)
    /// dh_prime or (dh_prime − 1) / 2 is not prime.
    case dhPrimeNotSafe
    /// g is not in 2...7.
    case dhGeneratorOutOfRange(Int)
    /// dh_prime does not satisfy the residue condition that makes g generate the order-q subgroup.
    case dhGeneratorCondition(g: Int)
    /// g_a, g_b or the chosen exponent violates a range check; `what` names the value.
    case dhValueOutOfRange(what: String)
    /// SRP's u = H(g_a | g_b) is zero, which would make the proof independent of the password
    /// (core.telegram.org/api/srp).
    case srpHashZero

    // MARK: pq factoring
    /// pq was 0 or 1.
    case pqTooSmall(UInt64)
    /// pq is prime, so it has no split into two factors.
    case pqIsPrime(UInt64)
    /// pq has more than 64 significant bits (its byte length is given).
    case pqTooWide(bytes: Int)
    /// Pollard–Brent did not find a factor within the iteration bound.
    case pqNotFactored(UInt64)
}
