// One client connection as a sans-IO state machine: the transport (framing, obfuscation, MTProxy), then the
// auth-key exchange unless a stored key is given, then the encrypted session. With a `TemporaryKeyPolicy` the
// session runs over a temporary key instead (core.telegram.org/api/pfs): the permanent key is made if missing, then
// a temporary one, and `auth.bindTempAuthKey` goes first in its session; the connection is ready once the server
// accepted the binding (a refusal as ENCRYPTED_MESSAGE_INVALID is followed by a `ping` under the permanent key, to
// learn whether the server still knows it). Bytes and the time go in; bytes to write and events come out. The SwiftNIO client drives
// it; tests drive it against an in-memory server.
import MTProto
import MTProtoCrypto
import MTProtoTransport

/// An auth key with what a client keeps next to it, so a later connection skips the exchange. Its description
/// names the key by id only.
public struct StoredAuthKey: Sendable, Hashable, CustomStringConvertible {
    /// The 2048-bit auth key itself (its description names it by id only).
    public let authKey: AuthKey
    /// The last salt known.
    public var salt: Int64
    /// Server time minus local time, seconds.
    public var timeOffset: Double

    /// A key with its last salt and clock offset.
    public init(authKey: AuthKey, salt: Int64, timeOffset: Double) {
        self.authKey = authKey
        self.salt = salt
        self.timeOffset = timeOffset
    }

    /// The key's id, never its bytes.
    public var description: String { "StoredAuthKey(\(authKey), salt: set, offset: \(timeOffset))" }
}

/// Why a connection ended. After any of them the connection is over; the driver reconnects.
public enum ClientConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transport failed: a bad frame, a bad length, an obfuscation or proxy header the client cannot read.
    case transport(TransportError)
    /// The auth-key exchange failed one of its checks (see `AuthKeyExchangeError` for which).
    case exchange(AuthKeyExchangeError)
    /// The server sent a transport error code: −404 means it does not know the auth key (forget it and exchange a
    /// new one), −429 too many connections (back off).
    case server(code: Int32)
    /// A frame arrived that fits neither the exchange nor the session (e.g. an encrypted frame during the exchange).
    case unexpectedFrame(String)
    /// The server refused `auth.bindTempAuthKey`. For ENCRYPTED_MESSAGE_INVALID a `ping` under the permanent key
    /// was answered first, so the server knows that key and the refusal has another cause.
    case bindingRefused(RPCError)
    /// The server refused `auth.bindTempAuthKey` with ENCRYPTED_MESSAGE_INVALID and answered a `ping` under the
    /// permanent key with −404: it no longer knows that key (the account was logged out, or the key destroyed).
    /// A new permanent key is needed, and the account signs in again on it.
    case permanentKeyUnknown(RPCError)
    /// `auth.bindTempAuthKey` ended without an answer, or with one that is not `boolTrue`.
    case bindingFailed(RequestFailure)

    /// A one-line account of why the connection ended.
    public var description: String {
        switch self {
            case .transport(let error): "transport: \(error)"
            case .exchange(let error): "auth-key exchange: \(error)"
            case .server(let code): "server transport error \(code)"
            case .unexpectedFrame(let why): "unexpected frame: \(why)"
            case .bindingRefused(let error): "auth.bindTempAuthKey refused: \(error)"
            case .permanentKeyUnknown(let error): "the server no longer knows the permanent auth key (bindTempAuthKey: \(error); −404 for the key)"
            case .bindingFailed(let why): "auth.bindTempAuthKey failed: \(why)"
        }
    }
}

/// One client connection, sans-IO: the transport, the key exchange (and with temporary keys the binding) and the
/// MTProto session, driven with bytes and the time. `MTProtoClient` drives one over a socket; tests drive one
/// directly. Not thread-safe: it is a value its driver owns.
public struct ClientConnection: Sendable {
    /// What a connection needs: the transport, the server's keys and DC, a stored key if any, and the session's settings.
    public struct Configuration: Sendable {
        /// The framing and obfuscation (or MTProxy) the connection speaks.
        public var transport: TransportConfiguration
        /// The server's RSA keys, for the exchange.
        public var serverKeys: [RSAPublicKey]
        /// The DC the exchange names (`p_q_inner_data_dc`).
        public var dcID: Int32
        /// A key from an earlier connection; nil runs the exchange. With `temporaryKeys`, the permanent key.
        public var storedKey: StoredAuthKey?
        /// The MTProto session's timing and bounds.
        public var session: SessionConfiguration
        /// Run the session over a temporary key bound to the permanent one (perfect forward secrecy); nil uses the
        /// permanent key directly.
        public var temporaryKeys: TemporaryKeyPolicy?
        /// A bound temporary key from an earlier connection, used while `temporaryKeys` deems it fresh.
        public var storedTemporaryKey: TemporaryAuthKey?

        /// A configuration; with no `storedKey`, the connection runs the key exchange first.
        public init(transport: TransportConfiguration, serverKeys: [RSAPublicKey], dcID: Int32,
                    storedKey: StoredAuthKey? = nil, session: SessionConfiguration = SessionConfiguration(),
                    temporaryKeys: TemporaryKeyPolicy? = nil, storedTemporaryKey: TemporaryAuthKey? = nil) {
            self.transport = transport
            self.serverKeys = serverKeys
            self.dcID = dcID
            self.storedKey = storedKey
            self.session = session
            self.temporaryKeys = temporaryKeys
            self.storedTemporaryKey = storedTemporaryKey
        }
    }

    /// What a connection reports to its driver.
    public enum Event: Sendable {
        /// The session is up on this key: from a stored key at once, or after a new key was agreed (persist it).
        /// With temporary keys it is the temporary key, reported once the server accepted its binding.
        case ready(StoredAuthKey, isNew: Bool)
        /// With temporary keys: the permanent key an exchange just made (persist it; sessions never run on it).
        case permanentKeyCreated(StoredAuthKey)
        /// With temporary keys: the server accepted the binding of this new temporary key (persist it).
        case temporaryKeyBound(TemporaryAuthKey)
        /// Anything the session reports (results, errors, updates, acks…).
        case session(SessionEvent)
        /// A frame the session refused (bad msg_key, another session); the connection goes on.
        case rejectedFrame(SessionError)
    }

    /// Where the connection is. The session of `.binding`, `.ready` and `.probing` is `live`, not a payload here:
    /// a session inside an enum payload is copied whole (a retain and a release of every table) by each pattern
    /// match, and the phase is read several times per call.
    enum Phase: Sendable {
        /// Making a key: the permanent one, or (`configuration.temporaryKeyLifetime` set) the temporary one.
        case exchanging(AuthKeyExchange.Client)
        /// A session on a new temporary key whose `auth.bindTempAuthKey` (request `request`) is unanswered.
        case binding(request: RequestID, key: TemporaryAuthKey)
        case ready
        /// `live` keeps the session, if there was one, that survives the failure: a new connection can carry it on.
        case failed(ClientConnectionError)
        /// The binding was refused with ENCRYPTED_MESSAGE_INVALID; a `ping` in a session under the permanent key
        /// asks the server whether it still knows that key (core.telegram.org/api/pfs).
        case probing(refusal: RPCError)
    }

    /// The configuration the connection was made with.
    public let configuration: Configuration
    let random: any RandomSource
    var transport: ClientTransport
    var phase: Phase
    /// The session of `.binding`, `.ready` and `.probing`, and after a failure the one worth carrying on.
    var live: Session?
    /// With temporary keys: the permanent key (stored, or made on this connection).
    public private(set) var permanentKey: StoredAuthKey?
    /// With temporary keys: the temporary key of the session (reused, or made and being or already bound).
    public private(set) var temporaryKey: TemporaryAuthKey?
    /// HTTP: when the server last sent bytes, or a request went out with none in flight (its response is due from
    /// then on).
    var httpHeardFrom: Double = 0

    /// A connection about to send its transport's opening bytes.
    /// - Parameters:
    ///   - configuration: the transport, the server's keys and DC, stored keys and the session's settings.
    ///   - random: where nonces, exponents, padding and obfuscation keys come from.
    ///   - now: the local clock (seconds since 1970), also mixed into a fake-TLS ClientHello.
    public init(configuration: Configuration, random: any RandomSource, now: Double) throws(ClientConnectionError) {
        self.configuration = configuration
        self.random = random
        transport = try Self.transport(configuration, random: random, now: now)
        permanentKey = configuration.storedKey
        guard let policy = configuration.temporaryKeys else {
            if let stored = configuration.storedKey {
                live = Self.session(on: stored, configuration, random: random)
                phase = .ready
            } else {
                phase = .exchanging(Self.exchange(temporary: nil, configuration, random: random))
            }
            return
        }
        if configuration.storedKey != nil, let reused = configuration.storedTemporaryKey, policy.isFresh(reused, now: now) {
            temporaryKey = reused
            live = Self.session(on: reused.key, configuration, random: random)
            phase = .ready
        } else {
            let lifetime = configuration.storedKey == nil ? nil : policy.lifetime
            phase = .exchanging(Self.exchange(temporary: lifetime, configuration, random: random))
        }
    }

    private static func session(on key: StoredAuthKey, _ configuration: Configuration,
                                random: any RandomSource) -> Session {
        Session(role: .client, authKey: key.authKey, salt: key.salt, timeOffset: key.timeOffset,
                configuration: configuration.session, random: random)
    }

    private static func exchange(temporary lifetime: Int32?, _ configuration: Configuration,
                                 random: any RandomSource) -> AuthKeyExchange.Client {
        AuthKeyExchange.Client(configuration: .init(keys: configuration.serverKeys, dcID: configuration.dcID,
                                                    temporaryKeyLifetime: lifetime), random: random)
    }

    /// A connection that carries on `session` (its id, pending requests, salts and clock) over a new transport,
    /// after the previous connection was lost. Requests it sent and got no answer for go out first, again under
    /// their msg_ids (`Session.resendUnanswered(now:)`): the server runs those it never got and answers the others
    /// from what it kept, so none runs twice.
    public init(configuration: Configuration, resuming session: Session, random: any RandomSource,
                now: Double) throws(ClientConnectionError) {
        self.configuration = configuration
        self.random = random
        transport = try Self.transport(configuration, random: random, now: now)
        permanentKey = configuration.storedKey
        temporaryKey = configuration.temporaryKeys == nil ? nil : configuration.storedTemporaryKey
        var session = session
        session.resendUnanswered(now: now)
        live = session
        phase = .ready
    }

    private static func transport(_ configuration: Configuration, random: any RandomSource,
                                  now: Double) throws(ClientConnectionError) -> ClientTransport {
        do {
            return try ClientTransport(configuration: configuration.transport, random: random,
                                       unixTime: Int32(clamping: Int64(now.rounded(.down))))
        } catch {
            throw .transport(error)
        }
    }

    /// The session, once the key is known.
    public var session: Session? {
        if case .ready = phase { live } else { nil }
    }

    /// The session to carry on over a new connection: the live one, or the one this connection had when it failed.
    /// A session whose temporary key was never bound is not worth carrying on.
    public var resumableSession: Session? {
        switch phase {
            case .ready, .failed: live
            case .exchanging, .binding, .probing: nil
        }
    }

    /// Whether calls can be sent (`.ready` was reported).
    public var isReady: Bool { if case .ready = phase { true } else { false } }

    /// Why the connection failed, once it has.
    public var failure: ClientConnectionError? {
        if case .failed(let error) = phase { error } else { nil }
    }

    /// The bytes that open the connection (transport opening and the first exchange message), and, with a
    /// stored key, `.ready` at once.
    public mutating func start(now: Double) throws(ClientConnectionError) -> (bytes: [UInt8], events: [Event]) {
        httpHeardFrom = now
        switch phase {
            case .exchanging(var exchange):
                let first = exchange.start(now: now)
                phase = .exchanging(exchange)
                return (try frame(first), [])
            case .ready:
                guard let stored = temporaryKey?.key ?? configuration.storedKey else { return (transport.start(), []) }
                return (transport.start(), [.ready(stored, isNew: false)])
            case .binding, .probing:
                return (transport.start(), [])
            case .failed(let error):
                throw error
        }
    }

    /// Queues a request; only once `.ready` was reported.
    public mutating func send(_ body: [UInt8]) throws(SessionError) -> RequestID? {
        try withSession(readyOnly: true) { session throws(SessionError) in try session.send(body) }
    }

    /// Sends a `ping` (a new connection carrying a resumed session announces it this way, so the server moves
    /// the session's pending answers onto it).
    public mutating func ping(id: Int64) throws(SessionError) -> RequestID? {
        try withSession(readyOnly: true) { session throws(SessionError) in try session.ping(id: id) }
    }

    /// Cancels a request (see `Session.cancel`).
    @discardableResult
    public mutating func cancel(_ request: RequestID) -> Bool {
        withSession(readyOnly: true) { $0.cancel(request) } ?? false
    }

    /// The session's frames due at `now`, framed for the wire.
    public mutating func flush(now: Double) throws(ClientConnectionError) -> [UInt8] {
        try flushPieces(now: now).reduce(into: []) { Self.write($1, to: &$0) }
    }

    /// `flush` as pieces to write back to back: frames are not copied to put their transport headers in front of
    /// them or to join them (a 512 KiB upload part is copied once more, into the socket's buffers).
    public mutating func flushPieces(now: Double) throws(ClientConnectionError) -> [[UInt8]] {
        if case .failed(let error) = phase { throw error }
        if let timeout = configuration.transport.http?.responseTimeout, let inFlight = transport.httpRequestsInFlight {
            if inFlight > 0, now - httpHeardFrom >= timeout { try fail(.transport(.http(.responseTimedOut(seconds: timeout)))) }
            if inFlight == 0 { httpHeardFrom = now }
        }
        // HTTP: with no request left at the server, the next one carries `http_wait` (alone, when there is nothing
        // else to send), so the server has a request to answer when it has something to send
        // (core.telegram.org/mtproto/transports#http).
        if let wait = configuration.transport.http?.longPollWait, wait > 0, transport.httpRequestsInFlight == 0 {
            withSession(readyOnly: true) { $0.httpWait(maxDelay: 0, waitAfter: 0, maxWait: wait) }
        }
        guard let frames = withSession(readyOnly: false, { $0.outgoing(now: now) }) else { return [] }
        var out: [[UInt8]] = []
        for frame in frames {
            do {
                out += try transport.sendPieces(frame.bytes, quickAck: frame.quickAckToken != nil)
            } catch {
                try fail(.transport(error))
            }
        }
        return out
    }

    /// Appends `bytes` to `out`, taking them as they are when `out` is empty (no copy of a large frame).
    static func write(_ bytes: [UInt8], to out: inout [UInt8]) {
        if out.isEmpty { out = bytes } else { out += bytes }
    }

    /// When `flush` has timed work next (acks, state queries).
    public var nextDeadline: Double? {
        let session: Double? = switch phase {
            case .ready, .binding, .probing: live?.nextDeadline
            case .exchanging, .failed: nil
        }
        // HTTP: the response overdue (see `HTTPTransportOptions.responseTimeout`).
        guard failure == nil, let timeout = configuration.transport.http?.responseTimeout,
              (transport.httpRequestsInFlight ?? 0) > 0 else { return session }
        return min(session ?? .infinity, httpHeardFrom + timeout)
    }

    /// Feeds bytes from the server. Returns the events and the bytes to write (exchange answers, session frames).
    public mutating func receive(_ bytes: [UInt8], now: Double) throws(ClientConnectionError)
        -> (bytes: [UInt8], events: [Event])
    {
        if case .failed(let error) = phase { throw error }
        let output: TransportOutput
        do {
            output = try transport.receive(bytes)
        } catch {
            try fail(.transport(error))
        }
        return try deliver(consume output, now: now)
    }

    /// `receive` from memory the caller owns (a socket buffer), read only during the call: frames are copied out
    /// of it once, not the whole read first (see `ClientTransport.receive(bytes:)`).
    public mutating func receive(bytes: UnsafeRawBufferPointer, now: Double) throws(ClientConnectionError)
        -> (bytes: [UInt8], events: [Event])
    {
        if case .failed(let error) = phase { throw error }
        let output: TransportOutput
        do {
            output = try transport.receive(bytes: bytes)
        } catch {
            try fail(.transport(error))
        }
        return try deliver(consume output, now: now)
    }

    /// What the transport decoded, through the handshake or the session.
    private mutating func deliver(_ output: consuming TransportOutput, now: Double) throws(ClientConnectionError)
        -> (bytes: [UInt8], events: [Event])
    {
        httpHeardFrom = now
        var out = output.outbound
        var events: [Event] = []
        // Taken out one by one, so a frame's array is referenced only by the code decrypting it, which can then
        // decrypt it in place instead of copying it first.
        var received = consume output
        received.events.reverse()
        while let event = received.events.popLast() {
            switch consume event {
                case .transportError(let code):
                    if code == -404, case .probing(let refusal) = phase { try fail(.permanentKeyUnknown(refusal)) }
                    if case .exchanging(let exchange) = phase {
                        try fail(.exchange(AuthKeyExchangeError(exchange.awaitedStep, .refusedByServer(code: code))))
                    }
                    try fail(.server(code: code))
                case .quickAck(let token):
                    events += withSession(readyOnly: true) { $0.receiveQuickAck(token).map(Event.session) } ?? []
                case .frame(let payload, _):
                    out += try handle(payload, now: now, events: &events)
            }
        }
        Self.write(try flush(now: now), to: &out)
        return (out, events)
    }

    mutating func handle(_ payload: consuming [UInt8], now: Double, events: inout [Event]) throws(ClientConnectionError)
        -> [UInt8]
    {
        switch phase {
            case .exchanging(var exchange):
                let output: AuthKeyExchange.Client.Output
                do throws(AuthKeyExchangeError) {
                    output = try exchange.receive(frame: payload, now: now)
                } catch {
                    try fail(.exchange(error))
                }
                switch output {
                    case .send(let next):
                        phase = .exchanging(exchange)
                        return try frame(next)
                    case .done(let result):
                        return try finished(result, now: now, events: &events)
                }
            case .ready:
                guard let received = try receiveInSession(payload, now: now, events: &events) else { return [] }
                events += received.map(Event.session)
                return []
            case .binding(let request, let key):
                guard let received = try receiveInSession(payload, now: now, events: &events) else { return [] }
                for event in received {
                    switch event {
                        case .result(request, let body) where body.elementsEqual(Self.boolTrue):
                            phase = .ready
                            events += [.temporaryKeyBound(key), .ready(key.key, isNew: true)]
                        case .result(request, _):
                            try fail(.bindingFailed(.malformedAnswer("auth.bindTempAuthKey answered boolFalse or not a Bool")))
                        case .rpcError(request, let error) where error.message == "ENCRYPTED_MESSAGE_INVALID":
                            return try probePermanentKey(after: error, timeOffset: live?.timeOffset ?? 0, now: now)
                        case .rpcError(request, let error):
                            try fail(.bindingRefused(error))
                        case .failed(request, let why):
                            try fail(.bindingFailed(why))
                        default:
                            events.append(.session(event))
                    }
                }
                return []
            case .probing(let refusal):
                guard let received = try receiveInSession(payload, now: now, events: &events) else { return [] }
                // A pong: the server knows the permanent key, so its refusal of the binding stands.
                if received.contains(where: { if case .pong = $0 { true } else { false } }) {
                    try fail(.bindingRefused(refusal))
                }
                return []
            case .failed(let error):
                throw error
        }
    }

    /// What the live session makes of an encrypted frame (nil without one); a frame it refuses (bad msg_key,
    /// another session…) is reported as `.rejectedFrame` and yields no events, and the connection goes on.
    private mutating func receiveInSession(_ payload: consuming [UInt8], now: Double,
                                           events: inout [Event]) throws(ClientConnectionError) -> [SessionEvent]? {
        try checkEncrypted(payload)
        do {
            return try live?.receive(frame: payload, now: now)
        } catch {
            events.append(.rejectedFrame(error))
            return []
        }
    }

    /// Runs `body` on the session of `.ready` (or of `.binding` and `.probing` too unless `readyOnly`) where it
    /// is, or returns nil in other phases.
    private mutating func withSession<T, E: Error>(readyOnly: Bool, _ body: (inout Session) throws(E) -> T)
        throws(E) -> T?
    {
        switch phase {
            case .ready: break
            case .binding, .probing: if readyOnly { return nil }
            case .exchanging, .failed: return nil
        }
        // Optional chaining works on `live` in place; `live != nil` and `live!` each copied the whole session
        // (two dozen tables retained and released, ~3 % of a pipelined client).
        return try live?.applying(body)
    }

    /// ENCRYPTED_MESSAGE_INVALID is also what a server answers a binding to a permanent key it no longer knows,
    /// so the permanent key is asked about directly: a `ping` in a new session under it, on this connection. The
    /// server answers `pong` if it knows the key and transport error −404 if not (core.telegram.org/api/pfs; the
    /// ping carries no account data, so using the permanent key for it does not weaken forward secrecy).
    private mutating func probePermanentKey(after refusal: RPCError, timeOffset: Double,
                                            now: Double) throws(ClientConnectionError) -> [UInt8] {
        // A key made on this very connection was just accepted by the server: a refusal then has another cause.
        guard let permanent = permanentKey, configuration.storedKey != nil else { try fail(.bindingRefused(refusal)) }
        // The clock offset just learned from the temporary key's exchange, not the one stored with the old key.
        let current = StoredAuthKey(authKey: permanent.authKey, salt: permanent.salt, timeOffset: timeOffset)
        var session = Self.session(on: current, configuration, random: random)
        do {
            _ = try session.ping(id: random.int64())
        } catch {
            try fail(.bindingRefused(refusal))
        }
        let frames = session.outgoing(now: now)
        live = session
        phase = .probing(refusal: refusal)
        var out: [UInt8] = []
        for frame in frames { Self.write(try self.frame(frame.bytes), to: &out) }
        return out
    }

    /// boolTrue#997275b5, boxed: the answer to a successful `auth.bindTempAuthKey`.
    static let boolTrue: [UInt8] = [0xb5, 0x75, 0x72, 0x99]

    private mutating func checkEncrypted(_ payload: [UInt8]) throws(ClientConnectionError) {
        guard payload.count >= 8, payload.prefix(8).contains(where: { $0 != 0 }) else {
            try fail(.unexpectedFrame("an unencrypted message after the key exchange"))
        }
    }

    /// An exchange finished. A permanent key with temporary keys wanted: report it and start the temporary
    /// exchange on the same connection. A temporary key: open its session with `auth.bindTempAuthKey` queued first.
    /// Otherwise the session runs on the key at once.
    private mutating func finished(_ result: AuthKeyExchange.Client.Result, now: Double,
                                   events: inout [Event]) throws(ClientConnectionError) -> [UInt8] {
        let stored = StoredAuthKey(authKey: result.authKey, salt: result.firstSalt, timeOffset: result.timeOffset)
        guard let policy = configuration.temporaryKeys else {
            live = Self.session(on: stored, configuration, random: random)
            phase = .ready
            events.append(.ready(stored, isNew: true))
            return []
        }
        guard result.isTemporary, let expiresAt = result.expiresAt, let permanent = permanentKey else {
            permanentKey = stored
            events.append(.permanentKeyCreated(stored))
            var exchange = Self.exchange(temporary: policy.lifetime, configuration, random: random)
            let first = exchange.start(now: now)
            phase = .exchanging(exchange)
            return try frame(first)
        }
        let key = TemporaryAuthKey(key: stored, expiresAt: expiresAt)
        var session = Self.session(on: stored, configuration, random: random)
        let request: RequestID
        do {
            request = try session.bindTemporaryKey(to: permanent.authKey, expiresAt: expiresAt)
        } catch {
            try fail(.bindingFailed(.malformedAnswer("could not queue auth.bindTempAuthKey: \(error)")))
        }
        temporaryKey = key
        live = session
        phase = .binding(request: request, key: key)
        return []
    }

    mutating func frame(_ payload: [UInt8], quickAck: Bool = false) throws(ClientConnectionError) -> [UInt8] {
        do {
            return try transport.send(payload, quickAck: quickAck)
        } catch {
            try fail(.transport(error))
        }
    }

    mutating func fail(_ error: ClientConnectionError) throws(ClientConnectionError) -> Never {
        live = resumableSession
        phase = .failed(error)
        throw error
    }
}

extension Session {
    /// `body` on this session in place (see `ClientConnection.withSession`).
    fileprivate mutating func applying<T, E: Error>(_ body: (inout Session) throws(E) -> T) throws(E) -> T {
        try body(&self)
    }
}
