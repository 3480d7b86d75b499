// The layers composed for one connection: framing inside obfuscated2 inside TLS records, each optional. The
// client knows its configuration up front; the server learns it from the client's first bytes. Both are sans-IO:
// feed received bytes, get events and bytes to send back; hand over payloads, get bytes to send.
import MTProtoCrypto

/// How a client connects.
public struct TransportConfiguration: Sendable, Hashable {
    /// What wraps the framing.
    public enum Obfuscation: Sendable, Hashable {
        /// The plain tag, then frames.
        case none
        /// obfuscated2 with no secret (direct connections to Telegram).
        case obfuscated2
        /// obfuscated2 keyed with an MTProxy secret; fake-TLS on top for `ee` secrets.
        case mtproxy(MTProxySecret)
    }

    /// The framing (an MTProxy `dd` or `ee` secret overrides it: ``effectiveKind``).
    public var kind: TransportKind
    /// What wraps the framing.
    public var obfuscation: Obfuscation
    /// The DC id written into the obfuscated2 header (required through an MTProxy, which routes by it).
    public var dcId: Int16?
    /// The ClientHello layout for fake-TLS.
    public var fakeTLSTemplate: FakeTLSTemplate
    /// The largest frame accepted from the server.
    public var maximumPayload: Int
    /// How padded-intermediate frames are padded.
    public var padding: PaddingPolicy
    /// Set: the HTTP transport instead of a TCP framing (`kind` is then unused, and obfuscation must be `.none`).
    public var http: HTTPTransportOptions?

    /// A client configuration; everything but the framing has a default (no obfuscation, direct).
    public init(
        kind: TransportKind, obfuscation: Obfuscation = .none, dcId: Int16? = nil,
        fakeTLSTemplate: FakeTLSTemplate = .current, maximumPayload: Int = FrameLimits.defaultMaximumPayload,
        padding: PaddingPolicy = .mtproto, http: HTTPTransportOptions? = nil
    ) {
        self.http = http
        self.kind = kind
        self.obfuscation = obfuscation
        self.dcId = dcId
        self.fakeTLSTemplate = fakeTLSTemplate
        self.maximumPayload = maximumPayload
        self.padding = padding
    }

    /// The framing in use: `dd` and `ee` secrets force padded intermediate.
    public var effectiveKind: TransportKind {
        if case let .mtproxy(secret) = obfuscation, let required = secret.requiredKind { return required }
        return kind
    }
}

/// What one call to `receive` produced.
public struct TransportOutput: Sendable, Hashable {
    /// Decoded frames, quick acks and error codes, in stream order.
    public var events: [TransportEvent]
    /// Bytes to write to the peer now (handshake replies, or frames held until the handshake finished).
    public var outbound: [UInt8]

    /// An output from its parts.
    public init(events: [TransportEvent] = [], outbound: [UInt8] = []) {
        self.events = events
        self.outbound = outbound
    }
}

/// The established layers, shared by both roles.
struct TransportPipeline: Sendable {
    var codec: any FrameCodec
    var cipher: Obfuscated2Cipher?
    var writer: TLSRecordWriter?
    var reader: TLSRecordReader?

    /// Obfuscates and wraps already-framed bytes.
    func seal(_ frame: [UInt8], writer: inout TLSRecordWriter?) -> [UInt8] {
        var bytes = frame
        cipher?.encrypt(&bytes)
        guard var tls = writer else { return bytes }
        let wrapped = tls.wrap(bytes)
        writer = tls
        return wrapped
    }

    /// Obfuscates and wraps a frame in pieces. Unwrapped, the pieces stay apart (the payload is encrypted where it
    /// lies when obfuscated, else not touched); TLS records need them joined.
    func seal(_ frame: FramePieces, writer: inout TLSRecordWriter?) -> [[UInt8]] {
        guard writer == nil else { return [seal(frame.joined, writer: &writer)] }
        var pieces = frame.nonEmpty
        if let cipher {
            // The keystream runs on across calls, so the pieces in order encrypt as their concatenation would.
            for index in pieces.indices { cipher.encrypt(&pieces[index]) }
        }
        return pieces
    }

    mutating func open(_ wire: [UInt8]) throws(TransportError) -> [TransportEvent] {
        var bytes = wire
        if var tls = reader {
            bytes = try tls.feed(bytes)
            reader = tls
        }
        return try openUnwrapped(bytes)
    }

    /// `open` from memory the caller owns: read in place unless a layer must rewrite it (TLS records, the
    /// obfuscation cipher), which takes a copy as before.
    mutating func open(bytes: UnsafeRawBufferPointer) throws(TransportError) -> [TransportEvent] {
        guard reader == nil, cipher == nil else { return try open([UInt8](bytes)) }
        return try codec.decode(feedBytes: bytes)
    }

    /// Bytes already taken out of their TLS records.
    mutating func openUnwrapped(_ bytes: [UInt8]) throws(TransportError) -> [TransportEvent] {
        var bytes = bytes
        cipher?.decrypt(&bytes)
        return try codec.decode(feed: bytes)
    }

    func finish() throws(TransportError) {
        try reader?.finish()
        try codec.finish()
    }
}

// MARK: - Client

/// The client end of a connection: builds the opening bytes (tag, obfuscated2 header or ClientHello), frames
/// payloads, and decodes what the server sends. After any error it stays failed.
public struct ClientTransport: Sendable {
    /// What this transport was made with.
    public let configuration: TransportConfiguration
    private var pipeline: TransportPipeline
    private var opening: [UInt8]?
    /// Fake-TLS: obfuscated bytes held until the ServerHello is verified, and what that needs.
    private var held: [UInt8] = []
    private var handshake: (digest: [UInt8], key: [UInt8], buffer: ByteQueue)?
    private var failure: TransportError?
    /// Set for the HTTP transport, which replaces the framing and every layer around it.
    private var http: HTTPClientCodec?

    /// - Parameters:
    ///   - configuration: the framing and what wraps it.
    ///   - random: the source of the obfuscated2 header, padding and ClientHello.
    ///   - unixTime: the clock mixed into a fake-TLS ClientHello.
    ///   - echChoice: which of the four ECH payload lengths (144 + 32 × choice bytes) a fake-TLS ClientHello carries.
    ///   - helloRandomness: recorded ClientHello randomness to replay instead of drawing it (tests).
    public init(
        configuration: TransportConfiguration, random: any RandomSource = SystemRandom(), unixTime: Int32,
        echChoice: Int = 0, helloRandomness: ClientHelloRandomness? = nil
    ) throws(TransportError) {
        self.configuration = configuration
        let kind = configuration.effectiveKind
        let codec = makeFrameCodec(kind: kind, role: .client, maximumPayload: configuration.maximumPayload,
                                   random: random, padding: configuration.padding)
        pipeline = TransportPipeline(codec: codec)
        if let options = configuration.http {
            guard case .none = configuration.obfuscation else {
                throw .invalidConfiguration("the HTTP transport is not obfuscated")
            }
            http = HTTPClientCodec(options: options)
            opening = nil
            return
        }
        switch configuration.obfuscation {
        case .none:
            opening = kind.plainTag
        case .obfuscated2:
            let made = try Obfuscated2.clientHeader(kind: kind, dcId: configuration.dcId, secret: nil, random: random)
            pipeline.cipher = made.cipher
            opening = made.header
        case let .mtproxy(secret):
            guard let dcId = configuration.dcId else {
                throw .invalidConfiguration("an MTProxy connection needs the DC id to route to")
            }
            if case let .fakeTLS(domain) = secret.kind {
                let randomness: ClientHelloRandomness
                if let helloRandomness {
                    randomness = helloRandomness
                } else {
                    randomness = try ClientHelloRandomness.generate(
                        for: configuration.fakeTLSTemplate, echChoice: echChoice, random: random)
                }
                let hello = try FakeTLSClientHello(template: configuration.fakeTLSTemplate, domain: domain,
                                                   key: secret.key, unixTime: unixTime, randomness: randomness)
                let made = try Obfuscated2.clientHeader(kind: kind, dcId: dcId, secret: secret.key, random: random)
                pipeline.cipher = made.cipher
                pipeline.writer = TLSRecordWriter(maximumRecordPayload: TLSRecordWriter.clientRecordLimit,
                                                  sendChangeCipherSpec: true)
                pipeline.reader = TLSRecordReader()
                opening = hello.bytes
                held = made.header
                handshake = (hello.digest, secret.key, ByteQueue())
            } else {
                let made = try Obfuscated2.clientHeader(kind: kind, dcId: dcId, secret: secret.key, random: random)
                pipeline.cipher = made.cipher
                opening = made.header
            }
        }
    }

    /// HTTP requests sent whose responses have not arrived; nil for the TCP framings.
    public var httpRequestsInFlight: Int? { http?.inFlight }

    /// True until a fake-TLS ServerHello has been verified.
    public var isAwaitingServerHello: Bool { handshake != nil }

    /// The bytes that open the connection; empty after the first call. `send` includes them if not yet taken.
    public mutating func start() -> [UInt8] {
        defer { opening = nil }
        return opening ?? []
    }

    /// Frames, obfuscates and wraps one payload. During a fake-TLS handshake the bytes are held and come out of
    /// the `receive` that verifies the ServerHello.
    public mutating func send(_ payload: [UInt8], quickAck: Bool = false) throws(TransportError) -> [UInt8] {
        try sendPieces(payload, quickAck: quickAck).reduce(into: []) { $0 += $1 }
    }

    /// `send` as pieces to write back to back (the opening bytes first, once): a large payload is not copied to
    /// frame it (see `FramePieces`).
    public mutating func sendPieces(_ payload: [UInt8], quickAck: Bool = false) throws(TransportError) -> [[UInt8]] {
        if let failure { throw failure }
        // HTTP has no quick ack; the request's response is the acknowledgment.
        if var codec = http {
            defer { http = codec }
            return try codec.encode(payload)
        }
        let frame = try pipeline.codec.encodePieces(payload, quickAck: quickAck)
        let opening = start()
        var out = opening.isEmpty ? [] : [opening]
        if handshake != nil {
            var bytes = frame.joined
            pipeline.cipher?.encrypt(&bytes)
            held += bytes
        } else {
            out += pipeline.seal(frame, writer: &pipeline.writer)
        }
        return out
    }

    /// Feeds bytes from the server.
    public mutating func receive(_ bytes: [UInt8]) throws(TransportError) -> TransportOutput {
        if let failure { throw failure }
        do {
            if var codec = http {
                defer { http = codec }
                return TransportOutput(events: try codec.receive(bytes))
            }
            var output = TransportOutput()
            var data = bytes
            if var pending = handshake {
                pending.buffer.append(data)
                guard let length = try FakeTLSHandshake.serverHelloLength(pending.buffer),
                    let response = pending.buffer.read(length)
                else {
                    handshake = pending
                    return output
                }
                try FakeTLSHandshake.verifyServerHello(response, clientDigest: pending.digest, key: pending.key)
                handshake = nil
                data = pending.buffer.readAll()
                if var writer = pipeline.writer {
                    output.outbound = writer.wrap(held)
                    pipeline.writer = writer
                }
                held = []
            }
            output.events = try pipeline.open(data)
            return output
        } catch {
            failure = error
            throw error
        }
    }

    /// `receive` from memory the caller owns (a socket buffer), read only during the call: without obfuscation,
    /// each frame is copied out of it once rather than the whole read being copied first.
    public mutating func receive(bytes: UnsafeRawBufferPointer) throws(TransportError) -> TransportOutput {
        if let failure { throw failure }
        guard handshake == nil, http == nil else { return try receive([UInt8](bytes)) }
        do {
            return TransportOutput(events: try pipeline.open(bytes: bytes))
        } catch {
            failure = error
            throw error
        }
    }

    /// Call when the server closed the connection: throws if it ended inside a frame or the handshake.
    public func finish() throws(TransportError) {
        if let failure { throw failure }
        if let http { return try http.finish() }
        if let handshake { throw .truncated(context: "the fake-TLS ServerHello", buffered: handshake.buffer.count) }
        try pipeline.finish()
    }
}

// MARK: - Server

/// What a server accepts.
public struct ServerTransportConfiguration: Sendable, Hashable {
    /// nil: a Telegram-like endpoint accepting the plain tags, the full transport and obfuscated2 without secret.
    /// A plain secret: obfuscated2 keyed with it, any framing. `dd`: padded intermediate only. `ee`: fake-TLS only.
    public var secret: MTProxySecret?
    /// How far (seconds) a fake-TLS client's clock may be from ours.
    public var allowedClockSkew: ClosedRange<Int64>
    /// The largest frame accepted from a client.
    public var maximumPayload: Int
    /// How padded-intermediate frames sent are padded.
    public var padding: PaddingPolicy
    /// The most padding (0–15) added to padded-intermediate frames sent; see `PaddedIntermediateCodec.init`.
    public var maximumPadding: Int

    /// A server configuration; the defaults are a Telegram-like endpoint with no secret.
    public init(
        secret: MTProxySecret? = nil, allowedClockSkew: ClosedRange<Int64> = -600...600,
        maximumPayload: Int = FrameLimits.defaultMaximumPayload, padding: PaddingPolicy = .mtproto,
        maximumPadding: Int = 15
    ) {
        self.secret = secret
        self.allowedClockSkew = allowedClockSkew
        self.maximumPayload = maximumPayload
        self.padding = padding
        self.maximumPadding = maximumPadding
    }
}

/// What the server learnt about a client.
public struct NegotiatedTransport: Sendable, Hashable {
    /// The client's framing.
    public let kind: TransportKind
    /// Whether the client sent an obfuscated2 header.
    public let obfuscated: Bool
    /// Whether the client came in through fake-TLS.
    public let fakeTLS: Bool
    /// The DC id from an obfuscated2 header.
    public let dcId: Int16?

    /// What a server learnt, from its parts.
    public init(kind: TransportKind, obfuscated: Bool, fakeTLS: Bool, dcId: Int16?) {
        self.kind = kind
        self.obfuscated = obfuscated
        self.fakeTLS = fakeTLS
        self.dcId = dcId
    }
}

/// The server end of a connection: recognises the client's protocol from its first bytes, then decodes frames
/// and frames replies. After any error it stays failed.
public struct ServerTransport: Sendable {
    /// What this transport accepts.
    public let configuration: ServerTransportConfiguration
    private let random: any RandomSource
    private let unixTime: Int64
    private let replayCache: FakeTLSReplayCache?
    private var pipeline: TransportPipeline?
    private var pending = ByteQueue()
    private var helloDone = false
    private var tlsReader: TLSRecordReader?
    private var failure: TransportError?
    /// What the client's first bytes said; nil until they arrived.
    public private(set) var negotiated: NegotiatedTransport?

    /// - Parameters:
    ///   - configuration: the framings, secrets and limits the server accepts.
    ///   - random: the source of padding and of the fake-TLS ServerHello.
    ///   - unixTime: the server's clock, checked against a fake-TLS ClientHello.
    ///   - replayCache: where a listener's accepted ClientHello digests are kept; a hello seen before is refused.
    public init(configuration: ServerTransportConfiguration, random: any RandomSource = SystemRandom(), unixTime: Int64,
                replayCache: FakeTLSReplayCache? = nil) {
        self.configuration = configuration
        self.random = random
        self.unixTime = unixTime
        self.replayCache = replayCache
    }

    /// Feeds bytes from the client.
    public mutating func receive(_ bytes: [UInt8]) throws(TransportError) -> TransportOutput {
        if let failure { throw failure }
        do {
            if pipeline != nil {
                return TransportOutput(events: try pipeline?.open(bytes) ?? [])
            }
            var output = TransportOutput()
            guard let rest = try negotiate(bytes, outbound: &output.outbound) else { return output }
            // What followed the opening is free of TLS records already.
            output.events = try pipeline?.openUnwrapped(rest) ?? []
            return output
        } catch {
            failure = error
            throw error
        }
    }

    /// Returns the bytes left after the opening (out of their TLS records) once the protocol is known, nil while
    /// more are needed.
    private mutating func negotiate(_ bytes: [UInt8], outbound: inout [UInt8]) throws(TransportError) -> [UInt8]? {
        let secret = configuration.secret
        if case let .fakeTLS(domain) = secret?.kind, let key = secret?.key {
            if !helloDone {
                pending.append(bytes)
                guard let length = try FakeTLSHandshake.clientHelloLength(pending), let hello = pending.read(length)
                else { return nil }
                let info = try FakeTLSHandshake.verifyClientHello(
                    hello, key: key, domain: domain, now: unixTime, allowedSkew: configuration.allowedClockSkew)
                // Kept while a hello with the same clock could still pass the skew check.
                let expires = Int64(info.unixTime) - configuration.allowedClockSkew.lowerBound
                if let replayCache, !replayCache.insert(info.digest, now: unixTime, expires: expires) {
                    throw .fakeTLS("ClientHello replayed (its digest was accepted before)")
                }
                outbound = try FakeTLSHandshake.serverHello(for: info, key: key, random: random)
                helloDone = true
                tlsReader = TLSRecordReader()
                return try negotiate(pending.readAll(), outbound: &outbound)
            }
            // After the hello everything arrives in records; the obfuscated2 header is their first 64 bytes.
            guard var reader = tlsReader else { return nil }
            let plain = try reader.feed(bytes)
            tlsReader = reader
            pending.append(plain)
            return try acceptObfuscated(key: key, requiredKind: .paddedIntermediate, fakeTLS: true)
        }
        pending.append(bytes)
        if let secret {
            let required: TransportKind? = secret.kind == .paddedIntermediate ? .paddedIntermediate : nil
            return try acceptObfuscated(key: secret.key, requiredKind: required, fakeTLS: false)
        }
        guard let first = pending.byte(at: 0) else { return nil }
        if first == 0xef {
            pending.skip(1)
            return established(kind: .abridged)
        }
        guard let word = pending.uint32LE(at: 0) else { return nil }
        if word == 0xeeee_eeee || word == 0xdddd_dddd {
            pending.skip(4)
            return established(kind: word == 0xeeee_eeee ? .intermediate : .paddedIntermediate)
        }
        guard let second = pending.uint32LE(at: 4) else { return nil }
        // An obfuscated2 header never has zero here ("the second int must not be 0"); a full frame's seqno 0 does.
        if second == 0 { return established(kind: .full) }
        return try acceptObfuscated(key: nil, requiredKind: nil, fakeTLS: false)
    }

    private mutating func established(kind: TransportKind) -> [UInt8] {
        pipeline = TransportPipeline(codec: makeCodec(kind))
        negotiated = NegotiatedTransport(kind: kind, obfuscated: false, fakeTLS: false, dcId: nil)
        return pending.readAll()
    }

    private func makeCodec(_ kind: TransportKind) -> any FrameCodec {
        makeFrameCodec(kind: kind, role: .server, maximumPayload: configuration.maximumPayload, random: random,
                       padding: configuration.padding, maximumPadding: configuration.maximumPadding)
    }

    private mutating func acceptObfuscated(
        key: [UInt8]?, requiredKind: TransportKind?, fakeTLS: Bool
    ) throws(TransportError) -> [UInt8]? {
        guard let header = pending.read(64) else { return nil }
        let accepted = try Obfuscated2.acceptClientHeader(header, secret: key)
        if let requiredKind, accepted.kind != requiredKind {
            throw .obfuscation("this secret requires \(requiredKind), the client asked for \(accepted.kind)")
        }
        var pipeline = TransportPipeline(codec: makeCodec(accepted.kind), cipher: accepted.cipher)
        if fakeTLS {
            pipeline.writer = TLSRecordWriter(maximumRecordPayload: TLSRecordWriter.serverRecordLimit,
                                              sendChangeCipherSpec: false)
            pipeline.reader = tlsReader
        }
        self.pipeline = pipeline
        negotiated = NegotiatedTransport(kind: accepted.kind, obfuscated: true, fakeTLS: fakeTLS, dcId: accepted.dcId)
        return pending.readAll()
    }

    /// Frames, obfuscates and wraps one payload for the client.
    public mutating func send(_ payload: [UInt8]) throws(TransportError) -> [UInt8] {
        try sendPieces(payload).reduce(into: []) { $0 += $1 }
    }

    /// `send` as pieces to write back to back: a large payload is not copied to frame it (see `FramePieces`).
    public mutating func sendPieces(_ payload: [UInt8]) throws(TransportError) -> [[UInt8]] {
        if let failure { throw failure }
        guard var established = pipeline else { throw .notEstablished("the client's protocol is not known yet") }
        let frame = try established.codec.encodePieces(payload, quickAck: false)
        let out = established.seal(frame, writer: &established.writer)
        pipeline = established
        return out
    }

    /// Sends a quick-ack reply for `token`.
    public mutating func sendQuickAck(_ token: UInt32) throws(TransportError) -> [UInt8] {
        try seal { (codec: inout any FrameCodec) throws(TransportError) in try codec.encodeQuickAck(token) }
    }

    /// Sends a transport error code (e.g. −404).
    public mutating func sendTransportError(_ code: Int32) throws(TransportError) -> [UInt8] {
        try seal { (codec: inout any FrameCodec) throws(TransportError) in try codec.encodeTransportError(code) }
    }

    private mutating func seal(
        _ encode: (inout any FrameCodec) throws(TransportError) -> [UInt8]
    ) throws(TransportError) -> [UInt8] {
        if let failure { throw failure }
        guard var established = pipeline else { throw .notEstablished("the client's protocol is not known yet") }
        let frame = try encode(&established.codec)
        let out = established.seal(frame, writer: &established.writer)
        pipeline = established
        return out
    }

    /// Call when the client closed the connection: throws if it ended inside the opening or a frame.
    public func finish() throws(TransportError) {
        if let failure { throw failure }
        guard let pipeline else {
            // A client that closes before sending anything is not an error.
            if pending.isEmpty, !helloDone { return }
            throw .truncated(context: "the connection's opening bytes", buffered: pending.count)
        }
        try pipeline.finish()
    }
}
