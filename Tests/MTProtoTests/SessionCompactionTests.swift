// A server session left without a connection: `compact(now:)` gives back what its connection's traffic grew and
// keeps what a returning client relies on (the msg_ids inside the time window, the answers not yet acknowledged).
import MTProtoCrypto
import Testing
@testable import MTProto

@Suite struct SessionCompactionTests {
    /// A pipelined run, then its connection goes: what the server session still lists shrinks to what is kept, and
    /// the client's next requests are answered as before.
    @Test func compactionKeepsServing() throws {
        var pair = SessionPair(seed: 5601)
        var sent: UInt64 = 0
        var frames: [[UInt8]] = []
        for _ in 0..<20 {
            for _ in 0..<25 {
                _ = try pair.client.send(Echo.request(sent))
                sent += 1
            }
            let outgoing = pair.client.outgoing(now: pair.now)
            frames += outgoing.map(\.bytes)
            pair.post(outgoing, toServer: true)
            try pair.step()
        }
        #expect(try pair.run { $0.clientEvents.results.count == Int(sent) })
        // Past the ack delay, so the client's acks reach the server and it lets the answers go.
        for _ in 0..<10 { try pair.step(advance: 0.5) }
        let before = (containers: pair.server.containers.count, received: pair.server.received.count,
                      answerSlots: pair.server.answers.used.count, kept: pair.server.retained.messages.count)
        #expect(before.containers > 0)
        pair.server.compact(now: pair.now)
        let server = pair.server
        #expect(server.containers.count < before.containers)
        for (_, items) in server.containers {
            #expect(items.contains { server.retained[$0] != nil })
        }
        #expect(server.containerOrder.count == server.containers.count)
        // Every id is inside the time window: all are kept, for duplicates and msgs_state_req.
        #expect(server.received.count == before.received)
        #expect(server.retained.messages.count == before.kept)
        #expect(server.answers.used.count <= max(8, 2 * server.answers.count))
        #expect(server.answers.used.count <= before.answerSlots)
        #expect(server.inProgress.used.isEmpty)
        #expect(server.queue.capacity == server.queue.count)

        // A frame sent before is a duplicate still: nothing runs twice.
        let executed = pair.executions
        let message = try pair.serverCipher.decrypt(frames[3], direction: .client)
        var refusals: [Int32] = []
        let replayed = try pair.server.receive(message, now: pair.now, refusing: &refusals)
        #expect(!replayed.contains { if case .request = $0 { true } else { false } })
        #expect(pair.executions == executed)

        // And the session answers new requests, as the same session.
        _ = pair.takeClientEvents()
        let next = try pair.client.send(Echo.request(9_999))
        #expect(try pair.run { $0.clientEvents.results.contains { $0.0 == next } })
        #expect(!pair.clientEvents.contains { if case .sessionCreated = $0 { true } else { false } })
    }

    /// Ids from before the time window are forgotten by compaction; a copy of one is refused by its time anyway, and
    /// the replay horizon is when the newest one leaves the window.
    @Test func compactionForgetsOnlyIDsOutsideTheWindow() throws {
        var pair = SessionPair(seed: 5602)
        #expect(pair.server.replayHorizon == -.infinity)
        var frames: [[UInt8]] = []
        for n in 0..<40 as Range<UInt64> {
            _ = try pair.client.send(Echo.request(n))
            let outgoing = pair.client.outgoing(now: pair.now)
            frames += outgoing.map(\.bytes)
            pair.post(outgoing, toServer: true)
            try pair.step()
        }
        #expect(try pair.run { $0.clientEvents.results.count == 40 })
        let newest = try #require(pair.server.received.highest)
        #expect(pair.server.replayHorizon
            == MessageIDGenerator.time(of: newest.id) + pair.server.configuration.pastWindow)
        pair.server.compact(now: pair.now)
        #expect(pair.server.received.count > 0)
        pair.now = pair.server.replayHorizon + 31
        pair.server.compact(now: pair.now)
        #expect(pair.server.received.count == 0)
        let message = try pair.serverCipher.decrypt(frames[0], direction: .client)
        var refusals: [Int32] = []
        let events = try pair.server.receive(message, now: pair.now, refusing: &refusals)
        #expect(events.ignored.contains { if case .outsideTimeWindow = $0.1 { true } else { false } })
        #expect(!events.contains { if case .request = $0 { true } else { false } })
    }
}
