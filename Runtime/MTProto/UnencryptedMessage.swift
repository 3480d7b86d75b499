// Unencrypted messages carry the key exchange (core.telegram.org/mtproto/description#unencrypted-message):
// auth_key_id = 0 (int64), message_id (int64), message_data_length (int32), message_data.
import TLRuntime

/// What is wrong with a frame that should be an unencrypted message.
public enum UnencryptedMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer than the 20 header bytes.
    case tooShort(Int)
    /// auth_key_id is not 0: the frame is an encrypted message (or garbage).
    case nonZeroAuthKeyID(UInt64)
    /// message_data_length disagrees with the bytes that follow the header.
    case lengthMismatch(declared: Int32, available: Int)

    /// A one-line account of what is wrong.
    public var description: String {
        switch self {
            case .tooShort(let n): "unencrypted message of \(n) bytes is shorter than its 20-byte header"
            case .nonZeroAuthKeyID(let id): "unencrypted message has auth_key_id \(id), expected 0"
            case let .lengthMismatch(declared, available):
                "unencrypted message declares \(declared) bytes of data but carries \(available)"
        }
    }
}

/// An unencrypted message: a msg_id and a TL body.
public struct UnencryptedMessage: Sendable, Hashable {
    /// The message's msg_id.
    public let messageID: Int64
    /// The TL body (`message_data`).
    public let body: [UInt8]

    /// A message with `messageID` and `body`.
    public init(messageID: Int64, body: [UInt8]) {
        self.messageID = messageID
        self.body = body
    }

    /// The message as sent: 8 zero bytes, msg_id, length, body.
    public var bytes: [UInt8] {
        let buffer = Buffer(capacity: 20 + body.count)
        buffer.appendInt64(0)
        buffer.appendInt64(messageID)
        buffer.appendInt32(Int32(truncatingIfNeeded: body.count))
        buffer.appendRaw(body)
        return buffer.bytes
    }

    /// Parses a whole frame; the declared length must match the bytes present exactly.
    public init(parsing frame: [UInt8]) throws(UnencryptedMessageError) {
        guard frame.count >= 20 else { throw .tooShort(frame.count) }
        var reader = BufferReader(bytes: frame)
        // The reads below cannot fail: 20 bytes are present.
        let keyID = UInt64(bitPattern: (try? reader.readInt64()) ?? 0)
        guard keyID == 0 else { throw .nonZeroAuthKeyID(keyID) }
        messageID = (try? reader.readInt64()) ?? 0
        let length = (try? reader.readInt32()) ?? 0
        guard length >= 0, Int(length) == frame.count - 20 else {
            throw .lengthMismatch(declared: length, available: frame.count - 20)
        }
        body = Array(frame[20...])
    }
}
