// The client role of the auth-key exchange (core.telegram.org/mtproto/auth_key): req_pq_multi → resPQ →
// req_DH_params (p_q_inner_data* under RSA_PAD) → server_DH_params → set_client_DH_params → dh_gen_*. Sans-IO:
// frames and local time in, frames and the finished key out, randomness drawn from the injected source in a fixed
// order (nonce; new_nonce, a 192-byte RSA_PAD padding block, temp_keys; b, padding) so recorded exchanges replay.
import MTProtoApi
import MTProtoCrypto
import TLRuntime

extension AuthKeyExchange {
    /// The client side of one exchange. Call `start(now:)`, send its frame, then feed each answer to
    /// `receive(frame:now:)` until it returns `.done`. Any error ends the exchange (further input is `.notExpected`).
    public struct Client: Sendable {
        /// What the client trusts and asks for: the server keys, the DC, a temporary key's lifetime, retry and time bounds.
        public struct Configuration: Sendable {
            /// The server keys we trust; the first of the server's fingerprints we hold a key for is used.
            public var keys: [RSAPublicKey]
            /// The DC sent in `p_q_inner_data_dc` / `_temp_dc` (+10000 for test DCs, negative for media DCs, as
            /// Telegram numbers them). nil sends the forms without a DC (`p_q_inner_data`, `_temp`), as old clients do.
            public var dcID: Int32?
            /// Seconds a temporary key lives (`expires_in`, perfect forward secrecy); nil makes a permanent key.
            public var temporaryKeyLifetime: Int32?
            /// dh_gen_retry rounds accepted before failing with `.tooManyRetries`.
            public var maxRetries: Int
            /// How far the server's msg_ids may stray from its clock (see `PeerMessageIDs`).
            public var messageTimeTolerance: Double
            /// Primes already proven safe; others are tested (and then remembered).
            public var primeCache: DHPrimeCache

            /// A configuration; `dcID` nil uses the forms of `p_q_inner_data` that name no DC, and a `temporaryKeyLifetime`
            /// (seconds) makes a temporary key (`p_q_inner_data_temp_dc`).
            public init(keys: [RSAPublicKey], dcID: Int32?, temporaryKeyLifetime: Int32? = nil,
                        maxRetries: Int = AuthKeyExchange.defaultMaxRetries,
                        messageTimeTolerance: Double = AuthKeyExchange.defaultMessageTimeTolerance,
                        primeCache: DHPrimeCache = .shared) {
                self.keys = keys
                self.dcID = dcID
                self.temporaryKeyLifetime = temporaryKeyLifetime
                self.maxRetries = maxRetries
                self.messageTimeTolerance = messageTimeTolerance
                self.primeCache = primeCache
            }
        }

        /// What the client ends with.
        public struct Result: Sendable, Hashable {
            /// The 256-byte key (left-padded: a DH result with leading zero bytes keeps them).
            public let authKey: AuthKey
            /// new_nonce[0..<8] XOR server_nonce[0..<8] as the little-endian long the session sends.
            public let firstSalt: Int64
            /// Seconds to add to the local clock to get the server's: server_time − local time when
            /// server_DH_params_ok arrived. Feed it to `MessageIDGenerator.timeOffset`.
            public let timeOffset: Double
            /// The server's clock (server_DH_inner_data.server_time).
            public let serverTime: Int32
            /// The DC sent in the inner data (nil for the forms without one).
            public let dcID: Int32?
            /// For a temporary key: its lifetime and when it expires in server time (server_time + expires_in),
            /// the value `bind_auth_key_inner.expires_at` carries. nil for a permanent key.
            public let expiresIn: Int32?
            /// For a temporary key, when it expires in server time (Unix seconds); nil for a permanent key.
            public let expiresAt: Int32?
            /// The fingerprint of the server key p_q_inner_data was encrypted to.
            public let fingerprint: Int64
            /// dh_gen_retry rounds it took.
            public let retries: Int

            /// Whether the key is temporary (made with `expires_in`).
            public var isTemporary: Bool { expiresIn != nil }
        }

        /// What a step of the exchange returns.
        public enum Output: Sendable, Equatable {
            /// Send this frame and feed the answer to `receive`.
            case send([UInt8])
            /// dh_gen_ok checked: the key is ready.
            case done(Result)
        }

        /// Longest server frame accepted: server_DH_params_ok with a 2048-bit prime is about 650 bytes.
        public static var maxFrameLength: Int { 4096 }

        private struct Nonces {
            let nonce: [UInt8]
            let serverNonce: [UInt8]
            let newNonce: [UInt8]
            let tmpKey: AESKeyIV
            let fingerprint: Int64
        }

        private struct Agreement {
            let nonces: Nonces
            let dh: DHParameters
            let gA: [UInt8]
            let serverTime: Int32
            let timeOffset: Double
            /// The key of the attempt in flight and its retry_id's source.
            var key: AuthKey
            var retries: Int
        }

        private enum State {
            case idle
            case awaitingResPQ(nonce: [UInt8])
            case awaitingServerDHParams(Nonces)
            case awaitingDHGen(Agreement)
            case over
        }

        /// The configuration the exchange was made with.
        public let configuration: Configuration
        private let random: any RandomSource
        private var state: State = .idle
        private var messageIDs = MessageIDGenerator(role: .client)
        private var serverIDs: PeerMessageIDs

        /// A client exchange, not started: call `start(now:)` next. `random` supplies the nonces and the DH exponent.
        public init(configuration: Configuration, random: any RandomSource) {
            self.configuration = configuration
            self.random = random
            serverIDs = PeerMessageIDs(expectedResidue: 1, tolerance: configuration.messageTimeTolerance)
        }

        /// Whether the exchange has ended (successfully or not).
        public var isFinished: Bool {
            if case .over = state { true } else { false }
        }

        /// The server's message the exchange waits for (the last one once it is over), for errors that arrive
        /// instead of it.
        public var awaitedStep: AuthKeyExchangeError.Step {
            switch state {
                case .idle, .awaitingResPQ, .over: .resPQ
                case .awaitingServerDHParams: .serverDHParams
                case .awaitingDHGen: .dhGenAnswer
            }
        }

        /// Step 1: `req_pq_multi` with a fresh nonce, as an unencrypted frame. Calling it again restarts.
        public mutating func start(now: Double) -> [UInt8] {
            let nonce = random.bytes(16)
            state = .awaitingResPQ(nonce: nonce)
            serverIDs = PeerMessageIDs(expectedResidue: 1, tolerance: configuration.messageTimeTolerance)
            let body = Buffer(capacity: 20)
            body.appendUInt32(0xbe7e_8ef1)  // req_pq_multi#be7e8ef1 nonce:int128 = ResPQ
            body.appendInt128(AuthKeyExchange.int128(nonce))
            return frame(body, now: now)
        }

        /// Feeds one frame from the server.
        public mutating func receive(frame: [UInt8], now: Double) throws(AuthKeyExchangeError) -> Output {
            let current = state
            state = .over  // any error ends the exchange; success sets the next state
            switch current {
                case .idle:
                    throw .init(.resPQ, .notExpected)
                case .over:
                    throw .init(.dhGenAnswer, .notExpected)
                case .awaitingResPQ(let nonce):
                    return try receiveResPQ(frame, nonce: nonce, now: now)
                case .awaitingServerDHParams(let nonces):
                    return try receiveServerDHParams(frame, nonces, now: now)
                case .awaitingDHGen(let agreement):
                    return try receiveDHGen(frame, agreement, now: now)
            }
        }

        // MARK: Steps

        /// Steps 2–4: check resPQ, factor pq, encrypt p_q_inner_data* to a known key, send req_DH_params.
        private mutating func receiveResPQ(_ frame: [UInt8], nonce: [UInt8], now: Double) throws(AuthKeyExchangeError) -> Output {
            let step = AuthKeyExchangeError.Step.resPQ
            let answer = switch try serverMessage(frame, MT.ResPQ.self, now: now, step: step) { case .resPQ(let c): c }
            guard answer.nonce.wireBytes == nonce else { throw .init(step, .nonceMismatch) }
            let fingerprints = answer.serverPublicKeyFingerprints
            let keys = configuration.keys
            guard let fingerprint = fingerprints.first(where: { f in keys.contains { $0.fingerprint == f } }),
                  let key = keys.first(where: { $0.fingerprint == fingerprint }) else {
                throw .init(step, .unknownFingerprints(fingerprints))
            }
            // pq is echoed verbatim in the inner data, so its width is bounded here, not only its value: 8 bytes
            // is what Telegram sends and keeps every inner data form within RSA_PAD's 144 bytes.
            guard answer.pq.count <= 8 else { throw .init(step, .pqNotFactorable(.pqTooWide(bytes: answer.pq.count))) }
            let (p, q): (UInt64, UInt64)
            do {
                (p, q) = try PQFactorizer.factor(bigEndian: answer.pq)
            } catch {
                throw .init(step, .pqNotFactorable(error))
            }
            // pq must be a product of exactly two primes; anything else is not from a real server.
            for factor in [p, q] where !PQFactorizer.isPrime(factor) { throw .init(step, .pqFactorNotPrime(factor)) }

            let serverNonce = answer.serverNonce.wireBytes
            let newNonce = random.bytes(32)
            let inner = innerData(pq: answer.pq, p: p, q: q, nonce: answer.nonce, serverNonce: answer.serverNonce,
                                  newNonce: newNonce)
            // A whole padding block is drawn and its head used: the layout of grammers' recorded exchange.
            let paddingBlock = random.bytes(RSAPad.paddedLength)
            let encrypted: [UInt8]
            do {
                // At most 4 + 12 × 3 + 16 + 16 + 32 + 8 = 112 bytes with pq bounded above, under RSA_PAD's 144.
                encrypted = try RSAPad.encrypt(data: inner, key: key,
                                               padding: Array(paddingBlock.prefix(max(0, RSAPad.paddedLength - inner.count)))) {
                    random.bytes(32)
                }
            } catch {
                throw .init(step, .crypto(error))
            }
            let tmpKey = try AuthKeyExchange.nonceKey(newNonce: newNonce, serverNonce: serverNonce, step: step)
            state = .awaitingServerDHParams(Nonces(nonce: nonce, serverNonce: serverNonce, newNonce: newNonce,
                                                   tmpKey: tmpKey, fingerprint: fingerprint))
            let body = Buffer(capacity: 340)
            body.appendUInt32(0xd712_e4be)  // req_DH_params
            body.appendInt128(answer.nonce)
            body.appendInt128(answer.serverNonce)
            body.appendTLBytes(AuthKeyExchange.bigEndianBytes(p))
            body.appendTLBytes(AuthKeyExchange.bigEndianBytes(q))
            body.appendInt64(fingerprint)
            body.appendTLBytes(encrypted)
            return .send(self.frame(body, now: now))
        }

        /// The p_q_inner_data form the configuration asks for; pq is echoed exactly as the server sent it.
        private func innerData(pq: [UInt8], p: UInt64, q: UInt64, nonce: TLInt128, serverNonce: TLInt128,
                               newNonce: [UInt8]) -> [UInt8] {
            let pBytes = AuthKeyExchange.bigEndianBytes(p), qBytes = AuthKeyExchange.bigEndianBytes(q)
            let new = AuthKeyExchange.int256(newNonce)
            let value: MT.P_Q_inner_data = switch (configuration.dcID, configuration.temporaryKeyLifetime) {
                case (nil, nil):
                    .p_q_inner_data(.init(pq: pq, p: pBytes, q: qBytes, nonce: nonce, serverNonce: serverNonce, newNonce: new))
                case (let dc?, nil):
                    .p_q_inner_data_dc(.init(pq: pq, p: pBytes, q: qBytes, nonce: nonce, serverNonce: serverNonce,
                                             newNonce: new, dc: dc))
                case (nil, let expiresIn?):
                    .p_q_inner_data_temp(.init(pq: pq, p: pBytes, q: qBytes, nonce: nonce, serverNonce: serverNonce,
                                               newNonce: new, expiresIn: expiresIn))
                case (let dc?, let expiresIn?):
                    .p_q_inner_data_temp_dc(.init(pq: pq, p: pBytes, q: qBytes, nonce: nonce, serverNonce: serverNonce,
                                                  newNonce: new, dc: dc, expiresIn: expiresIn))
            }
            let buffer = Buffer(capacity: 144)
            value.serialize(buffer, true)
            return buffer.bytes
        }

        /// Steps 5–6: decrypt and check server_DH_inner_data, then send the first set_client_DH_params.
        private mutating func receiveServerDHParams(_ frame: [UInt8], _ nonces: Nonces,
                                                    now: Double) throws(AuthKeyExchangeError) -> Output {
            let step = AuthKeyExchangeError.Step.serverDHParams
            let answer: MT.Server_DH_Params.Cons_server_DH_params_ok
            switch try serverMessage(frame, MT.Server_DH_Params.self, now: now, step: step) {
                case .server_DH_params_fail(let fail):
                    try checkNonces(fail.nonce, fail.serverNonce, nonces, step: step)
                    try checkNewNonceHash(fail.newNonceHash, number: 0, key: nil, nonces, step: step)
                    throw .init(step, .serverRefusedDHParams)
                case .server_DH_params_ok(let ok):
                    answer = ok
            }
            try checkNonces(answer.nonce, answer.serverNonce, nonces, step: step)
            let inner = try AuthKeyExchange.decryptInnerData(answer.encryptedAnswer, key: nonces.tmpKey, step: step) {
                (r: inout BufferReader) throws(TLDecodingError) in try MT.Server_DH_inner_data.parse(&r)
            }
            let data = switch inner { case .server_DH_inner_data(let c): c }
            try checkNonces(data.nonce, data.serverNonce, nonces, step: step)
            let dh: DHParameters
            do {
                dh = try DHParameters(prime: data.dhPrime, g: Int(data.g), cache: configuration.primeCache)
            } catch {
                throw .init(step, .dhParameters(error))
            }
            do {
                try dh.checkPublicValue(data.gA, name: "g_a")
            } catch {
                throw .init(step, .dhValueOutOfRange(error))
            }
            // server_time is the server's clock when it wrote this answer; every msg_id so far must agree with it.
            let offset = Double(data.serverTime) - now
            try serverIDs.check(step: step) { $0 + offset }

            let (frame, key) = try setClientDHParams(nonces, dh: dh, gA: data.gA, retryID: 0, now: now, step: step)
            state = .awaitingDHGen(Agreement(nonces: nonces, dh: dh, gA: data.gA, serverTime: data.serverTime,
                                             timeOffset: offset, key: key, retries: 0))
            return .send(frame)
        }

        /// Step 6's request with a fresh b: g_b and the candidate key g_a^b.
        private mutating func setClientDHParams(_ nonces: Nonces, dh: DHParameters, gA: [UInt8], retryID: Int64,
                                                now: Double, step: AuthKeyExchangeError.Step)
            throws(AuthKeyExchangeError) -> (frame: [UInt8], key: AuthKey) {
            var attempt = 0
            var result: (gB: [UInt8], authKey: [UInt8])?
            while result == nil {
                // g_b outside the safe range happens with probability about 2^−63; a few draws are plenty.
                guard attempt < 8 else { throw .init(step, .randomnessExhausted(what: "b with g_b in range")) }
                attempt += 1
                do {
                    result = try dh.clientStep(gA: gA, b: random.bytes(256))
                } catch .dhValueOutOfRange {
                    continue
                } catch {
                    throw .init(step, .crypto(error))
                }
            }
            guard let result else { throw .init(step, .randomnessExhausted(what: "b")) }
            let (gB, keyBytes) = result
            let key = try AuthKeyExchange.authKey(keyBytes, step: step)
            let inner = Buffer(capacity: 300)
            MT.Client_DH_Inner_Data.client_DH_inner_data(.init(
                nonce: AuthKeyExchange.int128(nonces.nonce), serverNonce: AuthKeyExchange.int128(nonces.serverNonce),
                retryId: retryID, gB: gB)).serialize(inner, true)
            let encrypted: [UInt8]
            do {
                encrypted = try AuthKeyExchange.encryptInnerData(inner.bytes, key: nonces.tmpKey, random: random)
            } catch {
                throw .init(step, .crypto(error))
            }
            let body = Buffer(capacity: 380)
            body.appendUInt32(0xf504_5f1f)  // set_client_DH_params
            body.appendInt128(AuthKeyExchange.int128(nonces.nonce))
            body.appendInt128(AuthKeyExchange.int128(nonces.serverNonce))
            body.appendTLBytes(encrypted)
            return (self.frame(body, now: now), key)
        }

        /// Steps 7–9: dh_gen_ok finishes; dh_gen_retry sends a new attempt (bounded); dh_gen_fail fails.
        private mutating func receiveDHGen(_ frame: [UInt8], _ agreement: Agreement,
                                           now: Double) throws(AuthKeyExchangeError) -> Output {
            let step = AuthKeyExchangeError.Step.dhGenAnswer
            let answer = try serverMessage(frame, MT.Set_client_DH_params_answer.self, now: now, step: step)
            try serverIDs.check(step: step) { $0 + agreement.timeOffset }
            let nonces = agreement.nonces
            switch answer {
                case .dh_gen_ok(let ok):
                    try checkNonces(ok.nonce, ok.serverNonce, nonces, step: step)
                    try checkNewNonceHash(ok.newNonceHash1, number: 1, key: agreement.key, nonces, step: step)
                    let expiresIn = configuration.temporaryKeyLifetime
                    return .done(Result(
                        authKey: agreement.key,
                        firstSalt: AuthKeyExchange.firstSalt(newNonce: nonces.newNonce, serverNonce: nonces.serverNonce),
                        timeOffset: agreement.timeOffset, serverTime: agreement.serverTime, dcID: configuration.dcID,
                        expiresIn: expiresIn,
                        expiresAt: expiresIn.map { Int32(clamping: Int64(agreement.serverTime) + Int64($0)) },
                        fingerprint: nonces.fingerprint, retries: agreement.retries))
                case .dh_gen_retry(let retry):
                    try checkNonces(retry.nonce, retry.serverNonce, nonces, step: step)
                    try checkNewNonceHash(retry.newNonceHash2, number: 2, key: agreement.key, nonces, step: step)
                    guard agreement.retries < configuration.maxRetries else {
                        throw .init(step, .tooManyRetries(limit: configuration.maxRetries))
                    }
                    // retry_id is the aux_hash of the key the server turned down (auth_key, step 9).
                    let (frame, key) = try setClientDHParams(nonces, dh: agreement.dh, gA: agreement.gA,
                                                             retryID: AuthKeyExchange.long(agreement.key.auxHash),
                                                             now: now, step: step)
                    var next = agreement
                    next.key = key
                    next.retries += 1
                    state = .awaitingDHGen(next)
                    return .send(frame)
                case .dh_gen_fail(let fail):
                    try checkNonces(fail.nonce, fail.serverNonce, nonces, step: step)
                    try checkNewNonceHash(fail.newNonceHash3, number: 3, key: agreement.key, nonces, step: step)
                    throw .init(step, .keyGenerationFailed)
            }
        }

        // MARK: Checks and framing

        /// Unwraps a server frame, records its msg_id, and reads its body as one canonically encoded `T`.
        private mutating func serverMessage<T: TLParsable & TLSerializable>(
            _ frame: [UInt8], _ type: T.Type, now: Double, step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) -> T {
            let message = try AuthKeyExchange.unwrap(frame, step: step, limit: Self.maxFrameLength)
            try serverIDs.record(message.messageID, at: now, step: step)
            let value = try AuthKeyExchange.parseBody(message.body, step: step) { (r: inout BufferReader) throws(TLDecodingError) in
                try T.parse(&r)
            }
            try AuthKeyExchange.requireCanonical(message.body, step: step) { value.serialize($0, true) }
            return value
        }

        private func checkNonces(_ nonce: TLInt128, _ serverNonce: TLInt128, _ nonces: Nonces,
                                 step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) {
            guard nonce.wireBytes == nonces.nonce else { throw .init(step, .nonceMismatch) }
            guard serverNonce.wireBytes == nonces.serverNonce else { throw .init(step, .serverNonceMismatch) }
        }

        private func checkNewNonceHash(_ received: TLInt128, number: UInt8, key: AuthKey?, _ nonces: Nonces,
                                       step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) {
            let expected: [UInt8]
            do {
                expected = try AuthKeyExchange.newNonceHash(number, key: key, newNonce: nonces.newNonce)
            } catch {
                throw .init(step, .crypto(error))
            }
            guard constantTimeEquals(received.wireBytes, expected) else {
                throw .init(step, .newNonceHashMismatch(number: Int(number)))
            }
        }

        private mutating func frame(_ body: Buffer, now: Double) -> [UInt8] {
            UnencryptedMessage(messageID: messageIDs.next(now: now), body: body.bytes).bytes
        }
    }
}
