// MTProto 2.0 message encryption (core.telegram.org/mtproto/description):
//   msg_key_large = SHA256(substr(auth_key, 88+x, 32) ‖ plaintext), msg_key = msg_key_large[8..<24]
//   a = SHA256(msg_key ‖ substr(auth_key, x, 36)), b = SHA256(substr(auth_key, 40+x, 36) ‖ msg_key)
//   aes_key = a[0..<8] ‖ b[8..<24] ‖ a[24..<32], aes_iv = b[0..<8] ‖ a[8..<24] ‖ b[24..<32]
// with x = 0 for messages from the client and x = 8 for messages from the server.
import COpenSSL

/// Who sent a message; selects x in the MTProto KDFs.
public enum MessageDirection: Sendable, Hashable {
    /// Client to server, x = 0.
    case client
    /// Server to client, x = 8.
    case server

    public var x: Int { self == .client ? 0 : 8 }
}

/// An AES-256-IGE key and 32-byte IV derived for one message.
public struct AESKeyIV: Sendable, Hashable {
    public let key: [UInt8]
    public let iv: [UInt8]

    public init(key: [UInt8], iv: [UInt8]) {
        self.key = key
        self.iv = iv
    }

    public var cipher: AES256IGE {
        get throws(CryptoError) { try AES256IGE(key: key, iv: iv) }
    }
}

/// MTProto 2.0 encryption and decryption of messages under one authorization key.
///
/// The plaintext is `salt ‖ session_id ‖ msg_id ‖ seq_no ‖ message_data_length ‖ message_data ‖ padding`; the
/// encrypted message is `auth_key_id ‖ msg_key ‖ AES-256-IGE(plaintext)`.
public struct MTProto2Cipher: Sendable {
    /// Bytes before message_data: salt, session_id, msg_id, seq_no, message_data_length.
    public static let headerLength = 32
    /// "12..1024 bytes of random padding" (description, "Important tests").
    public static let paddingRange = 12...1024

    public let authKey: AuthKey

    public init(authKey: AuthKey) {
        self.authKey = authKey
    }

    /// msg_key_large = SHA256(substr(auth_key, 88+x, 32) ‖ plaintext); 32 bytes.
    public func messageKeyLarge(for plaintext: [UInt8], direction: MessageDirection) -> [UInt8] {
        plaintext.withUnsafeBytes { messageKeyLarge(for: $0, direction: direction) }
    }

    func messageKeyLarge(for plaintext: UnsafeRawBufferPointer, direction: MessageDirection) -> [UInt8] {
        let x = direction.x
        return authKey.bytes.withUnsafeBytes { key in
            Hash.sha256(UnsafeRawBufferPointer(rebasing: key[(88 + x)..<(120 + x)]), plaintext)
        }
    }

    /// msg_key, the middle 128 bits of msg_key_large.
    public func messageKey(for plaintext: [UInt8], direction: MessageDirection) -> [UInt8] {
        Array(messageKeyLarge(for: plaintext, direction: direction)[8..<24])
    }

    /// The AES key and IV for a message with this msg_key.
    public func keyAndIV(messageKey msgKey: [UInt8], direction: MessageDirection) throws(CryptoError) -> AESKeyIV {
        guard msgKey.count == 16 else { throw .invalidLength(what: "msg_key", expected: "16 bytes", actual: msgKey.count) }
        let x = direction.x
        let (a, b) = authKey.bytes.withUnsafeBytes { key in
            msgKey.withUnsafeBytes { m in
                (Hash.sha256(m, UnsafeRawBufferPointer(rebasing: key[x..<(x + 36)])),
                 Hash.sha256(UnsafeRawBufferPointer(rebasing: key[(40 + x)..<(76 + x)]), m))
            }
        }
        var aesKey = [UInt8](repeating: 0, count: 32), aesIV = [UInt8](repeating: 0, count: 32)
        for i in 0..<8 {
            aesKey[i] = a[i]; aesKey[24 + i] = a[24 + i]
            aesIV[i] = b[i]; aesIV[24 + i] = b[24 + i]
        }
        for i in 8..<24 {
            aesKey[i] = b[i]
            aesIV[i] = a[i]
        }
        return AESKeyIV(key: aesKey, iv: aesIV)
    }

    /// Encrypts a plaintext that already carries its padding (length a multiple of 16).
    /// - Returns: auth_key_id ‖ msg_key ‖ encrypted data.
    public func encrypt(paddedPlaintext plaintext: [UInt8], direction: MessageDirection) throws(CryptoError) -> [UInt8] {
        guard plaintext.count % 16 == 0 else { throw .notBlockAligned(length: plaintext.count) }
        let msgKey = messageKey(for: plaintext, direction: direction)
        let cipher = try keyAndIV(messageKey: msgKey, direction: direction).cipher
        // One copy: the header and the plaintext into the output, then the plaintext part encrypted in place.
        var out = [UInt8]()
        out.reserveCapacity(24 + plaintext.count)
        out += authKey.id
        out += msgKey
        out += plaintext
        var failure: CryptoError?
        out.withUnsafeMutableBytes { whole in
            do throws(CryptoError) {
                try cipher.encrypt(UnsafeMutableRawBufferPointer(rebasing: whole[24...]))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return out
    }

    /// Appends random padding to `plaintext` (header and message_data) and encrypts it. The padding is the
    /// smallest length of at least 12 bytes that makes the total a multiple of 16, plus `extraBlocks` × 16
    /// bytes (senders may add more to hide the length), capped so padding stays within 1024 bytes.
    public func encrypt(plaintext: [UInt8], direction: MessageDirection, random: some RandomSource,
                        extraBlocks: Int = 0) throws(CryptoError) -> [UInt8] {
        let minimum = 12 + (16 - (plaintext.count + 12) % 16) % 16
        let roomForExtra = (Self.paddingRange.upperBound - minimum) / 16
        let padding = minimum + 16 * min(max(0, extraBlocks), roomForExtra)
        return try encrypt(paddedPlaintext: plaintext + random.bytes(padding), direction: direction)
    }

    /// Decrypts and checks a message sent in `direction`.
    ///
    /// Checks, as the spec requires: auth_key_id matches, the length is whole blocks, msg_key equals the
    /// recomputed one (constant time), message_data_length fits and leaves 12...1024 bytes of padding.
    /// - Returns: the whole plaintext, padding included.
    public func decrypt(_ message: [UInt8], direction: MessageDirection) throws(CryptoError) -> DecryptedMessage {
        guard message.count >= 24 + Self.headerLength else {
            throw .invalidLength(what: "encrypted message", expected: "at least 56 bytes", actual: message.count)
        }
        guard constantTimeEquals(Array(message[0..<8]), authKey.id) else { throw .authKeyIdMismatch }
        guard (message.count - 24) % 16 == 0 else { throw .notBlockAligned(length: message.count - 24) }
        let msgKey = Array(message[8..<24])
        var plaintext = Array(message[24...])
        try keyAndIV(messageKey: msgKey, direction: direction).cipher.decrypt(inPlace: &plaintext)
        // The msg_key check comes first: nothing in an unauthenticated plaintext is trusted before it.
        let large = messageKeyLarge(for: plaintext, direction: direction)
        guard constantTimeEquals(Array(large[8..<24]), msgKey) else {
            throw .msgKeyMismatch
        }
        let declared = plaintext.withUnsafeBytes {
            Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 28, as: UInt32.self)))
        }
        let available = plaintext.count - Self.headerLength
        guard declared <= available else { throw .messageLengthMismatch(declared: declared, available: available) }
        let padding = available - declared
        guard Self.paddingRange.contains(padding) else { throw .invalidPaddingLength(padding) }
        return DecryptedMessage(plaintext: plaintext, messageKey: msgKey)
    }
}

/// A decrypted and checked MTProto 2.0 message.
public struct DecryptedMessage: Sendable, Hashable {
    /// salt ‖ session_id ‖ msg_id ‖ seq_no ‖ message_data_length ‖ message_data ‖ padding.
    public let plaintext: [UInt8]
    public let messageKey: [UInt8]

    public var salt: [UInt8] { Array(plaintext[0..<8]) }
    public var sessionID: [UInt8] { Array(plaintext[8..<16]) }
    public var messageID: Int64 { readLE(Int64.self, at: 16) }
    public var seqNo: Int32 { readLE(Int32.self, at: 24) }
    /// message_data, without the header and padding (its length was checked by `decrypt`).
    public var messageData: [UInt8] {
        Array(plaintext[32..<(32 + Int(UInt32(bitPattern: readLE(Int32.self, at: 28))))])
    }

    private func readLE<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        plaintext.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}
