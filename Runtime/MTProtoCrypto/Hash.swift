// SHA-1, SHA-256, HMAC-SHA256 and MD5 through OpenSSL's one-shot and EVP digest APIs.
import COpenSSL

/// Message digests used by MTProto: SHA-1 (auth key ids, MTProto 1.0, key exchange) and SHA-256 (MTProto 2.0,
/// RSA_PAD, obfuscated2 secrets, fake-TLS).
public enum Hash {
    public static func sha1(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        data.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { o in
                _ = SHA1(input.baseAddress, input.count, o.baseAddress)
            }
        }
        return out
    }

    public static func sha256(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        data.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { o in
                _ = SHA256(input.baseAddress, input.count, o.baseAddress)
            }
        }
        return out
    }

    /// SHA-256 of the concatenation of `parts`, without building the concatenation.
    public static func sha256(_ parts: [UInt8]...) -> [UInt8] {
        digest(fetchedSHA256) { ctx in update(ctx, parts) }
    }

    /// SHA-1 of the concatenation of `parts`, without building the concatenation.
    public static func sha1(_ parts: [UInt8]...) -> [UInt8] {
        digest(fetchedSHA1) { ctx in update(ctx, parts) }
    }

    /// SHA-256 of `first ‖ second`, for callers holding raw bytes (MTProto 2.0's msg_key and KDF).
    static func sha256(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> [UInt8] {
        digest(fetchedSHA256) { ctx in
            EVP_DigestUpdate(ctx, first.baseAddress, first.count)
            EVP_DigestUpdate(ctx, second.baseAddress, second.count)
        }
    }

    /// MD5, which the API uses only as an upload checksum (`inputFile.md5_checksum`), never for security.
    public static func md5(_ data: [UInt8]) -> [UInt8] {
        digest(fetchedMD5) { ctx in update(ctx, [data]) }
    }

    // OpenSSL 3 looks an algorithm up on every `EVP_sha256()` init, which costs more than hashing a short message;
    // fetched once, the lookup is gone.
    nonisolated(unsafe) private static let fetchedSHA256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()
    nonisolated(unsafe) private static let fetchedSHA1: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil) ?? EVP_sha1()
    nonisolated(unsafe) private static let fetchedMD5: OpaquePointer? = EVP_MD_fetch(nil, "MD5", nil) ?? EVP_md5()

    private static func update(_ ctx: OpaquePointer, _ parts: [[UInt8]]) {
        for part in parts { part.withUnsafeBytes { _ = EVP_DigestUpdate(ctx, $0.baseAddress, $0.count) } }
    }

    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        var outLength: UInt32 = 0
        key.withUnsafeBytes { k in
            data.withUnsafeBufferPointer { d in
                out.withUnsafeMutableBufferPointer { o in
                    _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), d.baseAddress, d.count,
                             o.baseAddress, &outLength)
                }
            }
        }
        return out
    }

    private static func digest(_ md: OpaquePointer?, _ update: (OpaquePointer) -> Void) -> [UInt8] {
        let size = Int(EVP_MD_get_size(md))
        var out = [UInt8](repeating: 0, count: size)
        guard let ctx = EVP_MD_CTX_new() else { return out }
        defer { EVP_MD_CTX_free(ctx) }
        EVP_DigestInit_ex(ctx, md, nil)
        update(ctx)
        var length: UInt32 = 0
        out.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(ctx, $0.baseAddress, &length) }
        return out
    }
}
