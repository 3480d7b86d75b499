// The SDK client: `try await client.invoke(Api.functions.…)` against Telegram (or the local test Telegram), with one
// `MTProtoClient` per DC it needs. It wraps the first request of every connection in
// `invokeWithLayer(initConnection(…))`, follows migrations (PHONE/USER/NETWORK_MIGRATE move the home DC;
// FILE/STATS_MIGRATE run the call on that DC after `auth.exportAuthorization` / `auth.importAuthorization`), learns DC
// addresses from `help.getConfig`, keeps keys (permanent, and with `temporaryKeys` the bound temporary ones), the
// home DC and addresses in a `SessionStore`, and merges every DC's updates into one stream of typed `Api.Updates`
// kept in the account's order by an `UpdatesState`: gaps, and what was missed while disconnected or closed, are
// filled with `updates.getDifference` (each channel's with `updates.getChannelDifference`), duplicates dropped, and
// the boxes kept in the session store (core.telegram.org/api/datacenter, /api/invoking, /api/pfs, /api/updates).
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

    /// Messages and updates asked per `updates.getChannelDifference` (Telegram's most for a user account).
    public static let channelDifferenceLimit: Int32 = 100

    /// The configuration the client was made with.
    public let configuration: Configuration
    /// The DC the account lives on: the configured one until the store or a `*_MIGRATE_X` answer moves it.
    public private(set) var homeDC: Int32
    /// Every connection and where each DC is reached (ConnectionPool.swift).
    private let pool: ConnectionPool
    /// What every call runs through: the configuration's middlewares, then the built-in ones (Middleware.swift).
    private nonisolated let chain: MiddlewareChain
    private var addresses: [Int32: DCAddress] {
        get { pool.addresses }
        set { pool.addresses = newValue }
    }
    /// The home DC's connected client, read without entering this actor: a call needs no routing until the DC
    /// answers with a migration, so it goes straight to that client (entering and leaving this actor on every call
    /// cost about 7 % of a pipelined client's CPU). Kept by `homeChanged` whenever `clients`, `homeDC` or `closed`
    /// change.
    private nonisolated let homeClient = Mutex<MTProtoClient?>(nil)
    /// What the store held of the home DC and each DC's address and keys, and what was saved since.
    private var stored: SessionState?
    private var closed = false
    private var pumps: [Task<Void, Never>] = []
    /// The account's updates in its order, each once: pushed by any DC or returned by a typed `invoke`, and what
    /// `updates.getDifference` recovered after a gap or a reconnect (see `UpdatesState`). Updates that do not
    /// parse are logged and skipped.
    public nonisolated let updates: AsyncStream<Api.Updates>
    private let updatesSink: AsyncStream<Api.Updates>.Continuation
    /// Every DC connection's state changes.
    public nonisolated let states: AsyncStream<DCState>
    private let statesSink: AsyncStream<DCState>.Continuation
    /// The home DC's state changes, with `.updating` while missed updates are fetched.
    public nonisolated let connectionStates: AsyncStream<ConnectionState>
    private let connectionStatesSink: AsyncStream<ConnectionState>.Continuation
    private var dcStates: [Int32: MTProtoClient.State] = [:]
    private var reportedState: ConnectionState?
    /// The account's update sequence; its box is restored from the store in `load()`.
    private var updateState = UpdatesState()
    /// `updates.getState` was refused as unauthorized: none is asked again until a sign-in.
    private var signedOut = false
    /// The `getState`/`getDifference` out (the sequence asks one at a time), and a count of the sequences begun,
    /// so an answer for one that a sign-in or log-out replaced is ignored.
    private var fetchTask: Task<Void, Never>?
    private var sequenceGeneration = 0
    private var gapTimer: (task: Task<Void, Never>, deadline: Double)?
    private var savedBox: UpdateBox?
    private var savedChannels: [Int64: ChannelBox] = [:]
    private var boxSave: Task<Void, Never>?
    /// The `getChannelDifference`s out, one per channel at most.
    private var channelFetches: [Int64: Task<Void, Never>] = [:]
    /// The monotonic origin of the times `updateState` is given (gaps are timed on it, not on `clock`).
    private let started = ContinuousClock.now
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
        ])
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

    // MARK: Calls

    /// Runs a call on the home DC, following migrations; returns its typed result or throws `MTProtoClientError`
    /// (`.rpc(RPCError)` for an `rpc_error`) or `TelegramClientError`.
    public nonisolated func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                                timeout: Duration? = nil) async throws -> T {
        let result = try Self.parse(await chain.run(Invocation(body: call.1.bytes, function: call.0, timeout: timeout),
                                                    from: 0, client: self),
                                    with: call.2)
        await noteResult(result, of: call.0)
        return result
    }

    /// Runs a call on a given DC (downloads from where a file lives), logging the account in there first if needed.
    public func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>), onDC dc: Int32,
                                    timeout: Duration? = nil) async throws -> T {
        try await load()
        let invocation = Invocation(body: call.1.bytes, function: call.0, dc: dc == homeDC ? nil : dc, timeout: timeout)
        let result = try Self.parse(await chain.run(invocation, from: 0, client: self), with: call.2)
        noteResult(result, of: call.0)
        return result
    }

    /// A serialized request in, the serialized result out, with the same routing as `invoke`. The result is not
    /// read: updates it carries do not reach `updates` (a pts it moves is found as a gap and fetched).
    public nonisolated func invoke(raw body: [UInt8], timeout: Duration? = nil) async throws -> [UInt8] {
        Array(try await invokeInPlace(raw: body, timeout: timeout))
    }

    /// `invoke(raw:)` with the result where it arrived: a slice of the decrypted frame (indices not zero-based), so
    /// a large result is not copied on its way here.
    public nonisolated(nonsending) func invokeInPlace(raw body: [UInt8],
                                                     timeout: Duration? = nil) async throws -> ArraySlice<UInt8> {
        try await chain.run(Invocation(body: body, timeout: timeout), from: 0, client: self)
    }

    /// Where a call leaves the middleware chain: to the home DC's connection without entering this actor when it
    /// is connected, else through the actor (connecting first, or to another DC).
    nonisolated(nonsending) func send(_ invocation: Invocation) async throws -> ArraySlice<UInt8> {
        if invocation.dc == nil, let home = homeClient.withLock({ $0 }) {
            return try await home.invokeOnce(raw: invocation.body, timeout: invocation.timeout)
        }
        return try await routed(invocation)
    }

    private func routed(_ invocation: Invocation) async throws -> ArraySlice<UInt8> {
        try await load()
        let dc = invocation.dc ?? homeDC
        let body = dc == homeDC ? invocation.body : Self.withoutUpdates(invocation.body)
        return try await client(for: dc).invokeOnce(raw: body, timeout: invocation.timeout)
    }

    private nonisolated static func parse<T>(_ bytes: ArraySlice<UInt8>, with parser: DeserializeFunctionResponse<T>) throws -> T {
        do {
            return try parser.parse(bytes: bytes)
        } catch {
            throw MTProtoClientError.decoding(error)
        }
    }

    /// Logs the home DC's account in on `dc` (core.telegram.org/api/datacenter#authorization-transfer).
    func authorize(on dc: Int32) async throws {
        guard dc != homeDC else { return }
        let exported = try await client(for: homeDC).invoke(Api.functions.auth.exportAuthorization(dcId: dc))
        guard case .exportedAuthorization(let transfer) = exported else { return }
        _ = try await client(for: dc).invoke(Api.functions.invokeWithoutUpdates(
            query: Api.functions.auth.importAuthorization(id: transfer.id, bytes: transfer.bytes)))
    }

    /// `body` inside `invokeWithoutUpdates`: calls on a DC other than the home one do not subscribe its session to
    /// updates (core.telegram.org/method/invokeWithoutUpdates), which reach the client on its home DC's connection;
    /// otherwise the server may push the same updates over both.
    nonisolated static func withoutUpdates(_ body: [UInt8]) -> [UInt8] {
        withoutUpdatesPrefix + body
    }

    /// `invokeWithoutUpdates` without its query, which it ends with.
    private static let withoutUpdatesPrefix: [UInt8] = {
        let probe = Api.functions.help.getConfig()
        return Array(Api.functions.invokeWithoutUpdates(query: probe).1.bytes.dropLast(probe.1.bytes.count))
    }()

    /// The connected main client of `dc`.
    func connection(to dc: Int32) async throws -> MTProtoClient {
        try await load()
        return try await client(for: dc)
    }

    /// Logs the account in on `dc` for file transfers (its connections there share the DC's key).
    func authorizeFiles(on dc: Int32) async throws {
        try await load()
        _ = try await client(for: dc)
        try await authorize(on: dc)
    }

    /// A connection of its own to `dc` on the DC's key (made first by the DC's main connection, which also keeps
    /// it), for file parts: its session is new, it stores no key, and the updates it is sent are dropped (the main
    /// connection gets them too). nil when the DC has no stored key to share.
    func mediaClient(for dc: Int32) async throws -> MTProtoClient? {
        try await load()
        _ = try await client(for: dc)
        guard let key = stored?.permanentKeys[dc] else { return nil }
        return try await extraClient(dc: dc, address: pool.address(of: dc), serverKeys: configuration.serverKeys, key: key)
    }

    /// A connection to a CDN DC at `address`, whose keys come from `help.getCdnConfig`: a key of its own made by a
    /// handshake, kept for the client's life only, and never the account's authorization (core.telegram.org/cdn).
    func cdnClient(for dc: Int32, address: DCAddress, serverKeys: [RSAPublicKey]) async throws -> MTProtoClient {
        try await extraClient(dc: dc, address: configuration.proxy ?? address, serverKeys: serverKeys, key: nil)
    }

    /// The home DC's config (`help.getConfig`), for the CDN DCs' addresses, which `learnAddresses` leaves out.
    func config() async throws -> Api.Config {
        try await connection(to: homeDC).invoke(Api.functions.help.getConfig())
    }

    private func extraClient(dc: Int32, address: DCAddress, serverKeys: [RSAPublicKey],
                             key: StoredAuthKey?) async throws -> MTProtoClient {
        if closed { throw TelegramClientError.closed }
        let client = pool.makeClient(dc: dc, address: address, serverKeys: serverKeys, storedKey: key,
                                     temporaryKeys: key == nil ? nil : configuration.temporaryKeys)
        let updates = client.updates
        pumps.append(Task(executorPreference: taskExecutor) { for await _ in updates {} })
        try await client.connect()
        return client
    }

    /// Makes `dc` the home DC (a migration, or a QR login moved to the account's DC) and keeps it in the store.
    func setHome(_ dc: Int32) async throws {
        homeDC = dc
        homeChanged()
        try await persist([.homeDC(dc)])
    }

    /// Closes every connection; calls in flight fail. The update box is saved first. Call it when done: the
    /// connections' own tasks (readers, timers) hold the client, so one never closed stays connected after the last
    /// reference to it is gone.
    public func close() async {
        closed = true
        homeChanged()
        for task in pool.connecting.values { task.cancel() }
        for client in pool.clients.values { await client.close() }
        pool.clients.removeAll()
        await media.close()
        for pump in pumps { pump.cancel() }
        fetchTask?.cancel()
        for task in channelFetches.values { task.cancel() }
        gapTimer?.task.cancel()
        while let save = boxSave {
            boxSave = nil
            await save.value
        }
        await flushPeers()
        updatesSink.finish()
        eventsSink.finish()
        statesSink.finish()
        connectionStatesSink.yield(.closed)
        connectionStatesSink.finish()
    }

    /// Where the account's update sequence stands (nil until `updates.getState` answered or a box was restored).
    public var updateBox: UpdateBox? { updateState.box }

    /// Where each followed channel's update sequence stands, by channel id.
    public var channelBoxes: [Int64: ChannelBox] { updateState.channels }

    /// Drops the home DC's TCP connection as a network failure would (for tests of catching up); it reconnects.
    package func dropHomeConnection() async {
        await pool.clients[homeDC]?.dropConnection()
    }

    /// The DC connections open now.
    public var connectedDCs: [Int32] { pool.clients.keys.sorted() }

    // MARK: Connections

    /// Reads the store once: the home DC, addresses, keys, update boxes and peers it kept.
    func load() async throws {
        guard stored == nil else { return }
        var state = try await configuration.store?.load() ?? SessionState()
        guard stored == nil else { return }
        peerCache.restore(Array(state.peers.values))
        if state.updateBox != nil || !state.channelBoxes.isEmpty {
            updateState = UpdatesState(box: state.updateBox, channels: state.channelBoxes)
            savedBox = state.updateBox
            savedChannels = updateState.channels
        }
        // The peer cache and the update state own these from here; the secret chats are SecretChatManager's.
        state.peers = [:]
        state.secretChats = StoredSecretChats()
        stored = state
        if let home = state.homeDC { homeDC = home }
        homeChanged()
        for (dc, address) in state.addresses where addresses[dc] == nil { addresses[dc] = address }
    }

    private func persist(_ changes: [SessionChange]) async throws {
        var state = stored ?? SessionState()
        for change in changes { state.apply(change) }
        stored = state
        try await configuration.store?.save(changes)
    }

    /// The connected client of a DC, connecting (once, however many callers wait) when there is none.
    private func client(for dc: Int32) async throws -> MTProtoClient {
        if closed { throw TelegramClientError.closed }
        if let client = pool.clients[dc] { return client }
        if let pending = pool.connecting[dc] { return try await pending.value }
        let task = Task(executorPreference: taskExecutor) { try await self.connect(dc) }
        pool.connecting[dc] = task
        defer { pool.connecting[dc] = nil }
        let client = try await task.value
        pool.clients[dc] = client
        homeChanged()
        return client
    }

    private func homeChanged() {
        let home = closed ? nil : pool.clients[homeDC]
        homeClient.withLock { $0 = home }
    }

    private func connect(_ dc: Int32) async throws -> MTProtoClient {
        if pool.needsAddress(of: dc) { try await learnAddresses(missing: dc) }
        let address = try pool.address(of: dc)
        let client = pool.makeClient(
            dc: dc, address: address, serverKeys: configuration.serverKeys, storedKey: stored?.permanentKeys[dc],
            storedTemporaryKey: stored?.temporaryKeys[dc], temporaryKeys: configuration.temporaryKeys,
            keysChanged: { [weak self] keys in try await self?.keysChanged(keys, dc: dc, address: address) })
        let states = client.states, updates = client.updates
        pumps.append(Task(executorPreference: taskExecutor) { [weak self] in
            for await state in states { await self?.stateChanged(state, dc: dc) }
        })
        pumps.append(Task(executorPreference: taskExecutor) { [weak self, logger = configuration.logger] in
            for await bytes in updates {
                var reader = BufferReader(bytes: bytes)
                do {
                    let parsed = try Api.Updates.parse(&reader)
                    await self?.received(parsed)
                } catch {
                    logger.warning("DC \(dc): an update did not parse: \(error)")
                }
            }
        })
        try await client.connect()
        return client
    }

    /// A DC client's keys changed (a permanent key made, a temporary key bound or replaced): keep them, and the
    /// DC's address with them (not a proxy's).
    private func keysChanged(_ keys: DCKeys, dc: Int32, address: DCAddress) async throws {
        let old = stored.map { DCKeys(permanent: $0.permanentKeys[dc], temporary: $0.temporaryKeys[dc]) }
        if keys.permanent != old?.permanent, let key = keys.permanent {
            configuration.logger.info("DC \(dc): new auth key \(key.authKey)")
        }
        if keys.temporary != old?.temporary, let key = keys.temporary {
            configuration.logger.info("DC \(dc): temporary key \(key.key.authKey) bound until \(key.expiresAt)")
        }
        try await persist([.keys(keys, dc: dc)] + (configuration.proxy == nil ? [.address(address, dc: dc)] : []))
    }

    /// Asks the home DC (or any connected one) for `help.getConfig` and keeps the addresses it lists, IPv4 and
    /// IPv6 apart.
    private func learnAddresses(missing dc: Int32) async throws {
        let source = try pool.configSource(for: dc, home: homeDC)
        pool.learn(from: try await source.invoke(Api.functions.help.getConfig()))
    }

    // MARK: Updates

    /// A DC's connection changed: every DC's change goes to `states`; the home DC's to `connectionStates`, and
    /// each time it is ready again what was missed is asked for (core.telegram.org/api/updates#recovering-gaps).
    private func stateChanged(_ state: MTProtoClient.State, dc: Int32) {
        statesSink.yield(DCState(dc: dc, state: state))
        dcStates[dc] = state
        if configuration.followsUpdates, dc == homeDC, state == .ready, !signedOut, !closed {
            perform(updateState.catchUp())
        }
        reportState()
    }

    private func reportState() {
        guard !closed, let home = dcStates[homeDC] else { return }
        let overall: ConnectionState = switch home {
            case .waitingForNetwork(let attempt, let retryIn): .waitingForNetwork(attempt: attempt, retryIn: retryIn)
            case .connecting: .connecting
            case .connected: .connected
            case .ready: updateState.isFetching ? .updating : .ready
            case .closed: .closed
        }
        guard overall != reportedState else { return }
        reportedState = overall
        connectionStatesSink.yield(overall)
    }

    private func received(_ updates: Api.Updates) {
        guard !closed else { return }
        learnPeers(from: updates)
        if LoginTokenSignal.carriesLoginToken(updates) { loginTokenSignal.signal() }
        guard configuration.followsUpdates else {
            deliver(updates)
            return
        }
        perform(updateState.receive(updates, now: elapsed()))
    }

    /// What a call's result tells the update sequence: `Api.Updates` go through it like pushed ones (and on to
    /// `updates`), `messages.affected*` move pts, a sign-in starts it afresh (the box may be another account's) and
    /// a log-out ends it.
    private func noteResult<T>(_ result: T, of request: FunctionDescription) {
        guard !closed else { return }
        learnPeers(from: result)
        guard configuration.followsUpdates else {
            if let updates = result as? Api.Updates { deliver(updates) }
            return
        }
        let now = elapsed()
        let affected: (pts: Int32, count: Int32)
        switch result {
            case let updates as Api.Updates:
                return perform(updateState.receive(updates, now: now))
            case let messages as Api.messages.AffectedMessages:
                guard case .affectedMessages(let a) = messages else { return }
                affected = (a.pts, a.ptsCount)
            case let history as Api.messages.AffectedHistory:
                guard case .affectedHistory(let a) = history else { return }
                affected = (a.pts, a.ptsCount)
            case let found as Api.messages.AffectedFoundMessages:
                guard case .affectedFoundMessages(let a) = found else { return }
                affected = (a.pts, a.ptsCount)
            case let authorization as Api.auth.Authorization:
                guard case .authorization = authorization else { return }
                signedOut = false
                restartSequence()
                return perform(updateState.catchUp())
            case let token as Api.auth.LoginToken:
                guard case .loginTokenSuccess = token else { return }
                signedOut = false
                restartSequence()
                return perform(updateState.catchUp())
            case is Api.auth.LoggedOut:
                signedOut = true
                restartSequence()
                return perform([])
            default:
                return
        }
        // The pts of the box the call acted on: its channel's, or the common one.
        perform(updateState.receive(pts: affected.pts, ptsCount: affected.count, channelID: Self.channelID(of: request),
                                    now: now))
    }

    /// The channel a call acts on, from its `channel` or `peer` argument: its `messages.affected…` result then
    /// carries that channel's pts, not the common one (core.telegram.org/api/updates#pts).
    public static func channelID(of request: FunctionDescription) -> Int64? {
        for (name, value) in request.parameters where name == "channel" || name == "peer" {
            guard case .object(let object) = value else { continue }
            switch object {
                case let channel as Api.InputChannel:
                    switch channel {
                        case .inputChannel(let c): return c.channelId
                        case .inputChannelFromMessage(let c): return c.channelId
                        case .inputChannelEmpty: continue
                    }
                case let peer as Api.InputPeer:
                    switch peer {
                        case .inputPeerChannel(let c): return c.channelId
                        case .inputPeerChannelFromMessage(let c): return c.channelId
                        default: continue
                    }
                default: continue
            }
        }
        return nil
    }

    /// Out on `updates`, and as typed events on `events`.
    private func deliver(_ updates: Api.Updates) {
        updatesSink.yield(updates)
        emitEvents(for: updates)
    }

    private func restartSequence() {
        updateState = UpdatesState()
        sequenceGeneration += 1
        fetchTask?.cancel()
        fetchTask = nil
        for task in channelFetches.values { task.cancel() }
        channelFetches.removeAll()
    }

    /// Seconds since the client was made, on the monotonic clock.
    private func elapsed() -> Double {
        (ContinuousClock.now - started) / .seconds(1)
    }

    /// Carries out what the update sequence asks: delivers, fetches, and keeps its gap timer, saved box and the
    /// reported state in step.
    private func perform(_ actions: [UpdatesAction]) {
        for action in actions {
            switch action {
                case .deliver(let updates):
                    deliver(updates)
                case .getState:
                    fetch { .state(try await $0.invoke(Api.functions.updates.getState())) }
                case .getDifference(let box):
                    fetch { .difference(try await $0.invoke(Api.functions.updates.getDifference(
                        pts: box.pts, date: box.date, qts: box.qts))) }
                case .differenceTooLong(let pts):
                    configuration.logger.warning(
                        "updates: the difference is too long; pts moved to \(pts), refetch what is shown")
                case .getChannelDifference(let id, let hash, let pts):
                    fetchChannel(id, accessHash: hash, pts: pts)
                case .channelDifferenceTooLong(let id, let pts):
                    let moved = pts.map(String.init) ?? "?"
                    configuration.logger.warning(
                        "updates: channel \(id)'s difference is too long; its pts moved to \(moved), refetch its history")
            }
        }
        armGapTimer()
        saveBox()
        reportState()
    }

    private enum Fetched: Sendable {
        case state(Api.updates.State)
        case difference(Api.updates.Difference)
    }

    private func fetch(_ call: @escaping @Sendable (TelegramClient) async throws -> Fetched) {
        let generation = sequenceGeneration
        fetchTask = Task(executorPreference: taskExecutor) { [weak self] in
            guard let self else { return }
            do {
                let answer = try await call(self)
                await self.fetched(answer, generation: generation)
            } catch {
                await self.fetchFailed(error, generation: generation)
            }
        }
    }

    private func fetched(_ answer: Fetched, generation: Int) {
        guard !closed, generation == sequenceGeneration else { return }
        switch answer {
            case .state(let state): perform(updateState.receiveState(state, now: elapsed()))
            case .difference(let difference): perform(updateState.receiveDifference(difference, now: elapsed()))
        }
    }

    private func fetchFailed(_ error: any Error, generation: Int) {
        guard !closed, generation == sequenceGeneration else { return }
        if case MTProtoClientError.rpc(let rpc) = error, rpc.code == 401 {
            // Not signed in: nothing to catch up with until a sign-in.
            signedOut = true
        } else {
            configuration.logger.warning("updates: fetching missed updates failed: \(error)")
        }
        perform(updateState.fetchFailed(now: elapsed()))
        if signedOut { gapTimer?.task.cancel(); gapTimer = nil }
    }

    private func fetchChannel(_ id: Int64, accessHash: Int64, pts: Int32) {
        let generation = sequenceGeneration
        let call = Api.functions.updates.getChannelDifference(
            channel: .inputChannel(.init(channelId: id, accessHash: accessHash)), filter: .channelMessagesFilterEmpty,
            pts: pts, limit: Self.channelDifferenceLimit)
        channelFetches[id] = Task(executorPreference: taskExecutor) { [weak self] in
            guard let self else { return }
            do {
                let answer = try await self.invoke(call)
                await self.channelFetched(answer, id: id, generation: generation)
            } catch {
                await self.channelFetchFailed(error, id: id, generation: generation)
            }
        }
    }

    private func channelFetched(_ answer: Api.updates.ChannelDifference, id: Int64, generation: Int) {
        guard !closed, generation == sequenceGeneration else { return }
        channelFetches[id] = nil
        perform(updateState.receiveChannelDifference(answer, channelID: id, now: elapsed()))
    }

    /// A `CHANNEL_…` error (`CHANNEL_PRIVATE`: the account left or was removed; `CHANNEL_INVALID`) ends following
    /// that channel; any other failure is retried after a wait.
    private func channelFetchFailed(_ error: any Error, id: Int64, generation: Int) {
        guard !closed, generation == sequenceGeneration else { return }
        channelFetches[id] = nil
        var permanent = false
        if case MTProtoClientError.rpc(let rpc) = error {
            permanent = rpc.message.hasPrefix("CHANNEL_")
            if rpc.code == 401 { signedOut = true }
        }
        let outcome = permanent ? "no longer following it" : "asking again later"
        configuration.logger.warning("updates: fetching channel \(id)'s missed updates failed: \(error); \(outcome)")
        perform(updateState.channelFetchFailed(channelID: id, permanent: permanent, now: elapsed()))
        if signedOut { gapTimer?.task.cancel(); gapTimer = nil }
    }

    /// One timer for the open gap's deadline.
    private func armGapTimer() {
        guard !signedOut, let deadline = updateState.gapDeadline else {
            gapTimer?.task.cancel()
            gapTimer = nil
            return
        }
        if gapTimer?.deadline == deadline { return }
        gapTimer?.task.cancel()
        let wait = max(0, deadline - elapsed())
        gapTimer = (Task(executorPreference: taskExecutor) { [weak self] in
            do { try await Task.sleep(for: .seconds(wait)) } catch { return }
            await self?.gapTimerFired(deadline)
        }, deadline)
    }

    private func gapTimerFired(_ deadline: Double) {
        guard gapTimer?.deadline == deadline, !closed else { return }
        gapTimer = nil
        perform(updateState.tick(now: max(elapsed(), deadline)))
    }

    /// Saves the boxes when they moved, one save at a time (the newest boxes win); no box (logged out) is saved as
    /// none.
    private func saveBox() {
        let box = updateState.box, channels = updateState.channels
        let boxMoved = box != savedBox, channelsMoved = channels != savedChannels
        guard boxSave == nil, boxMoved || channelsMoved, let store = configuration.store else { return }
        savedBox = box
        savedChannels = channels
        boxSave = Task(executorPreference: taskExecutor) { [logger = configuration.logger] in
            do {
                try await store.save((boxMoved ? [.updateBox(box)] : []) + (channelsMoved ? [.channelBoxes(channels)] : []))
            } catch {
                logger.warning("updates: saving the box failed: \(error)")
            }
            await self.boxSaved()
        }
    }

    private func boxSaved() {
        boxSave = nil
        saveBox()
    }
}
