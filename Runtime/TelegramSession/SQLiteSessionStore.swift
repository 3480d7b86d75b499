// The session in an SQLite file (vapor/sqlite-nio, which bundles SQLite), created owner-only: auth keys are as good as
// a login. The schema's version is SQLite's `user_version`; older files are migrated on open, in one transaction
// (SQLiteSessionStore+Schema.swift), and a newer one is refused untouched.
import Foundation
import MTProtoClient
import MTProtoCrypto
import SQLiteNIO

/// The session in an SQLite file, created with mode 0600 (auth keys are as good as a login).
///
/// A file written by an older version of this store is migrated when it is opened; one written by a newer version
/// is refused with ``SessionStoreError/unsupportedVersion(path:version:newest:)`` and left as it is.
public actor SQLiteSessionStore: SessionStore {
    let connection: SQLiteConnection
    /// The file's path.
    public nonisolated let path: String
    /// Whether a sequence of statements (a transaction) holds the connection, and who waits for it.
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Opens (creating, mode 0600) the store at `path`, migrating a file of an older schema.
    ///
    /// - Throws: ``SessionStoreError/file(path:reason:)`` when the file cannot be made owner-only,
    ///   ``SessionStoreError/unsupportedVersion(path:version:newest:)`` for a newer schema,
    ///   ``SessionStoreError/corrupt(path:location:reason:)`` when what an old file holds cannot be migrated.
    public static func open(path: String) async throws(SessionStoreError) -> SQLiteSessionStore {
        try restrictToOwner(path)
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: .file(path: path))
        } catch {
            throw .database(path: path, reason: "\(error)")
        }
        let store = SQLiteSessionStore(connection: connection, path: path)
        do {
            try await store.migrate()
        } catch {
            try? await connection.close()
            throw error
        }
        return store
    }

    private init(connection: SQLiteConnection, path: String) {
        self.connection = connection
        self.path = path
    }

    /// Creates the file owner-only before SQLite opens it, and narrows an existing one.
    static func restrictToOwner(_ path: String) throws(SessionStoreError) {
        let descriptor = Foundation.open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .file(path: path, reason: String(cString: strerror(errno))) }
        defer { Foundation.close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            throw .file(path: path, reason: "chmod 0600: \(String(cString: strerror(errno)))")
        }
    }

    // MARK: Reading

    /// Reads the whole session.
    ///
    /// - Throws: ``SessionStoreError/corrupt(path:location:reason:)`` for a row this store did not write (a key that
    ///   is not 256 bytes, a peer kind that is not one), naming its table and row.
    public func load() async throws(SessionStoreError) -> SessionState {
        try await exclusively { () async throws(SessionStoreError) -> SessionState in
            var state = SessionState()
            for row in try await query("SELECT value FROM meta WHERE name = 'home_dc'") {
                state.homeDC = try int32(row, "value", in: "meta row home_dc")
            }
            for row in try await query("SELECT * FROM dc") { try readDC(row, into: &state) }
            for row in try await query("SELECT * FROM update_box") {
                let at = "update_box row"
                state.updateBox = UpdateBox(pts: try int32(row, "pts", in: at), qts: try int32(row, "qts", in: at),
                                            date: try int32(row, "date", in: at), seq: try int32(row, "seq", in: at))
            }
            for row in try await query("SELECT * FROM channel_box") {
                let id = try integer(row, "id", in: "a channel_box row")
                let at = "channel_box row \(id)"
                state.channelBoxes[id] = ChannelBox(pts: try int32(row, "pts", in: at),
                                                    accessHash: try optionalInteger(row, "access_hash", in: at))
            }
            for row in try await query("SELECT * FROM peer") {
                let record = try readPeer(row)
                state.peers[record.key] = record
            }
            for row in try await query("SELECT * FROM secret_chats") {
                state.secretChats = try readSecretChats(row)
            }
            return state
        }
    }

    /// The keys kept for `dc`, read from its row alone.
    public func keys(for dc: Int32) async throws(SessionStoreError) -> DCKeys {
        try await exclusively { () async throws(SessionStoreError) -> DCKeys in
            var state = SessionState()
            for row in try await query("SELECT * FROM dc WHERE id = ?", [.integer(Int(dc))]) {
                try readDC(row, into: &state)
            }
            return DCKeys(permanent: state.permanentKeys[dc], temporary: state.temporaryKeys[dc])
        }
    }

    private func readDC(_ row: SQLiteRow, into state: inout SessionState) throws(SessionStoreError) {
        let id = try int32(row, "id", in: "a dc row")
        let at = "dc row \(id)"
        if let host = row.column("host")?.string, let port = try optionalInteger(row, "port", in: at) {
            guard (0...65_535).contains(port) else { throw corrupt(at, "port \(port) is not a TCP port") }
            state.addresses[id] = DCAddress(host: host, port: Int(port))
        }
        if let key = try key(row, "auth_key", "salt", "time_offset", in: at) { state.permanentKeys[id] = key }
        if let key = try key(row, "temp_key", "temp_salt", "temp_time_offset", in: at) {
            guard let expires = try optionalInteger(row, "temp_expires_at", in: at) else {
                throw corrupt(at, "temp_key has no temp_expires_at")
            }
            state.temporaryKeys[id] = TemporaryAuthKey(key: key, expiresAt: try int32(expires, "temp_expires_at", in: at))
        }
    }

    private func key(_ row: SQLiteRow, _ keyColumn: String, _ saltColumn: String, _ offsetColumn: String,
                     in location: String) throws(SessionStoreError) -> StoredAuthKey? {
        guard let bytes = try blob(row, keyColumn, in: location, limit: 256) else { return nil }
        guard let authKey = try? AuthKey(bytes) else {
            throw corrupt(location, "\(keyColumn) is \(bytes.count) bytes, not 256")
        }
        return StoredAuthKey(authKey: authKey, salt: try optionalInteger(row, saltColumn, in: location) ?? 0,
                             timeOffset: row.column(offsetColumn)?.double ?? 0)
    }

    private func readPeer(_ row: SQLiteRow) throws(SessionStoreError) -> PeerRecord {
        let rawKind = try integer(row, "kind", in: "a peer row")
        let id = try integer(row, "id", in: "peer row kind \(rawKind)")
        let at = "peer row kind \(rawKind), id \(id)"
        let kind = try peerKind(rawKind, column: "kind", in: at)
        var source: PeerRecord.Source?
        if let chatKind = try optionalInteger(row, "source_kind", in: at) {
            guard let chatID = try optionalInteger(row, "source_id", in: at),
                  let message = try optionalInteger(row, "source_message", in: at)
            else { throw corrupt(at, "source_kind without source_id and source_message") }
            source = PeerRecord.Source(chatKind: try peerKind(chatKind, column: "source_kind", in: at), chatID: chatID,
                                       messageID: try int32(message, "source_message", in: at))
        }
        let lastUsed = try integer(row, "last_used", in: at)
        guard lastUsed >= 0 else { throw corrupt(at, "last_used is \(lastUsed), below zero") }
        return PeerRecord(kind: kind, id: id, accessHash: try optionalInteger(row, "access_hash", in: at),
                          username: row.column("username")?.string, phone: row.column("phone")?.string,
                          isSelf: try integer(row, "is_self", in: at) != 0, source: source, lastUsed: UInt64(lastUsed))
    }

    private func readSecretChats(_ row: SQLiteRow) throws(SessionStoreError) -> StoredSecretChats {
        let at = "secret_chats row"
        let format = try integer(row, "format", in: at)
        guard format == Self.secretChatsFormat else {
            throw corrupt(at, "format \(format) is not \(Self.secretChatsFormat)")
        }
        guard let bytes = try blob(row, "value", in: at, limit: Self.secretChatsLimit) else {
            throw corrupt(at, "value is not a blob")
        }
        do {
            return try JSONDecoder().decode(StoredSecretChats.self, from: Data(bytes))
        } catch {
            throw corrupt(at, "value does not decode: \(error)")
        }
    }

    // MARK: Writing

    /// Writes `changes` in one transaction: after a failure none of them is kept.
    public func save(_ changes: [SessionChange]) async throws(SessionStoreError) {
        guard !changes.isEmpty else { return }
        try await exclusively { () async throws(SessionStoreError) in
            try await transaction { () async throws(SessionStoreError) in
                for change in changes { try await write(change) }
            }
        }
    }

    func write(_ change: SessionChange) async throws(SessionStoreError) {
        switch change {
            case .homeDC(let dc):
                _ = try await query("DELETE FROM meta WHERE name = 'home_dc'")
                if let dc { _ = try await query("INSERT INTO meta VALUES ('home_dc', ?)", [.integer(Int(dc))]) }
            case let .keys(keys, dc):
                _ = try await query("INSERT OR IGNORE INTO dc (id) VALUES (?)", [.integer(Int(dc))])
                _ = try await query("""
                    UPDATE dc SET auth_key = ?, salt = ?, time_offset = ?, temp_key = ?, temp_salt = ?,
                        temp_time_offset = ?, temp_expires_at = ? WHERE id = ?
                    """, Self.columns(keys.permanent) + Self.columns(keys.temporary?.key)
                        + [keys.temporary.map { .integer(Int($0.expiresAt)) } ?? .null, .integer(Int(dc))])
            case let .address(address, dc):
                _ = try await query("INSERT OR IGNORE INTO dc (id) VALUES (?)", [.integer(Int(dc))])
                _ = try await query("UPDATE dc SET host = ?, port = ? WHERE id = ?",
                                    [address.map { .text($0.host) } ?? .null, address.map { .integer($0.port) } ?? .null,
                                     .integer(Int(dc))])
            case .updateBox(let box):
                _ = try await query("DELETE FROM update_box")
                if let box {
                    _ = try await query("INSERT INTO update_box VALUES (1, ?, ?, ?, ?)",
                                        [box.pts, box.qts, box.date, box.seq].map { .integer(Int($0)) })
                }
            case .channelBoxes(let boxes):
                _ = try await query("DELETE FROM channel_box")
                for (id, box) in boxes.sorted(by: { $0.key < $1.key }) {
                    _ = try await query("INSERT INTO channel_box VALUES (?, ?, ?)",
                                        [.integer(Int(id)), .integer(Int(box.pts)),
                                         box.accessHash.map { .integer(Int($0)) } ?? .null])
                }
            case let .peers(changed, removed):
                for key in removed {
                    _ = try await query("DELETE FROM peer WHERE kind = ? AND id = ?",
                                        [.integer(Self.code(key.kind)), .integer(Int(key.id))])
                }
                for record in changed { _ = try await query("INSERT OR REPLACE INTO peer VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                                            Self.columns(record)) }
            case .secretChats(let chats):
                let bytes: Data
                do { bytes = try JSONEncoder().encode(chats) } catch {
                    throw SessionStoreError.database(path: path, reason: "secret chats do not encode: \(error)")
                }
                _ = try await query("INSERT OR REPLACE INTO secret_chats VALUES (1, ?, ?)",
                                    [.integer(Self.secretChatsFormat), .blob(ByteBuffer(bytes: bytes))])
        }
    }

    /// key, salt, offset columns, or nulls.
    private static func columns(_ key: StoredAuthKey?) -> [SQLiteData] {
        guard let key else { return [.null, .null, .null] }
        return [.blob(ByteBuffer(bytes: key.authKey.bytes)), .integer(Int(key.salt)), .float(key.timeOffset)]
    }

    private static func columns(_ record: PeerRecord) -> [SQLiteData] {
        let optional: (Int?) -> SQLiteData = { $0.map { .integer($0) } ?? .null }
        return [.integer(code(record.kind)), .integer(Int(record.id)), optional(record.accessHash.map(Int.init)),
                record.username.map { .text($0) } ?? .null, record.phone.map { .text($0) } ?? .null,
                .integer(record.isSelf ? 1 : 0), optional(record.source.map { code($0.chatKind) }),
                optional(record.source.map { Int($0.chatID) }), optional(record.source.map { Int($0.messageID) }),
                // SQLite integers are signed 64-bit; the tick never gets near the top.
                .integer(Int(clamping: record.lastUsed))]
    }

    /// Closes the file; the store cannot be used afterwards.
    public func close() async throws(SessionStoreError) {
        do { try await connection.close() } catch { throw .database(path: path, reason: "\(error)") }
    }

    // MARK: Statements

    /// Runs `body` with the connection to itself: a transaction's statements are awaited one by one, and the actor
    /// would otherwise let another save's statements in between.
    func exclusively<T>(_ body: () async throws(SessionStoreError) -> T) async throws(SessionStoreError) -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }

    /// Runs `body` between `BEGIN IMMEDIATE` and `COMMIT`, rolling back when it throws.
    func transaction(_ body: () async throws(SessionStoreError) -> Void) async throws(SessionStoreError) {
        _ = try await query("BEGIN IMMEDIATE")
        do {
            try await body()
            _ = try await query("COMMIT")
        } catch {
            _ = try? await query("ROLLBACK")
            throw error
        }
    }

    func query(_ sql: String, _ binds: [SQLiteData] = []) async throws(SessionStoreError) -> [SQLiteRow] {
        do {
            return try await connection.query(sql, binds)
        } catch {
            throw .database(path: path, reason: "\(error)")
        }
    }

    // MARK: Columns

    func corrupt(_ location: String, _ reason: String) -> SessionStoreError {
        .corrupt(path: path, location: location, reason: reason)
    }

    func optionalInteger(_ row: SQLiteRow, _ column: String, in location: String) throws(SessionStoreError) -> Int64? {
        switch row.column(column) {
            case nil, .null?: return nil
            case .integer(let value)?: return Int64(value)
            case let other?: throw corrupt(location, "\(column) is \(Self.typeName(other)), not an integer")
        }
    }

    func integer(_ row: SQLiteRow, _ column: String, in location: String) throws(SessionStoreError) -> Int64 {
        guard let value = try optionalInteger(row, column, in: location) else { throw corrupt(location, "\(column) is null") }
        return value
    }

    func int32(_ row: SQLiteRow, _ column: String, in location: String) throws(SessionStoreError) -> Int32 {
        try int32(try integer(row, column, in: location), column, in: location)
    }

    func int32(_ value: Int64, _ column: String, in location: String) throws(SessionStoreError) -> Int32 {
        guard let narrow = Int32(exactly: value) else { throw corrupt(location, "\(column) \(value) is not a 32-bit integer") }
        return narrow
    }

    /// A blob column's bytes (nil when null), refused above `limit` bytes before they are copied.
    func blob(_ row: SQLiteRow, _ column: String, in location: String, limit: Int) throws(SessionStoreError) -> [UInt8]? {
        switch row.column(column) {
            case nil, .null?: return nil
            case .blob(var buffer)?:
                guard buffer.readableBytes <= limit else {
                    throw corrupt(location, "\(column) is \(buffer.readableBytes) bytes, more than \(limit)")
                }
                return buffer.readBytes(length: buffer.readableBytes) ?? []
            case let other?: throw corrupt(location, "\(column) is \(Self.typeName(other)), not a blob")
        }
    }

    func peerKind(_ value: Int64, column: String, in location: String) throws(SessionStoreError) -> PeerKind {
        switch value {
            case 1: return .user
            case 2: return .basicGroup
            case 3: return .channel
            default: throw corrupt(location, "\(column) \(value) is not 1 (user), 2 (basic group) or 3 (channel)")
        }
    }

    static func code(_ kind: PeerKind) -> Int {
        switch kind {
            case .user: 1
            case .basicGroup: 2
            case .channel: 3
        }
    }

    static func typeName(_ data: SQLiteData) -> String {
        switch data {
            case .integer: "an integer"
            case .float: "a real"
            case .text: "text"
            case .blob: "a blob"
            case .null: "null"
        }
    }
}
