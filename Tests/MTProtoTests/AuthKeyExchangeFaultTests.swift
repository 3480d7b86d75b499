// Tampering and garbage: every byte of every message of an exchange flipped in turn (two patterns), truncations,
// and random frames at every state. The property: a typed error from one of the two ends, or — only where the
// protocol authenticates nothing — an exchange that still ends with both ends holding the same key. Never a trap,
// never a client key the server does not hold.
import MTProtoApi
import MTProtoCrypto
import TLRuntime
import Testing
@testable import MTProto

@Suite struct AuthKeyExchangeFaultTests {
    typealias Client = AuthKeyExchange.Client
    typealias Server = AuthKeyExchange.Server

    struct Tally: CustomStringConvertible {
        var clientErrors = 0, serverErrors = 0
        /// (message index, byte offset) of changes that went unnoticed and were harmless.
        var harmless: [(message: Int, offset: Int)] = []
        var description: String {
            "client errors \(clientErrors), server errors \(serverErrors), harmless \(harmless.count): "
                + harmless.map { "m\($0.message)@\($0.offset)" }.joined(separator: " ")
        }
    }

    /// Flips each byte of each message sent in `direction` with each pattern, resuming from the recorded states.
    static func flipEveryByte(_ direction: Exchange.Direction, seed: UInt64) throws -> Tally {
        let (first, second) = try TestKeys.both()
        let (client, server) = Exchange.seededPair(
            seed, client: .init(keys: [first.publicKey], dcID: 2), server: try .init(keys: [first, second], dcID: 2))
        let (reference, snapshots) = Exchange.run(client, server, record: true)
        #expect(reference.completed != nil)
        var tally = Tally()
        for snapshot in snapshots where snapshot.direction == direction {
            for offset in snapshot.frame.indices {
                for pattern: UInt8 in [0xff, 0x01] {
                    let (outcome, _) = Exchange.resume(snapshot) { d, index, frame in
                        if d == direction && index == snapshot.index { frame[offset] ^= pattern }
                    }
                    switch outcome {
                        case .clientFailed: tally.clientErrors += 1
                        case .serverFailed: tally.serverErrors += 1
                        case let .completed(c, s):
                            // Unnoticed: both ends must still hold one and the same key.
                            #expect(c.authKey == s.authKey && c.firstSalt == s.firstSalt,
                                    "message \(snapshot.index) byte \(offset) ^ \(pattern)")
                            tally.harmless.append((snapshot.index, offset))
                        case .clientDoneAlone, .unbounded:
                            Issue.record("message \(snapshot.index) byte \(offset) ^ \(pattern): \(outcome)")
                    }
                }
            }
        }
        return tally
    }

    /// The only bytes the protocol leaves unauthenticated are a msg_id's: its low bytes (fractions of a second)
    /// cannot be told from jitter. Its residue byte and its seconds are checked (mod 4, order, clock agreement).
    /// `alsoAllowed` names other (message, byte range) pairs that are harmless by design.
    static func expectOnlyMessageIDBytesAreHarmless(_ tally: Tally, alsoAllowed: [(Int, Range<Int>)] = []) {
        for (message, offset) in tally.harmless {
            let allowed = (9..<13).contains(offset)
                || alsoAllowed.contains { $0.0 == message && $0.1.contains(offset) }
            #expect(allowed, "message \(message): unnoticed change at byte \(offset)")
        }
    }

    /// Every byte of every server message (resPQ, server_DH_params_ok, dh_gen_ok), flipped.
    @Test func everyServerByteFlipped() throws {
        let tally = try Self.flipEveryByte(.toClient, seed: 41)
        // resPQ bytes 84..<92 are the fingerprint of the server's second key, which this client does not hold:
        // fingerprints of unknown keys are skipped by design, changed or not.
        Self.expectOnlyMessageIDBytesAreHarmless(tally, alsoAllowed: [(0, 84..<92)])
        // The client is the one that notices nearly everything; what it cannot (server_nonce and pq of resPQ
        // echoed back), the server does.
        #expect(tally.clientErrors > tally.serverErrors)
        print("server messages flipped:", tally)
    }

    /// Every byte of every client message (req_pq_multi, req_DH_params, set_client_DH_params), flipped.
    @Test func everyClientByteFlipped() throws {
        let tally = try Self.flipEveryByte(.toServer, seed: 42)
        Self.expectOnlyMessageIDBytesAreHarmless(tally)
        #expect(tally.serverErrors > tally.clientErrors)
        print("client messages flipped:", tally)
    }

    /// The states before each delivery of a completed exchange between a client and a one-key server.
    static func recordedExchange(seed: UInt64) throws -> [Exchange.Snapshot] {
        let (first, _) = try TestKeys.both()
        let (client, server) = Exchange.seededPair(
            seed, client: .init(keys: [first.publicKey], dcID: 2), server: try .init(keys: [first], dcID: 2))
        let (reference, snapshots) = Exchange.run(client, server, record: true)
        #expect(reference.completed != nil)
        return snapshots
    }

    /// Each message cut short at every length, and grown by a byte: typed errors only.
    @Test func truncatedAndExtendedMessages() throws {
        let snapshots = try Self.recordedExchange(seed: 43)
        for snapshot in snapshots {
            for length in Array(0..<snapshot.frame.count) + [snapshot.frame.count + 1] {
                let (outcome, _) = Exchange.resume(snapshot) { d, index, frame in
                    guard d == snapshot.direction, index == snapshot.index else { return }
                    frame = length <= frame.count ? Array(frame.prefix(length)) : frame + [0]
                }
                #expect(outcome.error != nil, "\(snapshot.direction) \(snapshot.index) cut to \(length): \(outcome)")
            }
        }
    }

    /// Random frames (random bytes, and valid envelopes around random bodies of random constructors) fed to both
    /// machines in every state: always a typed error, never a trap or a hang.
    @Test func garbageAtEveryState() throws {
        let (first, _) = try TestKeys.both()
        let snapshots = try Self.recordedExchange(seed: 44)
        let random = SeededRandom(seed: 45)
        let constructors: [UInt32] = [0x0516_2463, 0xd0e8_075c, 0x79cb_045d, 0x3bcb_f734, 0x46dc_1fb9, 0xa69d_ae02,
                                      0x6046_9778, 0xbe7e_8ef1, 0xd712_e4be, 0xf504_5f1f]
        for snapshot in snapshots {
            for trial in 0..<150 {
                // A body of exactly 16 bytes after req_pq's constructor would be a valid request: skipped.
                let length = Int(random.next() % 900)
                guard length != 16 else { continue }
                var frame = random.bytes(length)
                if trial % 2 == 0 {
                    // An envelope that passes the msg_id checks, so the body reaches the parsers.
                    var body = withUnsafeBytes(of: constructors[trial / 2 % constructors.count].littleEndian, Array.init)
                    body += frame
                    let id = (Int64(Exchange.start) + 1) << 32 | (snapshot.direction == .toServer ? 0 : 1)
                    frame = UnencryptedMessage(messageID: id, body: body).bytes
                }
                switch snapshot.direction {
                    case .toServer:
                        var server = snapshot.server
                        #expect(throws: AuthKeyExchangeError.self) { try server.receive(frame: frame, now: snapshot.now) }
                        #expect(server.isFinished)
                        #expect(throws: AuthKeyExchangeError(.setClientDHParams, .notExpected)) {
                            try server.receive(frame: snapshot.frame, now: snapshot.now)
                        }
                    case .toClient:
                        var client = snapshot.client
                        #expect(throws: AuthKeyExchangeError.self) { try client.receive(frame: frame, now: snapshot.now) }
                        #expect(client.isFinished)
                }
            }
        }
        var idle = Client(configuration: .init(keys: [first.publicKey], dcID: 2), random: random)
        #expect(throws: AuthKeyExchangeError(.resPQ, .notExpected)) { try idle.receive(frame: [], now: 0) }
    }

    /// A peer that echoes the right nonces but fills every other field at random (random lengths included): each
    /// machine answers with a frame or a typed error, never a trap. Catches what bit flips cannot: fields whose
    /// length, not content, is hostile.
    @Test func randomFieldsBehindValidNonces() throws {
        let (first, _) = try TestKeys.both()
        let snapshots = try Self.recordedExchange(seed: 47)
        let random = SeededRandom(seed: 48)
        func bytes(upTo limit: UInt64) -> [UInt8] { random.bytes(Int(random.next() % (limit + 1))) }
        func nonces(_ frame: [UInt8]) -> (TLInt128, TLInt128)? {
            var reader = BufferReader(bytes: Array(frame.dropFirst(24)))
            guard let nonce = try? reader.readInt128(), let serverNonce = try? reader.readInt128() else { return nil }
            return (nonce, serverNonce)
        }
        var answeredPastAHash = 0
        for snapshot in snapshots {
            // The nonces of this exchange, from a message that carries both.
            guard let (nonce, serverNonce) = snapshots.lazy.compactMap({ s in
                s.direction == .toClient && s.index == 1 ? nonces(s.frame) : nil }).first else { return }
            for _ in 0..<200 {
                let body = Buffer()
                switch (snapshot.direction, snapshot.index) {
                    case (.toClient, 0):
                        let fingerprints = (0..<Int(random.next() % 4)).map { _ in Int64(bitPattern: random.next()) }
                        MT.ResPQ.resPQ(.init(nonce: nonce, serverNonce: serverNonce, pq: bytes(upTo: 300),
                                             serverPublicKeyFingerprints: fingerprints + [first.publicKey.fingerprint]))
                            .serialize(body, true)
                    case (.toClient, 1):
                        MT.Server_DH_Params.server_DH_params_ok(.init(nonce: nonce, serverNonce: serverNonce,
                                                                      encryptedAnswer: bytes(upTo: 1000)))
                            .serialize(body, true)
                    case (.toClient, _):
                        MT.Set_client_DH_params_answer.dh_gen_ok(.init(nonce: nonce, serverNonce: serverNonce,
                                                                       newNonceHash1: AuthKeyExchange.int128(random.bytes(16))))
                            .serialize(body, true)
                    case (.toServer, 0):
                        continue
                    case (.toServer, 1):
                        body.appendUInt32(0xd712_e4be)
                        body.appendInt128(nonce)
                        body.appendInt128(serverNonce)
                        body.appendTLBytes(bytes(upTo: 12))
                        body.appendTLBytes(bytes(upTo: 12))
                        body.appendInt64(first.publicKey.fingerprint)
                        body.appendTLBytes(bytes(upTo: 300))
                    case (.toServer, _):
                        body.appendUInt32(0xf504_5f1f)
                        body.appendInt128(nonce)
                        body.appendInt128(serverNonce)
                        body.appendTLBytes(bytes(upTo: 600))
                }
                let frame = UnencryptedMessage(messageID: (Int64(Exchange.start) + 1) << 32 | (snapshot.direction == .toServer ? 0 : 1),
                                               body: body.bytes).bytes
                do {
                    switch snapshot.direction {
                        case .toServer:
                            var server = snapshot.server
                            _ = try server.receive(frame: frame, now: snapshot.now)
                        case .toClient:
                            var client = snapshot.client
                            _ = try client.receive(frame: frame, now: snapshot.now)
                    }
                    // A resPQ whose random pq happens to be two primes is a valid resPQ; anything else answered
                    // would have passed a hash or a nonce check by chance.
                    if !(snapshot.direction == .toClient && snapshot.index == 0) { answeredPastAHash += 1 }
                } catch {
                    #expect(!error.description.isEmpty)
                }
            }
        }
        #expect(answeredPastAHash == 0)
    }

    /// Server msg_ids are checked against the clock the server reveals: a resPQ claiming a time 10 minutes away
    /// from server_time fails the exchange once server_time is known, and a wrong residue fails at once.
    @Test func serverMessageIDsAreChecked() throws {
        let (first, _) = try TestKeys.both()
        let configurations: (Client.Configuration, Server.Configuration) =
            (.init(keys: [first.publicKey], dcID: 2), try .init(keys: [first], dcID: 2))
        for (shift, expectedStep) in [(Int64(600) << 32, AuthKeyExchangeError.Step.serverDHParams),
                                      (2, .resPQ)] {
            let (client, server) = Exchange.seededPair(46, client: configurations.0, server: configurations.1)
            let (outcome, _) = Exchange.run(client, server) { d, index, frame in
                guard d == .toClient, index == 0, let message = try? UnencryptedMessage(parsing: frame) else { return }
                frame = UnencryptedMessage(messageID: message.messageID + shift, body: message.body).bytes
            }
            guard case .clientFailed(let error) = outcome, case .messageID = error.reason else {
                Issue.record("expected a msg_id error, got \(outcome)"); continue
            }
            #expect(error.step == expectedStep)
        }
    }
}
