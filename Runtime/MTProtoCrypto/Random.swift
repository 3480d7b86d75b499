// Randomness is injected everywhere it is used, so key exchanges and message padding can be replayed
// byte for byte in tests (ARCHITECTURE.md: "randomness is passed in").

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

/// The crypto backend's CSPRNG (OpenSSL's `RAND_bytes`, or the operating system's generator for the portable
/// backend). Should it ever report failure, the buffer is filled from the operating system's generator instead, so
/// callers never receive unfilled bytes.
public struct SystemRandom: RandomSource {
    /// The system generator; it holds no state.
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count > 0, !Backend.fillRandom(buffer) else { return }
        var generator = SystemRandomNumberGenerator()
        for i in buffer.indices { buffer[i] = UInt8.random(in: .min ... .max, using: &generator) }
    }
}

/// Compares two byte strings in time that depends only on their lengths. Used wherever a received hash or msg_key
/// is checked, so a forger learns nothing from timing. Lengths are not secret.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in Backend.constantTimeEquals(pa, pb) } }
}
