// SHA-1, SHA-256, HMAC-SHA256 and constant-time comparison against published known answers (FIPS 180 "abc",
// RFC 4231 test case 2).
import Testing
@testable import MTProtoCrypto

@Suite struct HashTests {
    @Test func sha1OfABC() {
        #expect(Hash.sha1(Array("abc".utf8)) == hex("a9993e364706816aba3e25717850c26c9cd0d89d"))
    }

    @Test func sha256OfABC() {
        #expect(Hash.sha256(Array("abc".utf8))
            == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
    }

    @Test func sha256OfPartsEqualsConcatenation() {
        let a: [UInt8] = Array(0..<100), b: [UInt8] = Array(100..<230), c: [UInt8] = []
        #expect(Hash.sha256(a, b, c) == Hash.sha256(a + b + c))
        #expect(Hash.sha1(a, b) == Hash.sha1(a + b))
    }

    @Test func hmacRFC4231Case2() {
        #expect(Hash.hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
            == hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    @Test func constantTimeComparison() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([], []))
    }

    @Test func systemRandomFillsDistinctBytes() {
        let a = SystemRandom().bytes(32), b = SystemRandom().bytes(32)
        #expect(a.count == 32)
        #expect(a != b)
    }
}
