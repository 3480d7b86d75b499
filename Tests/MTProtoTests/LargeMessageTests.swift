// What a session does with large messages, where a download spends its time: a big body is gzip-packed only when a
// quick probe says it compresses, and a big answer reaches the caller intact through the path that hands the
// decrypted frame over as the result instead of copying it.
import MTProtoCrypto
import TLRuntime
import Testing
@testable import MTProto

@Suite struct LargeMessageTests {
    /// The body of the single message a client frame carries (the request, not acks or salt requests).
    static func sentBody(_ session: inout Session, now: Double) throws -> [UInt8] {
        for frame in session.outgoing(now: now) {
            let message = try open(frame.bytes, from: .client)
            var reader = BufferReader(bytes: message.body)
            guard try reader.readUInt32() == 0x73f1_f8dc else { return message.body }
            for _ in 0..<(try reader.readInt32()) {
                _ = try reader.readInt64()
                _ = try reader.readInt32()
                let body = try reader.readRaw(count: Int(try reader.readInt32()))
                if body.starts(with: [0x01, 0xee, 0xff, 0xc0]) || body.starts(with: [0xa1, 0xcf, 0x72, 0x30]) { return body }
            }
        }
        throw TemporaryKeySessionTests.NoBinding()
    }

    @Test func largeBodiesArePackedOnlyWhenTheyCompress() throws {
        var pair = SessionPair(seed: 81)
        let random = Echo.request(1) + SeededRandom(seed: 82).bytes(64 << 10)
        _ = try pair.client.send(random)
        #expect(try Self.sentBody(&pair.client, now: pair.now) == random, "random bytes go as they are")

        let text = Echo.request(2) + Array(String(repeating: "upload.getFile location:InputFileLocation ", count: 2000).utf8)
        _ = try pair.client.send(text)
        let packed = try Self.sentBody(&pair.client, now: pair.now)
        #expect(packed.starts(with: [0xa1, 0xcf, 0x72, 0x30]) && packed.count < text.count / 10)
        var reader = BufferReader(bytes: packed)
        _ = try reader.readUInt32()
        #expect(try GZip.unpack(try reader.readTLBytes()) == text)
    }

    @Test func aLargeAnswerReachesTheCallerIntact() throws {
        var pair = SessionPair(seed: 83)
        pair.autoAnswer = false
        let request = try pair.client.send(Echo.request(3))
        #expect(try pair.run(limit: 10) { !$0.serverRequests.isEmpty })
        let result = SeededRandom(seed: 84).bytes(512 << 10)
        for (id, _) in pair.serverRequests { pair.server.answer(id, result: result) }
        #expect(try pair.run(limit: 10) { !$0.clientEvents.results.isEmpty })
        let answers = pair.clientEvents.results
        #expect(answers.map(\.0) == [request])
        #expect(answers.first?.1 == result)
    }
}
