// The client's connections and its session store: the connected client of each DC (one connection attempt however
// many callers wait), the extra ones for file parts and CDNs, the keys and the home DC kept in the store, and the
// store read once on first use. Where each DC is reached and how a connection is made is the pool's
// (ConnectionPool.swift).
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoTransport
import TLRuntime
import TelegramApi
import TelegramSession

extension TelegramClient {
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

    func extraClient(dc: Int32, address: DCAddress, serverKeys: [RSAPublicKey],
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

    /// Drops the home DC's TCP connection as a network failure would (for tests of catching up); it reconnects.
    package func dropHomeConnection() async {
        await pool.clients[homeDC]?.dropConnection()
    }

    /// The DC connections open now.
    public var connectedDCs: [Int32] { pool.clients.keys.sorted() }

    /// Reads the store once: the home DC, addresses, keys, update boxes and peers it kept.
    func load() async throws {
        guard stored == nil else { return }
        var state = try await configuration.store?.load() ?? SessionState()
        guard stored == nil else { return }
        peerCache.restore(Array(state.peers.values))
        updatesDriver.start(box: state.updateBox, channels: state.channelBoxes)
        // The peer cache and the updates driver own these from here; the secret chats are SecretChatManager's.
        state.peers = [:]
        state.secretChats = StoredSecretChats()
        stored = state
        if let home = state.homeDC { homeDC = home }
        homeChanged()
        for (dc, address) in state.addresses where addresses[dc] == nil { addresses[dc] = address }
    }

    func persist(_ changes: [SessionChange]) async throws {
        var state = stored ?? SessionState()
        for change in changes { state.apply(change) }
        stored = state
        try await configuration.store?.save(changes)
    }

    /// The connected client of a DC, connecting (once, however many callers wait) when there is none.
    func client(for dc: Int32) async throws -> MTProtoClient {
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

    func homeChanged() {
        let home = closed ? nil : pool.clients[homeDC]
        homeClient.withLock { $0 = home }
    }

    func connect(_ dc: Int32) async throws -> MTProtoClient {
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
    func keysChanged(_ keys: DCKeys, dc: Int32, address: DCAddress) async throws {
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
    func learnAddresses(missing dc: Int32) async throws {
        let source = try pool.configSource(for: dc, home: homeDC)
        pool.learn(from: try await source.invoke(Api.functions.help.getConfig()))
    }

}
