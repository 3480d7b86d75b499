// The server's RSA key for `--generate-key`, made by OpenSSL (its public PEM is `RSAPublicKey.pkcs1PEM`).
import COpenSSL
import MTProtoCrypto

enum RSAKeys {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A fresh 2048-bit key as PEM (PKCS#8 `BEGIN PRIVATE KEY`).
    static func generatePEM() throws -> String {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw Failure(description: "OpenSSL has no RSA key generator")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1,
              EVP_PKEY_generate(context, &key) == 1, let key
        else { throw Failure(description: "RSA key generation failed") }
        defer { EVP_PKEY_free(key) }
        guard let bio = BIO_new(BIO_s_mem()) else { throw Failure(description: "no memory BIO") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
            throw Failure(description: "could not write the key as PEM")
        }
        var pem: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let read = chunk.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
            guard read > 0 else { break }
            pem += chunk[0..<Int(read)]
        }
        return String(decoding: pem, as: UTF8.self)
    }
}
