// Client and server sessions in memory under a seeded, hostile network and a server that injects every fault the
// session must survive: each request is answered exactly once, none is lost, no answer is delivered twice.
import MTProtoCrypto
import Testing
@testable import MTProto

@Suite struct SessionRoundTripTests {
    @Test func requestsAreAnsweredAndMatched() throws {
        var pair = SessionPair(seed: 1)
        var expected: [RequestID: UInt64] = [:]
        for n in 0..<250 as Range<UInt64> { expected[try pair.client.send(Echo.request(n))] = n }
        #expect(try pair.run { $0.clientEvents.results.count == 250 })
        let results = pair.takeClientEvents().results
        #expect(Dictionary(results.map { ($0.0, Echo.value(ofAnswer: $0.1)) }, uniquingKeysWith: { a, _ in a })
            == expected.mapValues { $0 })
        #expect(pair.client.pendingRequestCount == 0)
        // Salts were fetched with get_future_salts along the way, not learned from errors.
        #expect(!pair.client.futureSalts.isEmpty)
        #expect(!pair.serverEvents.contains { if case .ignored = $0 { true } else { false } })
    }

    @Test func tenThousandRequestsUnderEveryFault() throws {
        try runUnderFaults(seed: 7, requests: 10_000)
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func otherSeedsUnderEveryFault(seed: UInt64) throws {
        try runUnderFaults(seed: seed, requests: 1_500)
    }

    func runUnderFaults(seed: UInt64, requests total: Int) throws {
        var pair = SessionPair(seed: seed)
        pair.faults = Faults(drop: 0.05, duplicate: 0.05, delay: 0.1)
        let chaos = SeededRandom(seed: seed &* 31)
        var expected: [RequestID: UInt64] = [:]
        var answered: [RequestID: UInt64] = [:]
        var duplicates = 0
        var failures: [(RequestID, RequestFailure)] = []
        var counts = (rotations: 0, injected: 0, resets: 0)
        var sent: UInt64 = 0
        var reasons: [ResendReason: Int] = [:]
        var sessionsCreated = 0
        let codes: [Int32] = [16, 17, 32, 33, 48]
        for step in 0..<20_000 {
            if answered.count == total { break }
            // Pipeline: new requests on every step for 400 steps, so faults land while many are in flight.
            for _ in 0..<max(1, total / 400) where Int(sent) < total {
                expected[try pair.client.send(Echo.request(sent, padding: Int(sent % 7) * 200))] = sent
                sent += 1
            }
            switch chaos.next() % 50 {
                case 0:
                    pair.server.rotateSalts(.hourly(first: Int64(bitPattern: chaos.next()), start: pair.now - 60,
                                                    random: chaos))
                    counts.rotations += 1
                case 1...4 where pair.refusals.isEmpty:
                    pair.refusals.append(codes[Int(chaos.next() % UInt64(codes.count))])
                    counts.injected += 1
                case 5 where step % 3 == 0:
                    pair.server.forgetState()
                    counts.resets += 1
                default: break
            }
            try pair.step()
            for event in pair.takeClientEvents() {
                switch event {
                    case .result(let id, let body):
                        if answered[id] != nil { duplicates += 1 }
                        answered[id] = Echo.value(ofAnswer: Array(body))
                    case .failed(let id, let why): failures.append((id, why))
                    case .resent(_, let why): reasons[why, default: 0] += 1
                    case .sessionCreated: sessionsCreated += 1
                    default: break
                }
            }
        }
        #expect(failures.isEmpty, "failures: \(failures.prefix(5))")
        #expect(duplicates == 0)
        #expect(answered.count == total)
        #expect(answered == expected, "every answer carries its own request's value")
        // What is left (a get_future_salts sent on the last step) settles once the faults stop.
        pair.faults = Faults()
        #expect(try pair.run { $0.client.pendingRequestCount == 0 }, "\(pair.client.requests.values.map(\.kind))")
        // Every fault happened and was recovered from by the path meant for it.
        #expect(counts.rotations > 0 && counts.injected > 0 && counts.resets > 0)
        #expect(pair.stats.dropped > 0 && pair.stats.duplicated > 0 && pair.stats.delayed > 0)
        for code: Int32 in [16, 17, 32, 33, 48] {
            #expect(reasons[.badMessage(code: code), default: 0] > 0, "no resend after bad_msg_notification \(code)")
        }
        #expect(sessionsCreated > 0)
        if total >= 10_000 {
            #expect(reasons[.notReceived, default: 0] > 0, "dropped requests are found with msgs_state_req")
            #expect(reasons[.sessionRecreated, default: 0] > 0, "requests the reset server lost were sent again")
        }
    }
}
