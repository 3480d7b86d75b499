// Transport decoders: the four framings, obfuscated2's server-side header, the fake-TLS ClientHello check and
// ServerHello parse, and MTProxy secrets. Besides "never traps", a framing decodes the same however its stream is
// split and whether it is fed arrays or borrowed bytes, and what it decodes re-encodes (from the other role) to a
// stream that decodes to the same events.
import MTProtoCrypto
import MTProtoTransport

/// A deterministic source for the padding and handshakes the transports draw.
struct FixedRandom: RandomSource {
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for i in buffer.indices { buffer[i] = UInt8(truncatingIfNeeded: i &* 37 &+ 11) }
    }
}

/// Feeds `pieces` to `feed` until it throws; returns the events and whether it threw.
func drain(_ pieces: [[UInt8]], _ feed: ([UInt8]) throws(TransportError) -> [TransportEvent])
    -> (events: [TransportEvent], failed: Bool)
{
    var events: [TransportEvent] = []
    for piece in pieces {
        do {
            events += try feed(piece)
        } catch {
            return (events, true)
        }
    }
    return (events, false)
}

func codec(_ kind: TransportKind, _ role: TransportRole, keepPadding: Bool) -> any FrameCodec {
    makeFrameCodec(kind: kind, role: role, maximumPayload: 1 << 16, random: FixedRandom(),
                   padding: keepPadding ? .keep : .mtproto)
}

/// Input: a control byte (bit 0: decode as client; bit 1: padded intermediate keeps the padding, full gets its
/// sequence numbers and CRCs fixed so the fuzzer reaches the payloads; the rest seeds the split), then the stream.
public func fuzzFraming(_ kind: TransportKind, _ data: [UInt8]) throws(Violation) {
    var reader = InputReader(data)
    let control = reader.byte()
    let role: TransportRole = control & 1 == 1 ? .client : .server
    let keep = control & 2 == 2 && kind == .paddedIntermediate
    var stream = reader.rest()
    if control & 2 == 2, kind == .full { stream = withValidFullFrames(stream) }
    var whole = codec(kind, role, keepPadding: keep)
    let once = drain([stream]) { (bytes) throws(TransportError) in try whole.decode(feed: bytes) }
    // The split stream is fed as borrowed bytes (a socket buffer's path), the whole one as an array.
    var split = codec(kind, role, keepPadding: keep)
    let pieces = drain(chunks(stream, seed: control >> 2)) { (bytes) throws(TransportError) in
        var result: Result<[TransportEvent], TransportError> = .success([])
        bytes.withUnsafeBytes { raw in
            result = Result { () throws(TransportError) in try split.decode(feedBytes: raw) }
        }
        return try result.get()
    }
    // A feed that throws returns nothing, so the events before an error depend on the split; the error does not.
    guard once.failed == pieces.failed, once.failed || once.events == pieces.events else {
        throw Violation("\(kind) \(role): decoding depends on how the stream is split")
    }
    guard !once.failed else { return }
    // Re-encode from the peer's side and decode again.
    var peer = codec(kind, role == .client ? .server : .client, keepPadding: keep)
    var wire: [UInt8] = []
    for event in once.events {
        do {
            switch event {
            case let .frame(payload, quickAck):
                if keep, let padded = peer as? PaddedIntermediateCodec {
                    // The payload holds its padding already.
                    wire += try padded.encode(payload, padding: [], quickAck: quickAck)
                } else {
                    wire += try peer.encode(payload, quickAck: quickAck)
                }
            case let .quickAck(token): wire += try peer.encodeQuickAck(token)
            case let .transportError(code): wire += try peer.encodeTransportError(code)
            }
        } catch {
            throw Violation("\(kind) \(role): decoded \(event) does not re-encode: \(error)")
        }
    }
    var again = codec(kind, role, keepPadding: keep)
    let redecoded = drain([wire]) { (bytes) throws(TransportError) in try again.decode(feed: bytes) }
    guard !redecoded.failed, redecoded.events == once.events else {
        throw Violation("\(kind) \(role): re-encoded events decode differently")
    }
}

/// Full-transport frames in `stream` with their sequence numbers and CRCs set right, as far as lengths allow.
func withValidFullFrames(_ stream: [UInt8]) -> [UInt8] {
    var out = stream
    var offset = 0
    var sequence: UInt32 = 0
    while offset + 16 <= out.count {
        let length = Int(out[offset]) | Int(out[offset + 1]) << 8 | Int(out[offset + 2]) << 16 | Int(out[offset + 3]) << 24
        guard length >= 16, offset + length <= out.count else { break }
        out.replaceSubrange((offset + 4)..<(offset + 8), with: le(sequence))
        let crc = CRC32.checksum(Array(out[offset..<(offset + length - 4)]))
        out.replaceSubrange((offset + length - 4)..<(offset + length), with: le(crc))
        sequence &+= 1
        offset += length
    }
    return out
}

let proxyKey: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 3) }
let proxyDomain = "example.com"
let serverNow: Int64 = 1_700_000_000

/// obfuscated2, server side. Input: a control byte (bit 0: with a secret, bits 1-2: the framing, bit 3: raw), then
/// either a raw stream for a server transport or 64 header bytes and a stream. The non-raw mode builds a valid
/// header from the bytes and encrypts the stream as a client would: the server must decode exactly what the plain
/// framing decodes.
public func fuzzObfuscated2(_ data: [UInt8]) throws(Violation) {
    var reader = InputReader(data)
    let control = reader.byte()
    let secret: MTProxySecret? = control & 1 == 1 ? try? MTProxySecret(key: proxyKey, kind: .plain) : nil
    var server = ServerTransport(configuration: ServerTransportConfiguration(secret: secret, maximumPayload: 1 << 16),
                                 random: FixedRandom(), unixTime: serverNow)
    if control & 8 == 8 {
        let stream = reader.rest()
        _ = try? Obfuscated2.acceptClientHeader(Array(stream.prefix(64)), secret: secret?.key)
        _ = drain(chunks(stream, seed: control >> 4)) { (bytes) throws(TransportError) in
            try server.receive(bytes).events
        }
        return
    }
    let kinds: [TransportKind] = [.abridged, .intermediate, .paddedIntermediate, .abridged]
    let kind = kinds[Int(control >> 1) & 3]
    var random64 = reader.take(64)
    random64 += [UInt8](repeating: 0x5a, count: 64 - random64.count)
    guard Obfuscated2.isAllowed(random64), let tag = kind.obfuscatedTag else { return }
    let dcId = Int16(bitPattern: UInt16(random64[60]) | UInt16(random64[61]) << 8)
    let made: (header: [UInt8], keys: Obfuscated2Keys, cipher: Obfuscated2Cipher)
    do {
        made = try Obfuscated2.clientHeader(random64: random64, tag: tag, dcId: dcId, secret: secret?.key)
    } catch {
        throw Violation("obfuscated2: a client header from allowed bytes failed: \(error)")
    }
    let plain = reader.rest()
    var encrypted = plain
    made.cipher.encrypt(&encrypted)
    var reference = codec(kind, .server, keepPadding: false)
    let expected = drain([plain]) { (bytes) throws(TransportError) in try reference.decode(feed: bytes) }
    let got = drain(chunks(made.header + encrypted, seed: control >> 4)) { (bytes) throws(TransportError) in
        try server.receive(bytes).events
    }
    guard got.failed == expected.failed, got.failed || got.events == expected.events else {
        throw Violation("obfuscated2 \(kind): the server decodes differently from the plain framing")
    }
    guard server.negotiated == NegotiatedTransport(kind: kind, obfuscated: true, fakeTLS: false, dcId: dcId) else {
        throw Violation("obfuscated2: negotiated \(String(describing: server.negotiated)), sent \(kind) dc \(dcId)")
    }
}

/// Fake-TLS, proxy side. Input: a control byte (split seed; bit 0: check the raw bytes only), then a ClientHello
/// and what follows it. Unless raw, the hello's digest is recomputed with the proxy's key and a time within the
/// allowed skew, so the checks behind the HMAC (session id, SNI walk) and the records after it are reached.
public func fuzzFakeTLSClientHello(_ data: [UInt8]) throws(Violation) {
    var reader = InputReader(data)
    let control = reader.byte()
    var stream = reader.rest()
    _ = try? FakeTLSHandshake.clientHelloLength(ByteQueue(stream))
    if control & 1 == 0, let length = try? FakeTLSHandshake.clientHelloLength(ByteQueue(stream)),
        length <= stream.count
    {
        var hello = Array(stream[0..<length])
        hello.replaceSubrange(11..<43, with: [UInt8](repeating: 0, count: 32))
        var digest = Hash.hmacSHA256(key: proxyKey, data: hello)
        let time = UInt32(truncatingIfNeeded: serverNow)
        for i in 0..<4 { digest[28 + i] ^= UInt8(truncatingIfNeeded: time >> (8 * UInt32(i))) }
        stream.replaceSubrange(11..<43, with: digest)
        hello.replaceSubrange(11..<43, with: digest)
        if let info = try? FakeTLSHandshake.verifyClientHello(hello, key: proxyKey, domain: proxyDomain,
                                                              now: serverNow, allowedSkew: -600...600) {
            guard info.serverName == proxyDomain, info.unixTime == Int32(truncatingIfNeeded: serverNow),
                info.sessionID.count == 32 else { throw Violation("fake-TLS: accepted hello reports \(info)") }
        }
    }
    guard let secret = try? MTProxySecret(key: proxyKey, kind: .fakeTLS(domain: proxyDomain)) else {
        throw Violation("fake-TLS: the test secret is refused")
    }
    var server = ServerTransport(configuration: ServerTransportConfiguration(secret: secret, maximumPayload: 1 << 16),
                                 random: FixedRandom(), unixTime: serverNow)
    _ = drain(chunks(stream, seed: control >> 1)) { (bytes) throws(TransportError) in try server.receive(bytes).events }
}

/// Fake-TLS, client side: a client that sent its ClientHello reads the proxy's answer. Input: a control byte
/// (split seed; bit 0: leave the HMAC as is), then the answer, whose ServerHello HMAC is recomputed so the
/// records after it are read.
public func fuzzFakeTLSServerHello(_ data: [UInt8]) throws(Violation) {
    var reader = InputReader(data)
    let control = reader.byte()
    var stream = reader.rest()
    guard let secret = try? MTProxySecret(key: proxyKey, kind: .fakeTLS(domain: proxyDomain)) else {
        throw Violation("fake-TLS: the test secret is refused")
    }
    var client: ClientTransport
    do {
        client = try ClientTransport(configuration: TransportConfiguration(kind: .paddedIntermediate,
                                                                           obfuscation: .mtproxy(secret), dcId: 2,
                                                                           maximumPayload: 1 << 16),
                                     random: FixedRandom(), unixTime: Int32(serverNow))
    } catch {
        throw Violation("fake-TLS: the client refuses its configuration: \(error)")
    }
    let hello = client.start()
    guard hello.count >= 43 else { throw Violation("fake-TLS: the ClientHello is \(hello.count) bytes") }
    if control & 1 == 0, let length = try? FakeTLSHandshake.serverHelloLength(ByteQueue(stream)), length >= 43 {
        var response = Array(stream[0..<length])
        response.replaceSubrange(11..<43, with: [UInt8](repeating: 0, count: 32))
        let digest = Hash.hmacSHA256(key: proxyKey, data: Array(hello[11..<43]) + response)
        stream.replaceSubrange(11..<43, with: digest)
        do {
            try FakeTLSHandshake.verifyServerHello(Array(stream[0..<length]), clientDigest: Array(hello[11..<43]),
                                                   key: proxyKey)
        } catch {
            throw Violation("fake-TLS: a correctly signed ServerHello is refused: \(error)")
        }
    }
    _ = drain(chunks(stream, seed: control >> 1)) { (bytes) throws(TransportError) in try client.receive(bytes).events }
}

/// MTProxy secrets from text and from bytes: a secret that parses prints (hex) as text that parses to it again.
public func fuzzMTProxySecret(_ data: [UInt8]) throws(Violation) {
    for secret in [try? MTProxySecret(parsing: String(decoding: data, as: UTF8.self)),
                   try? MTProxySecret(bytes: data)].compactMap({ $0 }) {
        guard let again = try? MTProxySecret(parsing: secret.hexString), again == secret else {
            throw Violation("MTProxy secret \(secret) does not survive its hex form")
        }
        guard (try? MTProxySecret(bytes: secret.bytes)) == secret else {
            throw Violation("MTProxy secret \(secret) does not survive its bytes")
        }
        _ = secret.description
        _ = secret.requiredKind
    }
}
