// Where a client keeps what lets it reconnect without a new key exchange: per DC its address and auth keys
// (permanent, and temporary with their expiry) with salt and clock offset, and the home DC. Two stores: in memory,
// and SQLite through vapor/sqlite-nio (which bundles SQLite), in a file only its owner can read.
import Foundation
import MTProtoCrypto
import SQLiteNIO

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

/// Everything a client persists.
public struct ClientState: Sendable, Hashable {
    /// The DC the account lives on; nil until a client has chosen one.
    public var homeDC: Int32?
    /// DC addresses learned or configured, by DC id.
    public var addresses: [Int32: DCAddress]
    /// The permanent auth key of each DC, by DC id.
    public var permanentKeys: [Int32: StoredAuthKey]
    /// The bound temporary key of each DC, by DC id (with temporary keys on).
    public var temporaryKeys: [Int32: TemporaryAuthKey]

    /// A state; empty by default.
    public init(homeDC: Int32? = nil, addresses: [Int32: DCAddress] = [:], permanentKeys: [Int32: StoredAuthKey] = [:],
                temporaryKeys: [Int32: TemporaryAuthKey] = [:]) {
        self.homeDC = homeDC
        self.addresses = addresses
        self.permanentKeys = permanentKeys
        self.temporaryKeys = temporaryKeys
    }
}

/// A place to load and save `ClientState`.
public protocol SessionStore: Sendable {
    /// Loads the saved state; an empty `ClientState` when nothing was saved. Throws when the store cannot be read.
    func load() async throws -> ClientState
    /// Saves the whole state, replacing what was saved.
    func save(_ state: ClientState) async throws
}

/// Named blobs kept beside the session, for state other layers own (secret chats keep theirs here).
public protocol SessionDocumentStore: Sendable {
    /// The document saved under `name`, or nil when there is none.
    func document(named name: String) async throws -> [UInt8]?
    /// Saves `bytes` under `name`, replacing what was there.
    func saveDocument(_ bytes: [UInt8], named name: String) async throws
}

/// Keeps the state for the life of the process.
public actor MemorySessionStore: SessionStore, SessionDocumentStore {
    private var state: ClientState
    private var documents: [String: [UInt8]] = [:]
    /// The peer cache's records (PeerStore.swift).
    var peers: [PeerKey: PeerRecord] = [:]

    /// A store holding `state` (empty by default).
    public init(_ state: ClientState = ClientState()) { self.state = state }

    /// The state as last saved.
    public func load() -> ClientState { state }
    /// Keeps `state`, replacing the last.
    public func save(_ state: ClientState) { self.state = state }
    /// The document saved under `name`, or nil.
    public func document(named name: String) -> [UInt8]? { documents[name] }
    /// Keeps `bytes` under `name`.
    public func saveDocument(_ bytes: [UInt8], named name: String) { documents[name] = bytes }
}

/// Why a session store failed.
public enum SessionStoreError: Error, Sendable, CustomStringConvertible {
    /// The file could not be created or restricted to its owner.
    case file(path: String, reason: String)
    /// A row that does not hold what this store writes (the file is someone else's, or damaged).
    case corrupt(String)

    /// A one-line account of the error.
    public var description: String {
        switch self {
            case let .file(path, reason): "session file \(path): \(reason)"
            case .corrupt(let what): "session store: \(what)"
        }
    }
}

/// An SQLite file, created with mode 0600 (auth keys are as good as a login).
public actor SQLiteSessionStore: SessionStore, SessionDocumentStore {
    let connection: SQLiteConnection
    /// The file's path.
    public nonisolated let path: String

    /// Opens (creating, mode 0600) the store at `path`.
    public static func open(path: String) async throws -> SQLiteSessionStore {
        try restrictToOwner(path)
        let connection = try await SQLiteConnection.open(storage: .file(path: path))
        let store = SQLiteSessionStore(connection: connection, path: path)
        try await store.migrate()
        return store
    }

    private init(connection: SQLiteConnection, path: String) {
        self.connection = connection
        self.path = path
    }

    /// Creates the file owner-only before SQLite opens it, and narrows an existing one.
    static func restrictToOwner(_ path: String) throws {
        let descriptor = Foundation.open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SessionStoreError.file(path: path, reason: String(cString: strerror(errno)))
        }
        defer { Foundation.close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            throw SessionStoreError.file(path: path, reason: "chmod 0600: \(String(cString: strerror(errno)))")
        }
    }

    private func migrate() async throws {
        _ = try await connection.query("""
            CREATE TABLE IF NOT EXISTS dc (
                id INTEGER PRIMARY KEY, host TEXT, port INTEGER,
                auth_key BLOB, salt INTEGER, time_offset REAL,
                temp_key BLOB, temp_salt INTEGER, temp_time_offset REAL, temp_expires_at INTEGER)
            """)
        _ = try await connection.query("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER)")
        _ = try await connection.query("CREATE TABLE IF NOT EXISTS document (name TEXT PRIMARY KEY, value BLOB)")
        _ = try await connection.query(Self.peerTable)
    }

    /// The document saved under `name`, or nil. Throws ``SessionStoreError/corrupt(_:)`` when its row is not a blob.
    public func document(named name: String) async throws -> [UInt8]? {
        for row in try await connection.query("SELECT value FROM document WHERE name = ?", [.text(name)]) {
            guard case .blob(var blob)? = row.column("value") else { throw SessionStoreError.corrupt("document \(name)") }
            return blob.readBytes(length: blob.readableBytes) ?? []
        }
        return nil
    }

    /// Saves `bytes` under `name` in one statement, replacing what was there.
    public func saveDocument(_ bytes: [UInt8], named name: String) async throws {
        _ = try await connection.query("INSERT OR REPLACE INTO document VALUES (?, ?)",
                                       [.text(name), .blob(ByteBuffer(bytes: bytes))])
    }

    /// Reads every DC's address and keys and the home DC. Throws ``SessionStoreError/corrupt(_:)`` for rows this store
    /// did not write.
    public func load() async throws -> ClientState {
        var state = ClientState()
        for row in try await connection.query("SELECT value FROM meta WHERE name = 'home_dc'") {
            state.homeDC = row.column("value")?.integer.map { Int32(clamping: $0) }
        }
        for row in try await connection.query("SELECT * FROM dc") {
            guard let id = row.column("id")?.integer.map({ Int32(clamping: $0) }) else {
                throw SessionStoreError.corrupt("a dc row without an id")
            }
            if let host = row.column("host")?.string, let port = row.column("port")?.integer {
                state.addresses[id] = DCAddress(host: host, port: Int(port))
            }
            if let key = try Self.key(row, "auth_key", "salt", "time_offset") { state.permanentKeys[id] = key }
            if let key = try Self.key(row, "temp_key", "temp_salt", "temp_time_offset"),
               let expires = row.column("temp_expires_at")?.integer {
                state.temporaryKeys[id] = TemporaryAuthKey(key: key, expiresAt: Int32(clamping: expires))
            }
        }
        return state
    }

    private static func key(_ row: SQLiteRow, _ keyColumn: String, _ saltColumn: String, _ offsetColumn: String)
        throws -> StoredAuthKey?
    {
        guard case .blob(var blob)? = row.column(keyColumn) else { return nil }
        let bytes = blob.readBytes(length: blob.readableBytes) ?? []
        guard let authKey = try? AuthKey(bytes) else {
            throw SessionStoreError.corrupt("\(keyColumn) is \(bytes.count) bytes, not 256")
        }
        return StoredAuthKey(authKey: authKey, salt: Int64(row.column(saltColumn)?.integer ?? 0),
                             timeOffset: row.column(offsetColumn)?.double ?? 0)
    }

    /// Writes the whole state in one transaction, replacing what was saved.
    public func save(_ state: ClientState) async throws {
        _ = try await connection.query("BEGIN IMMEDIATE")
        do {
            _ = try await connection.query("DELETE FROM dc")
            let ids = Set(state.addresses.keys).union(state.permanentKeys.keys).union(state.temporaryKeys.keys)
            for id in ids.sorted() {
                let address = state.addresses[id]
                let permanent = state.permanentKeys[id]
                let temporary = state.temporaryKeys[id]
                var row: [SQLiteData] = [.integer(Int(id))]
                row += address.map { [.text($0.host), .integer($0.port)] } ?? [.null, .null]
                row += Self.columns(permanent)
                row += Self.columns(temporary?.key)
                row.append(temporary.map { .integer(Int($0.expiresAt)) } ?? .null)
                _ = try await connection.query("INSERT INTO dc VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            }
            _ = try await connection.query("DELETE FROM meta WHERE name = 'home_dc'")
            if let home = state.homeDC {
                _ = try await connection.query("INSERT INTO meta VALUES ('home_dc', ?)", [.integer(Int(home))])
            }
            _ = try await connection.query("COMMIT")
        } catch {
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
    }

    /// key, salt, offset columns, or nulls.
    private static func columns(_ key: StoredAuthKey?) -> [SQLiteData] {
        guard let key else { return [.null, .null, .null] }
        return [.blob(ByteBuffer(bytes: key.authKey.bytes)), .integer(Int(key.salt)), .float(key.timeOffset)]
    }

    /// Closes the file; the store cannot be used afterwards.
    public func close() async throws { try await connection.close() }
}
