// The OpenSSL 3 backend (libcrypto through COpenSSL): Linux only, and the default there.
#if canImport(COpenSSL)
import COpenSSL

enum OpenSSLBackend: CryptoPrimitives {
    typealias Integer = OpenSSLInteger
    typealias Keystream = OpenSSLCTR
    typealias SHA256Hasher = OpenSSLSHA256

    static var kind: CryptoBackend { .openSSL }

    static func sha1(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        data.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { _ = SHA1(input.baseAddress, input.count, $0.baseAddress) }
        }
        return out
    }

    static func sha256(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        data.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { _ = SHA256(input.baseAddress, input.count, $0.baseAddress) }
        }
        return out
    }

    static func sha1(parts: [[UInt8]]) -> [UInt8] { digest(fetchedSHA1) { update($0, parts) } }

    static func sha256(parts: [[UInt8]]) -> [UInt8] { digest(fetchedSHA256) { update($0, parts) } }

    static func sha256(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> [UInt8] {
        digest(fetchedSHA256) { ctx in
            EVP_DigestUpdate(ctx, first.baseAddress, first.count)
            EVP_DigestUpdate(ctx, second.baseAddress, second.count)
        }
    }

    static func md5(_ data: [UInt8]) -> [UInt8] { digest(fetchedMD5) { update($0, [data]) } }

    static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        var outLength: UInt32 = 0
        key.withUnsafeBytes { k in
            data.withUnsafeBufferPointer { d in
                out.withUnsafeMutableBufferPointer { o in
                    _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), d.baseAddress, d.count, o.baseAddress,
                             &outLength)
                }
            }
        }
        return out
    }

    static func pbkdf2SHA512(_ password: [UInt8], salt: [UInt8], iterations: Int) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        let ok = password.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                out.withUnsafeMutableBufferPointer { o in
                    pw.withMemoryRebound(to: CChar.self) { pwc in
                        PKCS5_PBKDF2_HMAC(pwc.baseAddress, Int32(pw.count), s.baseAddress, Int32(s.count),
                                          Int32(iterations), EVP_sha512(), Int32(o.count), o.baseAddress)
                    }
                }
            }
        }
        guard ok == 1 else { throw openSSLFailure("PKCS5_PBKDF2_HMAC") }
        return out
    }

    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, Int(Int32.max))
            guard RAND_bytes(base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(chunk)) == 1 else {
                return false
            }
            offset += chunk
        }
        return true
    }

    static func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
    }

    static func rsaKey(pem: String, wantPrivate: Bool) throws(CryptoError) -> RSAKeyNumbers {
        let key = try PEMKey(pem: pem, wantPrivate: wantPrivate)
        return RSAKeyNumbers(modulus: try key.parameter("n").bigEndianBytes,
                             publicExponent: try key.parameter("e").bigEndianBytes,
                             privateExponent: wantPrivate ? try key.parameter("d").bigEndianBytes : nil)
    }

    // OpenSSL 3 looks an algorithm up on every `EVP_sha256()` init, which costs more than hashing a short message;
    // fetched once, the lookup is gone.
    nonisolated(unsafe) private static let fetchedSHA256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()
    nonisolated(unsafe) private static let fetchedSHA1: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil) ?? EVP_sha1()
    nonisolated(unsafe) private static let fetchedMD5: OpaquePointer? = EVP_MD_fetch(nil, "MD5", nil) ?? EVP_md5()

    private static func update(_ ctx: OpaquePointer, _ parts: [[UInt8]]) {
        for part in parts { part.withUnsafeBytes { _ = EVP_DigestUpdate(ctx, $0.baseAddress, $0.count) } }
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

/// The oldest error on OpenSSL's thread-local queue as text, and the queue cleared.
func openSSLErrorDetail() -> String {
    let code = ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return "no OpenSSL error queued" }
    var buffer = [CChar](repeating: 0, count: 256)
    buffer.withUnsafeMutableBufferPointer { ERR_error_string_n(code, $0.baseAddress, $0.count) }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}

func openSSLFailure(_ function: String) -> CryptoError {
    .openSSL(function: function, detail: openSSLErrorDetail())
}

/// OpenSSL's CTR mode keeps the partial keystream block between updates, so data may arrive in any chunking.
final class OpenSSLCTR: CTRKeystream {
    private let ctx: OpaquePointer

    init(key: [UInt8], iv: [UInt8]) throws(CryptoError) {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw openSSLFailure("EVP_CIPHER_CTX_new") }
        guard EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nil, key, iv) == 1 else {
            EVP_CIPHER_CTX_free(ctx)
            throw openSSLFailure("EVP_EncryptInit_ex(aes-256-ctr)")
        }
        self.ctx = ctx
    }

    deinit { EVP_CIPHER_CTX_free(ctx) }

    func process(_ buffer: UnsafeMutableRawBufferPointer) {
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

final class OpenSSLSHA256: IncrementalSHA256 {
    private let context: OpaquePointer?

    init() {
        context = EVP_MD_CTX_new()
        if let context { EVP_DigestInit_ex(context, EVP_sha256(), nil) }
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let context else { return }
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        if let context { out.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(context, $0.baseAddress, &length) } }
        return out
    }
}

/// A key decoded from PEM by OpenSSL, for reading its numeric parameters.
private final class PEMKey {
    private let pkey: OpaquePointer

    init(pem: String, wantPrivate: Bool) throws(CryptoError) {
        ERR_clear_error()
        let decoded: OpaquePointer? = Array(pem.utf8).withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            if wantPrivate {
                return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
            }
            // Read the PEM block generically, then pick the DER decoder by its label.
            var name: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard PEM_read_bio(bio, &name, &header, &data, &length) == 1, let name, let data else { return nil }
            defer {
                CRYPTO_free(name, #fileID, #line)
                CRYPTO_free(header, #fileID, #line)
                CRYPTO_free(data, #fileID, #line)
            }
            var cursor: UnsafePointer<UInt8>? = UnsafePointer(data)
            switch String(cString: name) {
            case "RSA PUBLIC KEY": return d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, length)
            case "PUBLIC KEY": return d2i_PUBKEY(nil, &cursor, length)
            default: return nil
            }
        }
        guard let decoded else { throw .invalidPEM("not an RSA \(wantPrivate ? "private" : "public") key PEM (\(openSSLErrorDetail()))") }
        guard EVP_PKEY_get_base_id(decoded) == EVP_PKEY_RSA else {
            EVP_PKEY_free(decoded)
            throw .invalidPEM("the PEM holds a non-RSA key")
        }
        pkey = decoded
    }

    deinit { EVP_PKEY_free(pkey) }

    func parameter(_ name: String) throws(CryptoError) -> OpenSSLInteger {
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else {
            throw .invalidPEM("key has no parameter \(name)")
        }
        defer { BN_clear_free(bn) }
        let out = try OpenSSLInteger()
        guard BN_copy(out.raw, bn) != nil else { throw openSSLFailure("BN_copy") }
        return out
    }
}
#endif
