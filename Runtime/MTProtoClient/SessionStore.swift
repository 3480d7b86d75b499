// What a client keeps of a DC to reconnect without a new key exchange: its address and auth keys (permanent, and
// temporary with their expiry), each with its salt and clock offset. `AuthKeyStore` is all `MTProtoClient` asks of a
// store; the session stores that keep them (in SQLite, in memory, or an app's own) are in `TelegramSession`.
import MTProtoCrypto

/// Where a DC listens: a host name or IP address, and a TCP port.
public struct DCAddress: Sendable, Hashable {
    /// The host name or IP address.
    public var host: String
    /// The TCP port.
    public var port: Int

    /// An address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}

/// A temporary key (perfect forward secrecy) and the server time it expires at.
public struct TemporaryAuthKey: Sendable, Hashable {
    /// The key with its salt and clock offset.
    public var key: StoredAuthKey
    /// When the key expires, in server time (Unix seconds).
    public var expiresAt: Int32

    /// A temporary key that expires at `expiresAt` (server time).
    public init(key: StoredAuthKey, expiresAt: Int32) {
        self.key = key
        self.expiresAt = expiresAt
    }
}

/// Where an ``MTProtoClient/MTProtoClient`` loads its DC's keys on `connect` and saves them when they change.
///
/// Every `TelegramSession` store is one; a client that keeps its keys some other way passes them in
/// (`ClientConnection.Configuration.storedKey`) and takes them from `keysChanged`.
public protocol AuthKeyStore: Sendable {
    /// The keys saved for `dc`; both nil when none were.
    func keys(for dc: Int32) async throws -> DCKeys
    /// Saves `dc`'s keys, replacing what was saved, and the address they were made on.
    func saveKeys(_ keys: DCKeys, for dc: Int32, address: DCAddress) async throws
}
