// End-to-end encryption of secret-chat messages and files (core.telegram.org/api/end-to-end):
// - MTProto 2.0 (both parties at layer ≥ 73): plaintext = length (int32 LE) ‖ payload ‖ 12…1024 random bytes, a
//   multiple of 16; msg_key = SHA256(key[88+x ..< 120+x] ‖ plaintext)[8 ..< 24], AES key and IV by the MTProto 2.0
//   KDF with the same x, where x = 0 for messages from the chat's originator and 8 for the other party's.
// - MTProto 1.0 (below layer 73): msg_key = SHA1(length ‖ payload)[4 ..< 20], the 1.0 KDF with x = 0 for both
//   parties, 0…15 bytes of padding.
// The envelope on the wire is key_fingerprint (the lower 64 bits of SHA1(key)) ‖ msg_key ‖ AES-256-IGE(plaintext).
import MTProtoCrypto

/// Which MTProto version encrypts a secret-chat message.
public enum SecretMTProtoVersion: Int, Sendable, Codable, Hashable {
    /// MTProto 1.0: SHA-1 msg_key and key derivation (either party below layer 73).
    case v1 = 1
    /// MTProto 2.0: SHA-256 msg_key and key derivation (both parties at layer 73 or above).
    case v2 = 2
}

/// Why a received secret-chat message, or a step of the chat's key exchange, was rejected.
public enum SecretChatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer bytes than the envelope's minimum.
    case tooShort(Int)
    /// The key fingerprint at the start names no key this chat holds.
    case unknownKeyFingerprint(Int64)
    /// The ciphertext is not whole 16-byte blocks.
    case notBlockAligned(Int)
    /// msg_key does not match the decrypted plaintext: tampered, wrong key, or wrong direction.
    case msgKeyMismatch
    /// The declared payload length does not fit the plaintext.
    case lengthMismatch(declared: Int, available: Int)
    /// Padding outside what the MTProto version allows.
    case badPadding(Int)
    /// The payload is not a message of the chat's layer.
    case malformed(String)
    /// A sequence number with the wrong parity, or one that claims more messages than were sent (the spec says
    /// to abort the chat).
    case sequenceViolation(String)
    /// An MTProto 1.0 message after both parties reached layer 73, where only 2.0 is allowed.
    case downgrade
    /// The key fingerprint computed from the exchange differs from the one the peer sent.
    case keyFingerprintMismatch(expected: Int64, actual: Int64)
    /// A Diffie–Hellman parameter or public value failed its checks.
    case diffieHellman(CryptoError)
    /// A chat id this engine does not know, or in a state where the operation does not apply.
    case unknownChat(Int32)
    /// The operation does not apply in the chat's state (say, sending before the key is established).
    case invalidState(String)
    /// A file whose key fingerprint, size or padding does not check out.
    case file(String)

    /// A one-line account of the failed check.
    public var description: String {
        switch self {
        case .tooShort(let n): "secret message too short: \(n) bytes"
        case .unknownKeyFingerprint(let f): "secret message under unknown key fingerprint \(f)"
        case .notBlockAligned(let n): "secret message ciphertext of \(n) bytes is not whole AES blocks"
        case .msgKeyMismatch: "secret message msg_key does not match its plaintext"
        case .lengthMismatch(let d, let a): "secret message declares \(d) bytes but \(a) are available"
        case .badPadding(let n): "secret message padding of \(n) bytes is out of range"
        case .malformed(let why): "secret message payload malformed: \(why)"
        case .sequenceViolation(let why): "secret chat sequence violation: \(why)"
        case .downgrade: "MTProto 1.0 secret message after both parties reached layer 73"
        case .keyFingerprintMismatch(let e, let a): "key fingerprint \(a) does not match the expected \(e)"
        case .diffieHellman(let e): "secret chat Diffie-Hellman check failed: \(e)"
        case .unknownChat(let id): "unknown secret chat \(id)"
        case .invalidState(let why): "secret chat state: \(why)"
        case .file(let why): "encrypted file: \(why)"
        }
    }
}

/// Encryption and decryption of secret-chat message payloads under one chat key.
public enum SecretChatCrypto {
    /// The key fingerprint of a secret-chat key: the lower 64 bits of SHA1(key), little-endian.
    public static func keyFingerprint(_ key: [UInt8]) -> Int64 {
        let sha = Hash.sha1(key)
        return sha.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: Int64.self)) }
    }

    /// Encrypts a serialized `DecryptedMessageLayer` (or layer-8 `DecryptedMessage`).
    /// - Parameters:
    ///   - payload: the serialized message.
    ///   - key: the chat's key.
    ///   - version: MTProto 2.0 or 1.0, as the chat's layer decides.
    ///   - fromOriginator: the sender created the chat (x = 0 in the 2.0 KDF) or accepted it (x = 8).
    ///   - random: where the padding comes from.
    public static func encrypt(_ payload: [UInt8], key: AuthKey, version: SecretMTProtoVersion, fromOriginator: Bool,
                               random: some RandomSource) throws(CryptoError) -> [UInt8] {
        var plaintext = [UInt8]()
        plaintext.reserveCapacity(payload.count + 4 + 1040)
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { plaintext += $0 }
        plaintext += payload
        switch version {
        case .v1:
            return try MTProto1.encrypt(plaintext: plaintext, authKey: key, direction: .client, random: random)
        case .v2:
            // 12…1024 bytes: the minimum that aligns, plus 0…3 extra blocks so lengths do not give the text away.
            let minimum = 12 + (16 - (plaintext.count + 12) % 16) % 16
            let extra = Int(random.bytes(1)[0] % 4) * 16
            plaintext += random.bytes(minimum + extra)
            let direction: MessageDirection = fromOriginator ? .client : .server
            return try MTProto2Cipher(authKey: key).encrypt(paddedPlaintext: plaintext, direction: direction)
        }
    }

    /// Decrypts and checks a secret-chat envelope whose fingerprint names `key`.
    /// - Returns: the payload without length and padding.
    public static func decrypt(_ envelope: [UInt8], key: AuthKey, version: SecretMTProtoVersion,
                               fromOriginator: Bool) throws(SecretChatError) -> [UInt8] {
        guard envelope.count >= 24 + 16 else { throw .tooShort(envelope.count) }
        guard (envelope.count - 24) % 16 == 0 else { throw .notBlockAligned(envelope.count - 24) }
        switch version {
        case .v1:
            do {
                let plain = try MTProto1.decrypt(envelope, authKey: key, direction: .client, lengthOffset: 0)
                return Array(plain[4...])
            } catch {
                throw map(error)
            }
        case .v2:
            // The shared MTProto 2.0 step checks msg_key; the length field and padding are this framing's.
            let frame: [UInt8]
            do {
                frame = try MTProto2Cipher(authKey: key).open(envelope, direction: fromOriginator ? .client : .server).frame
            } catch {
                throw map(error)
            }
            let declared = frame.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 24, as: UInt32.self))) }
            let available = frame.count - 28
            guard declared <= available else { throw .lengthMismatch(declared: declared, available: available) }
            let padding = available - declared
            guard MTProto2Cipher.paddingRange.contains(padding) else { throw .badPadding(padding) }
            guard declared % 4 == 0 else { throw .malformed("payload length \(declared) is not a multiple of 4") }
            return Array(frame[28..<(28 + declared)])
        }
    }

    private static func map(_ error: CryptoError) -> SecretChatError {
        switch error {
        case .msgKeyMismatch: .msgKeyMismatch
        case .authKeyIdMismatch: .msgKeyMismatch
        case .messageLengthMismatch(let d, let a): .lengthMismatch(declared: d, available: a)
        case .invalidPaddingLength(let n): .badPadding(n)
        case .notBlockAligned(let n): .notBlockAligned(n)
        case .invalidLength(_, _, let n): .tooShort(n)
        default: .malformed("\(error)")
        }
    }

    /// The bytes clients draw as the key's picture or emoji: SHA1(key)[0..<16] ‖ SHA256(key)[0..<20]
    /// (end-to-end docs, "Key Visualization": 128 bits of SHA1 followed by 160 bits of SHA256 since layer 46).
    public static func keyVisualization(_ key: [UInt8]) -> [UInt8] {
        Array(Hash.sha1(key)[0..<16]) + Array(Hash.sha256(key)[0..<20])
    }
}

/// A file encrypted for a secret chat: a fresh AES-256-IGE key and IV per file
/// (core.telegram.org/api/end-to-end, "Sending encrypted files").
public struct SecretFileKey: Sendable, Hashable {
    /// The 32-byte AES-256 key.
    public let key: [UInt8]
    /// The 32-byte IGE initialization vector.
    public let iv: [UInt8]

    /// A key and IV; each must be 32 bytes, else ``SecretChatError/file(_:)``.
    public init(key: [UInt8], iv: [UInt8]) throws(SecretChatError) {
        guard key.count == 32, iv.count == 32 else { throw .file("key and iv must be 32 bytes each") }
        self.key = key
        self.iv = iv
    }

    /// A fresh key and IV from `random`.
    public static func random(_ random: some RandomSource) -> SecretFileKey {
        SecretFileKey(checkedKey: random.bytes(32), iv: random.bytes(32))
    }

    private init(checkedKey key: [UInt8], iv: [UInt8]) {
        self.key = key
        self.iv = iv
    }

    /// key_fingerprint of the file: with digest = MD5(key ‖ iv), the int32 of bytes 0..<4 XOR that of 4..<8.
    public var fingerprint: Int32 {
        let digest = Hash.md5(key + iv)
        return digest.withUnsafeBytes {
            Int32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: Int32.self))
                ^ Int32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: Int32.self))
        }
    }

    /// Encrypts a whole file, padded with random bytes to a multiple of 16 (the true size travels in the message).
    public func encrypt(_ file: [UInt8], random: some RandomSource) throws(CryptoError) -> [UInt8] {
        try AES256IGE.encrypt(file + random.bytes((16 - file.count % 16) % 16), key: key, iv: iv)
    }

    /// Decrypts a downloaded file and cuts it to `size`, the size the message declared.
    public func decrypt(_ encrypted: [UInt8], size: Int, fingerprint expected: Int32) throws(SecretChatError) -> [UInt8] {
        guard expected == fingerprint else { throw .file("key fingerprint \(expected) does not match key and iv") }
        guard encrypted.count % 16 == 0 else { throw .notBlockAligned(encrypted.count) }
        guard size >= 0, size <= encrypted.count, encrypted.count - size < 16 else {
            throw .file("declared size \(size) does not fit \(encrypted.count) encrypted bytes")
        }
        do {
            return Array(try AES256IGE.decrypt(encrypted, key: key, iv: iv)[0..<size])
        } catch {
            throw .file("\(error)")
        }
    }
}
