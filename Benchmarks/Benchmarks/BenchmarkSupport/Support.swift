// What several benchmark targets share: the repository's RSA test key, a failure type, and the process's resident
// memory (for per-session and per-client memory figures).
import Foundation
import MTProtoCrypto

/// crypto_vectors.json's 2048-bit test key as decimal n and d, read from the repository's fixtures.
public func testKeyDecimals() throws -> (n: String, d: String) {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/vectors/crypto_vectors.json")
    let root = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
    guard let key = root?["rsa_test_key"] as? [String: Any], let n = key["n"] as? String, let d = key["d"] as? String else {
        throw CryptoError.invalidPEM("crypto_vectors.json has no rsa_test_key")
    }
    return (n, d)
}

/// crypto_vectors.json's 2048-bit test key.
public func testKey() throws -> RSAPrivateKey {
    let (n, d) = try testKeyDecimals()
    return try RSAPrivateKey(modulusDecimal: n, publicExponentDecimal: "65537", privateExponentDecimal: d)
}

public struct BenchmarkFailure: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// Resident memory of this process, from /proc.
public func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
