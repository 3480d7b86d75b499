// The four MTProto framings as sans-IO codecs: `encode` turns one payload into wire bytes, `decode(feed:)` takes
// whatever bytes arrived (any split) and returns every event now complete. Rules quoted from "MTProto
// transports" (core.telegram.org/mtproto/mtproto-transports).
import CZlib
import MTProtoCrypto

/// A framing codec for one direction pair of one connection. After it throws, discard it: the stream position
/// is lost.
public protocol FrameCodec: Sendable {
    /// The framing this codec speaks.
    var kind: TransportKind { get }
    /// Which end of the connection it serves.
    var role: TransportRole { get }

    /// Frames `payload`. `quickAck` (client only) asks the server for a quick acknowledgment.
    mutating func encode(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> [UInt8]

    /// Frames `payload` as pieces to be written back to back, the payload itself untouched between the codec's
    /// header and trailer: what `encode` returns joined. (A codec that does not override it returns `encode`'s
    /// bytes as one piece.)
    mutating func encodePieces(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> FramePieces

    /// Appends `bytes` to the stream and returns every event completed by them, in order.
    mutating func decode(feed bytes: [UInt8]) throws(TransportError) -> [TransportEvent]

    /// `decode(feed:)` from memory the caller owns (a socket buffer), read only during the call: a codec that
    /// overrides it copies each frame out once instead of the caller first copying the whole read.
    mutating func decode(feedBytes bytes: UnsafeRawBufferPointer) throws(TransportError) -> [TransportEvent]

    /// Call at end of stream: throws `.truncated` if part of a frame is still buffered.
    func finish() throws(TransportError)

    /// Server only: the 4-byte quick-ack reply for `token` (its most significant bit is set on the wire).
    func encodeQuickAck(_ token: UInt32) throws(TransportError) -> [UInt8]

    /// Server only: a transport error packet, e.g. −404.
    mutating func encodeTransportError(_ code: Int32) throws(TransportError) -> [UInt8]
}

extension FrameCodec {
    public mutating func decode(feedBytes bytes: UnsafeRawBufferPointer) throws(TransportError) -> [TransportEvent] {
        try decode(feed: [UInt8](bytes))
    }

    public mutating func encodePieces(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> FramePieces {
        FramePieces(head: try encode(payload, quickAck: quickAck))
    }
}

/// One framed payload as it goes on the wire: `head ‖ payload ‖ tail`. Kept in pieces so that a large payload (a
/// 512 KiB file part) is not copied into a new array to put 4 bytes in front of it; the writer copies the pieces
/// into its socket buffers once.
public struct FramePieces: Sendable, Hashable {
    /// The framing's bytes before the payload (length, tag).
    public var head: [UInt8]
    /// The payload, as handed to the codec.
    public var payload: [UInt8]
    /// The framing's bytes after the payload (padding, CRC32).
    public var tail: [UInt8]

    /// A frame from its pieces.
    public init(head: [UInt8], payload: [UInt8] = [], tail: [UInt8] = []) {
        self.head = head
        self.payload = payload
        self.tail = tail
    }

    /// Bytes in all three pieces.
    public var count: Int { head.count + payload.count + tail.count }

    /// The three pieces in one array.
    public var joined: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        out += head
        out += payload
        out += tail
        return out
    }

    /// The non-empty pieces, in order.
    public var nonEmpty: [[UInt8]] { [head, payload, tail].filter { !$0.isEmpty } }
}

/// Payload size limits shared by the codecs.
public enum FrameLimits {
    /// The smallest payload: a 4-byte error code.
    public static let minimumPayload = 4
    /// The largest payload Telegram sends or accepts, and the default bound of every framing in both roles (and of
    /// an HTTP transport body). Its largest message is a whole 1 MiB `upload.getFile` part ("limit" up to 1,048,576;
    /// an upload part is at most 512 KiB, core.telegram.org/api/files). Around the part: `upload.file`'s 16 bytes
    /// before the data, `rpc_result`'s 12, auth_key_id and msg_key (24), the encrypted header (32) and at most 1024
    /// bytes of padding (core.telegram.org/mtproto/description): 1,049,684 bytes. Rounded up to 1 MiB + 4 KiB, which
    /// leaves room for a container carrying the part with a few acks; a hostile length reserves no more.
    public static let defaultMaximumPayload = (1 << 20) + 4096
}

/// Creates the codec for `kind`.
public func makeFrameCodec(
    kind: TransportKind, role: TransportRole, maximumPayload: Int = FrameLimits.defaultMaximumPayload,
    random: any RandomSource = SystemRandom(), padding: PaddingPolicy = .mtproto, maximumPadding: Int = 15
) -> any FrameCodec {
    switch kind {
    case .abridged: AbridgedCodec(role: role, maximumPayload: maximumPayload)
    case .intermediate: IntermediateCodec(role: role, maximumPayload: maximumPayload)
    case .paddedIntermediate:
        PaddedIntermediateCodec(role: role, maximumPayload: maximumPayload, random: random, padding: padding,
                                maximumPadding: maximumPadding)
    case .full: FullCodec(role: role, maximumPayload: maximumPayload)
    }
}

/// A 4-byte payload holding a negative int32 is a transport error ("Transport errors": "the server may send a
/// 4-byte packet with a negative error code, e.g. -404").
func transportEvent(payload: [UInt8], quickAckRequested: Bool, role: TransportRole) -> TransportEvent {
    if role == .client, payload.count == 4, let raw = payload.uint32LE(at: 0), Int32(bitPattern: raw) < 0 {
        return .transportError(code: Int32(bitPattern: raw))
    }
    return .frame(payload, quickAckRequested: quickAckRequested)
}

func checkPayloadLength(_ count: Int, kind: TransportKind, maximum: Int) throws(TransportError) {
    guard count >= FrameLimits.minimumPayload, count <= maximum else {
        throw .lengthOutOfRange(kind: kind, length: Int64(count), minimum: FrameLimits.minimumPayload,
                                maximum: maximum, offset: -1)
    }
}

func requireRole(_ role: TransportRole, _ expected: TransportRole, _ what: String) throws(TransportError) {
    guard role == expected else { throw .wrongRole("\(what) is sent by the \(expected) only") }
}

// MARK: - Abridged

/// Abridged: "payload length, divided by four, encoded as a single byte (0x01..0x7e)", or "a single byte of value
/// 0x7f, then the length divided by four in 3 bytes, little endian". A client asks for a quick ack by setting the
/// length byte's top bit (`0x80 | n`, or `0xff` before a 3-byte length); "the server will send quick ACK tokens by
/// bswapping them", so its reply's first byte has the top bit set.
public struct AbridgedCodec: FrameCodec {
    /// Which end of the connection it serves.
    public let role: TransportRole
    /// Always ``TransportKind/abridged``.
    public var kind: TransportKind { .abridged }
    private let maximumPayload: Int
    private var buffer = ByteQueue()
    private var offset = 0

    /// A codec for `role` that refuses frames declaring more than `maximumPayload` bytes.
    public init(role: TransportRole, maximumPayload: Int = FrameLimits.defaultMaximumPayload) {
        self.role = role
        self.maximumPayload = min(maximumPayload, 0xff_ffff * 4)
    }

    public mutating func encode(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> [UInt8] {
        try encodePieces(payload, quickAck: quickAck).joined
    }

    public mutating func encodePieces(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> FramePieces {
        if quickAck { try requireRole(role, .client, "a quick-ack request") }
        guard payload.count % 4 == 0 else { throw .unalignedPayload(kind: .abridged, length: payload.count) }
        try checkPayloadLength(payload.count, kind: .abridged, maximum: maximumPayload)
        let words = payload.count / 4
        let flag: UInt8 = quickAck ? 0x80 : 0
        let head: [UInt8] = words < 0x7f
            ? [UInt8(words) | flag]
            : [0x7f | flag, UInt8(truncatingIfNeeded: words), UInt8(truncatingIfNeeded: words >> 8),
               UInt8(truncatingIfNeeded: words >> 16)]
        return FramePieces(head: head, payload: payload)
    }

    public mutating func decode(feed bytes: [UInt8]) throws(TransportError) -> [TransportEvent] {
        buffer.append(bytes)
        var events: [TransportEvent] = []
        while let first = buffer.byte(at: 0) {
            if role == .client, first & 0x80 != 0 {
                // A quick-ack token, big-endian on the wire.
                guard let token = buffer.read(4) else { break }
                events.append(.quickAck(token.reduce(0) { $0 << 8 | UInt32($1) }))
                offset += 4
                continue
            }
            let quickAck = role == .server && first & 0x80 != 0
            let short = first & 0x7f
            let headerLength: Int
            let words: Int
            if short == 0x7f {
                guard let word = buffer.uint32LE(at: 0) else { break }
                words = Int(word >> 8)
                headerLength = 4
            } else {
                words = Int(short)
                headerLength = 1
            }
            let length = words * 4
            guard length >= FrameLimits.minimumPayload, length <= maximumPayload else {
                throw .lengthOutOfRange(kind: .abridged, length: Int64(length), minimum: FrameLimits.minimumPayload,
                                        maximum: maximumPayload, offset: offset)
            }
            guard buffer.count >= headerLength + length else { break }
            buffer.skip(headerLength)
            guard let payload = buffer.read(length) else { break }
            offset += headerLength + length
            events.append(transportEvent(payload: payload, quickAckRequested: quickAck, role: role))
        }
        return events
    }

    public func finish() throws(TransportError) {
        if !buffer.isEmpty { throw .truncated(context: "abridged frame", buffered: buffer.count) }
    }

    public func encodeQuickAck(_ token: UInt32) throws(TransportError) -> [UInt8] {
        try requireRole(role, .server, "a quick-ack reply")
        let value = token | 0x8000_0000
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) }
    }

    public mutating func encodeTransportError(_ code: Int32) throws(TransportError) -> [UInt8] {
        try requireRole(role, .server, "a transport error code")
        var out: [UInt8] = [1]
        out.appendUInt32LE(UInt32(bitPattern: code))
        return out
    }
}

// MARK: - Intermediate

/// Intermediate: "payload length encoded as 4 length bytes (little endian)", then the payload. Quick ack: the
/// client sets the length's most significant bit; the server answers with the 4-byte token, top bit set, in
/// place of a length.
public struct IntermediateCodec: FrameCodec {
    /// Which end of the connection it serves.
    public let role: TransportRole
    /// Always ``TransportKind/intermediate``.
    public var kind: TransportKind { .intermediate }
    private var reader: LengthPrefixedReader

    /// A codec for `role` that refuses frames declaring more than `maximumPayload` bytes.
    public init(role: TransportRole, maximumPayload: Int = FrameLimits.defaultMaximumPayload) {
        self.role = role
        reader = LengthPrefixedReader(kind: .intermediate, role: role, maximumPayload: maximumPayload)
    }

    public mutating func encode(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> [UInt8] {
        try encodePieces(payload, quickAck: quickAck).joined
    }

    public mutating func encodePieces(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> FramePieces {
        if quickAck { try requireRole(role, .client, "a quick-ack request") }
        try checkPayloadLength(payload.count, kind: .intermediate, maximum: reader.maximumPayload)
        var head: [UInt8] = []
        head.appendUInt32LE(UInt32(payload.count) | (quickAck ? 0x8000_0000 : 0))
        return FramePieces(head: head, payload: payload)
    }

    public mutating func decode(feed bytes: [UInt8]) throws(TransportError) -> [TransportEvent] {
        try reader.decode(feed: bytes) { payload, _ in payload }
    }

    public mutating func decode(feedBytes bytes: UnsafeRawBufferPointer) throws(TransportError) -> [TransportEvent] {
        try reader.decode(feed: bytes) { payload, _ in payload }
    }

    public func finish() throws(TransportError) { try reader.finish() }

    public func encodeQuickAck(_ token: UInt32) throws(TransportError) -> [UInt8] {
        try IntermediateServerWords.quickAck(token, role: role)
    }

    public mutating func encodeTransportError(_ code: Int32) throws(TransportError) -> [UInt8] {
        try IntermediateServerWords.transportError(code, role: role)
    }
}

// MARK: - Padded intermediate

/// How a padded-intermediate reader finds where the payload ends.
public enum PaddingPolicy: Sendable, Hashable {
    /// Strip the 0–15 padding bytes using the shape of an MTProto payload (see
    /// `PaddedIntermediateCodec.stripPadding`). The default.
    case mtproto
    /// Hand over payload and padding together, for payloads that are not MTProto messages.
    case keep
}

/// Padded intermediate: like intermediate, but "the total length includes padding": the payload is followed by
/// 0–15 random bytes ("to use with obfuscation enabled to bypass ISP blocks").
public struct PaddedIntermediateCodec: FrameCodec {
    /// Which end of the connection it serves.
    public let role: TransportRole
    /// Always ``TransportKind/paddedIntermediate``.
    public var kind: TransportKind { .paddedIntermediate }
    private var reader: LengthPrefixedReader
    private let random: any RandomSource
    private let padding: PaddingPolicy
    private let maximumPadding: Int

    /// - Parameters:
    ///   - role: which end this codec serves.
    ///   - maximumPayload: the largest frame `decode` accepts.
    ///   - random: the source of the padding bytes.
    ///   - padding: how much padding `encode` adds.
    ///   - maximumPadding: the most padding `encode` adds (clamped to 0–15). Some peers strip only
    ///     `length % 4` bytes (Telethon 1.x), so a server talking to them pads at most 3.
    public init(
        role: TransportRole, maximumPayload: Int = FrameLimits.defaultMaximumPayload,
        random: any RandomSource = SystemRandom(), padding: PaddingPolicy = .mtproto, maximumPadding: Int = 15
    ) {
        self.role = role
        self.random = random
        self.padding = padding
        self.maximumPadding = min(max(maximumPadding, 0), 15)
        reader = LengthPrefixedReader(kind: .paddedIntermediate, role: role, maximumPayload: maximumPayload + 15)
    }

    /// Draws the padding with one call for 16 random bytes: the first modulo `maximumPadding + 1` gives the count
    /// (its low 4 bits by default), the padding is the next `count` bytes. (One call, because the system generator
    /// costs more than the framing.)
    public mutating func encode(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> [UInt8] {
        try encodePieces(payload, quickAck: quickAck).joined
    }

    public mutating func encodePieces(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> FramePieces {
        let draw = random.bytes(16)
        let count = Int(draw[0]) % (maximumPadding + 1)
        return try encodePieces(payload, padding: Array(draw[1..<(1 + count)]), quickAck: quickAck)
    }

    /// Frames `payload` followed by the given padding (0–15 bytes).
    public func encode(_ payload: [UInt8], padding: [UInt8], quickAck: Bool = false) throws(TransportError)
        -> [UInt8]
    {
        try encodePieces(payload, padding: padding, quickAck: quickAck).joined
    }

    /// `encode(_:padding:quickAck:)` in pieces: the padding is the tail.
    public func encodePieces(_ payload: [UInt8], padding: [UInt8], quickAck: Bool = false) throws(TransportError)
        -> FramePieces
    {
        if quickAck { try requireRole(role, .client, "a quick-ack request") }
        try checkPayloadLength(payload.count, kind: .paddedIntermediate, maximum: reader.maximumPayload - 15)
        guard padding.count <= 15 else { throw .invalidPadding(length: padding.count, offset: -1) }
        var head: [UInt8] = []
        head.appendUInt32LE(UInt32(payload.count + padding.count) | (quickAck ? 0x8000_0000 : 0))
        return FramePieces(head: head, payload: payload, tail: padding)
    }

    public mutating func decode(feed bytes: [UInt8]) throws(TransportError) -> [TransportEvent] {
        try reader.decode(feed: bytes, transform: unpad)
    }

    public mutating func decode(feedBytes bytes: UnsafeRawBufferPointer) throws(TransportError) -> [TransportEvent] {
        try reader.decode(feed: bytes, transform: unpad)
    }

    /// What the reader does to each frame: strip its padding under `.mtproto`.
    private var unpad: ([UInt8], Int) throws(TransportError) -> [UInt8] {
        let policy = padding
        return { (payload, offset) throws(TransportError) in
            guard policy == .mtproto else { return payload }
            guard let padding = Self.paddingLength(payload) else {
                throw .invalidPadding(length: payload.count, offset: offset)
            }
            var stripped = payload
            stripped.removeLast(padding)
            return stripped
        }
    }

    public func finish() throws(TransportError) { try reader.finish() }

    public func encodeQuickAck(_ token: UInt32) throws(TransportError) -> [UInt8] {
        try IntermediateServerWords.quickAck(token, role: role)
    }

    /// Error codes go unpadded: 4 bytes are always a valid padded-intermediate payload.
    public mutating func encodeTransportError(_ code: Int32) throws(TransportError) -> [UInt8] {
        try IntermediateServerWords.transportError(code, role: role)
    }

    /// Removes the 0–15 padding bytes from `data` (see `paddingLength`); nil when that finds none.
    public static func stripPadding(_ data: [UInt8]) -> [UInt8]? {
        guard let padding = paddingLength(data) else { return nil }
        return Array(data.dropLast(padding))
    }

    /// How many of the trailing bytes of `data` are padding, using what every MTProto payload looks like:
    /// - unencrypted (auth_key_id 0): 8 + 8 + 4 header bytes then `message_data_length` bytes;
    /// - encrypted: auth_key_id (8) ‖ msg_key (16) ‖ data in 16-byte blocks, so the length is 24 + 16k;
    /// - anything shorter: a 4-byte error code.
    /// Returns nil when no reading leaves 0–15 padding bytes.
    public static func paddingLength(_ data: [UInt8]) -> Int? {
        let length = data.count
        if length >= 8, data[0..<8].allSatisfy({ $0 == 0 }) {
            guard let declared = data.uint32LE(at: 16) else { return nil }
            let end = 20 + Int(declared)
            guard end <= length, length - end <= 15 else { return nil }
            return length - end
        }
        if length >= 24 { return (length - 24) % 16 }
        guard length >= 4, length - 4 <= 15 else { return nil }
        return length - 4
    }
}

/// The shared reader of intermediate and padded intermediate: a 4-byte little-endian length, top bit meaning
/// quick ack (request from a client, reply from a server).
struct LengthPrefixedReader: Sendable {
    let kind: TransportKind
    let role: TransportRole
    let maximumPayload: Int
    private var buffer = ByteQueue()
    private var offset = 0
    /// The frame whose header was read and whose payload has not all arrived.
    private var pending: (length: Int, quickAck: Bool)?

    init(kind: TransportKind, role: TransportRole, maximumPayload: Int) {
        self.kind = kind
        self.role = role
        self.maximumPayload = min(maximumPayload, Int(Int32.max))
    }

    /// Frames wholly inside `bytes` are copied straight out of it; only a header or frame split across reads goes
    /// through the queue, which takes just the bytes that frame still needs. (Appending whole reads to the queue
    /// copied a 512 KiB file part up to three times: into the queue, out of it, and again when the queue grew or
    /// compacted around the next part.)
    mutating func decode(
        feed bytes: [UInt8], transform: ([UInt8], Int) throws(TransportError) -> [UInt8]
    ) throws(TransportError) -> [TransportEvent] {
        // `withUnsafeBytes` rethrows untyped errors; the result carries the typed one out.
        var result: Result<[TransportEvent], TransportError> = .success([])
        bytes.withUnsafeBytes { raw in
            result = Result { () throws(TransportError) in try decode(feed: raw, transform: transform) }
        }
        return try result.get()
    }

    mutating func decode(
        feed bytes: UnsafeRawBufferPointer, transform: ([UInt8], Int) throws(TransportError) -> [UInt8]
    ) throws(TransportError) -> [TransportEvent] {
        var events: [TransportEvent] = []
        var rest = bytes
        func take(_ count: Int) -> UnsafeRawBufferPointer {
            defer { rest = UnsafeRawBufferPointer(rebasing: rest[count...]) }
            return UnsafeRawBufferPointer(rebasing: rest[..<count])
        }
        while true {
            let frame: (length: Int, quickAck: Bool)
            if let pending {
                frame = pending
            } else {
                let header: UInt32
                if buffer.isEmpty, rest.count >= 4 {
                    header = UInt32(littleEndian: take(4).loadUnaligned(as: UInt32.self))
                } else {
                    // A header split across reads: complete it in the queue.
                    buffer.append(take(min(4 - buffer.count, rest.count)))
                    guard let word = buffer.uint32LE(at: 0) else { break }
                    header = word
                    buffer.skip(4)
                }
                let topBit = header & 0x8000_0000 != 0
                if role == .client, topBit {
                    offset += 4
                    events.append(.quickAck(header))
                    continue
                }
                let length = Int(header & 0x7fff_ffff)
                guard length >= FrameLimits.minimumPayload, length <= maximumPayload else {
                    throw .lengthOutOfRange(kind: kind, length: Int64(length), minimum: FrameLimits.minimumPayload,
                                            maximum: maximumPayload, offset: offset)
                }
                frame = (length, topBit)
                pending = frame
            }
            let raw: [UInt8]
            if buffer.isEmpty, rest.count >= frame.length {
                raw = [UInt8](take(frame.length))
            } else {
                // The payload continues in later reads: a large one gets room to arrive in, takes only its own
                // bytes, and is handed out whole (the queue then holds nothing else).
                buffer.expect(frame.length)
                buffer.append(take(min(frame.length - buffer.count, rest.count)))
                guard let whole = buffer.read(frame.length) else { break }
                raw = whole
            }
            pending = nil
            let payload = try transform(raw, offset)
            offset += 4 + frame.length
            events.append(transportEvent(payload: payload, quickAckRequested: frame.quickAck, role: role))
        }
        return events
    }

    func finish() throws(TransportError) {
        if pending != nil || !buffer.isEmpty {
            throw .truncated(context: "\(kind) frame", buffered: buffer.count + (pending == nil ? 0 : 4))
        }
    }
}

// MARK: - Full

/// Full: "length (4 bytes, little endian, of the whole packet: length, seqno, payload and crc), seqno (4 bytes,
/// starting at 0 for each direction), payload, crc (4 bytes, CRC32 of length, seqno and payload)". There is no
/// tag and no quick ack. A wrong sequence number or CRC ends the connection.
public struct FullCodec: FrameCodec {
    /// Which end of the connection it serves.
    public let role: TransportRole
    /// Always ``TransportKind/full``.
    public var kind: TransportKind { .full }
    private let maximumPayload: Int
    private var buffer = ByteQueue()
    private var offset = 0
    private var sendSequence: Int32 = 0
    private var receiveSequence: Int32 = 0

    /// `sendSequence` and `receiveSequence` start at 0 on a new connection; other values are for replaying
    /// recorded streams.
    public init(
        role: TransportRole, maximumPayload: Int = FrameLimits.defaultMaximumPayload, sendSequence: Int32 = 0,
        receiveSequence: Int32 = 0
    ) {
        self.role = role
        self.maximumPayload = min(maximumPayload, Int(Int32.max) - 12)
        self.sendSequence = sendSequence
        self.receiveSequence = receiveSequence
    }

    /// The sequence number the next encoded frame will carry.
    public var nextSendSequence: Int32 { sendSequence }

    public mutating func encode(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> [UInt8] {
        try encodePieces(payload, quickAck: quickAck).joined
    }

    /// Length and sequence number, the payload, then the CRC32 of all that before it.
    public mutating func encodePieces(_ payload: [UInt8], quickAck: Bool) throws(TransportError) -> FramePieces {
        if quickAck { throw .quickAckUnsupported(.full) }
        try checkPayloadLength(payload.count, kind: .full, maximum: maximumPayload)
        var head: [UInt8] = []
        head.appendUInt32LE(UInt32(payload.count + 12))
        head.appendUInt32LE(UInt32(bitPattern: sendSequence))
        let crc = payload.withUnsafeBytes { body in
            head.withUnsafeBytes { CRC32.update(CRC32.update(0, $0), body) }
        }
        var tail: [UInt8] = []
        tail.appendUInt32LE(crc)
        sendSequence &+= 1
        return FramePieces(head: head, payload: payload, tail: tail)
    }

    public mutating func decode(feed bytes: [UInt8]) throws(TransportError) -> [TransportEvent] {
        buffer.append(bytes)
        var events: [TransportEvent] = []
        while let rawLength = buffer.uint32LE(at: 0) {
            let declared = Int32(bitPattern: rawLength)
            guard declared >= Int32(12 + FrameLimits.minimumPayload), Int(declared) - 12 <= maximumPayload else {
                throw .lengthOutOfRange(kind: .full, length: Int64(declared), minimum: 12 + FrameLimits.minimumPayload,
                                        maximum: maximumPayload + 12, offset: offset)
            }
            let length = Int(declared)
            guard buffer.count >= length, let packet = buffer.read(length) else { break }
            let body = length - 4
            let received = packet.uint32LE(at: body) ?? 0
            let expected = packet.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<body])) }
            guard received == expected else {
                throw .checksumMismatch(expected: expected, received: received, offset: offset)
            }
            let sequence = Int32(bitPattern: packet.uint32LE(at: 4) ?? 0)
            guard sequence == receiveSequence else {
                throw .sequenceMismatch(expected: receiveSequence, received: sequence, offset: offset)
            }
            receiveSequence &+= 1
            offset += length
            events.append(transportEvent(payload: Array(packet[8..<body]), quickAckRequested: false, role: role))
        }
        return events
    }

    public func finish() throws(TransportError) {
        if !buffer.isEmpty { throw .truncated(context: "full frame", buffered: buffer.count) }
    }

    public func encodeQuickAck(_ token: UInt32) throws(TransportError) -> [UInt8] {
        throw .quickAckUnsupported(.full)
    }

    public mutating func encodeTransportError(_ code: Int32) throws(TransportError) -> [UInt8] {
        try requireRole(role, .server, "a transport error code")
        var payload: [UInt8] = []
        payload.appendUInt32LE(UInt32(bitPattern: code))
        return try encodePieces(payload, quickAck: false).joined
    }
}

// MARK: - CRC32

/// IEEE CRC32 through zlib.
public enum CRC32 {
    /// The CRC32 of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// The CRC32 of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// The checksum of what `crc` was the checksum of, followed by `bytes` (0 for nothing yet).
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        var crc = uLong(crc)
        var offset = 0
        while offset < bytes.count {
            // zlib takes a 32-bit length.
            let chunk = min(bytes.count - offset, 1 << 30)
            crc = crc32(crc, base.advanced(by: offset).assumingMemoryBound(to: Bytef.self), uInt(chunk))
            offset += chunk
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}

/// The 4-byte words a server sends outside frames in both intermediate framings (quick-ack replies, and error
/// codes as a 4-byte payload, which is also a valid padded-intermediate frame).
enum IntermediateServerWords {
    static func quickAck(_ token: UInt32, role: TransportRole) throws(TransportError) -> [UInt8] {
        try requireRole(role, .server, "a quick-ack reply")
        var out: [UInt8] = []
        out.appendUInt32LE(token | 0x8000_0000)
        return out
    }

    static func transportError(_ code: Int32, role: TransportRole) throws(TransportError) -> [UInt8] {
        try requireRole(role, .server, "a transport error code")
        var out: [UInt8] = [4, 0, 0, 0]
        out.appendUInt32LE(UInt32(bitPattern: code))
        return out
    }
}
