// AES-256-CTR as a running stream (obfuscated2 and MTProxy need it): OpenSSL's CTR mode keeps the partial
// keystream block between updates, so data may arrive in any chunking.
import COpenSSL

/// A stateful AES-256-CTR keystream. Encryption and decryption are the same operation; the keystream
/// continues across calls. The IV is the initial 128-bit big-endian counter block.
///
/// Not thread-safe: one instance belongs to one direction of one connection.
public final class AES256CTR: @unchecked Sendable {
    private let ctx: OpaquePointer

    public init(key: [UInt8], iv: [UInt8]) throws(CryptoError) {
        guard key.count == 32 else { throw .invalidKeyLength(what: "AES-256-CTR key", expected: 32, actual: key.count) }
        guard iv.count == 16 else { throw .invalidIVLength(what: "AES-256-CTR IV", expected: 16, actual: iv.count) }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw openSSLFailure("EVP_CIPHER_CTX_new") }
        let ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nil, key, iv)
        guard ok == 1 else {
            EVP_CIPHER_CTX_free(ctx)
            throw openSSLFailure("EVP_EncryptInit_ex(aes-256-ctr)")
        }
        self.ctx = ctx
    }

    deinit { EVP_CIPHER_CTX_free(ctx) }

    /// XORs `data` with the next `data.count` keystream bytes.
    public func process(_ data: inout [UInt8]) {
        data.withUnsafeMutableBytes { process($0) }
    }

    /// XORs `buffer` in place with the next `buffer.count` keystream bytes.
    public func process(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, 1 << 30)
            var written: Int32 = 0
            // CTR on a valid context cannot fail; in-place operation is supported by EVP for stream modes.
            _ = EVP_EncryptUpdate(ctx, base + offset, &written, base + offset, Int32(chunk))
            offset += chunk
        }
    }
}
