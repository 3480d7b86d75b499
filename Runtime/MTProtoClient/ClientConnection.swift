// One client connection as a sans-IO state machine: the transport (framing, obfuscation, MTProxy), then the
// auth-key exchange unless a stored key is given, then the encrypted session. Bytes and the time go in; bytes to
// write and events come out. The SwiftNIO client drives it; tests drive it against an in-memory server.
import MTProto
import MTProtoCrypto
import MTProtoTransport

/// An auth key with what a client keeps next to it, so a later connection skips the exchange. Its description
/// names the key by id only.
public struct StoredAuthKey: Sendable, Hashable, CustomStringConvertible {
    public let authKey: AuthKey
    /// The last salt known.
    public var salt: Int64
    /// Server time minus local time, seconds.
    public var timeOffset: Double

    public init(authKey: AuthKey, salt: Int64, timeOffset: Double) {
        self.authKey = authKey
        self.salt = salt
        self.timeOffset = timeOffset
    }

    public var description: String { "StoredAuthKey(\(authKey), salt: set, offset: \(timeOffset))" }
}

/// Why a connection ended. After any of them the connection is over; the driver reconnects.
public enum ClientConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    case transport(TransportError)
    case exchange(AuthKeyExchangeError)
    /// The server sent a transport error code: −404 means it does not know the auth key (forget it and exchange a
    /// new one), −429 too many connections (back off).
    case server(code: Int32)
    /// A frame arrived that fits neither the exchange nor the session (e.g. an encrypted frame during the exchange).
    case unexpectedFrame(String)

    public var description: String {
        switch self {
            case .transport(let error): "transport: \(error)"
            case .exchange(let error): "auth-key exchange: \(error)"
            case .server(let code): "server transport error \(code)"
            case .unexpectedFrame(let why): "unexpected frame: \(why)"
        }
    }
}

public struct ClientConnection: Sendable {
    public struct Configuration: Sendable {
        public var transport: TransportConfiguration
        /// The server's RSA keys, for the exchange.
        public var serverKeys: [RSAPublicKey]
        /// The DC the exchange names (`p_q_inner_data_dc`).
        public var dcID: Int32
        /// A key from an earlier connection; nil runs the exchange.
        public var storedKey: StoredAuthKey?
        public var session: SessionConfiguration

        public init(transport: TransportConfiguration, serverKeys: [RSAPublicKey], dcID: Int32,
                    storedKey: StoredAuthKey? = nil, session: SessionConfiguration = SessionConfiguration()) {
            self.transport = transport
            self.serverKeys = serverKeys
            self.dcID = dcID
            self.storedKey = storedKey
            self.session = session
        }
    }

    public enum Event: Sendable {
        /// The session is up: from the stored key at once, or after a new key was agreed (persist it).
        case ready(StoredAuthKey, isNew: Bool)
        /// Anything the session reports (results, errors, updates, acks…).
        case session(SessionEvent)
        /// A frame the session refused (bad msg_key, another session); the connection goes on.
        case rejectedFrame(SessionError)
    }

    enum Phase: Sendable {
        case exchanging(AuthKeyExchange.Client)
        case ready(Session)
        /// The session, if there was one, survives the failure: a new connection can carry it on.
        case failed(ClientConnectionError, Session?)
    }

    public let configuration: Configuration
    let random: any RandomSource
    var transport: ClientTransport
    var phase: Phase

    /// - Parameters:
    ///   - now: the local clock (seconds since 1970), also mixed into a fake-TLS ClientHello.
    public init(configuration: Configuration, random: any RandomSource, now: Double) throws(ClientConnectionError) {
        self.configuration = configuration
        self.random = random
        transport = try Self.transport(configuration, random: random, now: now)
        if let stored = configuration.storedKey {
            phase = .ready(Session(role: .client, authKey: stored.authKey, salt: stored.salt,
                                   timeOffset: stored.timeOffset, configuration: configuration.session, random: random))
        } else {
            phase = .exchanging(AuthKeyExchange.Client(
                configuration: .init(keys: configuration.serverKeys, dcID: configuration.dcID), random: random))
        }
    }

    /// A connection that carries on `session` (its id, pending requests, salts and clock) over a new transport,
    /// after the previous connection was lost. Requests it sent and got no answer for are settled by the session's
    /// state queries (`msgs_state_req`): resent if the server did not receive them, never sent twice otherwise.
    public init(configuration: Configuration, resuming session: Session, random: any RandomSource,
                now: Double) throws(ClientConnectionError) {
        self.configuration = configuration
        self.random = random
        transport = try Self.transport(configuration, random: random, now: now)
        phase = .ready(session)
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
        if case .ready(let session) = phase { session } else { nil }
    }

    /// The session to carry on over a new connection: the live one, or the one this connection had when it failed.
    public var resumableSession: Session? {
        switch phase {
            case .ready(let session): session
            case .failed(_, let session): session
            case .exchanging: nil
        }
    }

    /// The bytes that open the connection (transport opening and the first exchange message), and, with a
    /// stored key, `.ready` at once.
    public mutating func start(now: Double) throws(ClientConnectionError) -> (bytes: [UInt8], events: [Event]) {
        switch phase {
            case .exchanging(var exchange):
                let first = exchange.start(now: now)
                phase = .exchanging(exchange)
                return (try frame(first), [])
            case .ready:
                guard let stored = configuration.storedKey else { return (transport.start(), []) }
                return (transport.start(), [.ready(stored, isNew: false)])
            case .failed(let error, _):
                throw error
        }
    }

    /// Queues a request; only once `.ready` was reported.
    public mutating func send(_ body: [UInt8]) throws(SessionError) -> RequestID? {
        guard case .ready(var session) = phase else { return nil }
        let id = try session.send(body)
        phase = .ready(session)
        return id
    }

    /// Sends a `ping` (a new connection carrying a resumed session announces it this way, so the server moves
    /// the session's pending answers onto it).
    public mutating func ping(id: Int64) throws(SessionError) -> RequestID? {
        guard case .ready(var session) = phase else { return nil }
        let request = try session.ping(id: id)
        phase = .ready(session)
        return request
    }

    /// Cancels a request (see `Session.cancel`).
    @discardableResult
    public mutating func cancel(_ request: RequestID) -> Bool {
        guard case .ready(var session) = phase else { return false }
        let done = session.cancel(request)
        phase = .ready(session)
        return done
    }

    /// The session's frames due at `now`, framed for the wire.
    public mutating func flush(now: Double) throws(ClientConnectionError) -> [UInt8] {
        guard case .ready(var session) = phase else {
            if case .failed(let error, _) = phase { throw error }
            return []
        }
        let frames = session.outgoing(now: now)
        phase = .ready(session)
        var out: [UInt8] = []
        for frame in frames { out += try self.frame(frame.bytes, quickAck: frame.quickAckToken != nil) }
        return out
    }

    /// When `flush` has timed work next (acks, state queries).
    public var nextDeadline: Double? { session?.nextDeadline }

    /// Feeds bytes from the server. Returns the events and the bytes to write (exchange answers, session frames).
    public mutating func receive(_ bytes: [UInt8], now: Double) throws(ClientConnectionError)
        -> (bytes: [UInt8], events: [Event])
    {
        if case .failed(let error, _) = phase { throw error }
        let output: TransportOutput
        do {
            output = try transport.receive(bytes)
        } catch {
            try fail(.transport(error))
        }
        var out = output.outbound
        var events: [Event] = []
        for event in output.events {
            switch event {
                case .transportError(let code):
                    try fail(.server(code: code))
                case .quickAck(let token):
                    if case .ready(var session) = phase {
                        events += session.receiveQuickAck(token).map(Event.session)
                        phase = .ready(session)
                    }
                case .frame(let payload, _):
                    out += try handle(payload, now: now, events: &events)
            }
        }
        out += try flush(now: now)
        return (out, events)
    }

    mutating func handle(_ payload: [UInt8], now: Double, events: inout [Event]) throws(ClientConnectionError)
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
                        let stored = StoredAuthKey(authKey: result.authKey, salt: result.firstSalt,
                                                   timeOffset: result.timeOffset)
                        phase = .ready(Session(role: .client, authKey: result.authKey, salt: result.firstSalt,
                                               timeOffset: result.timeOffset, configuration: configuration.session,
                                               random: random))
                        events.append(.ready(stored, isNew: true))
                        return []
                }
            case .ready(var session):
                guard payload.count >= 8, payload.prefix(8).contains(where: { $0 != 0 }) else {
                    try fail(.unexpectedFrame("an unencrypted message after the key exchange"))
                }
                do {
                    events += try session.receive(frame: payload, now: now).map(Event.session)
                } catch {
                    events.append(.rejectedFrame(error))
                }
                phase = .ready(session)
                return []
            case .failed(let error, _):
                throw error
        }
    }

    mutating func frame(_ payload: [UInt8], quickAck: Bool = false) throws(ClientConnectionError) -> [UInt8] {
        do {
            return try transport.send(payload, quickAck: quickAck)
        } catch {
            try fail(.transport(error))
        }
    }

    mutating func fail(_ error: ClientConnectionError) throws(ClientConnectionError) -> Never {
        phase = .failed(error, resumableSession)
        throw error
    }
}
