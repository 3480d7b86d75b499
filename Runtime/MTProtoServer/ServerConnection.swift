// One client connection of the server role as a sans-IO state machine: bytes and the time in, bytes to write and
// events out. It composes the pieces that exist: `ServerTransport` recognises the client's framing and obfuscation
// from its first bytes; unencrypted frames (auth_key_id 0) run `AuthKeyExchange.Server`; encrypted ones are
// decrypted with their key's `MTProto2Cipher` to learn the session_id, then handed to the server-role `Session` for
// (auth key, session id), created on first sight; requests the session reports go to the `RPCHandlers` (through
// the temporary-key rules of TemporaryKeys.swift). A request whose handler answers later is a pending answer: the
// output hands its work to the driver, which runs it and feeds the answer back (`complete`); its deadline comes in
// through `tick(now:)` like every other, and it is answered for when the connection or its session goes. An unknown
// auth key, or a temporary one past its expiry, gets transport error −404 as Telegram sends it
// (core.telegram.org/mtproto/mtproto-transports, "Transport errors"), then the connection closes. Every failure
// closes the connection with a typed error.
import MTProto
import MTProtoCrypto
import MTProtoTransport
import Synchronization
import TLRuntime

/// Bounds of one server. Each is a cap on memory or work a client can cause.
public struct ServerLimits: Sendable, Hashable {
    /// Open connections; more are closed as soon as they are accepted.
    public var maxConnections = 1024
    /// Auth keys kept (oldest forgotten first).
    public var maxAuthKeys = 10_000
    /// Sessions kept in all, and per auth key (least recently used forgotten first).
    public var maxSessions = 10_000
    /// Sessions kept per auth key (the least recently used is forgotten first).
    public var maxSessionsPerKey = 16
    /// Largest transport payload accepted and sent: by default what Telegram's are, a 1 MiB file part with its
    /// envelope (`FrameLimits.defaultMaximumPayload`).
    public var maxFramePayload = FrameLimits.defaultMaximumPayload
    /// Bytes written to a connection and not yet taken by the socket; above it the client is not reading.
    public var maxQueuedBytes = 8 << 20
    /// Seconds without a frame from the client before the connection is closed.
    public var idleTimeout: Double = 300
    /// Key exchanges one connection may start (a client normally needs one; −404 makes it reconnect).
    public var maxExchangesPerConnection = 4
    /// Distinct sessions one connection may address.
    public var maxSessionsPerConnection = 16
    /// The HTTP listener's bounds (request sizes and timeouts, held requests).
    public var http = HTTPServerLimits()
    /// Answers one connection may have pending from handlers that answer later; the call past it is answered
    /// `RPCError.pendingAnswersTooMany` at once.
    public var maxPendingAnswersPerConnection = 64
    /// The same across all connections of a DC (its listeners share the count with its sessions).
    public var maxPendingAnswers = 1024
    /// Seconds a handler that answers later has when its `AnswerTimeout` names none; then the server answers for it.
    public var pendingAnswerTimeout: Double = 10
    /// Seconds a session is kept after its last connection closed, for a client that reconnects to find it (its
    /// unacknowledged answers, the msg_ids it sent); then it is forgotten, never before every message it received
    /// is outside the 300 s time window, and the client's next message gets `new_session_created`
    /// (core.telegram.org/mtproto/description: the server may forget any session). `.infinity` keeps sessions
    /// until `maxSessions` evicts them. Auth keys are kept regardless.
    public var detachedSessionLifetime: Double = 600

    /// The defaults, sized for tests with thousands of clients.
    public init() {}
}

/// Everything a server's connections share: configuration, keys, sessions, handlers and randomness. Listeners of
/// one DC pass the same `keys` and `sessions`.
public final class ServerContext: Sendable {
    /// The key exchange's settings: the RSA keys and the DH group.
    public let exchange: AuthKeyExchange.Server.Configuration
    /// The transport's settings: MTProxy secret and padding.
    public let transport: ServerTransportConfiguration
    /// Bounds on keys, sessions, frames and exchanges.
    public let limits: ServerLimits
    /// The methods served.
    public let handlers: RPCHandlers
    /// The server sessions' timing and bounds.
    public let sessionConfiguration: SessionConfiguration
    /// The auth keys this DC knows.
    public let keys: AuthKeyStore
    /// The sessions this DC keeps.
    public let sessions: SessionRegistry
    /// Fake-TLS ClientHello digests accepted by this listener (replays are refused).
    public let replayCache = FakeTLSReplayCache()
    /// Where keys, nonces, salts and fault draws come from.
    public let random: any RandomSource
    let faultState: FaultState
    /// The seed fault draws come from.
    public let faultSeed: UInt64
    private let endpointState: Mutex<ServerEndpoint>
    /// The cluster this server belongs to (just itself unless one is passed).
    public let directory: DCDirectory
    /// Set on an MTProxy listener: the DCs it forwards to by the id in the client's header.
    public let routing: DCRouting?
    /// The server's clock (Unix seconds) as the listener feeds it to connections; tests pass one they advance.
    public let clock: @Sendable () -> Double

    /// A context for one DC's listeners; `endpoint` names the DC and how clients reach it.
    public init(exchange: AuthKeyExchange.Server.Configuration, transport: ServerTransportConfiguration,
                handlers: RPCHandlers, endpoint: ServerEndpoint, limits: ServerLimits = ServerLimits(),
                sessionConfiguration: SessionConfiguration = SessionConfiguration(),
                random: any RandomSource = SystemRandom(), faults: FaultPlan = FaultPlan(), faultSeed: UInt64 = 0,
                keys: AuthKeyStore? = nil, sessions: SessionRegistry? = nil, directory: DCDirectory? = nil,
                routing: DCRouting? = nil, clock: @escaping @Sendable () -> Double = ServerContext.wallClock) {
        self.exchange = exchange
        var transport = transport
        transport.maximumPayload = min(transport.maximumPayload, limits.maxFramePayload)
        self.transport = transport
        self.limits = limits
        self.handlers = handlers
        self.sessionConfiguration = sessionConfiguration
        self.random = random
        faultState = FaultState(plan: faults, seed: faultSeed)
        self.faultSeed = faultSeed
        self.keys = keys ?? AuthKeyStore(capacity: limits.maxAuthKeys)
        self.sessions = sessions ?? SessionRegistry(capacity: limits.maxSessions, perKey: limits.maxSessionsPerKey)
        endpointState = Mutex(endpoint)
        self.directory = directory ?? DCDirectory([endpoint])
        self.routing = routing
        self.clock = clock
    }

    /// Forgets the sessions no connection has carried for `limits.detachedSessionLifetime` at server time `now`
    /// (`SessionRegistry.expireDetached(now:lifetime:)`); a listener calls it on a timer. Returns the keys forgotten.
    @discardableResult
    public func expireSessions(now: Double) -> [SessionKey] {
        guard limits.detachedSessionLifetime.isFinite else { return [] }
        return sessions.expireDetached(now: now, lifetime: limits.detachedSessionLifetime)
    }

    /// Where clients reach this server (the port is known once a listener is bound); kept in the directory too.
    public var endpoint: ServerEndpoint {
        get { endpointState.withLock { $0 } }
        set {
            endpointState.withLock { $0 = newValue }
            directory.update(newValue)
        }
    }
}

/// What a connection reports, for logs and tests.
public enum ServerConnectionEvent: Sendable, Equatable {
    /// The client's transport is known.
    case negotiated(NegotiatedTransport)
    /// A key exchange finished; the key is stored (with its expiry, server time, for a temporary key).
    case authKeyCreated(authKeyID: UInt64, dcID: Int32?, legacyRSA: Bool, expiresAt: Int32?)
    /// `auth.bindTempAuthKey` bound a temporary key to a permanent one.
    case temporaryKeyBound(temporaryKeyID: UInt64, permanentKeyID: UInt64)
    /// A temporary key was used past its expiry: it is forgotten and −404 was sent.
    case authKeyExpired(authKeyID: UInt64)
    /// A session was created on first sight of its id.
    case sessionCreated(SessionKey)
    /// A request was dispatched: its innermost method and whether it was answered with an error.
    case handled(method: String, SessionKey, error: RPCError?)
    /// A message inside a frame was skipped (duplicate, outside the time window, undecodable…).
    case ignored(SessionKey, IgnoredMessage)
    /// `destroy_auth_key` forgot this key.
    case authKeyDestroyed(authKeyID: UInt64)
}

/// Why a connection was closed.
public enum ServerConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transport refused the byte stream (framing, obfuscation, fake-TLS, sizes).
    case transport(TransportError)
    /// A key exchange failed a check.
    case exchange(AuthKeyExchangeError)
    /// An encrypted frame named a key this server does not have; −404 was sent.
    case unknownAuthKey(UInt64)
    /// An encrypted frame for a known key failed decryption or named another session.
    case session(SessionKey?, SessionError)
    /// A frame too short to hold an auth_key_id.
    case frameTooShort(Int)
    /// More key exchanges on one connection than `ServerLimits.maxExchangesPerConnection`.
    case tooManyExchanges(limit: Int)
    /// More sessions on one connection than `ServerLimits.maxSessionsPerConnection`.
    case tooManySessions(limit: Int)
    /// The client sent a server-only transport message (quick-ack reply or error code).
    case unexpectedTransportMessage(TransportEvent)
    /// No frame for `ServerLimits.idleTimeout` seconds, or past a `ping_delay_disconnect` deadline.
    case idle(seconds: Double)
    /// The client asked for its key to be destroyed; it was.
    case authKeyDestroyed
    /// Too many connections already open.
    case tooManyConnections(limit: Int)
    /// Written bytes the client did not read exceeded `ServerLimits.maxQueuedBytes`.
    case queueOverflow(bytes: Int)
    /// The client closed the connection between frames (not a failure; `finish()` returns nil for it).
    case clientClosed
    /// `FaultPlan.closeOn` named this method.
    case faultInjected(method: String)

    /// A one-line account of why the connection closed.
    public var description: String {
        switch self {
        case .transport(let error): "transport: \(error)"
        case .exchange(let error): "key exchange: \(error)"
        case .unknownAuthKey(let id): "unknown auth_key_id \(hex64(id)), sent -404"
        case let .session(key, error): "session \(key.map { "\($0.sessionID)" } ?? "?"): \(error)"
        case .frameTooShort(let count): "a \(count)-byte frame cannot hold an auth_key_id"
        case .tooManyExchanges(let limit): "more than \(limit) key exchanges on one connection"
        case .tooManySessions(let limit): "more than \(limit) sessions on one connection"
        case .unexpectedTransportMessage(let event): "the client sent a server-only transport message: \(event)"
        case .idle(let seconds): "no frame for \(seconds) s"
        case .authKeyDestroyed: "the client destroyed its auth key"
        case .tooManyConnections(let limit): "more than \(limit) connections open"
        case .queueOverflow(let bytes): "\(bytes) bytes written and not read by the client"
        case .clientClosed: "the client closed the connection"
        case .faultInjected(let method): "closed on \(method) by fault injection"
        }
    }
}

func hex64(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
}

/// What one call produced.
public struct ServerConnectionOutput: Sendable {
    /// Bytes to write now, in order, as pieces written back to back (none empty). A frame's transport header and its
    /// payload are separate pieces, so a 512 KiB answer is copied once, into the socket's buffers.
    public private(set) var pieces: [[UInt8]] = []
    /// What the connection reports to its driver, in order.
    public var events: [ServerConnectionEvent] = []
    /// Set when the connection must close after `outbound` is written; later calls produce nothing.
    public var close: ServerConnectionError?
    /// Calls whose handlers answer later, started now: the driver runs each and hands what it returns to
    /// `ServerConnection.complete(_:with:now:)`.
    public var awaiting: [AwaitedAnswer] = []
    /// Pending answers no longer awaited (answered at their timeout, their session or the connection gone): the
    /// driver cancels their work.
    public var cancelled: [UInt64] = []

    /// Nothing to write, nothing to report.
    public init() {}

    /// The pieces joined: everything to write now.
    public var outbound: [UInt8] { pieces.reduce(into: []) { $0 += $1 } }

    /// Bytes in all pieces.
    public var outboundCount: Int { pieces.reduce(0) { $0 + $1.count } }

    /// Nothing to write, report or close.
    public var isEmpty: Bool { pieces.isEmpty && events.isEmpty && close == nil && awaiting.isEmpty && cancelled.isEmpty }

    /// Appends bytes to write.
    mutating func write(_ bytes: [UInt8]) {
        if !bytes.isEmpty { pieces.append(bytes) }
    }

    mutating func write(pieces more: [[UInt8]]) {
        for piece in more { write(piece) }
    }

    /// Appends what a later step produced.
    mutating func append(_ next: ServerConnectionOutput) {
        write(pieces: next.pieces)
        events += next.events
        if close == nil { close = next.close }
        awaiting += next.awaiting
        cancelled += next.cancelled
    }
}

/// A call whose handler answers later, for the connection's driver to run.
public struct AwaitedAnswer: Sendable {
    /// What the connection knows the answer by: pass it to `ServerConnection.complete(_:with:now:)`.
    public let id: UInt64
    /// The handler's work.
    public let call: RPCPendingCall
}

/// The server end of one client connection.
public struct ServerConnection: Sendable {
    /// The DC this connection talks to: its listener's, or the one an MTProxy header names (see `DCRouting`).
    public private(set) var context: ServerContext
    private var transport: ServerTransport
    private var exchange: AuthKeyExchange.Server?
    private var exchangesStarted = 0
    /// Sessions this connection carries, in first-seen order (their answers and acks go out here).
    private var sessions: [SessionKey] = []
    private var lastActivity: Double
    private var disconnectAt: Double?
    private var sessionDeadline: Double?
    /// Frames the `delay` fault holds back, with when each goes out (bounded by the queued-bytes limit).
    private var delayed: [(at: Double, bytes: [UInt8])] = []
    /// Transport events fed and not yet handled, last first (what one read decoded).
    private var fed: [TransportEvent] = []
    /// The frame whose requests the next step goes on running.
    private var running: RunningFrame?
    /// Why the connection closed; nil while open. Once set, further input produces nothing.
    public private(set) var closed: ServerConnectionError?
    /// This connection's number among those carrying the context's sessions (`SessionRegistry.connectionNumber()`).
    private var number: UInt64
    /// Requests whose handlers answer later, by the id their work was handed out with.
    private var pending: [UInt64: PendingAnswer] = [:]
    private var lastPendingID: UInt64 = 0

    /// A request whose answer a handler gives later: where it goes, and what is answered at `deadline`.
    private struct PendingAnswer {
        let key: SessionKey
        let messageID: Int64
        let method: String
        let deadline: Double
        let timeoutError: RPCError
    }

    /// A new connection at server time `now` (Unix seconds), sharing `context` with the DC's other connections.
    public init(context: ServerContext, now: Double) {
        self.context = context
        number = context.sessions.connectionNumber()
        transport = ServerTransport(configuration: context.transport, random: context.random,
                                    unixTime: Int64(now.rounded(.down)), replayCache: context.replayCache)
        lastActivity = now
    }

    /// The client's transport, once recognised.
    public var negotiated: NegotiatedTransport? { transport.negotiated }

    /// When `tick(now:)` has timed work (acks due, the idle or ping deadline).
    public var nextDeadline: Double? {
        guard closed == nil else { return nil }
        var deadline = lastActivity + context.limits.idleTimeout
        if let disconnectAt { deadline = min(deadline, disconnectAt) }
        if let sessionDeadline { deadline = min(deadline, sessionDeadline) }
        if let first = delayed.first { deadline = min(deadline, first.at) }
        for answer in pending.values { deadline = min(deadline, answer.deadline) }
        return deadline
    }

    /// Requests whose handlers have not answered yet.
    public var pendingAnswerCount: Int { pending.count }

    /// Feeds bytes from the client and handles every frame in them: `feed`, then `step` until none is left.
    public mutating func receive(_ bytes: [UInt8], now: Double) -> ServerConnectionOutput {
        var output = feed(bytes, now: now)
        while output.close == nil, let next = step(now: now) { output.append(next) }
        if output.close == nil { flushSessions(now: now, output: &output) }
        return output
    }

    /// Handles the next frame fed, or the next requests of a frame whose answers were large, and returns what it
    /// produced (its answers among it), or nil when nothing waits. A driver that writes each step's output at once
    /// lets the client decrypt one answer while the next is encrypted, instead of receiving every answer to a read
    /// (or to a container of file requests) together.
    /// - Parameters:
    ///   - now: the server's clock, Unix seconds.
    ///   - readContinues: the driver reads again at once and calls `step` or `flush(now:)` before it
    ///     waits (NIO: inside `channelRead`, with `flush` from `channelReadComplete`). A large last answer may then
    ///     be kept back, hashed, and encrypted while the answer to the next read's request is hashed: requests for
    ///     file parts arrive one per read, so holding only within a read would hash nearly every part alone.
    public mutating func step(now: Double, readContinues: Bool = false) -> ServerConnectionOutput? {
        guard closed == nil else { return nil }
        var output = ServerConnectionOutput()
        if running != nil {
            runRequests(now: now, output: &output)
        } else if let event = fed.popLast() {
            // Consumed, so the frame's array has one reference when it is decrypted, which is then done in place.
            switch consume event {
            case .frame(let payload, let quickAck):
                lastActivity = now
                handle(frame: payload, quickAck: quickAck, now: now, output: &output)
            case let unexpected:
                output = fail(.unexpectedTransportMessage(unexpected), output)
            }
        } else {
            return nil
        }
        // With more to run at once, a large last answer is hashed now and encrypted while the next one is hashed.
        if closed == nil {
            flushSessions(now: now, output: &output, holdingLast: running != nil || !fed.isEmpty || readContinues)
        }
        return output
    }

    /// Feeds bytes from the client: what the transport answers itself (a fake-TLS ServerHello) and the
    /// negotiation come back now; the frames wait for `step(now:)`.
    public mutating func feed(_ bytes: [UInt8], now: Double) -> ServerConnectionOutput {
        var output = ServerConnectionOutput()
        guard closed == nil else { return output }
        let wasNegotiated = transport.negotiated != nil
        let decoded: TransportOutput
        do {
            decoded = try transport.receive(bytes)
        } catch {
            return fail(.transport(error), output)
        }
        output.write(decoded.outbound)
        if !wasNegotiated, let negotiated = transport.negotiated {
            output.events.append(.negotiated(negotiated))
            // An MTProxy forwards to the DC its client names (test DCs are 10000 + id, media DCs negative).
            if let dcID = negotiated.dcId, let target = context.routing?.context(for: Int32(abs(Int32(dcID)) % 10_000)) {
                context = target
                number = target.sessions.connectionNumber()
            }
        }
        fed = decoded.events.reversed() + fed
        return output
    }

    /// Timed work: acks due on this connection's sessions, the idle timeout.
    public mutating func tick(now: Double) -> ServerConnectionOutput {
        var output = ServerConnectionOutput()
        guard closed == nil else { return output }
        if let disconnectAt, now >= disconnectAt { return fail(.idle(seconds: now - lastActivity), output) }
        if now - lastActivity >= context.limits.idleTimeout { return fail(.idle(seconds: now - lastActivity), output) }
        answerTimedOut(now: now, output: &output)
        flushSessions(now: now, output: &output)
        return output
    }

    /// Sends what this connection's sessions have queued outside a request: updates pushed with `Session.push`
    /// (through `SessionRegistry.withExisting`) since the last call, and answers kept back by
    /// `step(now:readContinues:)`.
    public mutating func flush(now: Double) -> ServerConnectionOutput {
        var output = ServerConnectionOutput()
        guard closed == nil else { return output }
        flushSessions(now: now, output: &output)
        return output
    }

    /// The sessions this connection carries: their answers and pushed updates go out on it.
    public var sessionKeys: [SessionKey] { sessions }

    /// Call when the connection is gone, before `finish()`: the requests of a frame it had begun to run still run.
    /// Their session counts them received (a client re-sending one gets its answer, not a second run), so their
    /// answers wait in the session for the client's next connection. Returns what running them reported; what they
    /// would have written is dropped.
    public mutating func runRemainingRequests(now: Double) -> [ServerConnectionEvent] {
        var output = ServerConnectionOutput()
        while running != nil { runRequests(now: now, output: &output) }
        return output.events
    }

    /// Call when the connection is gone, after `runRemainingRequests(now:)`: the sessions it carries are left without
    /// a connection, compacted, and expire after `ServerLimits.detachedSessionLifetime`
    /// (`SessionRegistry.detach(_:from:now:)`).
    public mutating func detachSessions(now: Double) {
        context.sessions.detach(sessions, from: number, now: now)
    }

    /// Call when the client closed the connection: the error, if it ended inside the opening or a frame.
    public mutating func finish() -> ServerConnectionError? {
        guard closed == nil else { return nil }
        do {
            try transport.finish()
            closed = .clientClosed
            return nil
        } catch {
            closed = .transport(error)
            return .transport(error)
        }
    }

    // MARK: Frames

    private mutating func handle(frame: consuming [UInt8], quickAck: Bool, now: Double,
                                 output: inout ServerConnectionOutput) {
        guard frame.count >= 8 else {
            output = fail(.frameTooShort(frame.count), output)
            return
        }
        let authKeyID = frame.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        if authKeyID == 0 {
            handleUnencrypted(frame, now: now, output: &output)
        } else {
            handleEncrypted(consume frame, authKeyID: authKeyID, quickAck: quickAck, now: now, output: &output)
        }
    }

    /// Key exchange frames. A connection may start over after a finished (or refused) exchange, a bounded number
    /// of times.
    private mutating func handleUnencrypted(_ frame: [UInt8], now: Double, output: inout ServerConnectionOutput) {
        if exchange == nil || exchange?.isFinished == true {
            guard exchangesStarted < context.limits.maxExchangesPerConnection else {
                output = fail(.tooManyExchanges(limit: context.limits.maxExchangesPerConnection), output)
                return
            }
            exchangesStarted += 1
            exchange = AuthKeyExchange.Server(configuration: context.exchange, random: context.random)
        }
        guard var exchanging = exchange else { return }
        let result: AuthKeyExchange.Server.Output
        do {
            result = try exchanging.receive(frame: frame, now: now)
        } catch {
            exchange = exchanging
            // A key for a DC this port does not serve: say so before closing, with the −404 Telegram sends for a
            // key it cannot use (core.telegram.org/mtproto/mtproto-transports, "Transport errors"), so the client
            // can tell its user instead of seeing a bare close.
            if case .dcMismatch = error.reason, let last = try? transport.sendTransportError(-404) { output.write(last) }
            output = fail(.exchange(error), output)
            return
        }
        exchange = exchanging
        switch result {
        case .send(let reply):
            send(reply, output: &output)
        case .finished(let reply, let done):
            context.keys.insert(done.authKey, firstSalt: done.firstSalt, now: now, random: context.random,
                                expiresAt: done.expiresAt)
            output.events.append(.authKeyCreated(authKeyID: done.authKey.idValue, dcID: done.dcID,
                                                 legacyRSA: done.usedLegacyRSA, expiresAt: done.expiresAt))
            send(reply, output: &output)
        case .refused(let reply, let error):
            send(reply, output: &output)
            output = fail(.exchange(error), output)
        }
    }

    private mutating func handleEncrypted(_ frame: consuming [UInt8], authKeyID: UInt64, quickAck: Bool, now: Double,
                                          output: inout ServerConnectionOutput) {
        let (found, expired) = context.keys.liveEntry(id: authKeyID, now: now)
        if expired {
            context.sessions.removeAll(authKeyID: authKeyID)
            output.events.append(.authKeyExpired(authKeyID: authKeyID))
        }
        guard let entry = found else {
            do {
                output.write(try transport.sendTransportError(-404))
            } catch {
                output = fail(.transport(error), output)
                return
            }
            output = fail(.unknownAuthKey(authKeyID), output)
            return
        }
        let message: DecryptedMessage
        do {
            message = try entry.cipher.decrypt(consume frame, direction: .client)
        } catch {
            output = fail(.session(nil, .decryption(error)), output)
            return
        }
        if quickAck {
            // "Quick ack": the first 32 bits of msg_key_large (SHA-256 over the client's padded plaintext), top
            // bit set, sent at once (core.telegram.org/mtproto/mtproto-transports).
            let large = message.messageKeyLarge
            let token = large.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) } | 0x8000_0000
            do {
                output.write(try transport.sendQuickAck(token))
            } catch {
                output = fail(.transport(error), output)
                return
            }
        }
        let sessionID = message.sessionIDValue
        let key = SessionKey(authKeyID: authKeyID, sessionID: sessionID)
        if !sessions.contains(key) {
            guard sessions.count < context.limits.maxSessionsPerConnection else {
                output = fail(.tooManySessions(limit: context.limits.maxSessionsPerConnection), output)
                return
            }
            sessions.append(key)
        }
        let context = self.context
        let (outcome, created) = context.sessions.withEntry(key, carriedBy: number, make: {
            Session(role: .server, authKey: entry.key, sessionID: sessionID,
                    salt: entry.salts.current(at: now) ?? 0, saltSchedule: entry.salts, now: now,
                    configuration: context.sessionConfiguration, random: context.random)
        }) { registered -> Result<ConnectionAction, SessionError> in
            let events: [SessionEvent]
            do throws(SessionError) {
                events = try registered.session.receive(message, now: now, refusing: &registered.refusals)
            } catch {
                return .failure(error)
            }
            return .success(Self.react(to: events, key: key, session: &registered.session, context: context,
                                       now: now))
        }
        if created { output.events.append(.sessionCreated(key)) }
        let action: ConnectionAction
        switch outcome {
        case .failure(let error):
            output = fail(.session(key, error), output)
            return
        case .success(let value):
            action = value
        }
        output.events += action.events
        if let deadline = action.disconnectAt { disconnectAt = deadline }
        running = RunningFrame(key: key, entry: entry, requests: action.requests[...],
                               destroySessions: action.destroySessions, destroyKey: action.destroyKey)
        runRequests(now: now, output: &output)
    }

    /// Runs the requests of the frame in `running`, stopping after the one whose answers bring this step to
    /// `answerBytesPerStep`; the frame's last request runs what the frame asked besides (session and key
    /// destruction, an injected close).
    private mutating func runRequests(now: Double, output: inout ServerConnectionOutput) {
        guard var frame = running else { return }
        running = nil
        let key = frame.key, entry = frame.entry
        let authKeyID = key.authKeyID, sessionID = key.sessionID
        // Handlers run outside the registry's lock, so they may reach other sessions; answers go in after.
        var answered = 0, ran = 0, subscribes = false
        while answered < Self.answerBytesPerStep, ran < Self.requestsPerStep,
              let (messageID, body) = frame.requests.popFirst() {
            ran += 1
            let (method, decoded) = context.handlers.decode(body: body)
            var outcome: RPCOutcome
            switch decoded {
            case .failure(let error):
                outcome = .answered(.failure(error))
            case .success(let call):
                outcome = context.answer(call, entry: entry, authKeyID: authKeyID, sessionID: sessionID,
                                         messageID: messageID, now: now)
                if !subscribes { subscribes = RPCHandlers.subscribesToUpdates(call) }
            }
            let faults = context.faultState.faults(for: method)
            if let error = faults.error { outcome = .answered(.failure(error)) }
            // The connection dies mid-request: the call still ran and its answer waits in the session, which
            // sends it on the client's next connection (as Telegram keeps a session across connections).
            if faults.closes, frame.closeFault == nil { frame.closeFault = method }
            let result: Result<[UInt8], RPCError>
            switch outcome {
            case .answered(let answer):
                result = answer
            case .later(let call):
                guard let id = keepPending(call, key: key, messageID: messageID, method: method, now: now) else {
                    result = .failure(.pendingAnswersTooMany)
                    break
                }
                output.awaiting.append(AwaitedAnswer(id: id, call: call))
                continue
            }
            if case .success(let call) = decoded, call.constructorID == BindTemporaryKey.tlConstructorID,
               case .success = result, let permanent = context.keys.authorizationKey(of: authKeyID, at: now) {
                output.events.append(.temporaryKeyBound(temporaryKeyID: authKeyID, permanentKeyID: permanent))
            }
            var failure: RPCError?
            context.sessions.withExisting(key) { session in
                switch result {
                case .success(let bytes): session.answer(messageID, result: bytes)
                case .failure(let error):
                    failure = error
                    session.answer(messageID, error: error)
                }
            }
            if case .success(let bytes) = result { answered += bytes.count }
            output.events.append(.handled(method: method, key, error: failure))
        }
        if subscribes { context.sessions.subscribe(key) }
        guard frame.requests.isEmpty else {
            running = frame
            return
        }
        // Every request of the frame ran (the session counts them all as received); now the connection dies.
        if let closeFault = frame.closeFault {
            output = fail(.faultInjected(method: closeFault), output)
            return
        }
        for (target, requestMessageID) in frame.destroySessions {
            let existed = context.sessions.remove(SessionKey(authKeyID: authKeyID, sessionID: target))
            context.sessions.withExisting(key) { session in
                session.answerDestroySession(requestMessageID, sessionID: target, existed: existed)
            }
        }
        if frame.destroyKey {
            let last = context.sessions.withExisting(key) { $0.outgoing(now: now) } ?? []
            context.keys.remove(id: authKeyID)
            context.sessions.removeAll(authKeyID: authKeyID)
            output.events.append(.authKeyDestroyed(authKeyID: authKeyID))
            for frame in last { send(frame.bytes, output: &output) }
            output = fail(.authKeyDestroyed, output)
        }
    }

    // MARK: Answers given later

    /// Keeps a request whose handler answers later pending, within the connection's and the DC's caps: its id, or
    /// nil past either cap.
    private mutating func keepPending(_ call: RPCPendingCall, key: SessionKey, messageID: Int64, method: String,
                                now: Double) -> UInt64? {
        guard pending.count < context.limits.maxPendingAnswersPerConnection,
              context.sessions.reservePendingAnswer(limit: context.limits.maxPendingAnswers)
        else { return nil }
        lastPendingID += 1
        let seconds = call.timeout.seconds ?? context.limits.pendingAnswerTimeout
        pending[lastPendingID] = PendingAnswer(key: key, messageID: messageID, method: method,
                                               deadline: now + max(0, seconds), timeoutError: call.timeout.error)
        return lastPendingID
    }

    /// Hands in what a handler that answers later returned (the `id` of its `AwaitedAnswer`): the answer goes to
    /// its session and out with whatever else is ready. An answer no longer awaited (answered at its timeout, its
    /// session or the connection gone) is dropped.
    public mutating func complete(_ id: UInt64, with result: Result<[UInt8], RPCError>,
                                  now: Double) -> ServerConnectionOutput {
        var output = ServerConnectionOutput()
        guard closed == nil, let waiting = pending.removeValue(forKey: id) else { return output }
        context.sessions.releasePendingAnswers(1)
        answer(waiting, with: result, output: &output)
        flushSessions(now: now, output: &output)
        return output
    }

    /// Call when the connection is gone (`fail` does it when the server closes it): every pending answer is given
    /// up, its work listed to be cancelled, and its session left holding its timeout error, so the client that
    /// sends the request again on its next connection is answered rather than left waiting.
    public mutating func dropPendingAnswers() -> [UInt64] {
        guard !pending.isEmpty else { return [] }
        let dropped = pending.sorted { $0.key < $1.key }
        pending.removeAll()
        context.sessions.releasePendingAnswers(dropped.count)
        var ignored = ServerConnectionOutput()
        for (_, waiting) in dropped { answer(waiting, with: .failure(waiting.timeoutError), output: &ignored) }
        return dropped.map(\.key)
    }

    /// Answers the pending requests whose deadline came with their timeout error.
    private mutating func answerTimedOut(now: Double, output: inout ServerConnectionOutput) {
        guard pending.values.contains(where: { $0.deadline <= now }) else { return }
        let due = pending.filter { $0.value.deadline <= now }.sorted { $0.key < $1.key }
        for (id, waiting) in due {
            pending.removeValue(forKey: id)
            answer(waiting, with: .failure(waiting.timeoutError), output: &output)
            output.cancelled.append(id)
        }
        context.sessions.releasePendingAnswers(due.count)
    }

    /// Gives up the pending answers of a session that is gone (destroyed, or forgotten past the registry's bound).
    private mutating func dropPending(of key: SessionKey, output: inout ServerConnectionOutput) {
        let gone = pending.filter { $0.value.key == key }.map(\.key).sorted()
        guard !gone.isEmpty else { return }
        for id in gone { pending.removeValue(forKey: id) }
        context.sessions.releasePendingAnswers(gone.count)
        output.cancelled += gone
    }

    private func answer(_ waiting: PendingAnswer, with result: Result<[UInt8], RPCError>,
                        output: inout ServerConnectionOutput) {
        var failure: RPCError?
        context.sessions.withExisting(waiting.key) { session in
            switch result {
            case .success(let bytes): session.answer(waiting.messageID, result: bytes)
            case .failure(let error):
                failure = error
                session.answer(waiting.messageID, error: error)
            }
        }
        output.events.append(.handled(method: waiting.method, waiting.key, error: failure))
    }

    /// A step stops running a frame's requests once their answers reach this many bytes, so that a driver
    /// writing each step's output sends a large answer (a file part) while the next one is made and encrypted.
    static let answerBytesPerStep = 64 << 10

    /// …or once this many requests ran. A container of many small requests is answered in parts, so the client
    /// works on the first answers (and sends its next requests) while the rest run, as Telegram answers each
    /// request when it completes. Answered all at once, a pipelining client and the server took turns instead of
    /// working at the same time (Benchmarks/README.md and HISTORY.md, the client).
    public static let requestsPerStep = 32

    /// A frame whose requests have not all run.
    private struct RunningFrame {
        let key: SessionKey
        let entry: AuthKeyStore.Entry
        var requests: ArraySlice<(messageID: Int64, body: [UInt8])>
        let destroySessions: [(sessionID: Int64, requestMessageID: Int64)]
        let destroyKey: Bool
        var closeFault: String?
    }

    /// What one frame's session events ask of the connection, collected under the registry's lock.
    private struct ConnectionAction {
        var events: [ServerConnectionEvent] = []
        var requests: [(messageID: Int64, body: [UInt8])] = []
        var destroySessions: [(sessionID: Int64, requestMessageID: Int64)] = []
        var disconnectAt: Double?
        var destroyKey = false
    }

    private static func react(to events: [SessionEvent], key: SessionKey, session: inout Session,
                              context: ServerContext, now: Double) -> ConnectionAction {
        var action = ConnectionAction()
        for event in events {
            switch event {
            case .request(let messageID, let body):
                action.requests.append((messageID, body))
            case .destroySessionRequested(let target, let requestMessageID):
                action.destroySessions.append((target, requestMessageID))
            case .destroyAuthKeyRequested(let requestMessageID):
                session.answerDestroyAuthKey(requestMessageID, ok: true)
                action.destroyKey = true
            case .disconnectDeadline(let at):
                action.disconnectAt = at
            case .ignored(_, let why):
                action.events.append(.ignored(key, why))
            case .result, .rpcError, .failed, .acknowledged, .resent, .update, .sessionCreated, .pong,
                 .sessionDestroyed, .authKeyDestroyed, .answerDropped, .clockAdjusted, .sessionChanged:
                break  // client-role events
            }
        }
        return action
    }

    // MARK: Output

    /// Frames every session of this connection has ready, and notes the earliest session deadline. `holdingLast`
    /// lets a session keep a large last frame back for the next call (`Session.outgoing(now:holdingLast:)`).
    private mutating func flushSessions(now: Double, output: inout ServerConnectionOutput, holdingLast: Bool = false) {
        var frames: [OutgoingFrame] = []
        var deadline: Double?
        for key in sessions {
            guard let (ready, next) = context.sessions.withExisting(key, carriedBy: number, { session in
                (session.outgoing(now: now, holdingLast: holdingLast), session.nextDeadline)
            }) else {
                if !pending.isEmpty { dropPending(of: key, output: &output) }
                continue
            }
            frames += ready
            if let next { deadline = min(deadline ?? next, next) }
        }
        sessionDeadline = deadline
        let shaped = context.faultState.shape(frames.map(\.bytes))
        var ready = shaped.now
        if !shaped.delayed.isEmpty || !delayed.isEmpty {
            // Held frames whose time came go out first; the queue stays in time order (the delay is constant).
            let due = delayed.prefix { $0.at <= now }
            ready = due.map(\.bytes) + ready
            delayed.removeFirst(due.count)
            delayed += shaped.delayed.map { (now + shaped.delay, $0) }
            var held = delayed.reduce(0) { $0 + $1.bytes.count }
            while held > context.limits.maxQueuedBytes, !delayed.isEmpty { held -= delayed.removeFirst().bytes.count }
        }
        for frame in ready {
            send(frame, output: &output)
            if closed != nil { return }
        }
    }

    private mutating func send(_ payload: [UInt8], output: inout ServerConnectionOutput) {
        do {
            output.write(pieces: try transport.sendPieces(payload))
        } catch {
            output = fail(.transport(error), output)
        }
    }

    private mutating func fail(_ error: ServerConnectionError, _ output: ServerConnectionOutput) -> ServerConnectionOutput {
        var output = output
        if closed == nil {
            closed = error
            output.close = error
            output.cancelled += dropPendingAnswers()
        }
        return output
    }
}
