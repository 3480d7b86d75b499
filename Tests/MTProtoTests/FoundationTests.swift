// msg_id generation, the unencrypted envelope (against the docs sample's whole messages) and SeededRandom.
import Foundation
import MTProtoCrypto
import Testing
@testable import MTProto

@Suite struct MessageIDTests {
    @Test func clientIDsAreDivisibleByFourAndStrictlyIncreasing() {
        var generator = MessageIDGenerator(role: .client)
        var last: Int64 = 0
        // The same instant many times, then a clock that jumps backwards: ids still increase.
        for now in Array(repeating: 1_700_000_000.25, count: 100) + [1_699_999_000] {
            let id = generator.next(now: now)
            #expect(id % 4 == 0)
            #expect(id > last)
            last = id
        }
        #expect(MessageIDGenerator.time(of: generator.next(now: 1_700_000_001)) >= 1_700_000_001)
    }

    @Test func serverResiduesSayWhetherItIsAResponse() {
        var generator = MessageIDGenerator(role: .server, timeOffset: 50)
        #expect(generator.timeOffset == 0)
        let response = generator.next(now: 1_700_000_000, isResponse: true)
        let push = generator.next(now: 1_700_000_000, isResponse: false)
        let again = generator.next(now: 1_700_000_000, isResponse: true)
        #expect(response & 3 == 1 && push & 3 == 3 && again & 3 == 1)
        #expect(response < push && push < again)
    }

    @Test func offsetShiftsTheClock() {
        var generator = MessageIDGenerator(role: .client, timeOffset: 120.5)
        let id = generator.next(now: 1_700_000_000)
        #expect(abs(MessageIDGenerator.time(of: id) - 1_700_000_120.5) < 0.001)
        #expect(MessageIDGenerator.rawID(at: .nan) == 0)
    }
}

@Suite struct UnencryptedMessageTests {

    /// The docs sample's req_pq_multi dump is a whole unencrypted message.
    @Test func docsSampleRoundTrips() throws {
        let bytes = try KnownAnswerFile.docs2024Hex("req_pq_multi")
        let message = try UnencryptedMessage(parsing: bytes)
        #expect(message.body.prefix(4) == [0xf1, 0x8e, 0x7e, 0xbe])
        #expect(message.bytes == bytes)
    }

    @Test func malformedFramesAreTypedErrors() {
        #expect(throws: UnencryptedMessageError.tooShort(19)) { try UnencryptedMessage(parsing: [UInt8](repeating: 0, count: 19)) }
        var keyed = UnencryptedMessage(messageID: 4, body: [1, 2, 3, 4]).bytes
        keyed[0] = 1
        #expect(throws: UnencryptedMessageError.nonZeroAuthKeyID(1)) { try UnencryptedMessage(parsing: keyed) }
        var short = UnencryptedMessage(messageID: 4, body: [1, 2, 3, 4]).bytes
        short.removeLast()
        #expect(throws: UnencryptedMessageError.lengthMismatch(declared: 4, available: 3)) {
            try UnencryptedMessage(parsing: short)
        }
        var negative = UnencryptedMessage(messageID: 4, body: []).bytes
        negative[16..<20] = [0xff, 0xff, 0xff, 0xff]
        #expect(throws: UnencryptedMessageError.lengthMismatch(declared: -1, available: 0)) {
            try UnencryptedMessage(parsing: negative)
        }
    }
}

@Suite struct SeededRandomTests {
    @Test func sameSeedSameBytesOtherSeedOtherBytes() {
        #expect(SeededRandom(seed: 7).bytes(100) == SeededRandom(seed: 7).bytes(100))
        #expect(SeededRandom(seed: 7).bytes(100) != SeededRandom(seed: 8).bytes(100))
        // Draw boundaries do not matter: 3 + 13 bytes equal one draw of 16.
        let a = SeededRandom(seed: 1), b = SeededRandom(seed: 1)
        let whole = a.bytes(16)
        #expect(Array(whole.prefix(8)) == b.bytes(8))
    }
}
