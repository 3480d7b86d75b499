// File parts travel over connections of their own to the file's DC (as TDLib's upload and download sessions do), so
// a large transfer queues behind nothing on the DC's main connection and nothing there queues behind it. They run on
// the DC's key in sessions of their own; the account is logged in on a DC once, for the key.
import MTProtoClient
import MTProtoCrypto
import TelegramApi

/// The media connections a `TelegramClient` holds, by DC and lane, opened when a transfer first needs them.
actor MediaConnections {
    struct Key: Hashable, Sendable, Comparable {
        let dc: Int32
        let lane: Int

        static func < (a: Key, b: Key) -> Bool { (a.dc, a.lane) < (b.dc, b.lane) }
    }

    private var open: [Key: MTProtoClient] = [:]
    private var opening: [Key: Task<MTProtoClient, any Error>] = [:]
    private var authorizing: [Int32: Task<Void, any Error>] = [:]
    private var closed = false

    /// The connection for part lane `lane` of `count` media connections to `dc`: the DC's main connection when
    /// `count` is 0 (or the DC has no stored key to share).
    func connection(to dc: Int32, lane: Int, of count: Int, telegram: TelegramClient) async throws -> MTProtoClient {
        if closed { throw TelegramClientError.closed }
        guard count > 0 else { return try await telegram.connection(to: dc) }
        return try await opened(Key(dc: dc, lane: lane % count)) {
            if let client = try await telegram.mediaClient(for: dc) { return client }
            return try await telegram.connection(to: dc)
        }
    }

    /// The connection for part lane `lane` to the CDN DC `dc` (at least one, however many media connections are
    /// asked): its address from `help.getConfig`, its RSA keys from `help.getCdnConfig`, asked once.
    func cdnConnection(to dc: Int32, lane: Int, of count: Int, telegram: TelegramClient) async throws -> MTProtoClient {
        try await opened(Key(dc: dc, lane: lane % max(1, count))) {
            let (address, keys) = try await self.cdnServer(dc, telegram: telegram)
            return try await telegram.cdnClient(for: dc, address: address, serverKeys: keys)
        }
    }

    /// The open connection of `key`, or one `make` opens (once, however many parts wait for it).
    private func opened(_ key: Key, _ make: @escaping @Sendable () async throws -> MTProtoClient) async throws
        -> MTProtoClient {
        if closed { throw TelegramClientError.closed }
        if let client = open[key] { return client }
        if let pending = opening[key] { return try await pending.value }
        let task = Task { try await make() }
        opening[key] = task
        defer { opening[key] = nil }
        let client = try await task.value
        if closed {
            await client.close()
            throw TelegramClientError.closed
        }
        open[key] = client
        return client
    }

    private var cdnServers: [Int32: (DCAddress, [RSAPublicKey])] = [:]

    private func cdnServer(_ dc: Int32, telegram: TelegramClient) async throws -> (DCAddress, [RSAPublicKey]) {
        if let known = cdnServers[dc] { return known }
        let home = try await telegram.connection(to: await telegram.homeDC)
        guard case .cdnConfig(let config) = try await home.invoke(Api.functions.help.getCdnConfig()) else {
            throw FileTransferError.cdnUnavailable("no CDN config")
        }
        var keys: [RSAPublicKey] = []
        for case .cdnPublicKey(let key) in config.publicKeys where key.dcId == dc {
            do {
                keys.append(try RSAPublicKey(pem: key.publicKey))
            } catch {
                throw FileTransferError.cdnUnavailable("DC \(dc)'s key does not parse: \(error)")
            }
        }
        guard !keys.isEmpty else { throw FileTransferError.cdnUnavailable("help.getCdnConfig has no key for DC \(dc)") }
        guard case .config(let options) = try await telegram.config(),
              case .dcOption(let option)? = options.dcOptions.first(where: {
                  if case .dcOption(let o) = $0 { o.cdn && !o.ipv6 && o.id == dc } else { false }
              })
        else { throw FileTransferError.cdnUnavailable("help.getConfig lists no address for DC \(dc)") }
        let found = (DCAddress(host: option.ipAddress, port: Int(option.port)), keys)
        cdnServers[dc] = found
        return found
    }

    /// Logs the account in on `dc`, once however many parts ask at the same time, and not again unless `again`
    /// (a part was answered 401 there).
    func authorize(dc: Int32, again: Bool, telegram: TelegramClient) async throws {
        if let pending = authorizing[dc] { return try await pending.value }
        if !again, authorized.contains(dc) { return }
        let task = Task { try await telegram.authorizeFiles(on: dc) }
        authorizing[dc] = task
        defer { authorizing[dc] = nil }
        try await task.value
        authorized.insert(dc)
    }

    private var authorized: Set<Int32> = []

    /// The media connections open now, as (DC, lane).
    var lanes: [(dc: Int32, lane: Int)] { open.keys.sorted().map { ($0.dc, $0.lane) } }

    /// Closes every media connection; later transfers fail with `TelegramClientError.closed`.
    func close() async {
        closed = true
        for task in opening.values { task.cancel() }
        for client in open.values { await client.close() }
        open.removeAll()
    }
}

extension TelegramClient {
    /// The media connections open now, as (DC, lane) pairs (for tests and diagnostics).
    public var mediaConnectionLanes: [(dc: Int32, lane: Int)] {
        get async { await media.lanes }
    }
}
