// Every `MTProtoClient` a `TelegramClient` opens comes from here: each DC's main connection, the media lanes and the
// CDN connections, made by one factory from the client's configuration. The pool also holds the routing rules: where
// a DC is reached (an MTProxy, a learned IPv6 option, the configured or learned IPv4 address), which DC can be asked
// for `help.getConfig`, and what its answer teaches (core.telegram.org/api/datacenter).
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoTransport
import TelegramApi

/// A `TelegramClient`'s connections and where each DC is reached. The client's actor owns it and alone touches it.
final class ConnectionPool {
    private let configuration: TelegramClient.Configuration
    private let taskExecutor: EventLoopTaskExecutor
    /// `invokeWithLayer(initConnection(…))` without its query: every connection's first request starts with it.
    private let firstRequestPrefix: [UInt8]
    /// Addresses by DC: the configured ones, the store's, and those `help.getConfig` listed.
    var addresses: [Int32: DCAddress]
    /// The IPv6 options `help.getConfig` listed, by DC (used with `preferIPv6`).
    private var ipv6Addresses: [Int32: DCAddress] = [:]
    /// Each DC's main connection, once connected.
    var clients: [Int32: MTProtoClient] = [:]
    /// The main connections being opened, one per DC however many callers wait.
    var connecting: [Int32: Task<MTProtoClient, any Error>] = [:]

    init(configuration: TelegramClient.Configuration, taskExecutor: EventLoopTaskExecutor) {
        self.configuration = configuration
        self.taskExecutor = taskExecutor
        addresses = configuration.dcs
        firstRequestPrefix = Self.initConnectionPrefix(configuration.app)
    }

    // MARK: Routing

    /// Whether `dc`'s address must be learned from `help.getConfig` before connecting (no MTProxy takes every DC).
    func needsAddress(of dc: Int32) -> Bool {
        addresses[dc] == nil && configuration.proxy == nil
    }

    /// Where `dc` is reached: the MTProxy when there is one, else its learned IPv6 option with `preferIPv6`, else
    /// its address.
    func address(of dc: Int32) throws(TelegramClientError) -> DCAddress {
        let learnedIPv6 = configuration.preferIPv6 ? ipv6Addresses[dc] : nil
        guard let address = configuration.proxy ?? learnedIPv6 ?? addresses[dc] else { throw .unknownDC(dc) }
        return address
    }

    /// The connection to ask `help.getConfig` for `dc`'s address: the home DC's, or any connected one (none when
    /// the home DC itself is unknown and nothing is connected).
    func configSource(for dc: Int32, home: Int32) throws(TelegramClientError) -> MTProtoClient {
        guard dc != home || !clients.isEmpty, let source = clients[home] ?? clients.values.first else {
            throw .unknownDC(dc)
        }
        return source
    }

    /// Keeps the addresses `config` lists, IPv4 and IPv6 apart; media-only and CDN options are left out (the CDN
    /// DCs' come from `help.getCdnConfig`).
    func learn(from config: Api.Config) {
        guard case .config(let config) = config else { return }
        for case .dcOption(let option) in config.dcOptions where !option.mediaOnly && !option.cdn {
            let address = DCAddress(host: option.ipAddress, port: Int(option.port))
            if option.ipv6 {
                if ipv6Addresses[option.id] == nil { ipv6Addresses[option.id] = address }
            } else if addresses[option.id] == nil {
                addresses[option.id] = address
            }
        }
        configuration.logger.info("learned DC addresses: \(addresses.keys.sorted())")
    }

    // MARK: Making connections

    /// The one factory of the SDK's connections: an `MTProtoClient` for `dc` at `address`, not yet connected,
    /// with the configuration's transport, timeouts, limits, clock, randomness, proxy and dialer. The main
    /// connections are kept in `clients` by the caller; media lanes and CDN connections by `MediaConnections`.
    func makeClient(dc: Int32, address: DCAddress, serverKeys: [RSAPublicKey], storedKey: StoredAuthKey?,
                    storedTemporaryKey: TemporaryAuthKey? = nil, temporaryKeys: TemporaryKeyPolicy?,
                    keysChanged: (@Sendable (DCKeys) async throws -> Void)? = nil) -> MTProtoClient {
        let client = MTProtoClient(configuration: .init(
            host: address.host, port: address.port,
            connection: .init(transport: transport(dc: dc, address: address), serverKeys: serverKeys, dcID: dc,
                              storedKey: storedKey, session: configuration.session, temporaryKeys: temporaryKeys,
                              storedTemporaryKey: storedTemporaryKey),
            requestTimeout: configuration.requestTimeout, floodWaitThreshold: configuration.floodWaitThreshold,
            firstRequestPrefix: firstRequestPrefix, reconnect: configuration.reconnect, keysChanged: keysChanged,
            clock: configuration.clock, random: configuration.random, proxy: configuration.connectionProxy,
            dialer: configuration.dialer),
            taskExecutor: taskExecutor)
        return client
    }

    /// The transport of a connection to `dc` at `address`: the TCP framing and obfuscation, or the HTTP transport
    /// with the `Host` of the DC it reaches.
    private func transport(dc: Int32, address: DCAddress) -> TransportConfiguration {
        var http = configuration.httpTransport
        http?.host = HTTPTransportOptions.hostField(host: address.host, port: address.port)
        return TransportConfiguration(kind: configuration.transport, obfuscation: configuration.obfuscation,
                                      dcId: Int16(clamping: dc), http: http)
    }

    /// `invokeWithLayer(layer, initConnection(…, query))` without the query: both end with it, so this prefix and
    /// a request's bytes make the wrapped request.
    private static func initConnectionPrefix(_ app: TelegramClient.App) -> [UInt8] {
        let probe = Api.functions.help.getConfig()
        let wrapped = Api.functions.invokeWithLayer(layer: Api.layer, query: Api.functions.initConnection(
            apiId: app.apiID, deviceModel: app.deviceModel, systemVersion: app.systemVersion, appVersion: app.appVersion,
            systemLangCode: app.systemLangCode, langPack: app.langPack, langCode: app.langCode, query: probe))
        return Array(wrapped.1.bytes.dropLast(probe.1.bytes.count))
    }
}
