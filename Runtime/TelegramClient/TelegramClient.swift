// The SDK client: `try await client.invoke(Api.functions.…)` against Telegram (or the local test Telegram), with one
// `MTProtoClient` per DC it needs. It wraps the first request of every connection in
// `invokeWithLayer(initConnection(…))`, follows migrations (PHONE/USER/NETWORK_MIGRATE move the home DC;
// FILE/STATS_MIGRATE run the call on that DC after `auth.exportAuthorization` / `auth.importAuthorization`), learns DC
// addresses from `help.getConfig`, keeps keys (permanent, and with `temporaryKeys` the bound temporary ones), the
// home DC and addresses in a `SessionStore`, and merges every DC's updates into one stream of typed `Api.Updates`
// (core.telegram.org/api/datacenter, /api/invoking, /api/pfs).
import Foundation
import Logging
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoTransport
import TLRuntime
import TelegramApi

/// Why a `TelegramClient` call failed, beyond what `MTProtoClientError` says.
public enum TelegramClientError: Error, Sendable, CustomStringConvertible {
    /// No address is known for the DC (not configured, not in `help.getConfig`).
    case unknownDC(Int32)
    /// More `*_MIGRATE_X` answers in a row than `maxMigrations`.
    case tooManyMigrations(last: RPCError)
    /// The client was closed.
    case closed

    public var description: String {
        switch self {
            case .unknownDC(let dc): "no address known for DC \(dc)"
            case .tooManyMigrations(let last): "gave up after repeated migrations (last: \(last))"
            case .closed: "the client is closed"
        }
    }
}

public actor TelegramClient {
    /// What `initConnection` tells the server about the app (core.telegram.org/method/initConnection).
    public struct App: Sendable {
        public var apiID: Int32
        public var apiHash: String
        public var deviceModel: String
        public var systemVersion: String
        public var appVersion: String
        public var systemLangCode: String
        public var langPack: String
        public var langCode: String

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

    public struct Configuration: Sendable {
        public var app: App
        /// Addresses by DC id; more are learned from `help.getConfig` when a migration names an unknown DC.
        public var dcs: [Int32: DCAddress]
        /// Where the account lives until the store or a migration says otherwise.
        public var homeDC: Int32
        public var serverKeys: [RSAPublicKey]
        public var transport: TransportKind
        /// `.none`, `.obfuscated2`, or `.mtproxy(secret)` with `proxy` set.
        public var obfuscation: TransportConfiguration.Obfuscation
        /// An MTProxy every DC is reached through (the DC id travels in the obfuscation header).
        public var proxy: DCAddress?
        public var store: (any SessionStore)?
        public var logger: Logger
        public var requestTimeout: Duration
        /// Flood waits up to this many seconds are waited out; longer ones are thrown.
        public var floodWaitThreshold: Int
        public var reconnect: MTProtoClient.ReconnectPolicy
        public var maxMigrations: Int
        public var session: SessionConfiguration
        /// Perfect forward secrecy (core.telegram.org/api/pfs): every connection runs over a temporary key bound to
        /// the DC's permanent key, replaced before it expires. nil (the default) uses the permanent keys directly.
        public var temporaryKeys: TemporaryKeyPolicy?
        /// The local clock, Unix seconds, and the randomness of every connection (tests inject both).
        public var clock: @Sendable () -> Double
        public var random: any RandomSource

        public init(app: App, dcs: [Int32: DCAddress], homeDC: Int32 = 2, serverKeys: [RSAPublicKey],
                    transport: TransportKind = .intermediate, obfuscation: TransportConfiguration.Obfuscation = .none,
                    proxy: DCAddress? = nil, store: (any SessionStore)? = nil,
                    logger: Logger = Logger(label: "TelegramClient"), requestTimeout: Duration = .seconds(30),
                    floodWaitThreshold: Int = 60, reconnect: MTProtoClient.ReconnectPolicy = .init(), maxMigrations: Int = 5,
                    session: SessionConfiguration = SessionConfiguration(), temporaryKeys: TemporaryKeyPolicy? = nil,
                    clock: @escaping @Sendable () -> Double = MTProtoClient.wallClock,
                    random: any RandomSource = SystemRandom()) {
            self.app = app
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
        public let dc: Int32
        public let state: MTProtoClient.State
    }

    public let configuration: Configuration
    public private(set) var homeDC: Int32
    private var addresses: [Int32: DCAddress]
    private var clients: [Int32: MTProtoClient] = [:]
    private var connecting: [Int32: Task<MTProtoClient, any Error>] = [:]
    private var stored: ClientState?
    private var closed = false
    private var pumps: [Task<Void, Never>] = []
    /// Every DC's updates, parsed; updates that do not parse are logged and skipped.
    public nonisolated let updates: AsyncStream<Api.Updates>
    private let updatesSink: AsyncStream<Api.Updates>.Continuation
    /// Every DC connection's state changes.
    public nonisolated let states: AsyncStream<DCState>
    private let statesSink: AsyncStream<DCState>.Continuation

    public init(configuration: Configuration) {
        self.configuration = configuration
        homeDC = configuration.homeDC
        addresses = configuration.dcs
        (updates, updatesSink) = AsyncStream.makeStream(of: Api.Updates.self, bufferingPolicy: .bufferingNewest(1024))
        (states, statesSink) = AsyncStream.makeStream(of: DCState.self, bufferingPolicy: .bufferingNewest(256))
    }

    // MARK: Calls

    /// Runs a call on the home DC, following migrations; returns its typed result or throws `MTProtoClientError`
    /// (`.rpc(RPCError)` for an `rpc_error`) or `TelegramClientError`.
    public func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                    timeout: Duration? = nil) async throws -> T {
        try Self.parse(await invoke(raw: call.1.bytes, timeout: timeout), with: call.2)
    }

    /// Runs a call on a given DC (downloads from where a file lives), logging the account in there first if needed.
    public func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>), onDC dc: Int32,
                                    timeout: Duration? = nil) async throws -> T {
        try await load()
        return try Self.parse(await invoke(raw: call.1.bytes, on: dc, timeout: timeout, followHome: dc == homeDC),
                              with: call.2)
    }

    /// A serialized request in, the serialized result out, with the same routing as `invoke`.
    public func invoke(raw body: [UInt8], timeout: Duration? = nil) async throws -> [UInt8] {
        try await load()
        return try await invoke(raw: body, on: homeDC, timeout: timeout, followHome: true)
    }

    private static func parse<T>(_ bytes: [UInt8], with parser: DeserializeFunctionResponse<T>) throws -> T {
        do {
            return try parser.parse(bytes: bytes)
        } catch {
            throw MTProtoClientError.decoding(error)
        }
    }

    private func invoke(raw body: [UInt8], on first: Int32, timeout: Duration?, followHome: Bool) async throws -> [UInt8] {
        var dc = first
        var imported = false
        var last: RPCError?
        for _ in 0...configuration.maxMigrations {
            do {
                return try await client(for: dc).invoke(raw: body, timeout: timeout)
            } catch MTProtoClientError.rpc(let error) {
                last = error
                switch error.kind {
                    case .migrate(let kind, let target):
                        let target = Int32(clamping: target)
                        configuration.logger.info("\(error.message): to DC \(target)")
                        switch kind {
                            case .phone, .user, .network:
                                guard followHome else { throw MTProtoClientError.rpc(error) }
                                try await setHome(target)
                            case .file, .stats:
                                try await authorize(on: target)
                                imported = true
                        }
                        dc = target
                    case .unauthorized where dc != homeDC && !imported:
                        // A DC the account was never imported to: export from home, import there, retry once.
                        try await authorize(on: dc)
                        imported = true
                    default:
                        throw MTProtoClientError.rpc(error)
                }
            }
        }
        throw TelegramClientError.tooManyMigrations(last: last ?? RPCError(code: 303, message: "MIGRATE"))
    }

    /// Logs the home DC's account in on `dc` (core.telegram.org/api/datacenter#authorization-transfer).
    private func authorize(on dc: Int32) async throws {
        guard dc != homeDC else { return }
        let exported = try await client(for: homeDC).invoke(Api.functions.auth.exportAuthorization(dcId: dc))
        guard case .exportedAuthorization(let transfer) = exported else { return }
        _ = try await client(for: dc).invoke(Api.functions.auth.importAuthorization(id: transfer.id, bytes: transfer.bytes))
    }

    private func setHome(_ dc: Int32) async throws {
        homeDC = dc
        try await persist { $0.homeDC = dc }
    }

    /// Closes every connection; calls in flight fail.
    public func close() async {
        closed = true
        for task in connecting.values { task.cancel() }
        for client in clients.values { await client.close() }
        clients.removeAll()
        for pump in pumps { pump.cancel() }
        updatesSink.finish()
        statesSink.finish()
    }

    /// The DC connections open now.
    public var connectedDCs: [Int32] { clients.keys.sorted() }

    // MARK: Connections

    /// Reads the store once: the home DC and addresses it kept.
    private func load() async throws {
        guard stored == nil else { return }
        let state = try await configuration.store?.load() ?? ClientState()
        stored = state
        if let home = state.homeDC { homeDC = home }
        for (dc, address) in state.addresses where addresses[dc] == nil { addresses[dc] = address }
    }

    private func persist(_ change: (inout ClientState) -> Void) async throws {
        var state = stored ?? ClientState()
        change(&state)
        stored = state
        try await configuration.store?.save(state)
    }

    /// The connected client of a DC, connecting (once, however many callers wait) when there is none.
    private func client(for dc: Int32) async throws -> MTProtoClient {
        if closed { throw TelegramClientError.closed }
        if let client = clients[dc] { return client }
        if let pending = connecting[dc] { return try await pending.value }
        let task = Task { try await self.connect(dc) }
        connecting[dc] = task
        defer { connecting[dc] = nil }
        let client = try await task.value
        clients[dc] = client
        return client
    }

    private func connect(_ dc: Int32) async throws -> MTProtoClient {
        if addresses[dc] == nil, configuration.proxy == nil { try await learnAddresses(missing: dc) }
        guard let address = configuration.proxy ?? addresses[dc] else { throw TelegramClientError.unknownDC(dc) }
        let client = MTProtoClient(configuration: .init(
            host: address.host, port: address.port,
            connection: .init(transport: TransportConfiguration(kind: configuration.transport,
                                                                obfuscation: configuration.obfuscation,
                                                                dcId: Int16(clamping: dc)),
                              serverKeys: configuration.serverKeys, dcID: dc, storedKey: stored?.permanentKeys[dc],
                              session: configuration.session, temporaryKeys: configuration.temporaryKeys,
                              storedTemporaryKey: stored?.temporaryKeys[dc]),
            requestTimeout: configuration.requestTimeout, floodWaitThreshold: configuration.floodWaitThreshold,
            firstRequestPrefix: initConnectionPrefix(), reconnect: configuration.reconnect,
            keysChanged: { [weak self] keys in try await self?.keysChanged(keys, dc: dc, address: address) },
            clock: configuration.clock, random: configuration.random))
        let states = client.states, updates = client.updates
        pumps.append(Task { [statesSink] in for await state in states { statesSink.yield(DCState(dc: dc, state: state)) } })
        pumps.append(Task { [updatesSink, logger = configuration.logger] in
            for await bytes in updates {
                var reader = BufferReader(bytes: bytes)
                do {
                    updatesSink.yield(try Api.Updates.parse(&reader))
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
        try await persist {
            $0.permanentKeys[dc] = keys.permanent
            $0.temporaryKeys[dc] = keys.temporary
            if configuration.proxy == nil { $0.addresses[dc] = address }
        }
    }

    /// Asks the home DC (or any connected one) for `help.getConfig` and keeps the IPv4 addresses it lists.
    private func learnAddresses(missing dc: Int32) async throws {
        guard dc != homeDC || !clients.isEmpty, let source = clients[homeDC] ?? clients.values.first else {
            throw TelegramClientError.unknownDC(dc)
        }
        guard case .config(let config) = try await source.invoke(Api.functions.help.getConfig()) else { return }
        for case .dcOption(let option) in config.dcOptions where !option.ipv6 && !option.mediaOnly && !option.cdn {
            if addresses[option.id] == nil { addresses[option.id] = DCAddress(host: option.ipAddress, port: Int(option.port)) }
        }
        configuration.logger.info("learned DC addresses: \(addresses.keys.sorted())")
    }

    /// `invokeWithLayer(layer, initConnection(…, query))` without the query: both end with it, so this prefix and a
    /// request's bytes make the wrapped request.
    private func initConnectionPrefix() -> [UInt8] {
        let app = configuration.app
        let probe = Api.functions.help.getConfig()
        let wrapped = Api.functions.invokeWithLayer(layer: Api.layer, query: Api.functions.initConnection(
            apiId: app.apiID, deviceModel: app.deviceModel, systemVersion: app.systemVersion, appVersion: app.appVersion,
            systemLangCode: app.systemLangCode, langPack: app.langPack, langCode: app.langCode, query: probe))
        return Array(wrapped.1.bytes.dropLast(probe.1.bytes.count))
    }
}
