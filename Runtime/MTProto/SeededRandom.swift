// A deterministic RandomSource for tests, benchmarks and the test server's fault injection, so a failing run
// replays from its seed. Not a CSPRNG: production code passes MTProtoCrypto's SystemRandom.
import MTProtoCrypto
import Synchronization

/// xoshiro256** seeded through SplitMix64. Thread-safe; the sequence depends only on the seed and the order of
/// draws. Never use it for real keys.
public final class SeededRandom: RandomSource, RandomNumberGenerator, @unchecked Sendable {
    private let state: Mutex<(UInt64, UInt64, UInt64, UInt64)>
    /// The seed the sequence was made from.
    public let seed: UInt64

    /// A source whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9e37_79b9_7f4a_7c15
            var z = x
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        state = Mutex((splitMix(), splitMix(), splitMix(), splitMix()))
    }

    /// The next 64 bits of the sequence.
    public func next() -> UInt64 {
        state.withLock { s in
            let result = ((s.1 &* 5) << 7 | (s.1 &* 5) >> 57) &* 9
            let t = s.1 << 17
            s.2 ^= s.0
            s.3 ^= s.1
            s.1 ^= s.2
            s.0 ^= s.3
            s.2 ^= t
            s.3 = s.3 << 45 | s.3 >> 19
            return result
        }
    }

    /// Fills `buffer` with the next bytes of the sequence.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var i = 0
        while i < buffer.count {
            var word = next()
            for _ in 0..<min(8, buffer.count - i) {
                buffer[i] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                i += 1
            }
        }
    }
}
