// MTProto 2.0 message encryption (core.telegram.org/mtproto/description):
//   msg_key_large = SHA256(substr(auth_key, 88+x, 32) ‖ plaintext), msg_key = msg_key_large[8..<24]
//   a = SHA256(msg_key ‖ substr(auth_key, x, 36)), b = SHA256(substr(auth_key, 40+x, 36) ‖ msg_key)
//   aes_key = a[0..<8] ‖ b[8..<24] ‖ a[24..<32], aes_iv = b[0..<8] ‖ a[8..<24] ‖ b[24..<32]
// with x = 0 for messages from the client and x = 8 for messages from the server.

/// Who sent a message; selects x in the MTProto KDFs.
public enum MessageDirection: Sendable, Hashable {
    /// Client to server, x = 0.
    case client
    /// Server to client, x = 8.
    case server

    /// The offset x into auth_key the KDF reads at (core.telegram.org/mtproto/description).
    public var x: Int { self == .client ? 0 : 8 }
}

/// An AES-256-IGE key and 32-byte IV derived for one message.
public struct AESKeyIV: Sendable, Hashable {
    /// The 32-byte AES key.
    public let key: [UInt8]
    /// The 32-byte IGE IV.
    public let iv: [UInt8]

    /// A key and IV as derived; their lengths are checked when `cipher` is made.
    public init(key: [UInt8], iv: [UInt8]) {
        self.key = key
        self.iv = iv
    }

    /// AES-256-IGE under this key and IV.
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

    /// The authorization key messages are sealed and opened under.
    public let authKey: AuthKey

    /// A cipher for the messages under `authKey`.
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

    /// Bytes in front of the plaintext in an encrypted message: auth_key_id and msg_key.
    public static let prefixLength = 24

    /// Encrypts a plaintext that already carries its padding (length a multiple of 16).
    /// - Returns: auth_key_id ‖ msg_key ‖ encrypted data.
    public func encrypt(paddedPlaintext plaintext: [UInt8], direction: MessageDirection) throws(CryptoError) -> [UInt8] {
        var message = [UInt8]()
        message.reserveCapacity(Self.prefixLength + plaintext.count)
        message += repeatElement(0, count: Self.prefixLength)
        message += plaintext
        try seal(&message, direction: direction)
        return message
    }

    /// Encrypts in place a message laid out as 24 bytes of room ‖ padded plaintext (length a multiple of 16):
    /// the room gets auth_key_id ‖ msg_key and the plaintext is encrypted where it lies, so a sender that builds
    /// its plaintext behind the room copies nothing.
    /// - Returns: msg_key_large, whose first bytes are the quick-ack token.
    @discardableResult
    public func seal(_ message: inout [UInt8], direction: MessageDirection) throws(CryptoError) -> [UInt8] {
        // A batch of one: the message moves in and back (one reference, so still encrypted where it lies), and on
        // a refusal it comes back untouched.
        var batch = [message]
        message = []
        defer { swap(&message, &batch[0]) }
        return try seal(all: &batch, direction: direction)[0]
    }

    /// Seals `messages` in order, each as `seal` does, encrypting each while hashing the next (MTProto 2.0's sender
    /// hashes a message before it can encrypt it, so one message alone cannot overlap the two; see
    /// `AES256IGE.encrypt(_:hashing:after:)`). Every message is checked before any is touched.
    ///
    /// A sender that makes its messages one at a time can carry the overlap across calls: `leavingLast` hashes the
    /// last message (while the one before it is encrypted) but leaves it unencrypted and unstamped, and the next
    /// call passes it first with its msg_key_large as `firstKeyLarge`, so it is not hashed again.
    /// - Returns: each message's msg_key_large.
    public func seal(all messages: inout [[UInt8]], direction: MessageDirection, firstKeyLarge: [UInt8]? = nil,
                     leavingLast: Bool = false) throws(CryptoError) -> [[UInt8]] {
        for message in messages {
            let length = message.count - Self.prefixLength
            guard length >= 0 else {
                throw .invalidLength(what: "message to seal", expected: "at least 24 bytes", actual: message.count)
            }
            guard length % 16 == 0 else { throw .notBlockAligned(length: length) }
        }
        guard let first = messages.first else { return [] }
        let x = direction.x
        if let firstKeyLarge {
            guard firstKeyLarge.count == 32 else {
                throw .invalidLength(what: "msg_key_large", expected: "32 bytes", actual: firstKeyLarge.count)
            }
        }
        var larges = [firstKeyLarge ?? first.withUnsafeBytes {
            messageKeyLarge(for: UnsafeRawBufferPointer(rebasing: $0[Self.prefixLength...]), direction: direction)
        }]
        larges.reserveCapacity(messages.count)
        for index in messages.indices.dropLast(leavingLast ? 1 : 0) {
            let msgKey = Array(larges[index][8..<24])
            let cipher = try keyAndIV(messageKey: msgKey, direction: direction).cipher
            if index + 1 < messages.count {
                // Another reference to the next message only while it is read: it is encrypted in place next.
                let next = messages[index + 1]
                let sealed: Result<[UInt8], CryptoError> = authKey.bytes.withUnsafeBytes { key in
                    next.withUnsafeBytes { next in
                        messages[index].withUnsafeMutableBytes { whole in
                            Result { () throws(CryptoError) in
                                try cipher.encrypt(UnsafeMutableRawBufferPointer(rebasing: whole[Self.prefixLength...]),
                                                   hashing: UnsafeRawBufferPointer(rebasing: next[Self.prefixLength...]),
                                                   after: UnsafeRawBufferPointer(rebasing: key[(88 + x)..<(120 + x)]))
                            }
                        }
                    }
                }
                larges.append(try sealed.get())
            } else {
                try Self.encrypt(cipher, onBodyOf: &messages[index])
            }
            messages[index].replaceSubrange(0..<8, with: authKey.id)
            messages[index].replaceSubrange(8..<24, with: msgKey)
        }
        return larges
    }

    /// Encrypts, in place, everything after the 24-byte prefix of `message`.
    private static func encrypt(_ cipher: AES256IGE, onBodyOf message: inout [UInt8]) throws(CryptoError) {
        let failure: CryptoError? = message.withUnsafeMutableBytes { whole in
            let body = UnsafeMutableRawBufferPointer(rebasing: whole[prefixLength...])
            do throws(CryptoError) {
                try cipher.encrypt(body)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
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

    /// The part of decryption every MTProto 2.0 framing shares (the session's here, secret chats' elsewhere):
    /// auth_key_id matches, the body is whole blocks, it is decrypted in place, and msg_key equals the middle of
    /// the recomputed msg_key_large (constant time). Nothing in the plaintext is read: its length field and padding
    /// are the caller's framing.
    /// - Returns: the frame (auth_key_id ‖ msg_key ‖ plaintext) and msg_key_large.
    public func open(_ message: consuming [UInt8], direction: MessageDirection) throws(CryptoError)
        -> (frame: [UInt8], messageKeyLarge: [UInt8]) {
        guard message.count >= Self.prefixLength else {
            throw .invalidLength(what: "encrypted message", expected: "at least 24 bytes", actual: message.count)
        }
        guard constantTimeEquals(Array(message[0..<8]), authKey.id) else { throw .authKeyIdMismatch }
        let length = message.count - Self.prefixLength
        guard length % 16 == 0 else { throw .notBlockAligned(length: length) }
        let msgKey = Array(message[8..<24])
        let cipher = try keyAndIV(messageKey: msgKey, direction: direction).cipher
        // Decrypted and hashed for msg_key_large in one pass where the CPU allows.
        let x = direction.x
        let decrypted: Result<[UInt8], CryptoError> = authKey.bytes.withUnsafeBytes { key in
            message.withUnsafeMutableBytes { whole in
                Result { () throws(CryptoError) in
                    try cipher.decrypt(UnsafeMutableRawBufferPointer(rebasing: whole[Self.prefixLength...]),
                                       hashingAfter: UnsafeRawBufferPointer(rebasing: key[(88 + x)..<(120 + x)]))
                }
            }
        }
        let large = try decrypted.get()
        // The msg_key check comes first: nothing in an unauthenticated plaintext is trusted before it.
        guard constantTimeEquals(Array(large[8..<24]), msgKey) else { throw .msgKeyMismatch }
        return (message, large)
    }

    /// Decrypts and checks a message sent in `direction`. The message is decrypted where it lies: a caller
    /// that hands over its only reference to the array (a frame just cut from the stream) pays no copy.
    ///
    /// Checks, as the spec requires: auth_key_id matches, the length is whole blocks, msg_key equals the
    /// recomputed one (constant time), message_data_length fits and leaves 12...1024 bytes of padding.
    /// - Returns: the whole plaintext, padding included.
    public func decrypt(_ message: consuming [UInt8], direction: MessageDirection) throws(CryptoError) -> DecryptedMessage {
        guard message.count >= Self.prefixLength + Self.headerLength else {
            throw .invalidLength(what: "encrypted message", expected: "at least 56 bytes", actual: message.count)
        }
        let length = message.count - Self.prefixLength
        let (frame, large) = try open(consume message, direction: direction)
        let decrypted = DecryptedMessage(frame: frame, messageKeyLarge: large)
        let declared = Int(UInt32(bitPattern: decrypted.readLE(Int32.self, at: 28)))
        let available = length - Self.headerLength
        guard declared <= available else { throw .messageLengthMismatch(declared: declared, available: available) }
        let padding = available - declared
        guard Self.paddingRange.contains(padding) else { throw .invalidPaddingLength(padding) }
        return decrypted
    }
}

/// A decrypted and checked MTProto 2.0 message. It keeps the frame it was decrypted in (auth_key_id and msg_key
/// ahead of the plaintext), so reading it copies nothing until a part is asked for as an array.
public struct DecryptedMessage: Sendable, Hashable {
    /// auth_key_id ‖ msg_key ‖ plaintext.
    private let frame: [UInt8]
    /// SHA-256(substr(auth_key, 88+x, 32) ‖ plaintext): msg_key is its middle, a quick-ack token its first 4 bytes.
    public let messageKeyLarge: [UInt8]

    init(frame: [UInt8], messageKeyLarge: [UInt8]) {
        self.frame = frame
        self.messageKeyLarge = messageKeyLarge
    }

    /// salt ‖ session_id ‖ msg_id ‖ seq_no ‖ message_data_length ‖ message_data ‖ padding (a copy).
    public var plaintext: [UInt8] { Array(frame[MTProto2Cipher.prefixLength...]) }
    /// msg_key, 16 bytes.
    public var messageKey: [UInt8] { Array(frame[8..<24]) }

    /// The server salt's 8 bytes.
    public var salt: [UInt8] { Array(frame[24..<32]) }
    /// session_id's 8 bytes.
    public var sessionID: [UInt8] { Array(frame[32..<40]) }
    /// The salt as the long it is.
    public var saltValue: Int64 { readLE(Int64.self, at: 0) }
    /// session_id as the long it is.
    public var sessionIDValue: Int64 { readLE(Int64.self, at: 8) }
    /// msg_id.
    public var messageID: Int64 { readLE(Int64.self, at: 16) }
    /// seq_no.
    public var seqNo: Int32 { readLE(Int32.self, at: 24) }
    /// message_data_length (checked by `decrypt` to fit).
    public var messageDataLength: Int { Int(UInt32(bitPattern: readLE(Int32.self, at: 28))) }
    /// message_data, without the header and padding (a copy).
    public var messageData: [UInt8] { Array(frame[messageDataRange]) }

    /// message_data from its `offset`th byte on, as a slice of the frame it was decrypted in: no byte is copied
    /// or moved (an answer carrying a 512 KiB file part). Its indices are the frame's, not zero-based.
    public consuming func takeMessageData(from offset: Int) -> ArraySlice<UInt8> {
        let range = messageDataRange
        return frame[min(range.lowerBound + max(0, offset), range.upperBound)..<range.upperBound]
    }

    /// Calls `body` with message_data, without copying it.
    public func withMessageData<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let range = messageDataRange
        let result: Result<R, E> = frame.withUnsafeBytes { bytes in
            Result { () throws(E) -> R in try body(UnsafeRawBufferPointer(rebasing: bytes[range])) }
        }
        return try result.get()
    }

    private var messageDataRange: Range<Int> {
        let start = MTProto2Cipher.prefixLength + MTProto2Cipher.headerLength
        return start..<(start + messageDataLength)
    }

    /// A little-endian value at `offset` in the plaintext.
    func readLE<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        frame.withUnsafeBytes {
            T(littleEndian: $0.loadUnaligned(fromByteOffset: MTProto2Cipher.prefixLength + offset, as: T.self))
        }
    }
}
