// Clients that break the rules: random bytes, truncated frames, lengths beyond the limit, key exchanges abandoned or
// corrupted at each step. Each must end with the connection closed by a typed error (or, for a clean cut between
// frames, nothing), and leave the server's shared state bounded and usable by the next client.
import MTProto
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

@Suite struct HostileClientTests {
    /// Random streams, any length, any split: the connection closes with a typed error or is still waiting for a
    /// complete opening or frame, which `finish()` reports; nothing is stored.
    @Test(arguments: 0..<40 as Range<UInt64>)
    func randomBytes(seed: UInt64) throws {
        let context = try Fixture.context(seed: seed)
        let random = SeededRandom(seed: seed)
        var server = ServerConnection(context: context, now: Fixture.now)
        let length = Int(random.next() % 4096) + 1
        var bytes = random.bytes(length)
        if seed % 4 == 1 { bytes[0] = 0xef }  // half of these pass the abridged tag and reach the frame reader
        if seed % 4 == 2 { bytes.replaceSubrange(0..<min(4, length), with: [0xee, 0xee, 0xee, 0xee].prefix(length)) }
        var closed: ServerConnectionError?
        var offset = 0
        while offset < bytes.count, closed == nil {
            let size = Int(random.next() % 300) + 1
            closed = server.receive(Array(bytes[offset..<min(bytes.count, offset + size)]), now: Fixture.now).close
            offset += size
        }
        let outcome = closed ?? server.finish()
        #expect(outcome != nil || bytes.count < 64, "seed \(seed): \(bytes.count) random bytes were accepted")
        #expect(context.keys.count == 0 && context.sessions.count == 0)
    }

    @Test(arguments: [TransportKind.abridged, .intermediate, .paddedIntermediate, .full])
    func truncatedFrameIsReportedAtClose(kind: TransportKind) throws {
        var client = try ClientTransport(configuration: TransportConfiguration(kind: kind), random: SeededRandom(seed: 1),
                                         unixTime: Int32(Fixture.now))
        var exchange = AuthKeyExchange.Client(configuration: .init(keys: [try Fixture.rsaKey().publicKey], dcID: 2),
                                              random: SeededRandom(seed: 2))
        let bytes = try client.send(exchange.start(now: Fixture.now))
        var server = ServerConnection(context: try Fixture.context(), now: Fixture.now)
        let output = server.receive(Array(bytes.dropLast(3)), now: Fixture.now)
        #expect(output.close == nil && output.outbound.isEmpty)
        guard case .transport(.truncated)? = server.finish() else {
            Issue.record("a frame cut short was not reported")
            return
        }
    }

    @Test func oversizedLengthIsRefused() throws {
        var limits = ServerLimits()
        limits.maxFramePayload = 4096
        var server = ServerConnection(context: try Fixture.context(limits: limits), now: Fixture.now)
        // Intermediate: the tag, then a length of 1 GiB.
        let output = server.receive([0xee, 0xee, 0xee, 0xee, 0x00, 0x00, 0x00, 0x40], now: Fixture.now)
        guard case .transport(.lengthOutOfRange(_, let length, _, let maximum, _))? = output.close else {
            Issue.record("a 1 GiB frame was not refused: \(String(describing: output.close))")
            return
        }
        #expect(length == 1 << 30 && maximum == 4096)
    }

    @Test func shortFrameIsRefused() throws {
        var server = ServerConnection(context: try Fixture.context(), now: Fixture.now)
        // Abridged: one word of payload, too short for an auth_key_id.
        let output = server.receive([0xef, 0x01, 1, 2, 3, 4], now: Fixture.now)
        #expect(output.close == .frameTooShort(4))
    }

    /// A client that stops after `steps` exchange messages: the connection ends cleanly (between frames), no key is
    /// stored, and another client completes an exchange and a call on the same server.
    @Test(arguments: 0..<3)
    func exchangeAbandoned(steps: Int) throws {
        let context = try Fixture.context(seed: 50)
        var pair = try Pair(context: context, kind: .intermediate, wrapping: .obfuscated2, seed: 50)
        _ = try pair.exchangeMessage(after: steps)
        #expect(pair.server.finish() == nil)
        #expect(context.keys.count == 0)
        var next = try Pair(context: context, kind: .intermediate, wrapping: .obfuscated2, seed: 51)
        _ = try next.handshake()
        guard case .success(.config) = try next.call(firstCall()) else {
            Issue.record("the server no longer serves after an abandoned exchange")
            return
        }
    }

    /// The client's message at each step with one bit flipped: the exchange fails with a typed error naming
    /// the step, and the connection closes.
    @Test(arguments: 0..<3)
    func exchangeCorrupted(step: Int) throws {
        let context = try Fixture.context(seed: 60)
        var pair = try Pair(context: context, kind: .abridged, wrapping: .plain, seed: 60)
        var frame = try pair.exchangeMessage(after: step)
        // req_pq_multi is a constructor and a random nonce: only its constructor can be wrong. The later messages
        // carry encrypted data whose every byte is checked.
        frame[step == 0 ? 20 : frame.count - 5] ^= 0x40
        _ = try pair.deliver(frame)
        guard case .exchange(let error)? = pair.server.closed else {
            Issue.record("step \(step): a corrupted message did not fail the exchange: \(String(describing: pair.server.closed))")
            return
        }
        let expected: [AuthKeyExchangeError.Step] = [.reqPQ, .reqDHParams, .setClientDHParams]
        #expect(error.step == expected[step])
        #expect(context.keys.count == 0)
    }

    /// Many connections opened, each sending the start of an exchange, then dropped: nothing accumulates.
    @Test func manyDroppedConnections() throws {
        let context = try Fixture.context(seed: 70)
        for seed in 0..<200 as Range<UInt64> {
            var pair = try Pair(context: context, kind: .abridged, wrapping: .plain, seed: seed)
            _ = try pair.deliver(pair.exchange.start(now: pair.now))
            #expect(pair.server.finish() == nil)
        }
        #expect(context.keys.count == 0 && context.sessions.count == 0)
    }

    /// A fake-TLS ClientHello recorded and sent again (a censor probing for a proxy) is refused by the listener that
    /// accepted it; the replay cache is per listener.
    @Test func replayedClientHelloIsRefused() throws {
        let context = try Fixture.context(wrapping: .ee)
        var client = try ClientTransport(
            configuration: TransportConfiguration(kind: .paddedIntermediate, obfuscation: Fixture.Wrapping.ee.clientObfuscation,
                                                  dcId: 2),
            random: SeededRandom(seed: 80), unixTime: Int32(Fixture.now))
        let hello = client.start()
        var first = ServerConnection(context: context, now: Fixture.now)
        let accepted = first.receive(hello, now: Fixture.now)
        #expect(accepted.close == nil && !accepted.outbound.isEmpty, "the ServerHello")
        var replay = ServerConnection(context: context, now: Fixture.now + 1)
        guard case .transport(.fakeTLS(let why))? = replay.receive(hello, now: Fixture.now + 1).close else {
            Issue.record("a replayed ClientHello was accepted")
            return
        }
        #expect(why.contains("replayed"))
        var elsewhere = ServerConnection(context: try Fixture.context(wrapping: .ee), now: Fixture.now)
        #expect(elsewhere.receive(hello, now: Fixture.now).close == nil)
        #expect(context.replayCache.count == 1)
    }

    @Test func publicKeyPEMMatchesTheFixture() throws {
        let key = try Fixture.rsaKey().publicKey
        let expected = try #require(Fixture.testKey?["pem_pkcs1"])
        #expect(key.pkcs1PEM.split(separator: "\n") == expected.split(separator: "\n"))
        #expect(try RSAPublicKey(pem: key.pkcs1PEM) == key)
    }
}
