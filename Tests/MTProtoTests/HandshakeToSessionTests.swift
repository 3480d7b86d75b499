// The two halves of the core together: a key exchange in memory, then a client and a server session over the key,
// salt and clock offset it produced, carrying RPCs — what the client and the test server will do over sockets.
import MTProtoCrypto
import Testing
@testable import MTProto

@Suite struct HandshakeToSessionTests {
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func exchangeThenSession(seed: UInt64) throws {
        let (clientConfiguration, serverConfiguration) = try AuthKeyExchangeTests.configurations()
        let (client, server) = Exchange.seededPair(seed, client: clientConfiguration, server: serverConfiguration)
        let (outcome, _) = Exchange.run(client, server)
        let results = try #require(outcome.completed)
        #expect(results.client.authKey == results.server.authKey)
        #expect(results.client.firstSalt == results.server.firstSalt)

        let now = Exchange.start + 1
        var clientSession = Session(role: .client, authKey: results.client.authKey, salt: results.client.firstSalt,
                                    timeOffset: results.client.timeOffset, random: SeededRandom(seed: seed &+ 10))
        var serverSession = Session(role: .server, authKey: results.server.authKey, sessionID: clientSession.sessionID,
                                    salt: results.server.firstSalt, now: now, random: SeededRandom(seed: seed &+ 11))
        var expected: [RequestID: UInt64] = [:]
        for n in 0..<20 as Range<UInt64> { expected[try clientSession.send(Echo.request(n))] = n }
        var answered: [RequestID: UInt64] = [:]
        for step in 0..<10 where answered.count < expected.count {
            let time = now + Double(step) * 0.1
            for frame in clientSession.outgoing(now: time) {
                for case .request(let id, let body) in try serverSession.receive(frame: frame.bytes, now: time) {
                    serverSession.answer(id, result: Echo.answer(to: body) ?? [])
                }
            }
            for frame in serverSession.outgoing(now: time) {
                for case .result(let id, let body) in try clientSession.receive(frame: frame.bytes, now: time) {
                    answered[id] = Echo.value(ofAnswer: Array(body))
                }
            }
        }
        #expect(answered == expected)
        // The first salt was accepted (no bad_server_salt), and the future salts came with the first answers.
        #expect(!clientSession.futureSalts.isEmpty)
        #expect(clientSession.futureSalts.first?.salt == results.client.firstSalt)
    }
}
