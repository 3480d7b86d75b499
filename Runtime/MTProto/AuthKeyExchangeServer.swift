// The server role of the auth-key exchange (core.telegram.org/mtproto/auth_key), the mirror of the client: answers
// req_pq / req_pq_multi with a fresh pq, decrypts req_DH_params under RSA_PAD or the legacy SHA-1 scheme (Telethon
// 1.x still sends it), accepts every p_q_inner_data form, and checks everything the client sends before it answers
// dh_gen_ok. Sans-IO and bounded: one state per step, frames capped in size, retries capped in number.
import MTProtoApi
import MTProtoCrypto
import TLRuntime

extension AuthKeyExchange {
    /// The server side of one exchange, one value per connection. Feed each client frame to `receive(frame:now:)`
    /// and send what it returns, until `.finished`. Any error ends the exchange (further input is `.notExpected`).
    public struct Server: Sendable {
        /// What to answer a client whose key is otherwise good (auth_key, step 9). A real server answers `.retry`
        /// when the new auth_key_id collides with a stored key; tests use it to exercise the client's other paths.
        public enum KeyDecision: Sendable, Hashable {
            /// Finish the exchange (`dh_gen_ok`).
            case accept
            /// Ask the client to try again with a new b (`dh_gen_retry`).
            case retry
            /// Refuse the key (`dh_gen_fail`).
            case fail
        }

        /// What the server holds and allows: its RSA keys, the DH group, retry and time bounds.
        public struct Configuration: Sendable {
            /// The RSA keys the server holds; resPQ lists all their fingerprints.
            public var keys: [RSAPrivateKey]
            /// The DC ids accepted in `p_q_inner_data_dc` / `_temp_dc` (the forms without a DC are always accepted).
            public var acceptedDCs: Set<Int32>
            /// dh_prime and g: checked once at configuration (a cached prime costs nothing).
            public let dh: DHParameters
            /// The longest temporary key lifetime (`expires_in`) accepted, in seconds.
            public var maxTemporaryKeyLifetime: Int32
            /// dh_gen_retry rounds before a further set_client_DH_params fails with `.tooManyRetries`.
            public var maxRetries: Int
            /// How far the client's msg_ids may drift from the server's elapsed time (see `PeerMessageIDs`).
            public var messageTimeTolerance: Double
            /// Decides the answer to a good set_client_DH_params (default: accept).
            public var keyDecision: @Sendable (AuthKey) -> KeyDecision

            /// - Parameters:
            ///   - keys: the RSA keys the server holds.
            ///   - dcID: accepted as itself and as −dcID (Telegram's media-only DCs).
            ///   - dhPrime: the DH prime, big-endian; by default Telegram's 2048-bit prime, as its servers send.
            ///   - g: the DH generator; 3 by default.
            ///   - maxTemporaryKeyLifetime: the longest `expires_in` accepted, seconds.
            ///   - maxRetries: dh_gen_retry rounds allowed.
            ///   - messageTimeTolerance: how far the client's msg_ids may drift, seconds.
            ///   - keyDecision: the answer to a good set_client_DH_params.
            public init(keys: [RSAPrivateKey], dcID: Int32, dhPrime: [UInt8] = DHPrimeCache.telegramPrime, g: Int = 3,
                        maxTemporaryKeyLifetime: Int32 = Int32.max, maxRetries: Int = AuthKeyExchange.defaultMaxRetries,
                        messageTimeTolerance: Double = AuthKeyExchange.defaultMessageTimeTolerance,
                        keyDecision: @escaping @Sendable (AuthKey) -> KeyDecision = { _ in .accept }) throws(CryptoError) {
                self.keys = keys
                acceptedDCs = [dcID, -dcID]
                dh = try DHParameters(prime: dhPrime, g: g)
                self.maxTemporaryKeyLifetime = maxTemporaryKeyLifetime
                self.maxRetries = maxRetries
                self.messageTimeTolerance = messageTimeTolerance
                self.keyDecision = keyDecision
            }
        }

        /// What the server ends with; the same key, salt and id as the client's `Result`.
        public struct Result: Sendable, Hashable {
            /// The agreed 2048-bit auth key.
            public let authKey: AuthKey
            /// new_nonce[0..<8] XOR server_nonce[0..<8] as a little-endian long.
            public let firstSalt: Int64
            /// The DC the client named (nil for the forms without one).
            public let dcID: Int32?
            /// For a temporary key: `expires_in` as sent, and server_time + expires_in (what the binding must carry).
            public let expiresIn: Int32?
            /// For a temporary key, when it expires in server time (Unix seconds); nil for a permanent key.
            public let expiresAt: Int32?
            /// The fingerprint of the key the client used, and whether it used the legacy SHA-1 scheme.
            public let fingerprint: Int64
            /// Whether the client encrypted `p_q_inner_data` with the legacy RSA scheme instead of RSA_PAD.
            public let usedLegacyRSA: Bool
            /// dh_gen_retry rounds it took.
            public let retries: Int

            /// Whether the key is temporary (made with `expires_in`).
            public var isTemporary: Bool { expiresIn != nil }
        }

        /// What a step of the exchange returns.
        public enum Output: Sendable, Equatable {
            /// Send this frame and wait for the client's next one.
            case send([UInt8])
            /// Send this frame (dh_gen_ok); the key is ready.
            case finished(send: [UInt8], result: Result)
            /// Send this frame (dh_gen_fail, because the key decision was `.fail`); the exchange is over.
            case refused(send: [UInt8], error: AuthKeyExchangeError)
        }

        /// Longest client frame accepted: req_DH_params is 340 bytes and set_client_DH_params about 400.
        public static var maxFrameLength: Int { 1024 }

        private struct Offer {
            let nonce: TLInt128
            let serverNonce: TLInt128
            let pq: [UInt8]
            let p: [UInt8]
            let q: [UInt8]
        }

        private struct Agreement {
            let offer: Offer
            let newNonce: [UInt8]
            let tmpKey: AESKeyIV
            let a: [UInt8]
            let dcID: Int32?
            let expiresIn: Int32?
            let serverTime: Int32
            let fingerprint: Int64
            let usedLegacyRSA: Bool
            var retries: Int
            /// retry_id the next set_client_DH_params must carry: 0, then the aux_hash of the key turned down.
            var expectedRetryID: Int64
        }

        private enum State {
            case awaitingReqPQ
            case awaitingReqDHParams(Offer)
            case awaitingSetClientDHParams(Agreement)
            case over
        }

        /// The configuration the exchange was made with.
        public let configuration: Configuration
        private let random: any RandomSource
        private var state: State = .awaitingReqPQ
        private var messageIDs = MessageIDGenerator(role: .server)
        private var clientIDs: PeerMessageIDs

        /// A server exchange awaiting the client's `req_pq`. `random` supplies the server nonce, the DH exponent and padding.
        public init(configuration: Configuration, random: any RandomSource) {
            self.configuration = configuration
            self.random = random
            clientIDs = PeerMessageIDs(expectedResidue: 0, tolerance: configuration.messageTimeTolerance)
        }

        /// Whether the exchange has ended (successfully or not).
        public var isFinished: Bool {
            if case .over = state { true } else { false }
        }

        /// Feeds one frame from the client.
        public mutating func receive(frame: [UInt8], now: Double) throws(AuthKeyExchangeError) -> Output {
            let current = state
            state = .over  // any error ends the exchange; success sets the next state
            switch current {
                case .awaitingReqPQ:
                    return try receiveReqPQ(frame, now: now)
                case .awaitingReqDHParams(let offer):
                    return try receiveReqDHParams(frame, offer, now: now)
                case .awaitingSetClientDHParams(let agreement):
                    return try receiveSetClientDHParams(frame, agreement, now: now)
                case .over:
                    throw .init(.setClientDHParams, .notExpected)
            }
        }

        // MARK: Steps

        /// Step 1: req_pq or req_pq_multi → resPQ with a fresh server_nonce, pq and our fingerprints.
        private mutating func receiveReqPQ(_ frame: [UInt8], now: Double) throws(AuthKeyExchangeError) -> Output {
            let step = AuthKeyExchangeError.Step.reqPQ
            let message = try clientMessage(frame, now: now, step: step)
            // req_pq#60469778 (deprecated, still answered) and req_pq_multi#be7e8ef1, both `nonce:int128 = ResPQ`;
            // fixed-size fields only, so a whole-body parse leaves no slack to check.
            let nonce = try AuthKeyExchange.parseBody(message.body, step: step) { (r: inout BufferReader) throws(TLDecodingError) in
                let id = try r.readUInt32()
                guard id == 0x6046_9778 || id == 0xbe7e_8ef1 else {
                    throw TLDecodingError(.unknownConstructor(id, type: "req_pq"), offset: 0)
                }
                return try r.readInt128()
            }
            let (p, q) = try makePrimes(step: step)
            let offer = Offer(nonce: nonce, serverNonce: AuthKeyExchange.int128(random.bytes(16)),
                              pq: AuthKeyExchange.bigEndianBytes(p * q),
                              p: AuthKeyExchange.bigEndianBytes(p), q: AuthKeyExchange.bigEndianBytes(q))
            state = .awaitingReqDHParams(offer)
            let answer = MT.ResPQ.resPQ(.init(nonce: offer.nonce, serverNonce: offer.serverNonce, pq: offer.pq,
                                              serverPublicKeyFingerprints: configuration.keys.map(\.publicKey.fingerprint)))
            return .send(self.frame(answer, now: now))
        }

        /// Two distinct primes in [2^30, 2^31), so pq fits a positive long as Telegram's does. Each is the first
        /// prime at or after a random odd start; prime gaps below 2^31 are under 300, so the scan is short.
        private func makePrimes(step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) -> (UInt64, UInt64) {
            func prime(from start: UInt64) -> UInt64? {
                var candidate = start | 1
                for _ in 0..<1000 where candidate < 1 << 31 {
                    if PQFactorizer.isPrime(candidate) { return candidate }
                    candidate += 2
                }
                return nil
            }
            func draw() -> UInt64 {
                UInt64(AuthKeyExchange.littleEndianWord(random.bytes(4), at: 0)) & 0x3fff_ffff | 0x4000_0000
            }
            guard let p = prime(from: draw()) else { throw .init(step, .randomnessExhausted(what: "prime p")) }
            var q = prime(from: draw())
            if q == p { q = prime(from: p + 2) ?? prime(from: 0x4000_0000) }
            guard let q, q != p else { throw .init(step, .randomnessExhausted(what: "prime q")) }
            return (min(p, q), max(p, q))
        }

        /// Steps 4–5: check req_DH_params, decrypt the inner data, answer server_DH_params_ok with g, dh_prime, g_a.
        private mutating func receiveReqDHParams(_ frame: [UInt8], _ offer: Offer,
                                                 now: Double) throws(AuthKeyExchangeError) -> Output {
            let step = AuthKeyExchangeError.Step.reqDHParams
            let message = try clientMessage(frame, now: now, step: step)
            let request = try AuthKeyExchange.parseBody(message.body, step: step) { (r: inout BufferReader) throws(TLDecodingError) in
                let id = try r.readUInt32()
                guard id == 0xd712_e4be else { throw TLDecodingError(.unknownConstructor(id, type: "req_DH_params"), offset: 0) }
                return (nonce: try r.readInt128(), serverNonce: try r.readInt128(), p: try r.readTLBytes(),
                        q: try r.readTLBytes(), fingerprint: try r.readInt64(), encrypted: try r.readTLBytes())
            }
            try AuthKeyExchange.requireCanonical(message.body, step: step) { b in
                b.appendUInt32(0xd712_e4be)
                b.appendInt128(request.nonce)
                b.appendInt128(request.serverNonce)
                b.appendTLBytes(request.p)
                b.appendTLBytes(request.q)
                b.appendInt64(request.fingerprint)
                b.appendTLBytes(request.encrypted)
            }
            try check(request.nonce, request.serverNonce, offer, step: step)
            guard request.p == offer.p else { throw .init(step, .fieldMismatch(field: "p")) }
            guard request.q == offer.q else { throw .init(step, .fieldMismatch(field: "q")) }
            guard let key = configuration.keys.first(where: { $0.publicKey.fingerprint == request.fingerprint }) else {
                throw .init(step, .fieldMismatch(field: "public_key_fingerprint"))
            }
            let (inner, legacy) = try decryptInnerData(request.encrypted, key: key, step: step)

            // Every form carries the same first six fields; the variants add dc and expires_in.
            let fields: (pq: [UInt8], p: [UInt8], q: [UInt8], nonce: TLInt128, serverNonce: TLInt128, newNonce: TLInt256)
            var dcID: Int32?, expiresIn: Int32?
            switch inner {
                case .p_q_inner_data(let c):
                    fields = (c.pq, c.p, c.q, c.nonce, c.serverNonce, c.newNonce)
                case .p_q_inner_data_dc(let c):
                    fields = (c.pq, c.p, c.q, c.nonce, c.serverNonce, c.newNonce)
                    dcID = c.dc
                case .p_q_inner_data_temp(let c):
                    fields = (c.pq, c.p, c.q, c.nonce, c.serverNonce, c.newNonce)
                    expiresIn = c.expiresIn
                case .p_q_inner_data_temp_dc(let c):
                    fields = (c.pq, c.p, c.q, c.nonce, c.serverNonce, c.newNonce)
                    (dcID, expiresIn) = (c.dc, c.expiresIn)
            }
            try check(fields.nonce, fields.serverNonce, offer, step: step)
            guard fields.pq == offer.pq else { throw .init(step, .fieldMismatch(field: "inner pq")) }
            guard fields.p == offer.p else { throw .init(step, .fieldMismatch(field: "inner p")) }
            guard fields.q == offer.q else { throw .init(step, .fieldMismatch(field: "inner q")) }
            if let dcID, !configuration.acceptedDCs.contains(dcID) { throw .init(step, .dcMismatch(dcID)) }
            if let expiresIn, expiresIn <= 0 || expiresIn > configuration.maxTemporaryKeyLifetime {
                throw .init(step, .invalidExpiry(expiresIn))
            }

            let newNonce = fields.newNonce.wireBytes
            let tmpKey = try AuthKeyExchange.nonceKey(newNonce: newNonce, serverNonce: offer.serverNonce.wireBytes, step: step)
            let (a, gA) = try makeExponent(step: step)
            // The caller's clock, clamped into int range (a NaN or absurd `now` must not trap the conversion).
            let serverTime = Int32(min(max(now.isNaN ? 0 : now.rounded(.down), 0), Double(Int32.max)))
            let answer = Buffer(capacity: 600)
            MT.Server_DH_inner_data.server_DH_inner_data(.init(
                nonce: offer.nonce, serverNonce: offer.serverNonce, g: Int32(configuration.dh.g),
                dhPrime: configuration.dh.prime, gA: gA, serverTime: serverTime)).serialize(answer, true)
            let encrypted: [UInt8]
            do {
                encrypted = try AuthKeyExchange.encryptInnerData(answer.bytes, key: tmpKey, random: random)
            } catch {
                throw .init(step, .crypto(error))
            }
            state = .awaitingSetClientDHParams(Agreement(
                offer: offer, newNonce: newNonce, tmpKey: tmpKey, a: a, dcID: dcID, expiresIn: expiresIn,
                serverTime: serverTime, fingerprint: request.fingerprint, usedLegacyRSA: legacy, retries: 0,
                expectedRetryID: 0))
            let reply = MT.Server_DH_Params.server_DH_params_ok(.init(nonce: offer.nonce, serverNonce: offer.serverNonce,
                                                                     encryptedAnswer: encrypted))
            return .send(self.frame(reply, now: now))
        }

        /// One private-key operation, then RSA_PAD (current clients) or `0 ‖ SHA1(data) ‖ data ‖ padding` (legacy).
        private func decryptInnerData(_ encrypted: [UInt8], key: RSAPrivateKey,
                                      step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) -> (MT.P_Q_inner_data, legacy: Bool) {
            let block: [UInt8]
            do {
                block = try key.decryptRaw(encrypted)
            } catch {
                throw .init(step, .encryptedDataInvalid(error))
            }
            // RSA_PAD authenticates data and padding together; the TL value is read from the front of it.
            if let padded = try? RSAPad.decode(decryptedBlock: block) {
                var reader = BufferReader(bytes: padded)
                do {
                    return (try MT.P_Q_inner_data.parse(&reader), false)
                } catch {
                    throw .init(step, .malformed(error))
                }
            }
            // The legacy hash covers only data, so its length comes from parsing; the hash then confirms it.
            let data = try? RSALegacy.decode(decryptedBlock: block) { payload in
                var reader = BufferReader(bytes: payload)
                return (try? MT.P_Q_inner_data.parse(&reader)) != nil ? reader.offset : nil
            }
            guard let data else { throw .init(step, .rsaPaddingInvalid) }
            var reader = BufferReader(bytes: data)
            do {
                return (try MT.P_Q_inner_data.parse(&reader), true)
            } catch {
                throw .init(step, .malformed(error))
            }
        }

        /// A random 2048-bit a with g_a = g^a inside the safe range (outside it with probability about 2^−63).
        private func makeExponent(step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) -> (a: [UInt8], gA: [UInt8]) {
            for _ in 0..<8 {
                let a = random.bytes(256)
                do {
                    let gA = try configuration.dh.publicValue(exponent: a)
                    try configuration.dh.checkPublicValue(gA, name: "g_a")
                    return (a, gA)
                } catch .dhValueOutOfRange {
                    continue
                } catch {
                    throw .init(step, .crypto(error))
                }
            }
            throw .init(step, .randomnessExhausted(what: "a with g_a in range"))
        }

        /// Steps 6–9: decrypt client_DH_inner_data, check it, compute the key and answer dh_gen_ok (or, by the key
        /// decision, dh_gen_retry / dh_gen_fail).
        private mutating func receiveSetClientDHParams(_ frame: [UInt8], _ agreement: Agreement,
                                                       now: Double) throws(AuthKeyExchangeError) -> Output {
            let step = AuthKeyExchangeError.Step.setClientDHParams
            let message = try clientMessage(frame, now: now, step: step)
            let offer = agreement.offer
            let request = try AuthKeyExchange.parseBody(message.body, step: step) { (r: inout BufferReader) throws(TLDecodingError) in
                let id = try r.readUInt32()
                guard id == 0xf504_5f1f else {
                    throw TLDecodingError(.unknownConstructor(id, type: "set_client_DH_params"), offset: 0)
                }
                return (nonce: try r.readInt128(), serverNonce: try r.readInt128(), encrypted: try r.readTLBytes())
            }
            try AuthKeyExchange.requireCanonical(message.body, step: step) { b in
                b.appendUInt32(0xf504_5f1f)
                b.appendInt128(request.nonce)
                b.appendInt128(request.serverNonce)
                b.appendTLBytes(request.encrypted)
            }
            try check(request.nonce, request.serverNonce, offer, step: step)
            let inner = try AuthKeyExchange.decryptInnerData(request.encrypted, key: agreement.tmpKey, step: step) {
                (r: inout BufferReader) throws(TLDecodingError) in try MT.Client_DH_Inner_Data.parse(&r)
            }
            let data = switch inner { case .client_DH_inner_data(let c): c }
            try check(data.nonce, data.serverNonce, offer, step: step)
            guard data.retryId == agreement.expectedRetryID else { throw .init(step, .retryIDMismatch(data.retryId)) }
            do {
                try configuration.dh.checkPublicValue(data.gB, name: "g_b")
            } catch {
                throw .init(step, .dhValueOutOfRange(error))
            }
            let keyBytes: [UInt8]
            do {
                keyBytes = try configuration.dh.sharedKey(peerPublicValue: data.gB, exponent: agreement.a)
            } catch {
                throw .init(step, .crypto(error))
            }
            let key = try AuthKeyExchange.authKey(keyBytes, step: step)
            let decision = configuration.keyDecision(key)
            let number: UInt8 = switch decision {
                case .accept: 1
                case .retry: 2
                case .fail: 3
            }
            let hash: [UInt8]
            do {
                hash = try key.newNonceHash(number, newNonce: agreement.newNonce)
            } catch {
                throw .init(step, .crypto(error))
            }
            let nonceHash = AuthKeyExchange.int128(hash)
            switch decision {
                case .accept:
                    let reply = MT.Set_client_DH_params_answer.dh_gen_ok(.init(
                        nonce: offer.nonce, serverNonce: offer.serverNonce, newNonceHash1: nonceHash))
                    let result = Result(
                        authKey: key,
                        firstSalt: AuthKeyExchange.firstSalt(newNonce: agreement.newNonce, serverNonce: offer.serverNonce.wireBytes),
                        dcID: agreement.dcID, expiresIn: agreement.expiresIn,
                        expiresAt: agreement.expiresIn.map { Int32(clamping: Int64(agreement.serverTime) + Int64($0)) },
                        fingerprint: agreement.fingerprint, usedLegacyRSA: agreement.usedLegacyRSA, retries: agreement.retries)
                    return .finished(send: self.frame(reply, now: now), result: result)
                case .retry:
                    guard agreement.retries < configuration.maxRetries else {
                        throw .init(step, .tooManyRetries(limit: configuration.maxRetries))
                    }
                    var next = agreement
                    next.retries += 1
                    next.expectedRetryID = AuthKeyExchange.long(key.auxHash)
                    state = .awaitingSetClientDHParams(next)
                    let reply = MT.Set_client_DH_params_answer.dh_gen_retry(.init(
                        nonce: offer.nonce, serverNonce: offer.serverNonce, newNonceHash2: nonceHash))
                    return .send(self.frame(reply, now: now))
                case .fail:
                    let reply = MT.Set_client_DH_params_answer.dh_gen_fail(.init(
                        nonce: offer.nonce, serverNonce: offer.serverNonce, newNonceHash3: nonceHash))
                    return .refused(send: self.frame(reply, now: now), error: .init(step, .keyGenerationFailed))
            }
        }

        // MARK: Checks and framing

        /// Parses the envelope and checks the client's msg_id: divisible by 4, increasing, and advancing with the
        /// server's clock. Its absolute value is not checked: a client learns the server's time from this exchange.
        private mutating func clientMessage(_ frame: [UInt8], now: Double,
                                            step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) -> UnencryptedMessage {
            let message = try AuthKeyExchange.unwrap(frame, step: step, limit: Self.maxFrameLength)
            try clientIDs.record(message.messageID, at: now, step: step)
            if let first = clientIDs.received.first {
                let offset = MessageIDGenerator.time(of: first.id) - first.at
                try clientIDs.check(step: step) { $0 + offset }
            }
            return message
        }

        private func check(_ nonce: TLInt128, _ serverNonce: TLInt128, _ offer: Offer,
                           step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) {
            guard nonce == offer.nonce else { throw .init(step, .nonceMismatch) }
            guard serverNonce == offer.serverNonce else { throw .init(step, .serverNonceMismatch) }
        }

        private mutating func frame(_ value: some TLSerializable, now: Double) -> [UInt8] {
            let body = Buffer(capacity: 128)
            value.serialize(body, true)
            return UnencryptedMessage(messageID: messageIDs.next(now: now, isResponse: true), body: body.bytes).bytes
        }
    }
}
