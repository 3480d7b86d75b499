// The vocabulary shared by every layer of the transport: which framing is in use, which side we are, what a
// decoder hands back, and the one error type all of them throw.

/// The four MTProto framings ("MTProto transports", core.telegram.org/mtproto/mtproto-transports).
public enum TransportKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `0xef`, then a 1-byte (or `0x7f` + 3-byte) length in 4-byte words.
    case abridged
    /// `0xeeeeeeee`, then a 4-byte little-endian length.
    case intermediate
    /// `0xdddddddd`, then a 4-byte length covering the payload and 0–15 random padding bytes.
    case paddedIntermediate
    /// No tag; length, sequence number, payload, CRC32.
    case full

    /// The case's name (`abridged`).
    public var description: String { rawValue }

    /// The 4-byte protocol tag carried inside an obfuscated2 header ("Transport obfuscation"). `nil` for full,
    /// which the spec does not allow under obfuscation.
    public var obfuscatedTag: [UInt8]? {
        switch self {
        case .abridged: [0xef, 0xef, 0xef, 0xef]
        case .intermediate: [0xee, 0xee, 0xee, 0xee]
        case .paddedIntermediate: [0xdd, 0xdd, 0xdd, 0xdd]
        case .full: nil
        }
    }

    /// The bytes a client sends before its first frame on an unobfuscated connection.
    public var plainTag: [UInt8] {
        switch self {
        case .abridged: [0xef]
        case .intermediate: [0xee, 0xee, 0xee, 0xee]
        case .paddedIntermediate: [0xdd, 0xdd, 0xdd, 0xdd]
        case .full: []
        }
    }

    /// The kind whose obfuscated tag is `tag`, if any.
    public init?(obfuscatedTag tag: [UInt8]) {
        guard let kind = TransportKind.allCases.first(where: { $0.obfuscatedTag == tag }) else { return nil }
        self = kind
    }
}

/// Which end of the connection a codec serves. The two directions differ: only a server sends quick-ack
/// replies and error codes, only a client asks for quick acks.
public enum TransportRole: Sendable, Hashable {
    /// The end that connects and sends the protocol tag.
    case client
    /// The end that accepts and learns the protocol from the first bytes.
    case server
}

/// What a decoder produces from the incoming byte stream.
public enum TransportEvent: Sendable, Hashable {
    /// One MTProto payload. `quickAckRequested` is set on the server side when the client set the length's
    /// most significant bit ("Quick ack").
    case frame([UInt8], quickAckRequested: Bool)
    /// A quick-ack token from the server, as sent (its most significant bit is set).
    case quickAck(UInt32)
    /// A 4-byte packet holding a negative error code, e.g. −404 (auth key not found) or −429 (flood).
    case transportError(code: Int32)

    /// A frame with no quick-ack request.
    public static func frame(_ payload: [UInt8]) -> TransportEvent { .frame(payload, quickAckRequested: false) }
}

/// Why the transport refused a byte stream or an outgoing payload. Decoding errors carry `offset`, the position
/// in the decoded stream (after obfuscation and TLS are removed) where the offending frame starts.
public enum TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A frame header declared a payload length outside `minimum...maximum` (a negative full-transport length is
    /// reported as is).
    case lengthOutOfRange(kind: TransportKind, length: Int64, minimum: Int, maximum: Int, offset: Int)
    /// An outgoing payload the framing cannot carry (abridged counts in 4-byte words).
    case unalignedPayload(kind: TransportKind, length: Int)
    /// Full transport: the CRC32 trailer does not match the frame.
    case checksumMismatch(expected: UInt32, received: UInt32, offset: Int)
    /// Full transport: the frame's sequence number is not the next one.
    case sequenceMismatch(expected: Int32, received: Int32, offset: Int)
    /// Padded intermediate: the padding is not 0–15 bytes after an MTProto-shaped payload.
    case invalidPadding(length: Int, offset: Int)
    /// The stream ended inside a header or frame (`context` names it); `buffered` bytes were left.
    case truncated(context: String, buffered: Int)
    /// Quick ack was asked of a framing that has none (full).
    case quickAckUnsupported(TransportKind)
    /// A server-only message (quick-ack reply, error code) sent by a client, or the reverse.
    case wrongRole(String)
    /// The server could not recognise the protocol from the first bytes.
    case unknownProtocol(firstBytes: [UInt8])
    /// An obfuscated2 header that decrypts to no known protocol tag, or a configuration that cannot be obfuscated.
    case obfuscation(String)
    /// An MTProxy secret that could not be parsed (the message says why).
    case invalidSecret(String)
    /// A fake-TLS handshake or record problem (the message says what and where).
    case fakeTLS(String)
    /// A cryptographic primitive refused its input (should not happen with valid key lengths).
    case crypto(String)
    /// The transport cannot do this yet or any more (e.g. send before the protocol is known, or after a failure).
    case notEstablished(String)
    /// A configuration that cannot work (e.g. full framing under obfuscation).
    case invalidConfiguration(String)
    /// The HTTP transport refused a message (see `HTTPTransportError`).
    case http(HTTPTransportError)

    /// What went wrong and where in the stream, in one line.
    public var description: String {
        switch self {
        case let .lengthOutOfRange(kind, length, minimum, maximum, offset):
            "\(kind) frame at stream offset \(offset) declares length \(length), outside \(minimum)...\(maximum)"
        case let .unalignedPayload(kind, length):
            "\(kind) cannot carry a \(length)-byte payload: length must be a multiple of 4"
        case let .checksumMismatch(expected, received, offset):
            "full frame at stream offset \(offset): CRC32 is \(hex32(received)), expected \(hex32(expected))"
        case let .sequenceMismatch(expected, received, offset):
            "full frame at stream offset \(offset): sequence number \(received), expected \(expected)"
        case let .invalidPadding(length, offset):
            "padded intermediate frame at stream offset \(offset) (\(length) bytes): padding is not 0-15 bytes"
        case let .truncated(context, buffered):
            "stream ended inside \(context) (\(buffered) bytes buffered)"
        case let .quickAckUnsupported(kind): "the \(kind) transport has no quick ack"
        case let .wrongRole(message): message
        case let .unknownProtocol(firstBytes):
            "unrecognised protocol; first bytes \(firstBytes.map { hexByte($0) }.joined())"
        case let .obfuscation(message): "obfuscated2: \(message)"
        case let .invalidSecret(message): "invalid MTProxy secret: \(message)"
        case let .fakeTLS(message): "fake-TLS: \(message)"
        case let .crypto(message): "crypto: \(message)"
        case let .notEstablished(message): "transport not established: \(message)"
        case let .invalidConfiguration(message): "invalid transport configuration: \(message)"
        case let .http(error): "HTTP transport: \(error)"
        }
    }
}

func hexByte(_ byte: UInt8) -> String {
    let digits: [Character] = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
}

func hex32(_ value: UInt32) -> String {
    "0x" + [24, 16, 8, 0].map { hexByte(UInt8(truncatingIfNeeded: value >> UInt32($0))) }.joined()
}
