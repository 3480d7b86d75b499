// Fake-TLS for `ee` MTProxy secrets ("MTProxy", core.telegram.org/mtproto/mtproto-transports): the client opens
// with a ClientHello that looks like a browser's, whose random field is an HMAC keyed by the secret; the proxy
// answers with a ServerHello whose random field is an HMAC over the client's; then both sides wrap the
// obfuscated2 stream in TLS application-data records.
import MTProtoCrypto

/// Every random choice of one ClientHello, in the order the template consumes them (parts of a permutation in
/// the order they are listed). Drawn fresh by `generate`; tests replay recorded ones.
public struct ClientHelloRandomness: Sendable, Hashable {
    /// The 7 GREASE bytes (each `0xXA`, neighbours made distinct).
    public var grease: [UInt8]
    /// The `random` and `ech` fields.
    public var randomFields: [[UInt8]]
    /// The X25519 public keys.
    public var x25519Keys: [[UInt8]]
    /// The ML-KEM-768 encapsulation keys.
    public var mlkemKeys: [[UInt8]]
    /// For each permutation, the part index placed at each position.
    public var permutations: [[Int]]

    /// Recorded choices, as `generate` draws them.
    public init(
        grease: [UInt8], randomFields: [[UInt8]], x25519Keys: [[UInt8]], mlkemKeys: [[UInt8]], permutations: [[Int]]
    ) {
        self.grease = grease
        self.randomFields = randomFields
        self.x25519Keys = x25519Keys
        self.mlkemKeys = mlkemKeys
        self.permutations = permutations
    }

    /// Fresh randomness for `template`. `echChoice` (0...3) fixes the ECH payload length at 144 + 32·choice;
    /// tdlib draws it once per process, so a client should keep one value for all its connections.
    public static func generate(
        for template: FakeTLSTemplate, echChoice: Int, random: any RandomSource
    ) throws(TransportError) -> ClientHelloRandomness {
        var result = ClientHelloRandomness(
            grease: makeGrease(random.bytes(7)), randomFields: [], x25519Keys: [], mlkemKeys: [], permutations: [])
        try result.draw(template.ops, echLength: 144 + 32 * (echChoice & 3), random: random)
        return result
    }

    /// "Each (b & 0xF0) + 0x0A, and byte 2k+1 XOR 0x10 when it equals byte 2k."
    public static func makeGrease(_ raw: [UInt8]) -> [UInt8] {
        var grease = raw.map { ($0 & 0xf0) | 0x0a }
        var index = 1
        while index < grease.count {
            if grease[index] == grease[index - 1] { grease[index] ^= 0x10 }
            index += 2
        }
        return grease
    }

    private mutating func draw(_ ops: [HelloOp], echLength: Int, random: any RandomSource) throws(TransportError) {
        for op in ops {
            switch op {
            case let .random(count): randomFields.append(random.bytes(count))
            case .ech: randomFields.append(random.bytes(echLength))
            case .key: x25519Keys.append(try Curve25519.randomPublicKey(random: random))
            case .mlkem: mlkemKeys.append(Self.mlkemKey(random: random))
            case let .permutation(parts):
                for part in parts { try draw(part, echLength: echLength, random: random) }
                permutations.append(Self.shuffledIndices(parts.count, random: random))
            case .bytes, .zero, .grease, .domain, .begin, .end, .padding, .legacyPadding: break
            }
        }
    }

    /// 768 coefficients below q = 3329, packed 12 bits each (two per 3 bytes), then 32 random bytes: the shape of
    /// a real encapsulation key, which is all an observer can check.
    static func mlkemKey(random: any RandomSource) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(1184)
        for _ in 0..<384 {
            let a = UInt32(uniform32(random) % 3329)
            let b = UInt32(uniform32(random) % 3329)
            key.append(UInt8(truncatingIfNeeded: a))
            key.append(UInt8(truncatingIfNeeded: (a >> 8) | ((b & 0x0f) << 4)))
            key.append(UInt8(truncatingIfNeeded: b >> 4))
        }
        key.append(contentsOf: random.bytes(32))
        return key
    }

    static func uniform32(_ random: any RandomSource) -> UInt32 {
        random.bytes(4).uint32LE(at: 0) ?? 0
    }

    /// Fisher–Yates over 0..<count.
    static func shuffledIndices(_ count: Int, random: any RandomSource) -> [Int] {
        var indices = Array(0..<count)
        var i = count - 1
        while i > 0 {
            let j = Int(uniform32(random) % UInt32(i + 1))
            indices.swapAt(i, j)
            i -= 1
        }
        return indices
    }
}

/// A built ClientHello: the whole TLS record, from `16 03 01` on.
public struct FakeTLSClientHello: Sendable, Hashable {
    /// The record's bytes, ready to send.
    public let bytes: [UInt8]

    /// Bytes 11..43, the client's digest; the ServerHello's HMAC covers it.
    public var digest: [UInt8] { Array(bytes[11..<43]) }

    /// Builds a hello from `template`, the secret's domain and key, the clock and the given randomness. The
    /// random field (bytes 11..43) is "HMAC-SHA256(secret, hello with those bytes zeroed), its last 4 bytes XORed
    /// with the unix time as a little-endian int32".
    public init(
        template: FakeTLSTemplate, domain: String, key: [UInt8], unixTime: Int32, randomness: ClientHelloRandomness
    ) throws(TransportError) {
        guard randomness.grease.count == 7 else { throw .fakeTLS("GREASE needs 7 bytes, got \(randomness.grease.count)") }
        var builder = HelloBuilder(domain: Array(domain.utf8), randomness: randomness)
        var hello = try builder.build(template.ops)
        guard builder.isExhausted else { throw .fakeTLS("the randomness has values the template did not use") }
        guard hello.count >= 43, hello[11..<43].allSatisfy({ $0 == 0 }) else {
            throw .fakeTLS("the template has no 32 zero bytes at offset 11 for the digest")
        }
        var digest = Hash.hmacSHA256(key: key, data: hello)
        FakeTLSDigest.mixTime(&digest, unixTime)
        hello.replaceSubrange(11..<43, with: digest)
        bytes = hello
    }
}

enum FakeTLSDigest {
    static func mixTime(_ digest: inout [UInt8], _ unixTime: Int32) {
        let time = UInt32(bitPattern: unixTime)
        for i in 0..<4 { digest[28 + i] ^= UInt8(truncatingIfNeeded: time >> UInt32(8 * i)) }
    }
}

/// Interprets a template with given randomness.
private struct HelloBuilder {
    let domain: [UInt8]
    let randomness: ClientHelloRandomness
    private var nextRandom = 0
    private var nextKey = 0
    private var nextMLKEM = 0
    private var nextPermutation = 0

    init(domain: [UInt8], randomness: ClientHelloRandomness) {
        self.domain = domain
        self.randomness = randomness
    }

    var isExhausted: Bool {
        nextRandom == randomness.randomFields.count && nextKey == randomness.x25519Keys.count
            && nextMLKEM == randomness.mlkemKeys.count && nextPermutation == randomness.permutations.count
    }

    mutating func build(_ ops: [HelloOp]) throws(TransportError) -> [UInt8] {
        var out: [UInt8] = []
        var scopes: [Int] = []
        try emit(ops, into: &out, scopes: &scopes)
        guard scopes.isEmpty else { throw .fakeTLS("template has an unclosed length scope") }
        return out
    }

    private static func take<T>(_ list: [T], _ index: inout Int, _ what: String) throws(TransportError) -> T {
        guard index < list.count else { throw .fakeTLS("the randomness has too few \(what)") }
        index += 1
        return list[index - 1]
    }

    private mutating func emit(_ ops: [HelloOp], into out: inout [UInt8], scopes: inout [Int]) throws(TransportError) {
        for op in ops {
            switch op {
            case let .bytes(bytes): out.append(contentsOf: bytes)
            case let .zero(count): out.append(contentsOf: [UInt8](repeating: 0, count: count))
            case let .random(count):
                let field = try Self.take(randomness.randomFields, &nextRandom, "random fields")
                guard field.count == count else { throw .fakeTLS("random field of \(field.count) bytes where \(count) are needed") }
                out.append(contentsOf: field)
            case .ech:
                let field = try Self.take(randomness.randomFields, &nextRandom, "random fields")
                guard [144, 176, 208, 240].contains(field.count) else {
                    throw .fakeTLS("ECH payload of \(field.count) bytes; expected 144 + 32k, k in 0...3")
                }
                out.append(contentsOf: field)
            case let .grease(index):
                guard index >= 0, index < randomness.grease.count else { throw .fakeTLS("GREASE index \(index) out of range") }
                out.append(randomness.grease[index])
                out.append(randomness.grease[index])
            case .domain: out.append(contentsOf: domain)
            case .key:
                let key = try Self.take(randomness.x25519Keys, &nextKey, "X25519 keys")
                guard key.count == 32 else { throw .fakeTLS("X25519 key of \(key.count) bytes") }
                out.append(contentsOf: key)
            case .mlkem:
                let key = try Self.take(randomness.mlkemKeys, &nextMLKEM, "ML-KEM keys")
                guard key.count == 1184 else { throw .fakeTLS("ML-KEM-768 key of \(key.count) bytes") }
                out.append(contentsOf: key)
            case .begin:
                scopes.append(out.count)
                out.append(contentsOf: [0, 0])
            case .end:
                guard let start = scopes.popLast() else { throw .fakeTLS("template closes a scope it never opened") }
                let size = out.count - start - 2
                guard size < 1 << 14 else { throw .fakeTLS("length scope of \(size) bytes is too big") }
                out[start] = UInt8(size >> 8)
                out[start + 1] = UInt8(size & 0xff)
            case let .permutation(parts):
                var built: [[UInt8]] = []
                for part in parts {
                    var partBytes: [UInt8] = []
                    var partScopes: [Int] = []
                    try emit(part, into: &partBytes, scopes: &partScopes)
                    guard partScopes.isEmpty else { throw .fakeTLS("permutation part has an unclosed scope") }
                    built.append(partBytes)
                }
                let order = try Self.take(randomness.permutations, &nextPermutation, "permutations")
                guard order.sorted() == Array(0..<parts.count) else {
                    throw .fakeTLS("permutation \(order) does not order \(parts.count) parts")
                }
                for index in order { out.append(contentsOf: built[index]) }
            case .padding:
                let size = 513 - out.count
                if size > 0 {
                    out.append(contentsOf: [0x00, 0x15])
                    out.appendUInt16BE(size)
                    out.append(contentsOf: [UInt8](repeating: 0, count: size))
                }
            case .legacyPadding:
                let size = 515 - out.count
                guard size >= 0 else { throw .fakeTLS("legacy hello is \(out.count) bytes before padding, over 515") }
                out.appendUInt16BE(size)
                out.append(contentsOf: [UInt8](repeating: 0, count: size))
            }
        }
    }
}

/// The proxy's side of the handshake and the checks both sides make.
public enum FakeTLSHandshake {
    /// The largest ClientHello a proxy accepts (a TLS record's plaintext limit).
    public static let maximumHelloLength = 5 + (1 << 14)

    /// What a proxy learns from a valid ClientHello.
    public struct ClientHelloInfo: Sendable, Hashable {
        /// Bytes 11..43 as received.
        public let digest: [UInt8]
        /// The legacy session id, echoed in the ServerHello.
        public let sessionID: [UInt8]
        /// The client's clock.
        public let unixTime: Int32
        /// The SNI host name, if the hello has one.
        public let serverName: String?
    }

    /// How many bytes the ClientHello record at the front of `buffer` occupies; nil until the header is in.
    public static func clientHelloLength(_ buffer: ByteQueue) throws(TransportError) -> Int? {
        guard let header = buffer.peek(5) else { return nil }
        guard header[0] == 0x16, header[1] == 0x03, header[2] == 0x01 else {
            throw .fakeTLS("ClientHello record starts \(header.prefix(3).map(hexByte).joined()), expected 160301")
        }
        let length = 5 + (Int(header[3]) << 8 | Int(header[4]))
        guard length >= 5 + 76, length <= maximumHelloLength else {
            throw .fakeTLS("ClientHello record of \(length) bytes is outside 81...\(maximumHelloLength)")
        }
        return length
    }

    /// Proxy side: checks the hello's HMAC with `key`, the clock skew against `now`, and the SNI against `domain`.
    public static func verifyClientHello(
        _ hello: [UInt8], key: [UInt8], domain: String?, now: Int64, allowedSkew: ClosedRange<Int64>
    ) throws(TransportError) -> ClientHelloInfo {
        guard hello.count >= 76 else { throw .fakeTLS("ClientHello of \(hello.count) bytes is too short") }
        let received = Array(hello[11..<43])
        var zeroed = hello
        zeroed.replaceSubrange(11..<43, with: [UInt8](repeating: 0, count: 32))
        let expected = Hash.hmacSHA256(key: key, data: zeroed)
        guard constantTimeEquals(Array(received[0..<28]), Array(expected[0..<28])) else {
            throw .fakeTLS("ClientHello digest does not match the secret (bytes 11..39)")
        }
        var timeBytes = received
        for i in 28..<32 { timeBytes[i] ^= expected[i] }
        let unixTime = Int32(bitPattern: timeBytes.uint32LE(at: 28) ?? 0)
        let skew = Int64(unixTime) - now
        guard allowedSkew.contains(skew) else {
            throw .fakeTLS("ClientHello time \(unixTime) is \(skew) s from the server's clock, outside \(allowedSkew)")
        }
        guard hello[43] == 32 else { throw .fakeTLS("ClientHello session id length is \(hello[43]), expected 32") }
        let serverName = Self.serverName(in: hello)
        if let domain, serverName != domain {
            throw .fakeTLS("ClientHello SNI is \(serverName ?? "missing"), expected \(domain)")
        }
        return ClientHelloInfo(digest: received, sessionID: Array(hello[44..<76]), unixTime: unixTime,
                               serverName: serverName)
    }

    /// The host name of the server_name extension, walking the hello's fields with bounds checks.
    static func serverName(in hello: [UInt8]) -> String? {
        // record header 5, handshake header 4, version 2, random 32, session id 1 + 32.
        var offset = 5 + 4 + 2 + 32
        guard offset < hello.count else { return nil }
        offset += 1 + Int(hello[offset])
        guard let cipherLength = hello.uint16BE(at: offset) else { return nil }
        offset += 2 + cipherLength
        guard offset < hello.count else { return nil }
        offset += 1 + Int(hello[offset])
        guard let extensionsLength = hello.uint16BE(at: offset) else { return nil }
        offset += 2
        let end = min(hello.count, offset + extensionsLength)
        while offset + 4 <= end, let type = hello.uint16BE(at: offset), let length = hello.uint16BE(at: offset + 2) {
            let body = offset + 4
            if type == 0, let nameLength = hello.uint16BE(at: body + 3), body + 5 + nameLength <= end {
                return String(decoding: hello[(body + 5)..<(body + 5 + nameLength)], as: UTF8.self)
            }
            offset = body + length
        }
        return nil
    }

    /// Proxy side: the response to a valid hello, shaped like mtprotoproxy's: a ServerHello record (session id
    /// echoed, TLS_AES_128_GCM_SHA256, an X25519 key share, TLS 1.3), a ChangeCipherSpec record, and an
    /// application-data record of 1024–4096 random bytes standing in for the encrypted certificate. Its random
    /// field is "HMAC-SHA256(secret, client digest ‖ the whole response with that field zeroed)".
    public static func serverHello(
        for client: ClientHelloInfo, key: [UInt8], random: any RandomSource
    ) throws(TransportError) -> [UInt8] {
        var hello: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 0, count: 32) + [0x20] + client.sessionID
        hello += [0x13, 0x01, 0x00]
        var extensions: [UInt8] = [0x00, 0x33, 0x00, 0x24, 0x00, 0x1d, 0x00, 0x20]
        extensions += try Curve25519.randomPublicKey(random: random)
        extensions += [0x00, 0x2b, 0x00, 0x02, 0x03, 0x04]
        hello.appendUInt16BE(extensions.count)
        hello += extensions
        var handshake: [UInt8] = [0x02, 0x00]
        handshake.appendUInt16BE(hello.count)
        handshake += hello
        var response: [UInt8] = [0x16, 0x03, 0x03]
        response.appendUInt16BE(handshake.count)
        response += handshake
        response += [0x14, 0x03, 0x03, 0x00, 0x01, 0x01]
        let fillerLength = 1024 + Int(ClientHelloRandomness.uniform32(random) % 3073)
        response += [0x17, 0x03, 0x03]
        response.appendUInt16BE(fillerLength)
        response += random.bytes(fillerLength)
        let digest = Hash.hmacSHA256(key: key, data: client.digest + response)
        response.replaceSubrange(11..<43, with: digest)
        return response
    }

    /// Client side: how many bytes the proxy's response occupies at the front of `buffer` ("16 03 03" record,
    /// then "14 03 03 00 01 01 17 03 03" and a record); nil while incomplete.
    public static func serverHelloLength(_ buffer: ByteQueue) throws(TransportError) -> Int? {
        var offset = 0
        let prefixes: [[UInt8]] = [[0x16, 0x03, 0x03], [0x14, 0x03, 0x03, 0x00, 0x01, 0x01, 0x17, 0x03, 0x03]]
        for prefix in prefixes {
            let available = min(prefix.count, buffer.count - offset)
            if available > 0, let head = buffer.peek(available, at: offset), head != Array(prefix[0..<available]) {
                throw .fakeTLS(
                    "ServerHello response at offset \(offset) starts \(head.map(hexByte).joined()), expected \(prefix.map(hexByte).joined())")
            }
            guard let length = buffer.peek(2, at: offset + prefix.count) else { return nil }
            offset += prefix.count + 2 + (Int(length[0]) << 8 | Int(length[1]))
            guard buffer.count >= offset else { return nil }
        }
        return offset
    }

    /// Client side: checks the response's HMAC against the hello's digest.
    public static func verifyServerHello(_ response: [UInt8], clientDigest: [UInt8], key: [UInt8]) throws(TransportError) {
        guard response.count >= 43 else { throw .fakeTLS("ServerHello response of \(response.count) bytes is too short") }
        let received = Array(response[11..<43])
        var zeroed = response
        zeroed.replaceSubrange(11..<43, with: [UInt8](repeating: 0, count: 32))
        let expected = Hash.hmacSHA256(key: key, data: clientDigest + zeroed)
        guard constantTimeEquals(received, expected) else {
            throw .fakeTLS("ServerHello HMAC (offset 11..43) does not match the secret and our ClientHello")
        }
    }
}

/// Wraps outgoing bytes in TLS application-data records (`17 03 03`, 2-byte big-endian length). The client's
/// first flush is preceded by a ChangeCipherSpec record (`14 03 03 00 01 01`), as a TLS 1.3 client sends one.
public struct TLSRecordWriter: Sendable {
    /// tdlib's record size for the client; the TLS plaintext limit (2^14) for the server.
    public static let clientRecordLimit = 2878
    /// The TLS plaintext limit (2^14), the server's record size.
    public static let serverRecordLimit = 1 << 14

    /// The most bytes one record carries (1 to 2^14).
    public let maximumRecordPayload: Int
    private var changeCipherSpecPending: Bool

    /// A writer whose records carry at most `maximumRecordPayload` bytes (clamped to 1–2^14); with
    /// `sendChangeCipherSpec`, the first ``wrap(_:)`` starts with a ChangeCipherSpec record (the client's side).
    public init(maximumRecordPayload: Int, sendChangeCipherSpec: Bool) {
        self.maximumRecordPayload = max(1, min(maximumRecordPayload, 1 << 14))
        changeCipherSpecPending = sendChangeCipherSpec
    }

    /// `data` as application-data records, split at ``maximumRecordPayload``.
    public mutating func wrap(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 6 + 5 * (data.count / maximumRecordPayload + 1))
        if changeCipherSpecPending {
            out += [0x14, 0x03, 0x03, 0x00, 0x01, 0x01]
            changeCipherSpecPending = false
        }
        var start = 0
        while start < data.count {
            let end = min(data.count, start + maximumRecordPayload)
            out += [0x17, 0x03, 0x03]
            out.appendUInt16BE(end - start)
            out.append(contentsOf: data[start..<end])
            start = end
        }
        return out
    }
}

/// Unwraps TLS records: application data is passed on; ChangeCipherSpec records are dropped before the first
/// application data; anything else is an error.
public struct TLSRecordReader: Sendable {
    /// TLS 1.3's largest record body (2^14 + 256).
    public static let maximumRecordLength = (1 << 14) + 256

    private var buffer = ByteQueue()
    private var offset = 0
    private var sawApplicationData = false

    /// A reader at the start of a stream.
    public init() {}

    /// Takes received bytes and returns the application data of every record now complete; a partial record is
    /// kept for the next call. Throws ``TransportError/fakeTLS(_:)`` for a wrong version, an oversized record or an
    /// unexpected record type, naming its stream offset.
    public mutating func feed(_ bytes: [UInt8]) throws(TransportError) -> [UInt8] {
        buffer.append(bytes)
        var out: [UInt8] = []
        while let header = buffer.peek(5) {
            let length = Int(header[3]) << 8 | Int(header[4])
            guard header[1] == 0x03, header[2] == 0x03 else {
                throw .fakeTLS("record at offset \(offset) has version \(hexByte(header[1]))\(hexByte(header[2])), expected 0303")
            }
            guard length <= Self.maximumRecordLength else {
                throw .fakeTLS("record at offset \(offset) declares \(length) bytes, over \(Self.maximumRecordLength)")
            }
            switch header[0] {
            case 0x17: break
            case 0x14 where !sawApplicationData:
                guard length == 1 else { throw .fakeTLS("ChangeCipherSpec record at offset \(offset) has \(length) bytes") }
            default:
                throw .fakeTLS("unexpected record type 0x\(hexByte(header[0])) at offset \(offset)")
            }
            guard buffer.count >= 5 + length else { break }
            buffer.skip(5)
            let body = buffer.read(length) ?? []
            offset += 5 + length
            if header[0] == 0x17 {
                sawApplicationData = true
                out += body
            }
        }
        return out
    }

    /// At the end of the stream: throws ``TransportError/truncated(context:buffered:)`` if a record was cut off.
    public func finish() throws(TransportError) {
        if !buffer.isEmpty { throw .truncated(context: "a TLS record", buffered: buffer.count) }
    }
}
