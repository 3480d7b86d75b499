// Randomness is injected everywhere it is used, so key exchanges and message padding can be replayed
// byte for byte in tests (ARCHITECTURE.md: "randomness is passed in").
import COpenSSL

/// A source of random bytes. Production code uses `SystemRandom`; tests pass a deterministic source.
public protocol RandomSource: Sendable {
    /// Fills every byte of `buffer`.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RandomSource {
    /// `count` fresh bytes from this source.
    public func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(0, count))
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }

    /// Eight fresh bytes as an `Int64` (ids, salts, access hashes).
    public func int64() -> Int64 {
        bytes(8).withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
    }

    /// A uniform draw from 0..<1 with 53 random bits (a Double's precision).
    public func unitInterval() -> Double {
        Double(UInt64(bitPattern: int64()) >> 11) / Double(UInt64(1) << 53)
    }
}

/// OpenSSL's CSPRNG (`RAND_bytes`). Should it ever report failure, the buffer is filled from the operating
/// system's generator instead, so callers never receive unfilled bytes.
public struct SystemRandom: RandomSource {
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, Int(Int32.max))
            if RAND_bytes(base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(chunk)) != 1 {
                var generator = SystemRandomNumberGenerator()
                for i in offset..<(offset + chunk) { buffer[i] = UInt8.random(in: .min ... .max, using: &generator) }
            }
            offset += chunk
        }
    }
}

/// Compares two byte strings in time that depends only on their lengths (`CRYPTO_memcmp`). Used wherever a
/// received hash or msg_key is checked, so a forger learns nothing from timing. Lengths are not secret.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, pa.count) == 0 }
    }
}
