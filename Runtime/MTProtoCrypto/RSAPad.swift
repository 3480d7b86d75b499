// RSA_PAD, the encryption of p_q_inner_data since 2022 (core.telegram.org/mtproto/auth_key, step 4):
//   data_with_padding = data ‖ random_padding (192 bytes)
//   data_with_hash    = reverse(data_with_padding) ‖ SHA256(temp_key ‖ data_with_padding)   (224 bytes)
//   aes_encrypted     = AES256_IGE(data_with_hash, temp_key, IV = 0)
//   key_aes_encrypted = (temp_key XOR SHA256(aes_encrypted)) ‖ aes_encrypted                 (256 bytes)
//   if key_aes_encrypted ≥ n, retry with a new temp_key; encrypted_data = key_aes_encrypted^e mod n.

/// RSA_PAD encryption (client) and decryption (server).
public enum RSAPad {
    /// "The length of data is at most 144 bytes."
    public static let maxDataLength = 144
    /// data_with_padding's length: data and random padding to 192 bytes.
    public static let paddedLength = 192

    /// Encrypts `data` with random padding and temp_keys from `random`.
    /// - Parameters:
    ///   - data: at most `maxDataLength` bytes (p_q_inner_data).
    ///   - key: the server's public key.
    ///   - random: where the padding and each temp_key come from.
    ///   - maxAttempts: temp_keys to try before giving up; each succeeds with probability n / 2^2048.
    public static func encrypt(data: [UInt8], key: RSAPublicKey, random: some RandomSource,
                               maxAttempts: Int = 64) throws(CryptoError) -> [UInt8] {
        guard data.count <= maxDataLength else {
            throw .invalidLength(what: "RSA_PAD data", expected: "at most 144 bytes", actual: data.count)
        }
        let padding = random.bytes(paddedLength - data.count)
        return try encrypt(data: data, key: key, padding: padding, maxAttempts: maxAttempts) { random.bytes(32) }
    }

    /// Deterministic form: the caller supplies the padding and each temp_key to try (`nextTemporaryKey`
    /// returns nil to stop). For replaying recorded exchanges.
    public static func encrypt(data: [UInt8], key: RSAPublicKey, padding: [UInt8], maxAttempts: Int = 64,
                               nextTemporaryKey: () -> [UInt8]?) throws(CryptoError) -> [UInt8] {
        guard data.count <= maxDataLength else {
            throw .invalidLength(what: "RSA_PAD data", expected: "at most 144 bytes", actual: data.count)
        }
        guard data.count + padding.count == paddedLength else {
            throw .invalidLength(what: "RSA_PAD padding", expected: "\(paddedLength - data.count) bytes",
                                 actual: padding.count)
        }
        let dataWithPadding = data + padding
        for _ in 0..<maxAttempts {
            guard let tempKey = nextTemporaryKey() else { break }
            guard tempKey.count == 32 else {
                throw .invalidKeyLength(what: "RSA_PAD temp_key", expected: 32, actual: tempKey.count)
            }
            let block = try keyAESEncrypted(dataWithPadding: dataWithPadding, temporaryKey: tempKey)
            if try key.isBelowModulus(block) {
                return try key.encryptRaw(block)
            }
        }
        throw .rsaPadExhausted(attempts: maxAttempts)
    }

    /// key_aes_encrypted for one temp_key (the 256-byte block before RSA).
    public static func keyAESEncrypted(dataWithPadding: [UInt8], temporaryKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard dataWithPadding.count == paddedLength else {
            throw .invalidLength(what: "RSA_PAD data_with_padding", expected: "192 bytes", actual: dataWithPadding.count)
        }
        let dataWithHash = dataWithPadding.reversed() + Hash.sha256(temporaryKey, dataWithPadding)
        let aesEncrypted = try AES256IGE.encrypt(dataWithHash, key: temporaryKey, iv: [UInt8](repeating: 0, count: 32))
        let mask = Hash.sha256(aesEncrypted)
        return zip(temporaryKey, mask).map { $0 ^ $1 } + aesEncrypted
    }

    /// Reverses RSA_PAD with the server's private key and checks the embedded hash.
    /// - Returns: data_with_padding (192 bytes); the caller's TL parser finds where data ends.
    public static func decrypt(_ encrypted: [UInt8], key: RSAPrivateKey) throws(CryptoError) -> [UInt8] {
        try decode(decryptedBlock: key.decryptRaw(encrypted))
    }

    /// The second half of `decrypt`, for a block already put through `RSAPrivateKey.decryptRaw`: a server that
    /// accepts both schemes pays for the private-key operation once and tries each decoding on its result.
    public static func decode(decryptedBlock block: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard block.count == 256 else { throw .invalidLength(what: "RSA block", expected: "256 bytes", actual: block.count) }
        let aesEncrypted = Array(block[32...])
        let tempKey = zip(block[0..<32], Hash.sha256(aesEncrypted)).map { $0 ^ $1 }
        let dataWithHash = try AES256IGE.decrypt(aesEncrypted, key: tempKey, iv: [UInt8](repeating: 0, count: 32))
        let dataWithPadding = Array(dataWithHash[0..<paddedLength].reversed())
        guard constantTimeEquals(Hash.sha256(tempKey, dataWithPadding), Array(dataWithHash[paddedLength...])) else {
            throw .rsaPadHashMismatch
        }
        return dataWithPadding
    }
}

/// The scheme before RSA_PAD, still sent by older clients (e.g. Telethon 1.x):
/// encrypted_data = (0 ‖ SHA1(data) ‖ data ‖ random_padding)^e mod n, the block being 256 bytes.
public enum RSALegacy {
    /// 255 − 20 bytes of SHA-1: the most data the block holds.
    public static let maxDataLength = 235

    /// The 256-byte encrypted_data: `(0 ‖ SHA1(data) ‖ data ‖ padding)^e mod n`, padding from `random`.
    public static func encrypt(data: [UInt8], key: RSAPublicKey, random: some RandomSource) throws(CryptoError) -> [UInt8] {
        guard data.count <= maxDataLength else {
            throw .invalidLength(what: "legacy RSA data", expected: "at most 235 bytes", actual: data.count)
        }
        return try encrypt(data: data, key: key, padding: random.bytes(maxDataLength - data.count))
    }

    /// Deterministic form with caller-supplied padding of 235 − data.count bytes.
    public static func encrypt(data: [UInt8], key: RSAPublicKey, padding: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard data.count + padding.count == maxDataLength else {
            throw .invalidLength(what: "legacy RSA padding", expected: "\(maxDataLength - data.count) bytes",
                                 actual: padding.count)
        }
        // The leading zero byte keeps the block below any 2048-bit modulus.
        return try key.encryptRaw([0] + Hash.sha1(data) + data + padding)
    }

    /// Decrypts and checks a legacy block, given the data length the caller's TL parser found in the payload.
    /// - Parameters:
    ///   - encrypted: the 256-byte encrypted_data.
    ///   - key: the server's private key.
    ///   - dataLength: a closure receiving data ‖ padding (235 bytes) and returning the length of data.
    public static func decrypt(_ encrypted: [UInt8], key: RSAPrivateKey,
                               dataLength: ([UInt8]) -> Int?) throws(CryptoError) -> [UInt8] {
        try decode(decryptedBlock: key.decryptRaw(encrypted), dataLength: dataLength)
    }

    /// The second half of `decrypt`, for a block already put through `RSAPrivateKey.decryptRaw`.
    public static func decode(decryptedBlock block: [UInt8], dataLength: ([UInt8]) -> Int?) throws(CryptoError) -> [UInt8] {
        guard block.count == 256 else { throw .invalidLength(what: "RSA block", expected: "256 bytes", actual: block.count) }
        guard block[0] == 0 else { throw .rsaLegacyHashMismatch }
        let payload = Array(block[21...])
        guard let length = dataLength(payload), (0...maxDataLength).contains(length) else {
            throw .invalidLength(what: "legacy RSA data", expected: "0...235 bytes", actual: payload.count)
        }
        let data = Array(payload[0..<length])
        guard constantTimeEquals(Hash.sha1(data), Array(block[1..<21])) else { throw .rsaLegacyHashMismatch }
        return data
    }
}
