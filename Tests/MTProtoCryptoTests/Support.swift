// Test helpers: hex decoding (case-insensitive, as the vectors README requires), loading the vector files, a
// deterministic RandomSource, and a minimal TL reader/writer for the key-exchange messages.
import Foundation
@testable import MTProtoCrypto

func hex(_ string: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(string.utf8.count / 2)
    var high: UInt8?
    for c in string.utf8 {
        let v: UInt8
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
        default: continue
        }
        if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
    }
    return out
}

enum VectorFiles {
    /// Fixtures/vectors, found from this source file so tests run from any working directory.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/vectors")

    /// The file named by MTPROTO_CRYPTO_VECTORS, else Fixtures/vectors/crypto_vectors.json.
    static var cryptoVectorsURL: URL {
        if let path = ProcessInfo.processInfo.environment["MTPROTO_CRYPTO_VECTORS"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return directory.appendingPathComponent("crypto_vectors.json")
    }

    static func load<T: Decodable>(_ type: T.Type, from url: URL) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    }
}

/// Replays fixed bytes, in order; running past the end is a test bug and yields zeros.
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
}

struct TLReaderError: Error {}

/// Reads the TL primitives the key-exchange messages are made of.
struct TLReader {
    let data: [UInt8]
    var offset = 0

    init(_ data: [UInt8], offset: Int = 0) {
        self.data = data
        self.offset = offset
    }

    mutating func raw(_ count: Int) throws -> [UInt8] {
        guard count >= 0, offset + count <= data.count else { throw TLReaderError() }
        defer { offset += count }
        return Array(data[offset..<(offset + count)])
    }

    mutating func int32() throws -> Int32 {
        try raw(4).reversed().reduce(0) { $0 << 8 | Int32($1) }
    }

    mutating func int64() throws -> Int64 {
        Int64(bitPattern: try raw(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    mutating func bytes() throws -> [UInt8] {
        let first = try raw(1)[0]
        let length: Int, header: Int
        if first == 254 {
            let l = try raw(3)
            length = Int(l[0]) | Int(l[1]) << 8 | Int(l[2]) << 16
            header = 4
        } else {
            length = Int(first)
            header = 1
        }
        let value = try raw(length)
        _ = try raw((4 - (header + length) % 4) % 4)
        return value
    }
}

func tlInt32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
func tlInt64(_ v: Int64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
func tlBytesForTest(_ v: [UInt8]) -> [UInt8] { tlBytes(v) }

/// Minimal big-endian bytes of an integer (how TL carries pq, p and q).
func bigEndianMinimal(_ v: UInt64) -> [UInt8] {
    Array(withUnsafeBytes(of: v.bigEndian) { Array($0) }.drop { $0 == 0 })
}

/// Strips the 20-byte unencrypted-message header (auth_key_id 0, msg_id, length) from a docs dump.
func unencryptedBody(_ message: [UInt8]) -> [UInt8] { Array(message.dropFirst(20)) }
