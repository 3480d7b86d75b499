// Replays every crypto family of crypto_vectors.json (or the file named by MTPROTO_CRYPTO_VECTORS): IGE,
// CTR in the recorded chunking, MTProto 2.0 in both directions, auth-key hashes, the nonce KDF, RSA_PAD and
// legacy RSA with the test key. The transport families belong to MTProtoTransportTests.
import Foundation
import Testing
@testable import MTProtoCrypto

struct CryptoVectors: Decodable {
    struct IGE: Decodable { let key, iv, plaintext, ciphertext: String }
    struct CTR: Decodable { let key, iv, plaintext, ciphertext: String; let chunks: [Int] }
    struct MTProto2: Decodable {
        let direction: String
        let x: Int
        let auth_key, auth_key_id, salt, session_id, msg_id, body, padding, plaintext: String
        let seq_no: Int
        let msg_key_large, msg_key, aes_key, aes_iv, encrypted: String
    }
    struct AuthKeyVector: Decodable {
        let auth_key, auth_key_id, auth_key_id_u64, aux_hash, new_nonce: String
        let new_nonce_hash1, new_nonce_hash2, new_nonce_hash3: String
    }
    struct NonceKDFVector: Decodable { let server_nonce, new_nonce, tmp_aes_key, tmp_aes_iv, first_server_salt: String }
    struct RSATestKey: Decodable { let n, d, fingerprint, fingerprint_hex_le, pem_pkcs1: String; let e: Int }
    struct RSAPadVector: Decodable { let data, padding, temp_key, key_aes_encrypted, encrypted_data: String; let temp_keys_tried: Int }
    struct RSALegacyVector: Decodable { let data, random_padding, encrypted_data: String }

    let aes256_ige: [IGE]
    let aes256_ctr: [CTR]
    let mtproto2: [MTProto2]
    let auth_key: [AuthKeyVector]
    let nonce_kdf: [NonceKDFVector]
    let rsa_test_key: RSATestKey
    let rsa_pad: [RSAPadVector]
    let rsa_legacy: [RSALegacyVector]

    static func load() throws -> CryptoVectors {
        try VectorFiles.load(CryptoVectors.self, from: VectorFiles.cryptoVectorsURL)
    }

    func testPublicKey() throws -> RSAPublicKey {
        try RSAPublicKey(modulusDecimal: rsa_test_key.n, exponentDecimal: String(rsa_test_key.e))
    }

    func testPrivateKey() throws -> RSAPrivateKey {
        try RSAPrivateKey(modulusDecimal: rsa_test_key.n, publicExponentDecimal: String(rsa_test_key.e),
                          privateExponentDecimal: rsa_test_key.d)
    }
}

@Suite struct CryptoVectorTests {
    let vectors: CryptoVectors

    init() throws { vectors = try CryptoVectors.load() }

    @Test func familiesAreComplete() {
        #expect(vectors.aes256_ige.count == 50)
        #expect(vectors.aes256_ctr.count == 50)
        #expect(vectors.mtproto2.count == 50)
        #expect(vectors.mtproto2.filter { $0.direction == "client" }.count == 25)
        #expect(vectors.auth_key.count == 50)
        #expect(vectors.nonce_kdf.count == 50)
        #expect(vectors.rsa_pad.count == 50)
        #expect(vectors.rsa_legacy.count == 10)
    }

    /// Through every implementation this CPU runs (AES-NI and the OpenSSL fallback on x86 with AES-NI).
    @Test(arguments: AES256IGE.available) func aes256IGE(implementation: AES256IGE.Implementation) throws {
        for (i, v) in vectors.aes256_ige.enumerated() {
            let ige = try AES256IGE(key: hex(v.key), iv: hex(v.iv), implementation: implementation)
            #expect(try ige.encrypt(hex(v.plaintext)) == hex(v.ciphertext), "IGE encrypt vector \(i)")
            #expect(try ige.decrypt(hex(v.ciphertext)) == hex(v.plaintext), "IGE decrypt vector \(i)")
            var inPlace = hex(v.plaintext)
            try ige.encrypt(inPlace: &inPlace)
            #expect(inPlace == hex(v.ciphertext), "IGE in-place encrypt vector \(i)")
            try ige.decrypt(inPlace: &inPlace)
            #expect(inPlace == hex(v.plaintext), "IGE in-place decrypt vector \(i)")
        }
    }

    @Test func aes256CTRInRecordedChunks() throws {
        for (i, v) in vectors.aes256_ctr.enumerated() {
            let plaintext = hex(v.plaintext)
            #expect(v.chunks.reduce(0, +) == plaintext.count)
            let ctr = try AES256CTR(key: hex(v.key), iv: hex(v.iv))
            var out: [UInt8] = []
            var offset = 0
            for size in v.chunks {
                var piece = Array(plaintext[offset..<(offset + size)])
                ctr.process(&piece)
                out += piece
                offset += size
            }
            #expect(out == hex(v.ciphertext), "CTR vector \(i), chunks \(v.chunks)")
            // The same stream in one call, through the raw-buffer entry point, decrypts it back.
            var back = out
            let inverse = try AES256CTR(key: hex(v.key), iv: hex(v.iv))
            back.withUnsafeMutableBytes { inverse.process($0) }
            #expect(back == plaintext, "CTR inverse vector \(i)")
        }
    }

    @Test func mtproto2BothDirections() throws {
        for (i, v) in vectors.mtproto2.enumerated() {
            let direction: MessageDirection = v.direction == "client" ? .client : .server
            #expect(direction.x == v.x)
            let key = try AuthKey(hex(v.auth_key))
            #expect(key.id == hex(v.auth_key_id), "vector \(i)")
            let cipher = MTProto2Cipher(authKey: key)
            let plaintext = hex(v.plaintext)
            #expect(cipher.messageKeyLarge(for: plaintext, direction: direction) == hex(v.msg_key_large), "vector \(i)")
            #expect(cipher.messageKey(for: plaintext, direction: direction) == hex(v.msg_key), "vector \(i)")
            let keyIV = try cipher.keyAndIV(messageKey: hex(v.msg_key), direction: direction)
            #expect(keyIV.key == hex(v.aes_key), "vector \(i)")
            #expect(keyIV.iv == hex(v.aes_iv), "vector \(i)")
            #expect(try cipher.encrypt(paddedPlaintext: plaintext, direction: direction) == hex(v.encrypted), "vector \(i)")

            let decrypted = try cipher.decrypt(hex(v.encrypted), direction: direction)
            #expect(decrypted.plaintext == plaintext, "vector \(i)")
            #expect(decrypted.messageData == hex(v.body), "vector \(i)")
            #expect(decrypted.salt == hex(v.salt))
            #expect(decrypted.sessionID == hex(v.session_id))
            #expect(decrypted.messageID == Int64(v.msg_id))
            #expect(decrypted.seqNo == Int32(v.seq_no))
            #expect(decrypted.messageKey == hex(v.msg_key) && decrypted.messageKeyLarge == hex(v.msg_key_large))
            #expect(decrypted.saltValue == Int64(littleEndian: hex(v.salt).withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }))
            #expect(decrypted.messageDataLength == hex(v.body).count)
            #expect(decrypted.withMessageData { Array($0) } == hex(v.body))
            // The body handed over in the frame's own storage (a slice at its place there), from any offset into it.
            let dataStart = MTProto2Cipher.prefixLength + MTProto2Cipher.headerLength
            #expect(Array(decrypted.takeMessageData(from: 0)) == hex(v.body))
            #expect(decrypted.takeMessageData(from: 4).startIndex == dataStart + 4)
            #expect(Array(decrypted.takeMessageData(from: 4)) == Array(hex(v.body).dropFirst(4)))
            #expect(decrypted.takeMessageData(from: 1 << 20).isEmpty)
            // Sealing in place writes the same bytes as encrypting a copy, and gives msg_key_large.
            var sealed = [UInt8](repeating: 0xee, count: MTProto2Cipher.prefixLength) + plaintext
            #expect(try cipher.seal(&sealed, direction: direction) == hex(v.msg_key_large), "vector \(i)")
            #expect(sealed == hex(v.encrypted), "vector \(i)")
            // The message is bound to its direction: the other side's KDF rejects it.
            let other: MessageDirection = direction == .client ? .server : .client
            #expect(throws: CryptoError.msgKeyMismatch) { try cipher.decrypt(hex(v.encrypted), direction: other) }
        }
    }

    @Test func authKeyHashes() throws {
        for (i, v) in vectors.auth_key.enumerated() {
            let key = try AuthKey(hex(v.auth_key))
            #expect(key.id == hex(v.auth_key_id), "vector \(i)")
            #expect(key.idValue == UInt64(v.auth_key_id_u64), "vector \(i)")
            #expect(key.auxHash == hex(v.aux_hash), "vector \(i)")
            let nonce = hex(v.new_nonce)
            #expect(try key.newNonceHash(1, newNonce: nonce) == hex(v.new_nonce_hash1), "vector \(i)")
            #expect(try key.newNonceHash(2, newNonce: nonce) == hex(v.new_nonce_hash2), "vector \(i)")
            #expect(try key.newNonceHash(3, newNonce: nonce) == hex(v.new_nonce_hash3), "vector \(i)")
            #expect(try key.verifyNewNonceHash(hex(v.new_nonce_hash1), number: 1, newNonce: nonce))
            #expect(try !key.verifyNewNonceHash(hex(v.new_nonce_hash2), number: 1, newNonce: nonce))
        }
    }

    @Test func nonceKDF() throws {
        for (i, v) in vectors.nonce_kdf.enumerated() {
            let keyIV = try NonceKDF.temporaryKey(newNonce: hex(v.new_nonce), serverNonce: hex(v.server_nonce))
            #expect(keyIV.key == hex(v.tmp_aes_key), "vector \(i)")
            #expect(keyIV.iv == hex(v.tmp_aes_iv), "vector \(i)")
            #expect(try NonceKDF.firstServerSalt(newNonce: hex(v.new_nonce), serverNonce: hex(v.server_nonce))
                == hex(v.first_server_salt), "vector \(i)")
        }
    }

    @Test func rsaTestKeyFromPEMAndFingerprint() throws {
        let fromPEM = try RSAPublicKey(pem: vectors.rsa_test_key.pem_pkcs1)
        let fromDecimal = try vectors.testPublicKey()
        #expect(fromPEM == fromDecimal)
        #expect(fromPEM.fingerprint == Int64(vectors.rsa_test_key.fingerprint))
        #expect(fromPEM.fingerprintBytes == hex(vectors.rsa_test_key.fingerprint_hex_le))
    }

    @Test func rsaPad() throws {
        let publicKey = try vectors.testPublicKey()
        let privateKey = try vectors.testPrivateKey()
        for (i, v) in vectors.rsa_pad.enumerated() {
            let data = hex(v.data), padding = hex(v.padding)
            #expect(try RSAPad.keyAESEncrypted(dataWithPadding: data + padding, temporaryKey: hex(v.temp_key))
                == hex(v.key_aes_encrypted), "vector \(i)")
            var keys = [hex(v.temp_key)].makeIterator()
            let encrypted = try RSAPad.encrypt(data: data, key: publicKey, padding: padding) { keys.next() }
            #expect(encrypted == hex(v.encrypted_data), "vector \(i)")
            #expect(try RSAPad.decrypt(hex(v.encrypted_data), key: privateKey) == data + padding, "vector \(i)")
        }
    }

    /// Vectors that needed more than one temp_key: the random entry point retries until the block is below n.
    @Test func rsaPadRetriesTempKeysAboveModulus() throws {
        let publicKey = try vectors.testPublicKey()
        let retried = vectors.rsa_pad.filter { $0.temp_keys_tried > 1 }
        for v in retried {
            // A temp_key whose block is ≥ n (all 0xff makes the top byte large) comes first, then the recorded key.
            let data = hex(v.data), padding = hex(v.padding)
            let high = [UInt8](repeating: 0xff, count: 32)
            let block = try RSAPad.keyAESEncrypted(dataWithPadding: data + padding, temporaryKey: high)
            guard try !publicKey.isBelowModulus(block) else { continue }
            var keys = [high, hex(v.temp_key)].makeIterator()
            #expect(try RSAPad.encrypt(data: data, key: publicKey, padding: padding) { keys.next() } == hex(v.encrypted_data))
        }
        let random = ReplayRandom(SystemRandom().bytes(192 + 32 * 64))
        let ciphertext = try RSAPad.encrypt(data: Array(0..<100), key: publicKey, random: random)
        let recovered = try RSAPad.decrypt(ciphertext, key: try vectors.testPrivateKey())
        #expect(Array(recovered[0..<100]) == Array(0..<100))
    }

    @Test func rsaLegacy() throws {
        let publicKey = try vectors.testPublicKey()
        let privateKey = try vectors.testPrivateKey()
        for (i, v) in vectors.rsa_legacy.enumerated() {
            let data = hex(v.data)
            #expect(try RSALegacy.encrypt(data: data, key: publicKey, padding: hex(v.random_padding))
                == hex(v.encrypted_data), "vector \(i)")
            #expect(try RSALegacy.decrypt(hex(v.encrypted_data), key: privateKey) { _ in data.count } == data, "vector \(i)")
        }
    }

    /// A server accepting both schemes decrypts once and tries each decoding: each vector decodes under its own
    /// scheme only, and a block of the wrong size is a typed error.
    @Test func decodingOneDecryptedBlockUnderBothSchemes() throws {
        let privateKey = try vectors.testPrivateKey()
        for v in vectors.rsa_pad.prefix(10) {
            let block = try privateKey.decryptRaw(hex(v.encrypted_data))
            #expect(try RSAPad.decode(decryptedBlock: block) == hex(v.data) + hex(v.padding))
            #expect(throws: CryptoError.self) { try RSALegacy.decode(decryptedBlock: block) { _ in hex(v.data).count } }
        }
        for v in vectors.rsa_legacy {
            let block = try privateKey.decryptRaw(hex(v.encrypted_data))
            #expect(try RSALegacy.decode(decryptedBlock: block) { _ in hex(v.data).count } == hex(v.data))
            #expect(throws: CryptoError.rsaPadHashMismatch) { try RSAPad.decode(decryptedBlock: block) }
        }
        #expect(throws: CryptoError.invalidLength(what: "RSA block", expected: "256 bytes", actual: 255)) {
            try RSAPad.decode(decryptedBlock: [UInt8](repeating: 0, count: 255))
        }
        #expect(throws: CryptoError.invalidLength(what: "RSA block", expected: "256 bytes", actual: 0)) {
            try RSALegacy.decode(decryptedBlock: []) { _ in 0 }
        }
    }
}
