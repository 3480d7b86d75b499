// Malformed and hostile inputs: each is refused with the typed error that names the problem, never a trap.
import Testing
@testable import MTProtoCrypto

@Suite struct NegativeTests {
    let authKey = try! AuthKey((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
    var cipher: MTProto2Cipher { MTProto2Cipher(authKey: authKey) }

    /// salt, session_id, msg_id, seq_no, then message_data_length = `declared` and `body`.
    func header(declared: Int, body: [UInt8]) -> [UInt8] {
        [UInt8](repeating: 1, count: 28) + tlInt32(UInt32(declared)) + body
    }

    @Test func tamperedMsgKeyIsRejected() throws {
        var message = try cipher.encrypt(plaintext: header(declared: 8, body: Array(1...8)), direction: .client,
                                         random: SystemRandom())
        #expect(try cipher.decrypt(message, direction: .client).messageData == Array(1...8))
        message[10] ^= 0x01
        #expect(throws: CryptoError.msgKeyMismatch) { try cipher.decrypt(message, direction: .client) }
    }

    @Test func tamperedCiphertextIsRejected() throws {
        var message = try cipher.encrypt(plaintext: header(declared: 8, body: Array(1...8)), direction: .server,
                                         random: SystemRandom())
        message[message.count - 1] ^= 0x80
        #expect(throws: CryptoError.msgKeyMismatch) { try cipher.decrypt(message, direction: .server) }
    }

    @Test func wrongAuthKeyIdIsRejected() throws {
        var message = try cipher.encrypt(plaintext: header(declared: 0, body: []), direction: .client, random: SystemRandom())
        message[0] ^= 0xff
        #expect(throws: CryptoError.authKeyIdMismatch) { try cipher.decrypt(message, direction: .client) }
    }

    @Test func paddingShorterThan12IsRejected() throws {
        // 32-byte header + 24 bytes of data + 8 bytes of padding: whole blocks, but padding < 12.
        let plaintext = header(declared: 24, body: [UInt8](repeating: 9, count: 24)) + [UInt8](repeating: 0, count: 8)
        let message = try cipher.encrypt(paddedPlaintext: plaintext, direction: .client)
        #expect(throws: CryptoError.invalidPaddingLength(8)) { try cipher.decrypt(message, direction: .client) }
    }

    @Test func paddingLongerThan1024IsRejected() throws {
        let plaintext = header(declared: 0, body: []) + [UInt8](repeating: 0, count: 1040)
        let message = try cipher.encrypt(paddedPlaintext: plaintext, direction: .client)
        #expect(throws: CryptoError.invalidPaddingLength(1040)) { try cipher.decrypt(message, direction: .client) }
    }

    @Test func declaredLengthBeyondPlaintextIsRejected() throws {
        let plaintext = header(declared: 1000, body: []) + [UInt8](repeating: 0, count: 16)
        let message = try cipher.encrypt(paddedPlaintext: plaintext, direction: .server)
        #expect(throws: CryptoError.messageLengthMismatch(declared: 1000, available: 16)) {
            try cipher.decrypt(message, direction: .server)
        }
    }

    @Test func truncatedAndMisalignedMessagesAreRejected() throws {
        #expect(throws: CryptoError.invalidLength(what: "encrypted message", expected: "at least 56 bytes", actual: 30)) {
            try cipher.decrypt(authKey.id + [UInt8](repeating: 0, count: 22), direction: .client)
        }
        #expect(throws: CryptoError.notBlockAligned(length: 33)) {
            try cipher.decrypt(authKey.id + [UInt8](repeating: 0, count: 16 + 33), direction: .client)
        }
        // Sealing in place: room for auth_key_id and msg_key first, then whole blocks.
        var short = [UInt8](repeating: 0, count: 23)
        #expect(throws: CryptoError.invalidLength(what: "message to seal", expected: "at least 24 bytes", actual: 23)) {
            try cipher.seal(&short, direction: .client)
        }
        var misaligned = [UInt8](repeating: 0, count: 24 + 33)
        #expect(throws: CryptoError.notBlockAligned(length: 33)) { try cipher.seal(&misaligned, direction: .client) }
        #expect(misaligned == [UInt8](repeating: 0, count: 24 + 33), "a refused message is left as it was")
    }

    @Test func randomPaddingIsWithinSpec() throws {
        for bodyLength in stride(from: 0, through: 64, by: 4) {
            for extra in [0, 2, 200] {
                let message = try cipher.encrypt(plaintext: header(declared: bodyLength, body: [UInt8](repeating: 5, count: bodyLength)),
                                                 direction: .client, random: SystemRandom(), extraBlocks: extra)
                let decrypted = try cipher.decrypt(message, direction: .client)
                let padding = decrypted.plaintext.count - 32 - bodyLength
                #expect(MTProto2Cipher.paddingRange.contains(padding))
                #expect(padding >= min(12 + 16 * extra, 1009))
            }
        }
    }

    @Test func mtproto1RoundTripAndTamper() throws {
        let plaintext = header(declared: 12, body: Array(1...12))
        var message = try MTProto1.encrypt(plaintext: plaintext, authKey: authKey, direction: .client, random: SystemRandom())
        #expect(Array(message[8..<24]) == Array(Hash.sha1(plaintext)[4..<20]))
        #expect(try MTProto1.decrypt(message, authKey: authKey, direction: .client) == plaintext)
        // The wrong direction garbles the whole plaintext; 1.0 needs the length to authenticate, so either check fires.
        #expect(throws: CryptoError.self) { try MTProto1.decrypt(message, authKey: authKey, direction: .server) }
        // IGE confines a flipped last ciphertext byte to the last block, which holds data: msg_key no longer matches.
        message[message.count - 1] ^= 1
        #expect(throws: CryptoError.msgKeyMismatch) { try MTProto1.decrypt(message, authKey: authKey, direction: .client) }
    }

    @Test func keyAndIVLengthErrors() {
        #expect(throws: CryptoError.invalidKeyLength(what: "AES-256-CTR key", expected: 32, actual: 16)) {
            try AES256CTR(key: [UInt8](repeating: 0, count: 16), iv: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: CryptoError.invalidIVLength(what: "AES-256-CTR IV", expected: 16, actual: 32)) {
            try AES256CTR(key: [UInt8](repeating: 0, count: 32), iv: [UInt8](repeating: 0, count: 32))
        }
        #expect(throws: CryptoError.invalidIVLength(what: "AES-IGE IV", expected: 32, actual: 16)) {
            try AES256IGE(key: [UInt8](repeating: 0, count: 32), iv: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: CryptoError.notBlockAligned(length: 17)) {
            try AES256IGE.encrypt([UInt8](repeating: 0, count: 17), key: [UInt8](repeating: 0, count: 32),
                                  iv: [UInt8](repeating: 0, count: 32))
        }
        #expect(throws: CryptoError.invalidKeyLength(what: "auth_key", expected: 256, actual: 255)) {
            try AuthKey([UInt8](repeating: 0, count: 255))
        }
        #expect(throws: CryptoError.invalidLength(what: "server_nonce", expected: "16 bytes", actual: 15)) {
            try NonceKDF.temporaryKey(newNonce: [UInt8](repeating: 0, count: 32), serverNonce: [UInt8](repeating: 0, count: 15))
        }
    }

    @Test func rsaInputErrors() throws {
        #expect(throws: CryptoError.self) { try RSAPublicKey(pem: "-----BEGIN RSA PUBLIC KEY-----\nnot base64\n-----END RSA PUBLIC KEY-----\n") }
        #expect(throws: CryptoError.self) { try RSAPublicKey(pem: "") }
        #expect(throws: CryptoError.invalidRSAKey("modulus has 1024 bits, expected 2048")) {
            try RSAPublicKey(modulus: [0x80] + [UInt8](repeating: 1, count: 127), exponent: [1, 0, 1])
        }
        let vectors = try CryptoVectors.load()
        let key = try vectors.testPublicKey()
        #expect(throws: CryptoError.invalidLength(what: "RSA_PAD data", expected: "at most 144 bytes", actual: 145)) {
            try RSAPad.encrypt(data: [UInt8](repeating: 0, count: 145), key: key, random: SystemRandom())
        }
        // A block that is not RSA_PAD output decrypts to garbage whose hash cannot match.
        var bogus = hex(vectors.rsa_pad[0].encrypted_data)
        bogus[200] ^= 1
        #expect(throws: CryptoError.rsaPadHashMismatch) { try RSAPad.decrypt(bogus, key: try vectors.testPrivateKey()) }
        #expect(throws: CryptoError.rsaLegacyHashMismatch) {
            try RSALegacy.decrypt(hex(vectors.rsa_legacy[0].encrypted_data), key: try vectors.testPrivateKey()) { _ in 3 }
        }
        // All-ones is above every 2048-bit modulus.
        #expect(throws: CryptoError.self) { try key.encryptRaw([UInt8](repeating: 0xff, count: 256)) }
    }
}
