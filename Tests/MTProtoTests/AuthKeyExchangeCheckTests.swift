// The checks that tampering cannot reach because the protocol's hashes stop it first: messages a malicious peer
// (one that knows the nonces) would build, correctly hashed and encrypted, each breaking one rule. The test knows
// new_nonce because the client's seeded source draws nonce (16 bytes) then new_nonce (32) first.
import MTProtoApi
import MTProtoCrypto
import TLRuntime
import Testing
@testable import MTProto

@Suite struct AuthKeyExchangeCheckTests {
    static let seed: UInt64 = 61

    static func pair() throws -> (AuthKeyExchange.Client, AuthKeyExchange.Server) {
        let (first, _) = try TestKeys.both()
        return Exchange.seededPair(seed, client: .init(keys: [first.publicKey], dcID: 2),
                                   server: try .init(keys: [first], dcID: 2))
    }

    static var newNonce: [UInt8] { Array(SeededRandom(seed: seed &* 2).bytes(48).suffix(32)) }

    /// SHA1(data) ‖ data ‖ random padding to a multiple of 16 plus `extraBlocks` whole blocks, under the nonce key.
    static func encrypt(_ value: some TLSerializable, serverNonce: TLInt128, extraBlocks: Int = 0) throws -> [UInt8] {
        let buffer = Buffer()
        value.serialize(buffer, true)
        let data = buffer.bytes
        let key = try NonceKDF.temporaryKey(newNonce: newNonce, serverNonce: serverNonce.wireBytes)
        let padLength = (16 - (20 + data.count) % 16) % 16 + 16 * extraBlocks
        return try key.cipher.encrypt(Hash.sha1(data) + data + SeededRandom(seed: 1).bytes(padLength))
    }

    static func reframe(_ frame: [UInt8], _ value: some TLSerializable) -> [UInt8] {
        let body = Buffer()
        value.serialize(body, true)
        return UnencryptedMessage(messageID: (try? UnencryptedMessage(parsing: frame))?.messageID ?? 0, body: body.bytes).bytes
    }

    // MARK: Client checks on resPQ

    /// pq travels back inside p_q_inner_data, so a wide pq (even one whose value is fine, zero-extended) must be a
    /// typed error before it could overflow RSA_PAD's 144 bytes; so must a pq that is not two primes.
    @Test func clientRejectsWideOrNonSemiprimePQ() throws {
        let cases: [(([UInt8]) -> [UInt8], AuthKeyExchangeError.Reason)] = [
            ({ [UInt8](repeating: 0, count: 192) + $0 }, .pqNotFactorable(.pqTooWide(bytes: 200))),
            ({ [0] + $0 }, .pqNotFactorable(.pqTooWide(bytes: 9))),
            ({ _ in AuthKeyExchange.bigEndianBytes(1009 * 1009 * 1009) }, .pqFactorNotPrime(1009 * 1009)),  // 1009 × 1009²
            ({ _ in AuthKeyExchange.bigEndianBytes(2_147_483_647) }, .pqNotFactorable(.pqIsPrime(2_147_483_647))),
        ]
        for (change, expected) in cases {
            let (client, server) = try Self.pair()
            let (outcome, _) = Exchange.run(client, server) { direction, index, frame in
                guard direction == .toClient, index == 0 else { return }
                var reader = BufferReader(bytes: Array(frame.dropFirst(20)))
                guard case .resPQ(let answer)? = try? MT.ResPQ.parse(&reader) else { return }
                frame = Self.reframe(frame, MT.ResPQ.resPQ(.init(
                    nonce: answer.nonce, serverNonce: answer.serverNonce, pq: change(answer.pq),
                    serverPublicKeyFingerprints: answer.serverPublicKeyFingerprints)))
            }
            #expect(outcome.error == AuthKeyExchangeError(.resPQ, expected))
        }
    }

    // MARK: Client checks on server_DH_inner_data

    struct ServerAnswer {
        var g: Int32 = 3
        var prime = DHPrimeCache.telegramPrime
        var gA: [UInt8]?
        var serverTimeShift: Int32 = 0
        var wrongNonce = false
        var extraPaddingBlocks = 0
    }

    /// Runs the exchange with server_DH_params_ok replaced by one built from `answer`.
    static func clientError(_ answer: ServerAnswer,
                            step: AuthKeyExchangeError.Step = .serverDHParams) throws -> AuthKeyExchangeError? {
        let (client, server) = try pair()
        let validGA = try DHParameters(prime: DHPrimeCache.telegramPrime, g: 3).publicValue(exponent: SeededRandom(seed: 2).bytes(256))
        let (outcome, _) = Exchange.run(client, server) { direction, index, frame in
            guard direction == .toClient, index == 1 else { return }
            var reader = BufferReader(bytes: Array(frame.dropFirst(20)))
            guard case .server_DH_params_ok(let ok)? = try? MT.Server_DH_Params.parse(&reader) else { return }
            let inner = MT.Server_DH_inner_data.server_DH_inner_data(.init(
                nonce: answer.wrongNonce ? .zero : ok.nonce, serverNonce: ok.serverNonce, g: answer.g,
                dhPrime: answer.prime, gA: answer.gA ?? validGA,
                serverTime: Int32(Exchange.start) + answer.serverTimeShift))
            guard let encrypted = try? encrypt(inner, serverNonce: ok.serverNonce, extraBlocks: answer.extraPaddingBlocks) else { return }
            frame = reframe(frame, MT.Server_DH_Params.server_DH_params_ok(.init(
                nonce: ok.nonce, serverNonce: ok.serverNonce, encryptedAnswer: encrypted)))
        }
        guard case .clientFailed(let error) = outcome else {
            Issue.record("expected the client to fail, got \(outcome)")
            return nil
        }
        #expect(error.step == step)
        return error
    }

    /// The crafting is sound: a valid answer built this way passes every check of its step, and the exchange then
    /// fails only at dh_gen_ok, because the server's key is g_b^a for its own a, not for the crafted g_a's.
    @Test func craftedValidAnswerPassesItsStep() throws {
        #expect(try Self.clientError(ServerAnswer(), step: .dhGenAnswer)?.reason == .newNonceHashMismatch(number: 1))
    }

    @Test func clientRejectsBadDHParameters() throws {
        var p = DHPrimeCache.telegramPrime
        p[0] = 0x7f  // 2047 bits
        #expect(try Self.clientError(ServerAnswer(prime: p))?.reason == .dhParameters(.dhPrimeWrongSize(bits: 2047)))
        #expect(try Self.clientError(ServerAnswer(g: 1))?.reason == .dhParameters(.dhGeneratorOutOfRange(1)))
        #expect(try Self.clientError(ServerAnswer(g: 8))?.reason == .dhParameters(.dhGeneratorOutOfRange(8)))
        // Telegram's prime + 6 keeps the g = 3 residue condition (p mod 3 = 2) but is not a safe prime.
        var composite = DHPrimeCache.telegramPrime
        composite[255] &+= 6
        #expect(try Self.clientError(ServerAnswer(prime: composite))?.reason == .dhParameters(.dhPrimeNotSafe))
    }

    @Test func clientRejectsGAOutsideTheSafeRange() throws {
        let prime = DHPrimeCache.telegramPrime
        var minusOne = prime
        minusOne[255] -= 1
        let bound = [1] + [UInt8](repeating: 0, count: 248)  // 2^1984 exactly
        for gA in [[2], minusOne, bound] {
            guard case .dhValueOutOfRange? = try Self.clientError(ServerAnswer(gA: gA))?.reason else {
                Issue.record("g_a of \(gA.count) bytes accepted or wrongly reported"); continue
            }
        }
    }

    @Test func clientRejectsInnerNoncesPaddingAndTime() throws {
        #expect(try Self.clientError(ServerAnswer(wrongNonce: true))?.reason == .nonceMismatch)
        guard case .paddingTooLong? = try Self.clientError(ServerAnswer(extraPaddingBlocks: 1))?.reason else {
            Issue.record("16+ bytes of padding accepted"); return
        }
        // server_time an hour away from every msg_id the server sent: its clock contradicts itself.
        guard case .messageID? = try Self.clientError(ServerAnswer(serverTimeShift: 3600))?.reason else {
            Issue.record("server_time far from the msg_ids accepted"); return
        }
    }

    // MARK: Server checks on client_DH_inner_data and p_q_inner_data

    /// Runs the exchange with set_client_DH_params replaced by one carrying `gB` and `retryID`.
    static func serverError(gB: [UInt8], retryID: Int64 = 0, wrongServerNonce: Bool = false) throws -> AuthKeyExchangeError? {
        let (client, server) = try pair()
        let (outcome, _) = Exchange.run(client, server) { direction, index, frame in
            guard direction == .toServer, index == 2 else { return }
            var reader = BufferReader(bytes: Array(frame.dropFirst(24)))
            guard let nonce = try? reader.readInt128(), let serverNonce = try? reader.readInt128() else { return }
            let inner = MT.Client_DH_Inner_Data.client_DH_inner_data(.init(
                nonce: nonce, serverNonce: wrongServerNonce ? .zero : serverNonce, retryId: retryID, gB: gB))
            guard let encrypted = try? encrypt(inner, serverNonce: serverNonce) else { return }
            let body = Buffer()
            body.appendUInt32(0xf504_5f1f)
            body.appendInt128(nonce)
            body.appendInt128(serverNonce)
            body.appendTLBytes(encrypted)
            frame = UnencryptedMessage(messageID: (try? UnencryptedMessage(parsing: frame))?.messageID ?? 0,
                                       body: body.bytes).bytes
        }
        guard case .serverFailed(let error) = outcome else {
            Issue.record("expected the server to fail, got \(outcome)")
            return nil
        }
        #expect(error.step == .setClientDHParams)
        return error
    }

    @Test func serverRejectsGBRetryIDAndNonces() throws {
        let validGB = try DHParameters(prime: DHPrimeCache.telegramPrime, g: 3).publicValue(exponent: SeededRandom(seed: 3).bytes(256))
        for gB in [[1], [1] + [UInt8](repeating: 0, count: 248), [UInt8](repeating: 0xff, count: 256)] {
            guard case .dhValueOutOfRange? = try Self.serverError(gB: gB)?.reason else {
                Issue.record("g_b of \(gB.count) bytes accepted or wrongly reported"); continue
            }
        }
        #expect(try Self.serverError(gB: validGB, retryID: 5)?.reason == .retryIDMismatch(5))
        #expect(try Self.serverError(gB: validGB, wrongServerNonce: true)?.reason == .serverNonceMismatch)
    }

    /// p_q_inner_data encrypted correctly (RSA_PAD to the server's key) but lying about pq, p, q or the nonces.
    @Test func serverChecksEveryInnerDataField() throws {
        let (first, _) = try TestKeys.both()
        typealias Fields = (pq: [UInt8], p: [UInt8], q: [UInt8], nonce: TLInt128, serverNonce: TLInt128)
        let lies: [(String, (Fields) -> Fields, AuthKeyExchangeError.Reason)] = [
            ("pq", { f in (f.pq.reversed(), f.p, f.q, f.nonce, f.serverNonce) }, .fieldMismatch(field: "inner pq")),
            ("p", { f in (f.pq, [1] + f.p, f.q, f.nonce, f.serverNonce) }, .fieldMismatch(field: "inner p")),
            ("q", { f in (f.pq, f.p, f.q + [1], f.nonce, f.serverNonce) }, .fieldMismatch(field: "inner q")),
            ("nonce", { f in (f.pq, f.p, f.q, .zero, f.serverNonce) }, .nonceMismatch),
            ("server_nonce", { f in (f.pq, f.p, f.q, f.nonce, .zero) }, .serverNonceMismatch),
        ]
        for (name, lie, expected) in lies {
            let (client, server) = try Self.pair()
            let (outcome, _) = Exchange.run(client, server) { direction, index, frame in
                guard direction == .toServer, index == 1 else { return }
                let body = Array(frame.dropFirst(20))
                guard let padded = try? RSAPad.decrypt(Array(body.suffix(256)), key: first) else { return }
                var reader = BufferReader(bytes: padded)
                guard case .p_q_inner_data_dc(let c)? = try? MT.P_Q_inner_data.parse(&reader) else { return }
                let f = lie((c.pq, c.p, c.q, c.nonce, c.serverNonce))
                let buffer = Buffer()
                MT.P_Q_inner_data.p_q_inner_data_dc(.init(pq: f.pq, p: f.p, q: f.q, nonce: f.nonce,
                                                          serverNonce: f.serverNonce, newNonce: c.newNonce,
                                                          dc: c.dc)).serialize(buffer, true)
                guard let encrypted = try? RSAPad.encrypt(data: buffer.bytes, key: first.publicKey,
                                                          random: SeededRandom(seed: 4)) else { return }
                let rebuilt = Buffer()
                rebuilt.appendRaw(Array(body.prefix(60)))
                rebuilt.appendTLBytes(encrypted)
                frame = Array(frame.prefix(20)) + rebuilt.bytes
            }
            #expect(outcome.error == AuthKeyExchangeError(.reqDHParams, expected), "lie about \(name)")
        }
    }
}
