// A connection cut mid-stream, over the sans-IO sessions: at a random moment each direction keeps a random prefix
// of what was on the wire (a frame cut in the middle is lost, with everything after it), the server may go on
// answering into the dead connection, frames of the old connection may reach the server after the new one's, and
// then the session carries on over a new connection (`resendUnanswered` on the client, `redeliverUnacknowledged` on
// the server, as the registry calls it when a session moves). Whatever the seed: every request is answered exactly
// once and run exactly once.
import MTProtoCrypto
import Testing
@testable import MTProto

@Suite struct SessionCutTests {
    struct Outcome {
        var requests = 0
        var cuts = 0
        var answersPerRequest: [RequestID: Int] = [:]
        var runsPerValue: [UInt64: Int] = [:]
        var failures: [(RequestID, RequestFailure)] = []
    }

    /// One seeded run: rounds of 1…200 requests in flight, cuts at random steps, then steps until all is answered.
    static func run(seed: UInt64) throws -> Outcome {
        var pair = SessionPair(seed: seed)
        pair.autoAnswer = false
        let random = SeededRandom(seed: seed &* 31 &+ 7)
        func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(random.next() % UInt64(n)) }
        var outcome = Outcome()
        var sent: [RequestID] = []
        var next: UInt64 = 1
        var late: [[UInt8]] = []

        func collect(_ pair: inout SessionPair) {
            for event in pair.takeClientEvents() {
                switch event {
                case .result(let id, _): outcome.answersPerRequest[id, default: 0] += 1
                case .failed(let id, let why): outcome.failures.append((id, why))
                default: break
                }
            }
            for event in pair.takeServerEvents() {
                if case .request(_, let body) = event, let n = Echo.value(ofRequest: body) {
                    outcome.runsPerValue[n, default: 0] += 1
                }
            }
        }

        /// The handler finishes some of the requests it holds (any order).
        func answerSome(_ pair: inout SessionPair) {
            var waiting = pair.serverRequests
            var generator = random
            for (id, body) in waiting.shuffled(using: &generator) where below(3) != 0 {
                if let answer = Echo.answer(to: body) { pair.server.answer(id, result: answer) }
                waiting.removeAll { $0.0 == id }
            }
            pair.serverRequests = waiting
        }

        func step(_ pair: inout SessionPair, cutting: Bool) throws {
            pair.post(pair.client.outgoing(now: pair.now), toServer: true)
            if cutting {
                // The cut: a prefix of each direction arrives, the rest is lost.
                outcome.cuts += 1
                pair.toServer = Array(pair.toServer.prefix(below(pair.toServer.count + 1)))
                if below(2) == 0 {
                    // Some of the old connection's frames reach the server after the new connection's first.
                    late = pair.toServer
                    pair.toServer = []
                }
                try pair.deliver(toServer: true)
                answerSome(&pair)
                pair.post(pair.server.outgoing(now: pair.now), toServer: false)
                pair.toClient = Array(pair.toClient.prefix(below(pair.toClient.count + 1)))
                try pair.deliver(toServer: false)
                // The old connection may still write answers the client never sees.
                answerSome(&pair)
                if below(2) == 0 { _ = pair.server.outgoing(now: pair.now) }
                pair.client.resendUnanswered(now: pair.now)
                pair.server.redeliverUnacknowledged()
            } else {
                try pair.deliver(toServer: true)
                if !late.isEmpty {
                    pair.toServer = late
                    late = []
                    try pair.deliver(toServer: true)
                    // Frames of the old connection: what the server sends on it is lost, and the session moves back
                    // to the new connection with its next frame.
                    answerSome(&pair)
                    _ = pair.server.outgoing(now: pair.now)
                    pair.server.redeliverUnacknowledged()
                }
                answerSome(&pair)
                pair.post(pair.server.outgoing(now: pair.now), toServer: false)
                try pair.deliver(toServer: false)
            }
            pair.clientEvents += pair.client.takeEvents()
            pair.now += 0.05
            collect(&pair)
        }

        for _ in 0..<(3 + below(4)) {
            for _ in 0..<(1 + below(200)) {
                sent.append(try pair.client.send(Echo.request(next)))
                next += 1
            }
            for _ in 0..<(1 + below(6)) { try step(&pair, cutting: below(3) == 0) }
        }
        outcome.requests = sent.count
        for _ in 0..<4_000 where outcome.answersPerRequest.count + outcome.failures.count < sent.count
            || !pair.serverRequests.isEmpty {
            try step(&pair, cutting: false)
        }
        return outcome
    }

    @Test(arguments: 1...40 as ClosedRange<UInt64>)
    func everyRequestIsAnsweredOnceAndRunOnce(seed: UInt64) throws {
        let outcome = try Self.run(seed: seed)
        #expect(outcome.failures.isEmpty, "seed \(seed): \(outcome.failures)")
        #expect(outcome.answersPerRequest.count == outcome.requests, "seed \(seed): answered")
        #expect(outcome.answersPerRequest.values.allSatisfy { $0 == 1 }, "seed \(seed): answered twice")
        #expect(outcome.runsPerValue.count == outcome.requests, "seed \(seed): run")
        #expect(outcome.runsPerValue.values.allSatisfy { $0 == 1 }, "seed \(seed): run twice")
    }

    /// The runs cut at all: some seeds cut often, and the requests are many.
    @Test func theRunsCut() throws {
        let outcomes = try (1...8 as ClosedRange<UInt64>).map { try Self.run(seed: $0) }
        #expect(outcomes.map(\.cuts).reduce(0, +) >= 8)
        #expect(outcomes.allSatisfy { $0.requests >= 3 })
    }

    /// The same seed cuts the same way and gets the same answers: a failing seed replays.
    @Test func aSeedReplays() throws {
        let first = try Self.run(seed: 5), second = try Self.run(seed: 5)
        #expect(first.cuts == second.cuts && first.requests == second.requests)
        #expect(first.runsPerValue == second.runsPerValue)
    }
}
