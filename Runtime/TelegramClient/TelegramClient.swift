// The SDK client's configuration and lifecycle: `try await client.invoke(Api.functions.…)` against Telegram (or
// the local test Telegram), with one `MTProtoClient` per DC it needs. The rest of the client is in files by topic:
// calls and their routing (TelegramClient+Calls.swift), connections and the session store
// (TelegramClient+Connections.swift, ConnectionPool.swift), the middleware chain (Middleware.swift), updates
// (TelegramClient+Updates.swift, UpdatesDriver.swift, UpdatesState.swift), sign-in, messages, peers, files and
// secret chats (core.telegram.org/api/datacenter, /api/invoking, /api/pfs, /api/updates).
import Foundation
import Logging
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoTransport
import NIOPosix
import Synchronization
import TLRuntime
import TelegramApi
import TelegramSession


/// Why a `TelegramClient` call failed, beyond what `MTProtoClientError` says.
public enum TelegramClientError: Error, Sendable, CustomStringConvertible {
    /// No address is known for the DC (not configured, not in `help.getConfig`).
    case unknownDC(Int32)
    /// More `*_MIGRATE_X` answers in a row than `maxMigrations`.
    case tooManyMigrations(last: RPCError)
    /// The client was closed.
    case closed

    /// A one-line account of the error.
    public var description: String {
        switch self {
            case .unknownDC(let dc): "no address known for DC \(dc)"
            case .tooManyMigrations(let last): "gave up after repeated migrations (last: \(last))"
            case .closed: "the client is closed"
        }
    }
}

/// A Telegram client: one MTProto connection per DC, calls routed to the account's home DC, migrations, flood waits
/// and reconnects handled, and the account's updates delivered in order and once on ``updates``.
///
/// Create it with a ``Configuration``, call ``invoke(_:timeout:)`` with a generated request, and ``close()`` it
/// when done. The actor serializes its own bookkeeping; calls run concurrently from any task.
public actor TelegramClient {
    /// What `initConnection` tells the server about the app (core.telegram.org/method/initConnection).
    public struct App: Sendable {
        /// The app's `api_id` from my.telegram.org.
        public var apiID: Int32
        /// The app's `api_hash` from my.telegram.org (sent only in `auth.sendCode` and similar calls, by the caller).
        public var apiHash: String
        /// The device model the server shows in the account's sessions list.
        public var deviceModel: String
        /// The operating system and its version.
        public var systemVersion: String
        /// The app's version.
        public var appVersion: String
        /// The system's language code (ISO 639-1).
        public var systemLangCode: String
        /// The language pack's name; empty for none.
        public var langPack: String
        /// The app's language code (ISO 639-1).
        public var langCode: String

        /// The app's identity; every field but the id and hash has a default.
        public init(apiID: Int32, apiHash: String, deviceModel: String = "swift-mtproto", systemVersion: String = "Linux",
                    appVersion: String = "1.0", systemLangCode: String = "en", langPack: String = "", langCode: String = "en") {
            self.apiID = apiID
            self.apiHash = apiHash
            self.deviceModel = deviceModel
            self.systemVersion = systemVersion
            self.appVersion = appVersion
            self.systemLangCode = systemLangCode
            self.langPack = langPack
            self.langCode = langCode
        }
    }

    /// Everything a client needs: the app, the DCs and their keys, the transport, the store, timeouts and limits.
    public struct Configuration: Sendable {
        /// What `initConnection` tells the server about the app.
        public var app: App
        /// Addresses by DC id; more are learned from `help.getConfig` when a migration names an unknown DC.
        public var dcs: [Int32: DCAddress]
        /// Where the account lives until the store or a migration says otherwise.
        public var homeDC: Int32
        /// The RSA public keys the key exchange accepts (the server proves it holds one of them).
        public var serverKeys: [RSAPublicKey]
        /// The MTProto framing every connection uses (intermediate by default).
        public var transport: TransportKind
        /// `.none`, `.obfuscated2`, or `.mtproxy(secret)` with `proxy` set.
        public var obfuscation: TransportConfiguration.Obfuscation
        /// An MTProxy every DC is reached through (the DC id travels in the obfuscation header).
        public var proxy: DCAddress?
        /// A SOCKS5 or HTTP CONNECT proxy every connection is opened through: to the DC, or to the MTProxy in
        /// `proxy` when both are set.
        public var connectionProxy: ProxyConfiguration?
        /// Whether DCs learned from `help.getConfig` are reached over their IPv6 options when they have one (their
        /// IPv4 option otherwise); configured addresses in `dcs` are used as given, IPv6 literals included.
        public var preferIPv6: Bool
        /// Where keys, the home DC, addresses and the update state are kept across runs; nil keeps them in memory only.
        public var store: (any SessionStore)?
        /// Where the client logs: connections, migrations, retries, gaps (at `debug` and above; nothing secret).
        public var logger: Logger
        /// How long a call waits for its answer before failing with `MTProtoClientError.timeout` (30 s by default).
        public var requestTimeout: Duration
        /// Flood waits up to this many seconds are waited out; longer ones are thrown.
        public var floodWaitThreshold: Int
        /// How a lost connection is retried (jittered exponential backoff, 8 attempts by default).
        public var reconnect: MTProtoClient.ReconnectPolicy
        /// How many `*_MIGRATE_X` answers in a row one call follows before it fails with
        /// ``TelegramClientError/tooManyMigrations(last:)``.
        public var maxMigrations: Int
        /// The MTProto session's timing and bounds (acks, state queries, resend limits, containers).
        public var session: SessionConfiguration
        /// Perfect forward secrecy (core.telegram.org/api/pfs): every connection runs over a temporary key bound to
        /// the DC's permanent key, replaced before it expires. nil (the default) uses the permanent keys directly.
        public var temporaryKeys: TemporaryKeyPolicy?
        /// Whether the client follows the account's update sequence (the default): `updates.getState` after a
        /// sign-in, gaps filled with `updates.getDifference` (a channel's with `updates.getChannelDifference`), and
        /// a catch-up each time the home DC is ready again.
        /// When false, no such call is made: pushed updates and typed results that are `Api.Updates` still come
        /// out on `updates`, unchecked (for one-shot tools and clients that do not need every update).
        public var followsUpdates: Bool
        /// Most peers the peer cache keeps (the least recently seen or used go first; see `PeerCache`).
        public var peerCacheCapacity: Int = 20_000
        /// The local clock, Unix seconds, and the randomness of every connection (tests inject both).
        public var clock: @Sendable () -> Double
        /// Where key exchanges and sessions take their random bytes from.
        public var random: any RandomSource
        /// Set: every connection uses the MTProto HTTP transport (`POST /api`, long polls with `http_wait`) instead
        /// of `transport`, with these options; each request's `Host` is its DC's address, and the DC addresses
        /// (`dcs`, or `proxy`) must be HTTP endpoints. nil (the default) uses the TCP framing.
        public var httpTransport: HTTPTransportOptions?
        /// Middlewares every call runs through, the first outermost, before the built-in ``MigrationMiddleware``
        /// and ``FloodWaitMiddleware`` (see ``InvokeMiddleware``). None by default.
        public var middlewares: [any InvokeMiddleware] = []
        /// What opens every connection's channel: `TCPDialer` (TCP, through `connectionProxy` if set) by default.
        public var dialer: any ChannelDialer = TCPDialer()

        /// A configuration for the given DCs and keys; every other setting has the default described on its property.
        public init(app: App, dcs: [Int32: DCAddress], homeDC: Int32 = 2, serverKeys: [RSAPublicKey],
                    transport: TransportKind = .intermediate, obfuscation: TransportConfiguration.Obfuscation = .none,
                    proxy: DCAddress? = nil, store: (any SessionStore)? = nil,
                    logger: Logger = Logger(label: "TelegramClient"), requestTimeout: Duration = .seconds(30),
                    floodWaitThreshold: Int = 60, reconnect: MTProtoClient.ReconnectPolicy = .init(), maxMigrations: Int = 5,
                    session: SessionConfiguration = SessionConfiguration(), temporaryKeys: TemporaryKeyPolicy? = nil,
                    followsUpdates: Bool = true,
                    clock: @escaping @Sendable () -> Double = MTProtoClient.wallClock,
                    random: any RandomSource = SystemRandom(), connectionProxy: ProxyConfiguration? = nil,
                    preferIPv6: Bool = false) {
            self.app = app
            self.preferIPv6 = preferIPv6
            self.connectionProxy = connectionProxy
            self.dcs = dcs
            self.homeDC = homeDC
            self.serverKeys = serverKeys
            self.transport = transport
            self.obfuscation = obfuscation
            self.proxy = proxy
            self.store = store
            self.logger = logger
            self.requestTimeout = requestTimeout
            self.floodWaitThreshold = floodWaitThreshold
            self.reconnect = reconnect
            self.maxMigrations = maxMigrations
            self.session = session
            self.temporaryKeys = temporaryKeys
            self.followsUpdates = followsUpdates
            self.clock = clock
            self.random = random
        }

        /// Telegram's production DCs and key.
        public static func production(app: App, store: (any SessionStore)? = nil) throws -> Configuration {
            Configuration(app: app, dcs: TelegramDCs.production, serverKeys: [try TelegramDCs.productionKey()], store: store)
        }

        /// Telegram's test DCs and key (test numbers `99966XYYYY`).
        public static func test(app: App, store: (any SessionStore)? = nil) throws -> Configuration {
            Configuration(app: app, dcs: TelegramDCs.test, serverKeys: [try TelegramDCs.testKey()], store: store)
        }
    }

    /// A DC's connection state, for `states`.
    public struct DCState: Sendable, Equatable {
        /// The DC whose state changed.
        public let dc: Int32
        /// Its new state.
        public let state: MTProtoClient.State
    }

    /// The client as an app sees it: the home DC's connection, and whether missed updates are being fetched.
    public enum ConnectionState: Sendable, Equatable {
        /// The connection was lost; attempt `attempt` starts after `retryIn`.
        case waitingForNetwork(attempt: Int, retryIn: Duration)
        /// Opening TCP.
        case connecting
        /// TCP and the transport are up; the key exchange or binding runs.
        case connected
        /// Connected; `updates.getState`, `updates.getDifference` or a `getChannelDifference` is out, so missed
        /// updates are still coming.
        case updating
        /// Connected and caught up.
        case ready
        /// Closed by `close()`, or after the last reconnect attempt failed.
        case closed
    }

    /// The configuration the client was made with.
    public let configuration: Configuration
    /// The DC the account lives on: the configured one until the store or a `*_MIGRATE_X` answer moves it.
    public internal(set) var homeDC: Int32
    /// Every connection and where each DC is reached (ConnectionPool.swift).
    let pool: ConnectionPool
    /// What every call runs through: the configuration's middlewares, then the built-in ones (Middleware.swift).
    nonisolated let chain: MiddlewareChain
    var addresses: [Int32: DCAddress] {
        get { pool.addresses }
        set { pool.addresses = newValue }
    }
    /// The home DC's connected client, read without entering this actor: a call needs no routing until the DC
    /// answers with a migration, so it goes straight to that client (entering and leaving this actor on every call
    /// cost about 7 % of a pipelined client's CPU). Kept by `homeChanged` whenever `clients`, `homeDC` or `closed`
    /// change.
    nonisolated let homeClient = Mutex<MTProtoClient?>(nil)
    /// What the store held of the home DC and each DC's address and keys, and what was saved since.
    var stored: SessionState?
    var closed = false
    var pumps: [Task<Void, Never>] = []
    /// The account's updates in its order, each once: pushed by any DC or returned by a typed `invoke`, and what
    /// `updates.getDifference` recovered after a gap or a reconnect (see `UpdatesState`). Updates that do not
    /// parse are logged and skipped.
    public nonisolated let updates: AsyncStream<Api.Updates>
    let updatesSink: AsyncStream<Api.Updates>.Continuation
    /// Every DC connection's state changes.
    public nonisolated let states: AsyncStream<DCState>
    let statesSink: AsyncStream<DCState>.Continuation
    /// The home DC's state changes, with `.updating` while missed updates are fetched.
    public nonisolated let connectionStates: AsyncStream<ConnectionState>
    let connectionStatesSink: AsyncStream<ConnectionState>.Continuation
    var dcStates: [Int32: MTProtoClient.State] = [:]
    var reportedState: ConnectionState?
    /// The account's update sequence run against the server: fetches, the gap timer, the saved boxes
    /// (UpdatesDriver.swift); its boxes are restored from the store in `load()`.
    let updatesDriver: UpdatesDriver
    /// Every peer seen, with its access hash (TelegramClient+Peers.swift), and the save of its changes under way.
    var peerCache: PeerCache
    var peerSave: Task<Void, Never>?
    /// The typed events of `updates` (Events.swift).
    public nonisolated let events: AsyncStream<UpdateEvent>
    let eventsSink: AsyncStream<UpdateEvent>.Continuation
    /// Counts pushed `updateLoginToken`s, which a QR login waits for (QRLogin.swift).
    nonisolated let loginTokenSignal = LoginTokenSignal()
    /// The connections that carry file parts (Files/MediaConnections.swift).
    let media = MediaConnections()
    /// The waits of `nextMessage(in:after:timeout:where:)` and the last messages received
    /// (TelegramClient+ChatActions.swift).
    var messageWaits = MessageWaits()

    /// Where the client's tasks and the connections to every DC run (a loop of `MultiThreadedEventLoopGroup`'s
    /// singleton unless given). Calls made inside `withTaskExecutorPreference(client.taskExecutor)` stay on it.
    public nonisolated let taskExecutor: EventLoopTaskExecutor

    /// Creates a client; nothing connects until the first call or ``connect()``.
    ///
    /// - Parameters:
    ///   - configuration: The app, DCs, keys, store and limits.
    ///   - taskExecutor: The event loop every connection and task of the client runs on; a loop of
    ///     `MultiThreadedEventLoopGroup.singleton` when nil.
    public init(configuration: Configuration, taskExecutor: EventLoopTaskExecutor? = nil) {
        self.configuration = configuration
        self.taskExecutor = taskExecutor ?? EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
        homeDC = configuration.homeDC
        pool = ConnectionPool(configuration: configuration, taskExecutor: self.taskExecutor)
        chain = MiddlewareChain(configuration.middlewares + [
            MigrationMiddleware(maxMigrations: configuration.maxMigrations),
            FloodWaitMiddleware(threshold: configuration.floodWaitThreshold),
        ], actsOnErrorsOnly: configuration.middlewares.isEmpty)
        updatesDriver = UpdatesDriver(follows: configuration.followsUpdates, store: configuration.store,
                                      logger: configuration.logger, taskExecutor: self.taskExecutor)
        peerCache = PeerCache(capacity: configuration.peerCacheCapacity)
        (events, eventsSink) = AsyncStream.makeStream(of: UpdateEvent.self, bufferingPolicy: .bufferingNewest(1024))
        (updates, updatesSink) = AsyncStream.makeStream(of: Api.Updates.self, bufferingPolicy: .bufferingNewest(1024))
        (states, statesSink) = AsyncStream.makeStream(of: DCState.self, bufferingPolicy: .bufferingNewest(256))
        (connectionStates, connectionStatesSink) = AsyncStream.makeStream(of: ConnectionState.self,
                                                                          bufferingPolicy: .bufferingNewest(256))
    }

    /// Connects to the home DC (calls connect on their own; this is for an app that only listens to updates):
    /// once connected, what was missed since the store's box is fetched.
    public func connect() async throws {
        try await load()
        _ = try await client(for: homeDC)
    }

    /// Closes every connection; calls in flight fail. The update box is saved first. Call it when done: the
    /// connections' own tasks (readers, timers) hold the client, so one never closed stays connected after the last
    /// reference to it is gone.
    public func close() async {
        closed = true
        homeChanged()
        await updatesDriver.stop(in: self)
        for task in pool.connecting.values { task.cancel() }
        for client in pool.clients.values { await client.close() }
        pool.clients.removeAll()
        await media.close()
        for pump in pumps { pump.cancel() }
        await flushPeers()
        endWaits()
        updatesSink.finish()
        eventsSink.finish()
        statesSink.finish()
        connectionStatesSink.yield(.closed)
        connectionStatesSink.finish()
    }
}
