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

// MARK: Keys and the in-process exchange harness

enum TestKeys {
    /// crypto_vectors.json's deterministic 2048-bit test key (never for real use).
    static let first: RSAPrivateKey? = {
        guard let data = try? Data(contentsOf: KnownAnswerFile.directory.appendingPathComponent("crypto_vectors.json")),
              let root = try? JSONDecoder().decode(AnyCodable.self, from: data),
              let n = root["rsa_test_key"]?["n"]?.string, let d = root["rsa_test_key"]?["d"]?.string else { return nil }
        return try? RSAPrivateKey(modulusDecimal: n, publicExponentDecimal: "65537", privateExponentDecimal: d)
    }()

    /// A second test key (generated with `openssl genrsa 2048` for these tests only), for servers holding several.
    static let second: RSAPrivateKey? = try? RSAPrivateKey(pem: """
-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAkKirTQHo7iMcJsjEcBivjUeoGnUp13EvR12Zy4xvgxhl19KE
J61x7xL6L1rUV3W3nKzphD1lfYAi461Dp8Rc3qQaEiAHVLDImRv5eS5fBEexM1Vi
AQ0mmozyA1GyXoIeUOGYJLdbwThDy/iz+0JxfZxQO7kaxcRHwvzu3hQCWwJZqG1f
GXC3MyyxYxidslBowDdRYkXzLZgmgFgttJ1H7O6f9I6pigNTCgvo/XZByHFm4Hrq
YluQFpVghzuxcyWtq6j2cZRpxnT91mSnBGdAWl53YC71aDHZTpOhPaG08pe6tqUw
8AocEl8R4OPVqPhQNeeOttIQv0MuuGf8iun4IwIDAQABAoIBADifDI3T1YyAiaBU
rS8DOpOeHJpeicYeM1dHt88IZQ13G0XizH+LUDE3yF2Iu9yP4xKcS7rLHVKGOSHM
y9J69a7fpKS7jKMFnz7uyDM6h05xkVZ6cSXgM+ACkyfhbmO3oo4d/yM/8dYrY74O
1sPeOfXknTMDPQtzzHLx9b1PL6zXI/X9dG9OL8zV4ncVDBQwguMO9jLdAitN84aB
lXjT1WpfHeQu/8vHJSoGX0x/05G14QxvAom5wsMmKI0Fo8/5yYsJnz0jqdJlCT75
/JquRbmoUukS265KJoI2Q8AG5sLtFnT3QebAuoE7YOzMb1Z73m6aPljTHlZRd0P6
U3YHDCECgYEAxX143R7W2DOaSBu8r9vq2RM0yP+qxm1XSQG73StwD9nncyOHzZHe
zWKyQcOxqzpzJ+y9gKKpOZLmqQWTJlN0ldwhx+ZBXkDMXLBtVhJkM88KrKmOdiMF
rvCOhTsvbg3XXY0rxTKxVRPGgpsfd/qT4CREXEKwNB0cRyQPr5VZLe8CgYEAu4Q9
VeadjXQog2p+G6btX+WtIjbnIVTAI22N3TnYP8vtWEuRqFORSq6KTRmaHRshyT+B
YqLK1+Hr/s9Rl3uHe3reTVWGT67dzhjM7S5roevpH3KB859UwUwMeY5+0tS+1Uwl
kAGAhiWJumxQrfgM916N82QcM6Rt55CoEHBKjQ0CgYBTWqMByTtq41TR7IsWOp8D
4hxcXbSprYqysL2nGudgeVs7+JogBNpiG68bHMrHd5MVHdHaEk2UlFEws76o5X6G
pfPIGIIskvLuiDSNqJOMXm2l9KbBbATBEp1E1HcvXz4wKR55S+0W+JLHm0uL60Iw
z33e5vLR/BtsV2cbd9C9FwKBgQCMrxUZapEP/HMczXvZoS58gSOZBNn5fs08h0gl
Du34RzZFxUR9plzeS/8FA01FwwJhK50V9I780sos/Tv4y7wE31UDbkP7anWM17x/
whEMhaL8bfujXQnIkBbX6BmsceLOwnd4CDh17JndXMBXFUAdIzqavaQO9rFiR3xg
AO9dzQKBgQCxkINWhnw/2PXwrPpJeIos7wn7443alzlMa+1+skjcnMc0HDEBzUiw
NQQggoYRJY18w00OXqnmZC3gzt8glLPzRNH0L7WuyOYCyMDIr1QkLxW6c6ceO+zB
FBo/8mTZQjbGuy+oEMh68uaEGaeJlD0VCewnwIQRiTrMt2RUn/VWaQ==
-----END RSA PRIVATE KEY-----
""")

    static func both() throws -> (RSAPrivateKey, RSAPrivateKey) {
        guard let first, let second else { throw MissingVector(description: "test RSA keys did not load") }
        return (first, second)
    }
}
