// Test helpers: the vector files (crypto_vectors.json honours MTPROTO_CRYPTO_VECTORS), deterministic random
// sources, and byte-stream chunking.
import Foundation
import MTProtoCrypto
import MTProtoTransport

func hex(_ string: String) -> [UInt8] {
    // Bad hex in test data yields no bytes, which then fails the comparison it feeds.
    decodeHex(string) ?? []
}

struct Keys: Decodable {
    let encKey: String, encIv: String, decKey: String, decIv: String

    var value: Obfuscated2Keys {
        get throws {
            var keys = try Obfuscated2Keys(initBytes: [UInt8](repeating: 0, count: 64), secret: nil)
            keys.encryptKey = hex(encKey)
            keys.encryptIV = hex(encIv)
            keys.decryptKey = hex(decKey)
            keys.decryptIV = hex(decIv)
            return keys
        }
    }
}

struct TransportVector: Decodable {
    let payload: String, abridged: String, intermediate: String, paddedIntermediate: String
    let paddedIntermediatePadding: String, full: String
    let fullSeq: Int32
}

struct Obfuscated2Vector: Decodable {
    struct Packet: Decodable { let c2sFrame: String, c2sWire: String, s2cFrame: String, s2cWire: String }
    let transport: String, random64: String, tag: String
    let dcId: Int16?
    let secret: String?
    let header: String
    let keys: Keys
    let packets: [Packet]

    var kind: TransportKind {
        switch transport {
        case "abridged": .abridged
        case "intermediate": .intermediate
        default: .paddedIntermediate
        }
    }
}

struct CryptoVectors: Decodable {
    let transports: [TransportVector]
    let obfuscated2: [Obfuscated2Vector]
}

struct FakeTLSVector: Decodable {
    let template: String, secret: String, domain: String, eeSecret: String
    let unixTime: Int32
    let clientHello: String
    let clientHelloLen: Int
    let obfRandom64: String
    let dcId: Int16
    let obfHeader: String
    let keys: Keys
    let firstFrame: String, clientRecords: String, serverHelloRef: String
}

struct FakeTLSVectors: Decodable { let vectors: [FakeTLSVector] }

enum Vectors {
    /// Fixtures/vectors, found from this source file so tests run from any working directory.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/vectors")

    /// The file named by MTPROTO_CRYPTO_VECTORS, else Fixtures/vectors/crypto_vectors.json.
    static var cryptoURL: URL {
        if let path = ProcessInfo.processInfo.environment["MTPROTO_CRYPTO_VECTORS"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return directory.appendingPathComponent("crypto_vectors.json")
    }

    static func decode<T: Decodable>(_ type: T.Type, _ url: URL) throws -> T {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(T.self, from: Data(contentsOf: url))
    }

    static func crypto() throws -> CryptoVectors { try decode(CryptoVectors.self, cryptoURL) }

    static func fakeTLS() throws -> [FakeTLSVector] {
        try decode(FakeTLSVectors.self, directory.appendingPathComponent("faketls_vectors.json")).vectors
    }

    static func templatesJSON() throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent("faketls_templates.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

/// Replays fixed bytes in order; running past the end is recorded so tests can assert it never happens.
final class ReplayRandom: RandomSource, @unchecked Sendable {
    private var bytes: [UInt8]
    private var offset = 0
    private let lock = NSLock()

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        lock.withLock {
            for i in 0..<buffer.count {
                buffer[i] = offset < bytes.count ? bytes[offset] : 0
                offset += 1
            }
        }
    }

    /// How many bytes were asked for beyond the recording (should be 0), or remain unused (negative).
    var overrun: Int { lock.withLock { offset - bytes.count } }
}

/// A seeded xorshift generator: deterministic "random" bytes for round trips.
final class SeededRandom: RandomSource, @unchecked Sendable {
    private var state: UInt64
    private let lock = NSLock()

    init(seed: UInt64) { state = seed | 1 }

    func next() -> UInt64 {
        lock.withLock {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for i in 0..<buffer.count { buffer[i] = UInt8(truncatingIfNeeded: next() >> 24) }
    }

    func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

/// Splits `bytes` into chunks of 1...maxChunk bytes.
func chunks(_ bytes: [UInt8], random: SeededRandom, maxChunk: Int) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var start = 0
    while start < bytes.count {
        let end = min(bytes.count, start + random.int(1...maxChunk))
        out.append(Array(bytes[start..<end]))
        start = end
    }
    return out
}

/// An MTProto-shaped payload: encrypted-looking (nonzero auth_key_id, 24 + 16k bytes) or an unencrypted message
/// (zero auth_key_id, msg_id, length, body), so padded intermediate can strip its padding.
func mtprotoPayload(random: SeededRandom, maxBlocks: Int = 40) -> [UInt8] {
    if random.int(0...1) == 0 {
        var payload = random.bytes(24 + 16 * random.int(1...maxBlocks))
        payload[0] |= 1
        return payload
    }
    let body = random.bytes(4 * random.int(1...(4 * maxBlocks)))
    var payload = [UInt8](repeating: 0, count: 8) + random.bytes(8)
    let count = UInt32(body.count)
    payload += [UInt8(count & 0xff), UInt8(count >> 8 & 0xff), UInt8(count >> 16 & 0xff), UInt8(count >> 24)]
    return payload + body
}

/// The 16 random bytes from which `PaddedIntermediateCodec` takes `padding`: its count, the bytes, then filler.
func paddingDraw(_ padding: [UInt8]) -> [UInt8] {
    [UInt8(padding.count)] + padding + [UInt8](repeating: 0xaa, count: 15 - padding.count)
}
