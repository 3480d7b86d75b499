// What a session does with large messages, where a download spends its time: a big body is gzip-packed only when a
// quick probe says it compresses, and a big answer reaches the caller intact through the path that hands the
// decrypted frame over as the result instead of copying it; a server that answers large requests one call at a
// time keeps the last large frame back (hashed) for its next call, and every frame still arrives once, in order.
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

    @Test func aHeldFrameGoesOutFirstFromTheNextCall() throws {
        var pair = SessionPair(seed: 85)
        pair.autoAnswer = false
        let requests = try (0..<3).map { try pair.client.send(Echo.request(UInt64(10 + $0))) }
        #expect(try pair.run(limit: 10) { $0.serverRequests.count == 3 })
        let ids = pair.serverRequests.map(\.0)
        let parts = (0..<3).map { SeededRandom(seed: 86 + UInt64($0)).bytes(300_000) }
        var frames: [[OutgoingFrame]] = []
        pair.server.answer(ids[0], result: parts[0])
        frames.append(pair.server.outgoing(now: pair.now, holdingLast: true))
        pair.server.answer(ids[1], result: parts[1])
        frames.append(pair.server.outgoing(now: pair.now, holdingLast: true))
        // Nothing new: holding goes on, and a call without `holdingLast` sends what is held.
        frames.append(pair.server.outgoing(now: pair.now, holdingLast: true))
        frames.append(pair.server.outgoing(now: pair.now))
        pair.server.answer(ids[2], result: parts[2])
        frames.append(pair.server.outgoing(now: pair.now, holdingLast: true))
        #expect(frames.map(\.count) == [0, 1, 0, 1, 0], "each large frame waits for the next call")
        frames.append(pair.server.outgoing(now: pair.now))
        let sent = frames.flatMap { $0 }
        #expect(sent.map(\.messageID) == sent.map(\.messageID).sorted(), "msg_ids still increase")
        var results: [(RequestID, [UInt8])] = []
        for frame in sent {
            for case .result(let id, let bytes) in try pair.client.receive(frame: frame.bytes, now: pair.now) {
                results.append((id, Array(bytes)))
            }
        }
        #expect(results.map(\.0) == requests)
        #expect(results.map(\.1) == parts)
        #expect(pair.server.outgoing(now: pair.now).isEmpty)
    }

    @Test func smallFramesAreNotHeld() throws {
        var pair = SessionPair(seed: 89)
        pair.autoAnswer = false
        _ = try pair.client.send(Echo.request(20))
        #expect(try pair.run(limit: 10) { $0.serverRequests.count == 1 })
        pair.server.answer(pair.serverRequests[0].0, result: [UInt8](repeating: 7, count: Session.heldFrameBytes / 2))
        #expect(pair.server.outgoing(now: pair.now, holdingLast: true).count == 1)
    }
}
