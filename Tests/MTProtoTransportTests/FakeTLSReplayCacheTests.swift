// The fake-TLS replay cache: a digest is refused while kept, forgotten when it expires, and the count is bounded.
import MTProtoTransport
import Testing

@Suite struct FakeTLSReplayCacheTests {
    @Test func repeatsAreRefusedUntilExpiry() {
        let cache = FakeTLSReplayCache()
        let digest = [UInt8](repeating: 7, count: 32)
        #expect(cache.insert(digest, now: 100, expires: 700))
        #expect(!cache.insert(digest, now: 500, expires: 700))
        // Past its expiry the hello fails the clock check anyway, so the digest is forgotten.
        #expect(cache.insert([UInt8](repeating: 8, count: 32), now: 701, expires: 1301))
        #expect(cache.insert(digest, now: 702, expires: 1302))
    }

    @Test func countIsBounded() {
        let cache = FakeTLSReplayCache(capacity: 100)
        for n in 0..<5000 {
            #expect(cache.insert([UInt8(n & 0xff), UInt8(n >> 8)] + [UInt8](repeating: 0, count: 30), now: 0, expires: 600))
        }
        #expect(cache.count == 100)
    }
}
