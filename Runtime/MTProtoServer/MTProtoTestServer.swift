// The server role over SwiftNIO: a listener on loopback whose every accepted channel feeds a `ServerConnection`
// (bytes and the wall clock in, bytes out), with one timer per channel for the connection's next deadline. All
// protocol logic stays in the sans-IO connection; this file only moves bytes, keeps time and enforces the
// connection and write-queue limits. Connections are spread over the event loops of a group with a thread per core
// by default; each stays on its loop, where its crypto runs, and what they share (keys, sessions, routes, the
// handlers' state) is locked.
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MTProto
import MTProtoCrypto
import MTProtoTransport
import MTProtoTransportNIO
import NIOCore
import NIOPosix
import Synchronization

/// A running server: one or more DCs, each on its own port with its own auth keys and sessions, sharing handlers and
/// a directory `help.getConfig` lists. With an MTProxy secret the first DC has a second port speaking MTProxy (the
/// plain port accepts the plain tags and obfuscated2 without a secret; the proxy port only the secret's protocol).
public final class MTProtoTestServer: Sendable {
    /// What to run: the address and ports, the DCs, the RSA keys, the handlers, limits, faults and the clock.
    public struct Configuration: Sendable {
        /// The address to listen on (loopback by default).
        public var host: String
        /// An IPv6 address every DC listens on as well, on the same port as on `host` (`mtserver` uses `::1`).
        public var ipv6Host: String?
        /// 0 picks a free port.
        public var port: Int
        /// The MTProxy listener's port when `proxySecret` is set; 0 picks a free port.
        public var proxyPort: Int
        /// A listener for the first DC that serves only the HTTP transport (`POST /api`,
        /// core.telegram.org/mtproto/transports#http) on `host`: nil for none, 0 for a free port. Every DC's own
        /// port serves HTTP too, told from the TCP transports by the first bytes.
        public var httpPort: Int?
        /// The DCs to run, each on a port of its own (the first on `port`, the others on free ports). A single DC
        /// also accepts key exchanges naming any of Telegram's DC ids, as one server stands in for all.
        public var dcIDs: [Int32]
        /// The RSA keys the key exchange offers (their fingerprints go in `resPQ`).
        public var rsaKeys: [RSAPrivateKey]
        /// Adds a listener speaking MTProxy with this secret.
        public var proxySecret: MTProxySecret?
        /// The methods served, and the registry requests are decoded with.
        public var handlers: RPCHandlers
        /// Bounds on keys, sessions, frames and exchanges.
        public var limits: ServerLimits
        /// The server sessions' timing and bounds.
        public var sessionConfiguration: SessionConfiguration
        /// Where keys, nonces, salts and fault draws come from.
        public var random: any RandomSource
        /// The most padding sent on padded-intermediate frames: 3, because Telethon 1.x strips only `length % 4`.
        public var maximumPadding: Int
        /// Faults applied from the start, drawn from `faultSeed`.
        public var faults = FaultPlan()
        /// The seed fault draws come from, so a run with faults replays.
        public var faultSeed: UInt64 = 0
        /// Called for every connection event and close, from the connection's event loop (so from several threads
        /// at once when `threads` is more than 1).
        public var onEvent: @Sendable (ConnectionReport) -> Void
        /// The server's clock, Unix seconds (the wall clock unless a test injects one it can advance).
        public var clock: @Sendable () -> Double = ServerContext.wallClock
        /// Event-loop threads the connections are spread over (at least 1): the machine's cores by default, so
        /// clients on different connections are served, and their frames encrypted, at the same time.
        public var threads = System.coreCount

        /// A configuration; with the defaults, one DC (2) on a free loopback port, no proxy, no faults.
        public init(rsaKeys: [RSAPrivateKey], handlers: RPCHandlers, host: String = "127.0.0.1", port: Int = 0,
                    proxyPort: Int = 0, dcIDs: [Int32] = [2], proxySecret: MTProxySecret? = nil,
                    limits: ServerLimits = ServerLimits(),
                    sessionConfiguration: SessionConfiguration = SessionConfiguration(),
                    random: any RandomSource = SystemRandom(), maximumPadding: Int = 3,
                    onEvent: @escaping @Sendable (ConnectionReport) -> Void = { _ in }) {
            self.rsaKeys = rsaKeys
            self.handlers = handlers
            self.host = host
            self.port = port
            self.proxyPort = proxyPort
            self.dcIDs = dcIDs.isEmpty ? [2] : dcIDs
            self.proxySecret = proxySecret
            self.limits = limits
            self.sessionConfiguration = sessionConfiguration
            self.random = random
            self.maximumPadding = maximumPadding
            self.onEvent = onEvent
        }
    }

    /// One thing that happened on one connection.
    public struct ConnectionReport: Sendable {
        /// The connection's number, unique within the server.
        public let connection: UInt64
        /// What happened.
        public let kind: Kind

        /// What happened on a connection.
        public enum Kind: Sendable {
            /// A client connected from `remote` (address and port).
            case opened(remote: String)
            /// The connection reported an event (a request handled, a session made, a key exchanged…).
            case event(ServerConnectionEvent)
            /// Closed: by the server for this reason, or by the client (nil).
            case closed(ServerConnectionError?)
        }
    }

    /// The first DC's context and port.
    public let context: ServerContext
    /// The first DC's port.
    public let port: Int
    /// Every DC's context and port, by DC id.
    public let contexts: [Int32: ServerContext]
    /// Every DC's port, by DC id.
    public let ports: [Int32: Int]
    /// The context of the MTProxy listener (the first DC's keys, sessions and handlers; a client naming another
    /// DC in its header is forwarded to that DC's), when there is one.
    public let proxyContext: ServerContext?
    /// The MTProxy listener's port, when there is one.
    public let proxyPort: Int?
    /// The HTTP transport listener's port, when there is one (`Configuration.httpPort`).
    public let httpPort: Int?
    private let group: MultiThreadedEventLoopGroup
    private let channels: [any Channel]
    private let openConnections: ConnectionCounter
    private let routes: SessionRoutes
    /// Each DC's sweep of sessions left without a connection (`ServerLimits.detachedSessionLifetime`).
    private let sweeps: [RepeatedTask]

    /// Binds the listener(s) and returns once they accept connections.
    public static func start(_ configuration: Configuration) async throws -> MTProtoTestServer {
        let directory = DCDirectory([])
        var contexts: [(Int32, ServerContext)] = []
        for (index, dcID) in configuration.dcIDs.enumerated() {
            var exchange = try AuthKeyExchange.Server.Configuration(keys: configuration.rsaKeys, dcID: dcID)
            if configuration.dcIDs.count == 1 {
                for id in 1...5 as ClosedRange<Int32> { exchange.acceptedDCs.formUnion([id, -id, 10_000 + id, -10_000 - id]) }
            }
            let endpoint = ServerEndpoint(dcID: dcID, host: configuration.host, port: index == 0 ? configuration.port : 0)
            contexts.append((dcID, ServerContext(
                exchange: exchange, transport: ServerTransportConfiguration(maximumPadding: configuration.maximumPadding),
                handlers: configuration.handlers, endpoint: endpoint, limits: configuration.limits,
                sessionConfiguration: configuration.sessionConfiguration, random: configuration.random,
                faults: configuration.faults, faultSeed: configuration.faultSeed &+ UInt64(index) &* 2,
                directory: directory, clock: configuration.clock)))
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        let counter = ConnectionCounter()
        let routes = SessionRoutes()
        var channels: [any Channel] = []
        do {
            var ports: [Int32: Int] = [:]
            for (dcID, context) in contexts {
                let channel = try await bind(context: context, host: configuration.host, port: context.endpoint.port,
                                             group: group, counter: counter, routes: routes, serving: .dcPort,
                                             onEvent: configuration.onEvent)
                channels.append(channel)
                context.endpoint.port = channel.localAddress?.port ?? context.endpoint.port
                ports[dcID] = context.endpoint.port
                if let ipv6Host = configuration.ipv6Host {
                    channels.append(try await bind(context: context, host: ipv6Host, port: context.endpoint.port,
                                                   group: group, counter: counter, routes: routes, serving: .dcPort,
                                                   onEvent: configuration.onEvent))
                    context.endpoint.ipv6Host = ipv6Host
                }
            }
            var proxyContext: ServerContext?
            var proxyPort: Int?
            if let secret = configuration.proxySecret, let first = contexts.first?.1 {
                let routing = DCRouting()
                routing.set(Dictionary(contexts, uniquingKeysWith: { first, _ in first }))
                let proxy = ServerContext(sharing: first, secret: secret, routing: routing)
                let channel = try await bind(context: proxy, host: configuration.host, port: configuration.proxyPort,
                                             group: group, counter: counter, routes: routes, serving: .tcp,
                                             onEvent: configuration.onEvent)
                channels.append(channel)
                proxyContext = proxy
                proxyPort = channel.localAddress?.port
            }
            var httpPort: Int?
            if let port = configuration.httpPort, let first = contexts.first?.1 {
                let channel = try await bind(context: first, host: configuration.host, port: port, group: group,
                                             counter: counter, routes: routes, serving: .http,
                                             onEvent: configuration.onEvent)
                channels.append(channel)
                httpPort = channel.localAddress?.port
            }
            let sweeps = contexts.compactMap { _, context in sweepSessions(of: context, on: group.next()) }
            return MTProtoTestServer(contexts: contexts, ports: ports, proxyContext: proxyContext, proxyPort: proxyPort,
                                     httpPort: httpPort, group: group, channels: channels, counter: counter,
                                     routes: routes, sweeps: sweeps)
        } catch {
            for channel in channels { try? await channel.close() }
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private init(contexts: [(Int32, ServerContext)], ports: [Int32: Int], proxyContext: ServerContext?,
                 proxyPort: Int?, httpPort: Int?, group: MultiThreadedEventLoopGroup, channels: [any Channel],
                 counter: ConnectionCounter, routes: SessionRoutes, sweeps: [RepeatedTask]) {
        self.httpPort = httpPort
        context = contexts[0].1
        port = ports[contexts[0].0] ?? 0
        self.contexts = Dictionary(contexts, uniquingKeysWith: { first, _ in first })
        self.ports = ports
        self.proxyContext = proxyContext
        self.proxyPort = proxyPort
        self.group = group
        self.channels = channels
        openConnections = counter
        self.routes = routes
        self.sweeps = sweeps
    }

    /// Forgets `context`'s sessions left without a connection past their lifetime, looking every tenth of it
    /// (1...60 s); nil when sessions do not expire.
    private static func sweepSessions(of context: ServerContext, on loop: any EventLoop) -> RepeatedTask? {
        let lifetime = context.limits.detachedSessionLifetime
        guard lifetime.isFinite else { return nil }
        let interval = TimeAmount.nanoseconds(Int64(min(60, max(1, lifetime / 10)) * 1e9))
        return loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            guard !context.expireSessions(now: context.clock()).isEmpty else { return }
            // Trimmed first, so the small chunks freed lie merged and the keys' copies are cut from whole runs.
            releaseFreedMemory()
            context.keys.repack()
            releaseFreedMemory()
        }
    }

    /// glibc keeps what is freed in the middle of its heaps resident until `malloc_trim`: after a sweep freed the
    /// sessions of many clients, that is most of what they held. Looked up at run time (the C library may not have
    /// it; the Glibc module does not declare it).
    private static func releaseFreedMemory() {
        #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    /// The faults every listener applies from now on.
    public var faults: FaultPlan {
        get { context.faults }
        set {
            for context in contexts.values { context.faults = newValue }
            proxyContext?.faults = newValue
        }
    }

    /// Queues an update (a serialized `Updates`) in a session of the first DC and sends it on the connection that
    /// carries the session now, if any (otherwise it goes out with the session's next frame). False if the session
    /// is unknown.
    @discardableResult
    public func push(_ update: [UInt8], to key: SessionKey, dc: Int32? = nil) -> Bool {
        let target = dc.flatMap { contexts[$0] } ?? context
        guard target.sessions.withExisting(key, { $0.push(update) }) != nil else { return false }
        routes.wake(key)
        return true
    }

    /// Pushes an update to every session that runs as an auth key (its own and its bound temporary key's), or with
    /// `subscribedOnly` to those subscribed to updates; returns how many there were.
    @discardableResult
    public func push(_ update: [UInt8], toAuthKey authKeyID: UInt64, dc: Int32? = nil,
                     subscribedOnly: Bool = false) -> Int {
        let target = dc.flatMap { contexts[$0] } ?? context
        return target.sessionKeys(authorizedAs: authKeyID, subscribedOnly: subscribedOnly)
            .filter { push(update, to: $0, dc: dc) }.count
    }

    /// Connections open now.
    public var connectionCount: Int { openConnections.current }

    /// Closes the listeners and every connection, and stops the event loops.
    public func shutdown() async throws {
        for sweep in sweeps { sweep.cancel() }
        for channel in channels { try? await channel.close() }
        try await group.shutdownGracefully()
    }

    /// What a listener serves: a DC's port both HTTP and the TCP transports, told apart by the first bytes; the
    /// MTProxy port the TCP ones; the extra HTTP port only HTTP.
    private enum Transports { case dcPort, tcp, http }

    private static func bind(context: ServerContext, host: String, port: Int, group: MultiThreadedEventLoopGroup,
                             counter: ConnectionCounter, routes: SessionRoutes, serving: Transports,
                             onEvent: @escaping @Sendable (ConnectionReport) -> Void) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Clients reach the test server through relays (SOCKS5, HTTP CONNECT) that write with Nagle
                    // on; acknowledging at once keeps pipelined calls through them at the direct rate.
                    try channel.pipeline.syncOperations.addHandler(QuickAckHandler())
                    switch serving {
                    case .dcPort:
                        try channel.pipeline.syncOperations.addHandler(
                            ServerConnectionHandler<DCPortConnection>(context: context, counter: counter,
                                                                      routes: routes, onEvent: onEvent))
                    case .http:
                        try channel.pipeline.syncOperations.addHandler(
                            ServerConnectionHandler<HTTPServerConnection>(context: context, counter: counter,
                                                                          routes: routes, onEvent: onEvent))
                    case .tcp:
                        try channel.pipeline.syncOperations.addHandler(
                            ServerConnectionHandler<ServerConnection>(context: context, counter: counter,
                                                                      routes: routes, onEvent: onEvent))
                    }
                }
            }
            .bind(host: host, port: port).get()
    }
}

extension ServerContext {
    /// A context for another listener of the same DC: same keys, sessions and handlers, another transport secret.
    /// An MTProxy listener in front of `other`'s DC, forwarding to the DC a client names when `routing` has it.
    convenience init(sharing other: ServerContext, secret: MTProxySecret, routing: DCRouting) {
        var transport = other.transport
        transport.secret = secret
        self.init(exchange: other.exchange, transport: transport, handlers: other.handlers, endpoint: other.endpoint,
                  limits: other.limits, sessionConfiguration: other.sessionConfiguration, random: other.random,
                  faults: other.faults, faultSeed: other.faultSeed &+ 1, keys: other.keys, sessions: other.sessions,
                  directory: other.directory, routing: routing, clock: other.clock)
    }

    /// The wall clock, Unix seconds.
    public static let wallClock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
}

/// Open connections across listeners, and the ids reports carry.
final class ConnectionCounter: Sendable {
    private let state = Mutex<(open: Int, next: UInt64)>((0, 0))

    /// Counts a new connection; nil when `limit` are open already.
    func open(limit: Int) -> UInt64? {
        state.withLock { state in
            state.next += 1
            guard state.open < limit else { return nil }
            state.open += 1
            return state.next
        }
    }

    func close() { state.withLock { $0.open -= 1 } }

    var current: Int { state.withLock { $0.open } }
}

/// Which connection carries each session now, so a pushed update can wake it. The last connection to carry a
/// session owns its route; a closing connection removes only the routes it still owns.
final class SessionRoutes: Sendable {
    private let routes = Mutex<[SessionKey: (connection: UInt64, wake: @Sendable () -> Void)]>([:])

    func claim(_ key: SessionKey, connection: UInt64, wake: @escaping @Sendable () -> Void) {
        routes.withLock { $0[key] = (connection, wake) }
    }

    func release(_ keys: [SessionKey], connection: UInt64) {
        routes.withLock { routes in
            for key in keys where routes[key]?.connection == connection { routes.removeValue(forKey: key) }
        }
    }

    func wake(_ key: SessionKey) {
        let wake = routes.withLock { $0[key]?.wake }
        wake?()
    }
}

/// What `ServerConnectionHandler` drives: a TCP `ServerConnection`, or an `HTTPServerConnection`.
protocol ServerConnectionDriving: Sendable {
    init(context: ServerContext, now: Double)
    var nextDeadline: Double? { get }
    var sessionKeys: [SessionKey] { get }
    mutating func receive(_ bytes: [UInt8], now: Double) -> ServerConnectionOutput
    mutating func flush(now: Double) -> ServerConnectionOutput
    mutating func tick(now: Double) -> ServerConnectionOutput
    mutating func finish() -> ServerConnectionError?
    /// Runs what a frame left unrun when the connection went (TCP); nothing for HTTP.
    mutating func runRemainingRequests(now: Double) -> [ServerConnectionEvent]
    /// Writes each frame's answers as they are made (TCP); HTTP answers whole requests in `receive`.
    mutating func feed(_ bytes: [UInt8], now: Double) -> ServerConnectionOutput
    mutating func step(now: Double, readContinues: Bool) -> ServerConnectionOutput?
    mutating func complete(_ id: UInt64, with result: Result<[UInt8], RPCError>, now: Double) -> ServerConnectionOutput
    mutating func dropPendingAnswers() -> [UInt64]
    mutating func detachSessions(now: Double)
}

extension ServerConnection: ServerConnectionDriving {}

extension DCPortConnection: ServerConnectionDriving {}

extension HTTPServerConnection: ServerConnectionDriving {
    mutating func feed(_ bytes: [UInt8], now: Double) -> ServerConnectionOutput { receive(bytes, now: now) }
    mutating func step(now: Double, readContinues: Bool) -> ServerConnectionOutput? { nil }
    mutating func runRemainingRequests(now: Double) -> [ServerConnectionEvent] { [] }
}

/// Feeds one channel's bytes to its connection (`ServerConnection` or `HTTPServerConnection`) and writes what
/// comes back.
///
/// A connection whose answers are large (file parts) is run on `BulkWork`'s lower-priority threads instead of its
/// event loop: sealing a 512 KiB part takes half a millisecond, and on the loop it held up every other connection
/// there, so a small call waited behind parts it had nothing to do with (Benchmarks/README.md, "Round trips during
/// downloads"). While the connection is away, what arrives for it waits, in order, and runs when it is back.
final class ServerConnectionHandler<Connection: ServerConnectionDriving>: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let context: ServerContext
    private let counter: ConnectionCounter
    private let routes: SessionRoutes
    /// Sessions whose route this handler has claimed.
    private var claimed = 0
    private let onEvent: @Sendable (MTProtoTestServer.ConnectionReport) -> Void
    /// The connection; nil only while it runs on a bulk thread (`away`).
    private var slot: Connection?
    private var id: UInt64?
    private var timer: Scheduled<Void>?
    /// Bytes handed to the channel whose writes have not completed.
    private var queuedBytes = 0
    private var closing = false
    /// The work of handlers that answer later, by the id the connection knows each pending answer by.
    private var waits: [UInt64: Task<Void, Never>] = [:]
    /// The last output wrote a large answer: the next reads run on a bulk thread.
    private var bulk = false
    /// The connection runs on a bulk thread; `deferred` holds what came for it meanwhile.
    private var away = false
    private var deferred: [Deferred] = []
    private var deferredBytes = 0
    /// The channel went inactive while the connection was away: its teardown runs when it is back.
    private var inactiveWhileAway = false

    /// Hands the connection to the bulk thread and back: one thread holds it at a time, and each hand-over is an
    /// event loop's `execute`, which orders the two threads' accesses.
    private final class Carrier: @unchecked Sendable {
        var value: Connection?
        init(_ value: Connection) { self.value = value }
    }

    /// What came for the connection while it was away.
    private enum Deferred: Sendable {
        case read([UInt8])
        case flush
        case tick
        case complete(UInt64, Result<[UInt8], RPCError>)
    }

    /// Answers written at once of at least this many bytes put the connection in bulk mode.
    static var bulkOutputBytes: Int { 128 << 10 }

    init(context: ServerContext, counter: ConnectionCounter, routes: SessionRoutes,
         onEvent: @escaping @Sendable (MTProtoTestServer.ConnectionReport) -> Void) {
        self.context = context
        self.counter = counter
        self.routes = routes
        self.onEvent = onEvent
        slot = Connection(context: context, now: context.clock())
    }

    private func now() -> Double { context.clock() }

    func channelActive(context channelContext: ChannelHandlerContext) {
        guard let id = counter.open(limit: context.limits.maxConnections) else {
            onEvent(.init(connection: 0, kind: .closed(.tooManyConnections(limit: context.limits.maxConnections))))
            closing = true
            channelContext.close(promise: nil)
            return
        }
        self.id = id
        let remote = channelContext.remoteAddress.map { "\($0)" } ?? "?"
        onEvent(.init(connection: id, kind: .opened(remote: remote)))
        schedule(channelContext)
        channelContext.fireChannelActive()
    }

    func channelRead(context channelContext: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        var buffer = unwrapInboundIn(data)
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        if away || bulk {
            enqueue(.read(bytes), channelContext)
            return
        }
        guard var connection = slot.take() else { return }
        let fed = connection.feed(bytes, now: self.now())
        slot = connection
        apply(fed, channelContext)
        // Each frame's answers are written as soon as they are made, so the client works on them meanwhile. NIO
        // reads again before `channelReadComplete`, where anything kept back goes out.
        while !closing, !away, var connection = slot.take() {
            let output = connection.step(now: self.now(), readContinues: true)
            slot = connection
            guard let output else { break }
            apply(output, channelContext)
        }
    }

    func channelReadComplete(context channelContext: ChannelHandlerContext) {
        if !closing, !away, var connection = slot.take() {
            let output = connection.flush(now: self.now())
            slot = connection
            // Nothing kept back (small answers): no write, and the timer set by the last step stays.
            if !output.isEmpty { apply(output, channelContext) }
        }
        channelContext.fireChannelReadComplete()
    }

    func channelInactive(context channelContext: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if away {
            inactiveWhileAway = true
        } else {
            tearDown()
        }
        channelContext.fireChannelInactive()
    }

    private func tearDown() {
        if let id, var connection = slot.take() {
            // A request the session took in is run even when its connection went: its answer waits for the next.
            for event in connection.runRemainingRequests(now: now()) { onEvent(.init(connection: id, kind: .event(event))) }
            _ = connection.dropPendingAnswers()
            connection.detachSessions(now: now())
            cancelWaits()
            routes.release(connection.sessionKeys, connection: id)
            counter.close()
            if !closing { onEvent(.init(connection: id, kind: .closed(connection.finish()))) }
            slot = connection
        }
        id = nil
    }

    func errorCaught(context channelContext: ChannelHandlerContext, error: any Error) {
        channelContext.close(promise: nil)
    }

    // MARK: Bulk mode

    /// Runs `item` on the connection: queued behind what waits while it is away, sent away with it in bulk mode,
    /// at once otherwise.
    private func enqueue(_ item: Deferred, _ channelContext: ChannelHandlerContext) {
        guard !closing else { return }
        if case .read(let bytes) = item { deferredBytes += bytes.count }
        deferred.append(item)
        if deferredBytes > context.limits.maxQueuedBytes {
            close(.queueOverflow(bytes: deferredBytes), channelContext, after: nil)
            return
        }
        if !away { sendAway(channelContext) }
    }

    /// Moves the connection and what waits for it to a bulk thread, runs it there, and applies the outputs back
    /// on the loop, in order.
    private func sendAway(_ channelContext: ChannelHandlerContext) {
        guard let moving = slot.take() else { return }
        // Boxed, so the connection moves to the other thread and back without a second reference to its buffers
        // (which would make the first change copy them).
        let carrier = Carrier(moving)
        away = true
        let work = deferred
        deferred = []
        deferredBytes = 0
        let loop = channelContext.eventLoop
        let loopBound = NIOLoopBound((self, channelContext), eventLoop: loop)
        let clock = context.clock
        BulkWork.group.next().execute {
            guard var connection = carrier.value.take() else { return }
            var outputs: [ServerConnectionOutput] = []
            for (index, item) in work.enumerated() {
                // Reads already here continue this one: a large last answer may wait for the next's.
                let more = work[(index + 1)...].contains { if case .read = $0 { true } else { false } }
                outputs += Self.outputs(of: item, on: &connection, now: clock, readContinues: more)
                if outputs.last?.close != nil { break }
            }
            if outputs.last?.close == nil { outputs.append(connection.flush(now: clock())) }
            carrier.value = consume connection
            let done = outputs
            loop.execute {
                let (handler, channelContext) = loopBound.value
                handler.slot = carrier.value.take()
                handler.away = false
                handler.returned(done, channelContext)
            }
        }
    }

    private func returned(_ outputs: [ServerConnectionOutput], _ channelContext: ChannelHandlerContext) {
        var wrote = false, large = false
        for output in outputs where !closing {
            wrote = wrote || !output.pieces.isEmpty
            large = large || output.outboundCount >= Self.bulkOutputBytes
            apply(output, channelContext, fromBulk: true)
        }
        // Small answers end bulk mode; a read that wrote nothing (the client's acks) leaves it as it was.
        if wrote { bulk = large }
        if inactiveWhileAway {
            tearDown()
            return
        }
        guard !closing, !deferred.isEmpty else { return }
        if bulk {
            sendAway(channelContext)
            return
        }
        // Back to small answers: what waited runs here.
        let waiting = deferred
        deferred = []
        deferredBytes = 0
        for item in waiting where !closing {
            guard var connection = slot.take() else { return }
            let outputs = Self.outputs(of: item, on: &connection, now: context.clock, readContinues: false)
            slot = connection
            for output in outputs where !closing { apply(output, channelContext) }
        }
    }

    // MARK: Output

    private func apply(
        _ output: ServerConnectionOutput, _ channelContext: ChannelHandlerContext, fromBulk: Bool = false
    ) {
        if let id {
            for event in output.events { onEvent(.init(connection: id, kind: .event(event))) }
            claimRoutes(id: id, channelContext)
        }
        for awaited in output.awaiting { start(awaited, channelContext) }
        for id in output.cancelled { waits.removeValue(forKey: id)?.cancel() }
        var written: EventLoopFuture<Void>?
        if !output.pieces.isEmpty {
            let count = output.outboundCount
            if !fromBulk, count >= Self.bulkOutputBytes { bulk = true }
            queuedBytes += count
            let promise = channelContext.eventLoop.makePromise(of: Void.self)
            let loopBound = NIOLoopBound(self, eventLoop: channelContext.eventLoop)
            promise.futureResult.whenComplete { _ in loopBound.value.queuedBytes -= count }
            channelContext.write(copying: output.pieces, promise: promise)
            channelContext.flush()
            written = promise.futureResult
            if queuedBytes > context.limits.maxQueuedBytes, output.close == nil {
                close(.queueOverflow(bytes: queuedBytes), channelContext, after: nil)
                return
            }
        }
        if let reason = output.close {
            close(reason, channelContext, after: written)
        } else {
            schedule(channelContext)
        }
    }

    /// Runs a handler that answers later off the event loop, and hands its answer back to the connection on it.
    private func start(_ awaited: AwaitedAnswer, _ channelContext: ChannelHandlerContext) {
        let loop = channelContext.eventLoop
        let loopBound = NIOLoopBound((self, channelContext), eventLoop: loop)
        let id = awaited.id, call = awaited.call
        waits[id] = Task {
            let result = await call.run()
            loop.execute {
                let (handler, channelContext) = loopBound.value
                // Cancelled meanwhile (timed out, or the connection gone): the connection answered for it.
                guard handler.waits.removeValue(forKey: id) != nil, !handler.closing else { return }
                handler.run(.complete(id, result), channelContext)
            }
        }
    }

    /// What `item` makes `connection` write: its own output and, for a read, each step's after it, up to a close.
    private static func outputs(of item: Deferred, on connection: inout Connection, now: () -> Double,
                                readContinues: Bool) -> [ServerConnectionOutput] {
        switch item {
        case .read(let bytes):
            var outputs = [connection.feed(bytes, now: now())]
            while outputs.last?.close == nil,
                  let output = connection.step(now: now(), readContinues: readContinues) {
                outputs.append(output)
            }
            return outputs
        case .flush: return [connection.flush(now: now())]
        case .tick: return [connection.tick(now: now())]
        case .complete(let id, let result): return [connection.complete(id, with: result, now: now())]
        }
    }

    /// Runs `item` now on the loop, or after the connection's work away. (Only timers, pushes and awaited
    /// answers come here; reads go through `channelRead`.)
    private func run(_ item: Deferred, _ channelContext: ChannelHandlerContext) {
        guard !away, var connection = slot.take() else {
            enqueue(item, channelContext)
            return
        }
        let output: ServerConnectionOutput
        switch item {
        case .read(let bytes): output = connection.receive(bytes, now: now())
        case .flush: output = connection.flush(now: now())
        case .tick: output = connection.tick(now: now())
        case .complete(let id, let result): output = connection.complete(id, with: result, now: now())
        }
        slot = connection
        apply(output, channelContext)
    }

    private func cancelWaits() {
        for task in waits.values { task.cancel() }
        waits.removeAll()
    }

    /// Routes pushes for sessions this connection started carrying to it.
    private func claimRoutes(id: UInt64, _ channelContext: ChannelHandlerContext) {
        guard let keys = slot?.sessionKeys, keys.count > claimed else { return }
        let loop = channelContext.eventLoop
        let loopBound = NIOLoopBound((self, channelContext), eventLoop: loop)
        for key in keys[claimed...] {
            routes.claim(key, connection: id) {
                loop.execute {
                    let (handler, channelContext) = loopBound.value
                    guard !handler.closing else { return }
                    handler.run(.flush, channelContext)
                }
            }
        }
        claimed = keys.count
    }

    /// Closes once `after` (the last write: a −404, a last answer) completed, so it reaches the client.
    private func close(_ reason: ServerConnectionError, _ channelContext: ChannelHandlerContext,
                       after: EventLoopFuture<Void>?) {
        guard !closing else { return }
        closing = true
        timer?.cancel()
        timer = nil
        if let id { onEvent(.init(connection: id, kind: .closed(reason))) }
        guard let after else {
            channelContext.close(promise: nil)
            return
        }
        let loopBound = NIOLoopBound(channelContext, eventLoop: channelContext.eventLoop)
        after.whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    private func schedule(_ channelContext: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        guard !closing, let deadline = slot?.nextDeadline else { return }
        let delay = max(0, deadline - self.now())
        let loopBound = NIOLoopBound((self, channelContext), eventLoop: channelContext.eventLoop)
        timer = channelContext.eventLoop.scheduleTask(in: .nanoseconds(Int64(min(delay, 86_400) * 1e9))) {
            let (handler, channelContext) = loopBound.value
            handler.timer = nil
            handler.run(.tick, channelContext)
        }
    }
}

@available(*, unavailable)
extension ServerConnectionHandler: Sendable {}
