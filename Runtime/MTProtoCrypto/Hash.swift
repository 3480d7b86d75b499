// The digests MTProto uses, computed by the crypto backend (Backends/).

/// Message digests used by MTProto: SHA-1 (auth key ids, MTProto 1.0, key exchange) and SHA-256 (MTProto 2.0,
/// RSA_PAD, obfuscated2 secrets, fake-TLS).
public enum Hash {
    public static func sha1(_ data: [UInt8]) -> [UInt8] { Backend.sha1(data) }

    public static func sha256(_ data: [UInt8]) -> [UInt8] { Backend.sha256(data) }

    /// SHA-256 of the concatenation of `parts`, without building the concatenation.
    public static func sha256(_ parts: [UInt8]...) -> [UInt8] { Backend.sha256(parts: parts) }

    /// SHA-1 of the concatenation of `parts`, without building the concatenation.
    public static func sha1(_ parts: [UInt8]...) -> [UInt8] { Backend.sha1(parts: parts) }

    /// SHA-256 of `first ‖ second`, for callers holding raw bytes (MTProto 2.0's msg_key and KDF).
    static func sha256(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> [UInt8] {
        Backend.sha256(first, second)
    }

    /// MD5, which the API uses only as an upload checksum (`inputFile.md5_checksum`), never for security.
    public static func md5(_ data: [UInt8]) -> [UInt8] { Backend.md5(data) }

    /// HMAC-SHA-256 of `data` under `key` (fake-TLS's ClientHello and ServerHello digests).
    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] { Backend.hmacSHA256(key: key, data: data) }
}
