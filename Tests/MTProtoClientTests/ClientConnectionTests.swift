// The sans-IO client connection against a small in-memory server made of the same parts (server transport,
// exchange server role, server sessions): every framing × {plain, obfuscated2, dd, ee}, a new key and a stored
// one, the −404 of an unknown key, and frames the session refuses.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoTransport
import TLRuntime
import Testing

enum TestKey {
    /// crypto_vectors.json's deterministic 2048-bit test key (never for real use).
    static let privateKey: RSAPrivateKey? = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/vectors/crypto_vectors.json")
        guard let data = try? Data(contentsOf: url),
              let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let key = root["rsa_test_key"] as? [String: Any], let n = key["n"] as? String, let d = key["d"] as? String
        else { return nil }
        return try? RSAPrivateKey(modulusDecimal: n, publicExponentDecimal: "65537", privateExponentDecimal: d)
    }()
}

/// A server just big enough to carry a connection: transport, exchange, sessions, an echo handler.
struct MiniServer {
    var transport: ServerTransport
    var exchange: AuthKeyExchange.Server
    var keys: [UInt64: (AuthKey, Int64)] = [:]
    var sessions: [Int64: Session] = [:]
    let random = SeededRandom(seed: 404)
    var handled = 0
    var flooded: Set<[UInt8]> = []

    init(secret: MTProxySecret?, key: RSAPrivateKey, now: Double, knownKeys: [UInt64: (AuthKey, Int64)] = [:])
        throws
    {
        transport = ServerTransport(configuration: ServerTransportConfiguration(secret: secret), random: random,
                                    unixTime: Int64(now))
        exchange = AuthKeyExchange.Server(configuration: try .init(keys: [key], dcID: 2), random: random)
        keys = knownKeys
    }

    mutating func receive(_ bytes: [UInt8], now: Double) throws -> [UInt8] {
        let output = try transport.receive(bytes)
        var reply = output.outbound
        for case .frame(let payload, _) in output.events {
            if payload.prefix(8).allSatisfy({ $0 == 0 }) {
                switch try exchange.receive(frame: payload, now: now) {
                    case .send(let next), .refused(let next, _): reply += try transport.send(next)
                    case let .finished(next, result):
                        keys[result.authKey.idValue] = (result.authKey, result.firstSalt)
                        reply += try transport.send(next)
                }
                continue
            }
            let keyID = payload.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
            guard let (key, salt) = keys[keyID] else {
                reply += try transport.sendTransportError(-404)
                continue
            }
            let message = try MTProto2Cipher(authKey: key).decrypt(payload, direction: .client)
            let sessionID = message.plaintext.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: Int64.self) }
            var session = sessions[sessionID]
                ?? Session(role: .server, authKey: key, sessionID: sessionID, salt: salt, now: now, random: random)
            for case .request(let id, let body) in try session.receive(message, now: now) {
                handled += 1
                // 0xf100d0NN: answer FLOOD_WAIT_NN the first time this server sees it, then echo.
                if body.count >= 4, Array(body[1..<4]) == [0xd0, 0x00, 0xf1], !flooded.contains(body) {
                    flooded.insert(body)
                    session.answer(id, error: RPCError(code: 420, message: "FLOOD_WAIT_\(body[0])"))
                    continue
                }
                // 0xc0addeNN: never answered (acknowledged only), for timeouts.
                if body.count >= 4, Array(body[1..<4]) == [0xde, 0xad, 0xc0] { continue }
                session.answer(id, result: [0x02, 0xee, 0xff, 0xc0] + body.dropFirst(4))
            }
            for frame in session.outgoing(now: now) { reply += try transport.send(frame.bytes) }
            sessions[sessionID] = session
        }
        return reply
    }
}

enum Mode: String, CaseIterable, Sendable { case plain, obfuscated2, dd, ee }

struct Scenario: Sendable, CustomTestStringConvertible {
    let kind: TransportKind
    let mode: Mode
    var testDescription: String { "\(kind) \(mode)" }
    static let secretKey = (0..<16).map { UInt8($0 * 7 + 1) }

    static var all: [Scenario] {
        TransportKind.allCases.flatMap { kind in
            Mode.allCases.compactMap { mode in
                // Full framing cannot be obfuscated; dd and ee force padded intermediate, so one kind covers them.
                if kind == .full && mode != .plain { return nil }
                if (mode == .dd || mode == .ee) && kind != .paddedIntermediate { return nil }
                return Scenario(kind: kind, mode: mode)
            }
        }
    }

    var secret: MTProxySecret? {
        switch mode {
            case .plain, .obfuscated2: nil
            case .dd: try? MTProxySecret(key: Self.secretKey, kind: .paddedIntermediate)
            case .ee: try? MTProxySecret(key: Self.secretKey, kind: .fakeTLS(domain: "example.com"))
        }
    }

    var transport: TransportConfiguration {
        switch mode {
            case .plain: TransportConfiguration(kind: kind)
            case .obfuscated2: TransportConfiguration(kind: kind, obfuscation: .obfuscated2, dcId: 2)
            case .dd, .ee: TransportConfiguration(kind: kind, obfuscation: secret.map { .mtproxy($0) } ?? .none, dcId: 2)
        }
    }
}

/// Runs client and server until `done` or a bound; returns the client's events.
func converse(_ client: inout ClientConnection, _ server: inout MiniServer, now: Double, opening: [UInt8],
              steps: Int = 20, done: ([ClientConnection.Event]) -> Bool) throws -> [ClientConnection.Event] {
    var events: [ClientConnection.Event] = []
    var toServer = opening
    for step in 0..<steps {
        let time = now + Double(step) * 0.1
        let toClient = try server.receive(toServer, now: time)
        let (bytes, new) = try client.receive(toClient, now: time)
        events += new
        toServer = bytes + (try client.flush(now: time))
        if done(events) && toServer.isEmpty { break }
    }
    return events
}

@Suite struct ClientConnectionTests {
    static let now = 1_700_000_000.0

    @Test(arguments: Scenario.all)
    func handshakeThenRequests(scenario: Scenario) throws {
        let key = try #require(TestKey.privateKey)
        var server = try MiniServer(secret: scenario.secret, key: key, now: Self.now)
        var client = try ClientConnection(
            configuration: .init(transport: scenario.transport, serverKeys: [key.publicKey], dcID: 2),
            random: SeededRandom(seed: 9), now: Self.now)
        let (opening, startEvents) = try client.start(now: Self.now)
        #expect(startEvents.isEmpty)
        var events = try converse(&client, &server, now: Self.now, opening: opening) { events in
            events.contains { if case .ready = $0 { true } else { false } }
        }
        guard case .ready(let stored, true)? = events.first(where: { if case .ready = $0 { true } else { false } })
        else { Issue.record("no key: \(events)"); return }
        #expect(server.keys[stored.authKey.idValue]?.0 == stored.authKey)

        let ids = try (0..<5).map { n in try #require(try client.send([0x01, 0xee, 0xff, 0xc0, UInt8(n), 0, 0, 0])) }
        events = try converse(&client, &server, now: Self.now + 5, opening: try client.flush(now: Self.now + 5)) { events in
            events.filter { if case .session(.result) = $0 { true } else { false } }.count == 5
        }
        var answers: [RequestID: [UInt8]] = [:]
        for case .session(.result(let id, let body)) in events { answers[id] = Array(body) }
        #expect(Set(answers.keys) == Set(ids))
        for (index, id) in ids.enumerated() { #expect(answers[id] == [0x02, 0xee, 0xff, 0xc0, UInt8(index), 0, 0, 0]) }
        #expect(server.handled == 5)
    }

    @Test func storedKeySkipsTheExchange() throws {
        let key = try #require(TestKey.privateKey)
        let authKey = try AuthKey(SeededRandom(seed: 12).bytes(256))
        let stored = StoredAuthKey(authKey: authKey, salt: 0x5a17, timeOffset: 0)
        var server = try MiniServer(secret: nil, key: key, now: Self.now, knownKeys: [authKey.idValue: (authKey, 0x5a17)])
        var client = try ClientConnection(
            configuration: .init(transport: TransportConfiguration(kind: .intermediate), serverKeys: [key.publicKey],
                                 dcID: 2, storedKey: stored),
            random: SeededRandom(seed: 13), now: Self.now)
        let (opening, events) = try client.start(now: Self.now)
        guard case .ready(stored, false)? = events.first else { Issue.record("\(events)"); return }
        let id = try #require(try client.send([0x01, 0xee, 0xff, 0xc0, 9, 9, 9, 9]))
        let later = try converse(&client, &server, now: Self.now, opening: opening + (try client.flush(now: Self.now))) {
            $0.contains { if case .session(.result) = $0 { true } else { false } }
        }
        #expect(later.contains { if case .session(.result(id, _)) = $0 { true } else { false } })
        #expect(!server.exchange.isFinished, "no exchange ran")
    }

    @Test func unknownKeyEndsWithMinus404() throws {
        let key = try #require(TestKey.privateKey)
        let stored = StoredAuthKey(authKey: try AuthKey(SeededRandom(seed: 14).bytes(256)), salt: 1, timeOffset: 0)
        var server = try MiniServer(secret: nil, key: key, now: Self.now)
        var client = try ClientConnection(
            configuration: .init(transport: TransportConfiguration(kind: .abridged), serverKeys: [key.publicKey],
                                 dcID: 2, storedKey: stored),
            random: SeededRandom(seed: 15), now: Self.now)
        let (opening, _) = try client.start(now: Self.now)
        _ = try client.send([0x01, 0xee, 0xff, 0xc0, 1, 1, 1, 1])
        let answer = try server.receive(opening + (try client.flush(now: Self.now)), now: Self.now)
        #expect(throws: ClientConnectionError.server(code: -404)) { _ = try client.receive(answer, now: Self.now) }
        #expect(throws: ClientConnectionError.server(code: -404)) { _ = try client.flush(now: Self.now) }
    }

    @Test func tamperedFramesAreReportedAndTheConnectionGoesOn() throws {
        let key = try #require(TestKey.privateKey)
        let authKey = try AuthKey(SeededRandom(seed: 16).bytes(256))
        var client = try ClientConnection(
            configuration: .init(transport: TransportConfiguration(kind: .intermediate), serverKeys: [key.publicKey],
                                 dcID: 2, storedKey: StoredAuthKey(authKey: authKey, salt: 1, timeOffset: 0)),
            random: SeededRandom(seed: 17), now: Self.now)
        _ = try client.start(now: Self.now)
        // An encrypted-looking frame under our key id with garbage after it.
        var frame = authKey.id + [UInt8](repeating: 0x33, count: 72)
        frame[10] ^= 1
        var serverSide = ServerTransport(configuration: ServerTransportConfiguration(), unixTime: Int64(Self.now))
        _ = try serverSide.receive([0xee, 0xee, 0xee, 0xee])
        let (_, events) = try client.receive(try serverSide.send(frame), now: Self.now)
        guard case .rejectedFrame(.decryption)? = events.first else { Issue.record("\(events)"); return }
        #expect(client.session != nil)
    }
}
