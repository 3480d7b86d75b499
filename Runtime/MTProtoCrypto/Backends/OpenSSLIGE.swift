// AES-IGE composed around OpenSSL's EVP AES (the rewriting is explained in AES256IGE.swift).
#if canImport(COpenSSL)
import COpenSSL

extension OpenSSLBackend {
    /// Encryption as one CBC pass (see AES256IGE.swift for the rewriting).
    static func igeEncrypt(key: [UInt8], iv: [UInt8], _ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let ctx = try CipherContext(cipher: cbcCipher(keyLength: key.count), key: key,
                                    iv: Array(iv[0..<16]), encrypt: true)
        var pm2 = Block.zero                       // p_{i−2}; p_{−1} = 0 makes x_1 = p_1
        var pm1 = Block(iv, offset: 16)            // p_{i−1}; p_0 from the IV
        // Work in cache-sized pieces, keeping each piece's plaintext for the post-XOR; the CBC context carries
        // the chaining value between pieces.
        let pieceSize = 4096
        try withUnsafeTemporaryAllocation(byteCount: pieceSize, alignment: 16) { (saved) throws(CryptoError) in
            guard let savedBase = saved.baseAddress else { return }
            var start = 0
            while start < buffer.count {
                let length = min(pieceSize, buffer.count - start)
                let piece = base + start
                let pieceStart = pm1
                var a = pm2, b = pm1
                var offset = 0
                while offset < length {
                    let p = Block(piece, offset: offset)
                    p.store(to: savedBase, offset: offset)
                    (p ^ a).store(to: piece, offset: offset)
                    a = b
                    b = p
                    offset += 16
                }
                try ctx.update(piece, length: length)
                var previous = pieceStart
                offset = 0
                while offset < length {
                    (Block(piece, offset: offset) ^ previous).store(to: piece, offset: offset)
                    previous = Block(savedBase, offset: offset)
                    offset += 16
                }
                pm2 = a
                pm1 = b
                start += length
            }
        }
    }

    /// Decryption as one ECB block call per block on a reused context.
    static func igeDecrypt(key: [UInt8], iv: [UInt8], _ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let ctx = try CipherContext(cipher: ecbCipher(keyLength: key.count), key: key, iv: nil, encrypt: false)
        var cPrev = Block(iv, offset: 0)
        var pPrev = Block(iv, offset: 16)
        var offset = 0
        while offset < buffer.count {
            let c = Block(base, offset: offset)
            (c ^ pPrev).store(to: base, offset: offset)
            try ctx.update(base + offset, length: 16)
            let p = Block(base, offset: offset) ^ cPrev
            p.store(to: base, offset: offset)
            pPrev = p
            cPrev = c
            offset += 16
        }
    }
}

private func cbcCipher(keyLength: Int) -> OpaquePointer? {
    switch keyLength {
    case 16: EVP_aes_128_cbc()
    case 24: EVP_aes_192_cbc()
    default: EVP_aes_256_cbc()
    }
}

private func ecbCipher(keyLength: Int) -> OpaquePointer? {
    switch keyLength {
    case 16: EVP_aes_128_ecb()
    case 24: EVP_aes_192_ecb()
    default: EVP_aes_256_ecb()
    }
}

/// An EVP cipher context without padding, freed when released.
final class CipherContext {
    private let ctx: OpaquePointer

    init(cipher: OpaquePointer?, key: [UInt8], iv: [UInt8]?, encrypt: Bool) throws(CryptoError) {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw openSSLFailure("EVP_CIPHER_CTX_new") }
        let ok: Int32
        if let iv {
            ok = EVP_CipherInit_ex(ctx, cipher, nil, key, iv, encrypt ? 1 : 0)
        } else {
            ok = EVP_CipherInit_ex(ctx, cipher, nil, key, nil, encrypt ? 1 : 0)
        }
        guard ok == 1, EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 else {
            EVP_CIPHER_CTX_free(ctx)
            throw openSSLFailure("EVP_CipherInit_ex")
        }
        self.ctx = ctx
    }

    deinit { EVP_CIPHER_CTX_free(ctx) }

    /// Transforms `length` bytes (a multiple of the block size) in place.
    func update(_ pointer: UnsafeMutableRawPointer, length: Int) throws(CryptoError) {
        let bytes = pointer.assumingMemoryBound(to: UInt8.self)
        var offset = 0
        while offset < length {
            let chunk = min(length - offset, 1 << 30)
            var written: Int32 = 0
            guard EVP_CipherUpdate(ctx, bytes + offset, &written, bytes + offset, Int32(chunk)) == 1,
                  Int(written) == chunk else { throw openSSLFailure("EVP_CipherUpdate") }
            offset += chunk
        }
    }
}
#endif
