// MTProto 1.0 message keys (core.telegram.org/mtproto/description_v1). Still needed for secret chats below
// layer 73 and for bind_auth_key_inner, which is encrypted the 1.0 way with the permanent key.
//   msg_key = SHA1(plaintext without padding)[4..<20]
//   sha1_a = SHA1(msg_key ‖ auth_key[x..<x+32]), sha1_b = SHA1(auth_key[32+x..<48+x] ‖ msg_key ‖ auth_key[48+x..<64+x])
//   sha1_c = SHA1(auth_key[64+x..<96+x] ‖ msg_key), sha1_d = SHA1(msg_key ‖ auth_key[96+x..<128+x])
//   aes_key = sha1_a[0..<8] ‖ sha1_b[8..<20] ‖ sha1_c[4..<16]
//   aes_iv = sha1_a[8..<20] ‖ sha1_b[0..<8] ‖ sha1_c[16..<20] ‖ sha1_d[0..<8]

/// MTProto 1.0 msg_key and KDF.
public enum MTProto1 {
    /// msg_key: the lower 128 bits of SHA1 of the data to encrypt, padding excluded.
    public static func messageKey(for unpaddedPlaintext: [UInt8]) -> [UInt8] {
        Array(Hash.sha1(unpaddedPlaintext)[4..<20])
    }

    /// The AES-256-IGE key and IV MTProto 1.0 derives from the auth key and a 16-byte msg_key.
    public static func keyAndIV(authKey: AuthKey, messageKey msgKey: [UInt8],
                                direction: MessageDirection) throws(CryptoError) -> AESKeyIV {
        guard msgKey.count == 16 else { throw .invalidLength(what: "msg_key", expected: "16 bytes", actual: msgKey.count) }
        let x = direction.x
        let k = authKey.bytes
        let a = Hash.sha1(msgKey, Array(k[x..<(x + 32)]))
        let b = Hash.sha1(Array(k[(32 + x)..<(48 + x)]), msgKey, Array(k[(48 + x)..<(64 + x)]))
        let c = Hash.sha1(Array(k[(64 + x)..<(96 + x)]), msgKey)
        let d = Hash.sha1(msgKey, Array(k[(96 + x)..<(128 + x)]))
        return AESKeyIV(key: Array(a[0..<8] + b[8..<20] + c[4..<16]),
                        iv: Array(a[8..<20] + b[0..<8] + c[16..<20] + d[0..<8]))
    }

    /// Pads `plaintext` with 0...15 random bytes to whole blocks and encrypts it.
    /// - Returns: auth_key_id ‖ msg_key ‖ encrypted data.
    public static func encrypt(plaintext: [UInt8], authKey: AuthKey, direction: MessageDirection,
                               random: some RandomSource) throws(CryptoError) -> [UInt8] {
        let msgKey = messageKey(for: plaintext)
        let padded = plaintext + random.bytes((16 - plaintext.count % 16) % 16)
        let encrypted = try keyAndIV(authKey: authKey, messageKey: msgKey, direction: direction).cipher.encrypt(padded)
        return authKey.id + msgKey + encrypted
    }

    /// Decrypts a 1.0 message whose data length is at `lengthOffset` (int32 LE) in the plaintext, and checks
    /// msg_key over the unpadded part. For ordinary messages the offset is 28; for secret-chat layer-8..72
    /// messages (decrypted_message with a leading length) it is 0.
    public static func decrypt(_ message: [UInt8], authKey: AuthKey, direction: MessageDirection,
                               lengthOffset: Int = 28) throws(CryptoError) -> [UInt8] {
        guard message.count >= 24 + 16 else {
            throw .invalidLength(what: "encrypted message", expected: "at least 40 bytes", actual: message.count)
        }
        guard constantTimeEquals(Array(message[0..<8]), authKey.id) else { throw .authKeyIdMismatch }
        let encrypted = Array(message[24...])
        guard encrypted.count % 16 == 0 else { throw .notBlockAligned(length: encrypted.count) }
        let msgKey = Array(message[8..<24])
        let plaintext = try keyAndIV(authKey: authKey, messageKey: msgKey, direction: direction).cipher.decrypt(encrypted)
        guard lengthOffset >= 0, lengthOffset + 4 <= plaintext.count else {
            throw .invalidLength(what: "MTProto 1.0 plaintext", expected: "room for the length field", actual: plaintext.count)
        }
        let declared = plaintext.withUnsafeBytes {
            Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: lengthOffset, as: UInt32.self)))
        }
        let dataEnd = lengthOffset + 4 + declared
        guard dataEnd <= plaintext.count else {
            throw .messageLengthMismatch(declared: declared, available: plaintext.count - lengthOffset - 4)
        }
        guard constantTimeEquals(messageKey(for: Array(plaintext[0..<dataEnd])), msgKey) else { throw .msgKeyMismatch }
        let padding = plaintext.count - dataEnd
        guard padding < 16 else { throw .invalidPaddingLength(padding) }
        return Array(plaintext[0..<dataEnd])
    }
}
