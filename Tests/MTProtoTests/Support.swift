// Test helpers shared by the MTProto suites: hex, the vector files, and a RandomSource that replays recorded bytes.
import Foundation
import MTProtoCrypto

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

/// A loosely typed JSON value, for reading vector files without a struct per group.
enum AnyCodable: Decodable {
    case string(String), number(Double), bool(Bool), array([AnyCodable]), object([String: AnyCodable]), null

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let v = try? c.decode(Bool.self) { self = .bool(v) }
        else if let v = try? c.decode(String.self) { self = .string(v) }
        else if let v = try? c.decode(Double.self) { self = .number(v) }
        else if let v = try? c.decode([AnyCodable].self) { self = .array(v) }
        else { self = .object(try c.decode([String: AnyCodable].self)) }
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }
    subscript(key: String) -> AnyCodable? { if case .object(let o) = self { o[key] } else { nil } }
}

struct MissingVector: Error, CustomStringConvertible {
    let description: String
}

enum KnownAnswerFile {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/vectors")

    /// known_answer_vectors.json, parsed once.
    static let root: AnyCodable? = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("known_answer_vectors.json")) else {
            return nil
        }
        return try? JSONDecoder().decode(AnyCodable.self, from: data)
    }()

    static func value(_ path: String...) throws -> AnyCodable {
        var node = root
        for key in path { node = node?[key] }
        guard let node else { throw MissingVector(description: "known_answer_vectors.json: no \(path.joined(separator: "."))") }
        return node
    }

    static func docs2024Hex(_ key: String) throws -> [UInt8] {
        guard let s = try value("vectors", "docs_2024", key).string else {
            throw MissingVector(description: "docs_2024.\(key) is not a string")
        }
        return hex(s)
    }
}

/// Replays fixed bytes in order; `overrun` says whether the code under test drew more than was recorded.
final class ReplayRandom: RandomSource, @unchecked Sendable {
    private let bytes: [UInt8]
    private var offset = 0
    private let lock = NSLock()

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var overrun: Bool { lock.withLock { offset > bytes.count } }
    var consumed: Int { lock.withLock { offset } }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        lock.withLock {
            for i in 0..<buffer.count {
                buffer[i] = offset < bytes.count ? bytes[offset] : 0
                offset += 1
            }
        }
    }
}
