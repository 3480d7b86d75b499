// The SQLite store's schema and its migrations. Version 1 (the first, which left `user_version` at 0) kept the update
// box, the channel boxes and the secret chats as named blobs in a `document` table, written by TelegramClient and
// SecretChatManager; version 2 keeps the boxes in tables of their own and the secret chats as one versioned JSON blob.
import Foundation
import SQLiteNIO

extension SQLiteSessionStore {
    /// The schema this store writes.
    static let schemaVersion = 2
    /// The secret chats blob's format: `StoredSecretChats` as JSON.
    static let secretChatsFormat = 1
    /// The most bytes a blob of secret chats (their keys and bounded histories) or a version 1 document is read to.
    static let secretChatsLimit = 64 << 20

    /// Brings the file to ``schemaVersion`` in one transaction; a file already there is left alone, a newer one is
    /// refused.
    func migrate() async throws(SessionStoreError) {
        try await exclusively { () async throws(SessionStoreError) in
            var version = 0
            for row in try await query("PRAGMA user_version") {
                version = Int(try integer(row, "user_version", in: "the schema version"))
            }
            guard version <= Self.schemaVersion else {
                throw .unsupportedVersion(path: path, version: version, newest: Self.schemaVersion)
            }
            guard version < Self.schemaVersion else { return }
            try await transaction { () async throws(SessionStoreError) in
                // 0: a new file, or one of version 1 (which set no version); its tables are made if missing.
                if version == 0 { try await createVersion1() }
                try await migrateFromVersion1()
                _ = try await query("PRAGMA user_version = \(Self.schemaVersion)")
            }
        }
    }

    private func createVersion1() async throws(SessionStoreError) {
        _ = try await query("""
            CREATE TABLE IF NOT EXISTS dc (
                id INTEGER PRIMARY KEY, host TEXT, port INTEGER,
                auth_key BLOB, salt INTEGER, time_offset REAL,
                temp_key BLOB, temp_salt INTEGER, temp_time_offset REAL, temp_expires_at INTEGER)
            """)
        _ = try await query("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER)")
        _ = try await query("CREATE TABLE IF NOT EXISTS document (name TEXT PRIMARY KEY, value BLOB)")
        _ = try await query("""
            CREATE TABLE IF NOT EXISTS peer (
                kind INTEGER NOT NULL, id INTEGER NOT NULL, access_hash INTEGER, username TEXT, phone TEXT,
                is_self INTEGER NOT NULL, source_kind INTEGER, source_id INTEGER, source_message INTEGER,
                last_used INTEGER NOT NULL, PRIMARY KEY (kind, id))
            """)
    }

    /// Version 2's tables, filled from version 1's documents, which are then deleted (documents of other names,
    /// which nothing reads any more, are left in their table).
    private func migrateFromVersion1() async throws(SessionStoreError) {
        _ = try await query("""
            CREATE TABLE update_box (id INTEGER PRIMARY KEY CHECK (id = 1), pts INTEGER NOT NULL, qts INTEGER NOT NULL,
                date INTEGER NOT NULL, seq INTEGER NOT NULL)
            """)
        _ = try await query("CREATE TABLE channel_box (id INTEGER PRIMARY KEY, pts INTEGER NOT NULL, access_hash INTEGER)")
        _ = try await query("""
            CREATE TABLE secret_chats (id INTEGER PRIMARY KEY CHECK (id = 1), format INTEGER NOT NULL, value BLOB NOT NULL)
            """)
        let names = ["updates.box", "updates.channels", "secret_chats"]
        for name in names {
            let location = "document \(name)"
            for row in try await query("SELECT value FROM document WHERE name = ?", [.text(name)]) {
                guard let bytes = try blob(row, "value", in: location, limit: Self.secretChatsLimit), !bytes.isEmpty else {
                    continue  // an empty box: logged out
                }
                var changes: [SessionChange] = []
                switch name {
                    case "updates.box": changes = [.updateBox(try Self.version1Box(bytes, corrupt: { corrupt(location, $0) }))]
                    case "updates.channels":
                        changes = [.channelBoxes(try Self.version1Channels(bytes, corrupt: { corrupt(location, $0) }))]
                    default:
                        do {
                            changes = [.secretChats(try JSONDecoder().decode(StoredSecretChats.self, from: Data(bytes)))]
                        } catch {
                            throw corrupt(location, "does not decode: \(error)")
                        }
                }
                for change in changes { try await write(change) }
            }
        }
        _ = try await query("DELETE FROM document WHERE name IN (?, ?, ?)", names.map { .text($0) })
    }

    /// Version 1's update box: 17 bytes, a format tag (1), then pts, qts, date and seq little-endian.
    static func version1Box(_ bytes: [UInt8], corrupt: (String) -> SessionStoreError) throws(SessionStoreError)
        -> UpdateBox
    {
        guard bytes.count == 17 else { throw corrupt("\(bytes.count) bytes, not 17") }
        guard bytes[0] == 1 else { throw corrupt("format tag \(bytes[0]), not 1") }
        return UpdateBox(pts: littleEndian(bytes, at: 1), qts: littleEndian(bytes, at: 5), date: littleEndian(bytes, at: 9),
                         seq: littleEndian(bytes, at: 13))
    }

    /// Version 1's channel boxes: a format tag (1), a UInt32 count, then per channel id (Int64), pts (Int32), a flag
    /// (0 or 1) and an access hash (Int64, meaningful with the flag 1), little-endian.
    static func version1Channels(_ bytes: [UInt8], corrupt: (String) -> SessionStoreError) throws(SessionStoreError)
        -> [Int64: ChannelBox]
    {
        let entry = 21
        guard bytes.count >= 5 else { throw corrupt("\(bytes.count) bytes, fewer than the 5 of its header") }
        guard bytes[0] == 1 else { throw corrupt("format tag \(bytes[0]), not 1") }
        let count = Int(littleEndian(bytes, at: 1) as UInt32)
        guard count <= (bytes.count - 5) / entry, bytes.count == 5 + count * entry else {
            throw corrupt("\(bytes.count) bytes do not hold \(count) channels of \(entry) bytes")
        }
        var boxes: [Int64: ChannelBox] = [:]
        for index in 0..<count {
            let at = 5 + index * entry
            let id: Int64 = littleEndian(bytes, at: at)
            let flag = bytes[at + 12]
            guard flag <= 1 else { throw corrupt("channel \(index) (byte \(at + 12)): flag \(flag), not 0 or 1") }
            guard boxes[id] == nil else { throw corrupt("channel \(id) twice") }
            boxes[id] = ChannelBox(pts: littleEndian(bytes, at: at + 8),
                                   accessHash: flag == 1 ? littleEndian(bytes, at: at + 13) : nil)
        }
        return boxes
    }

    /// The integer at `offset`, little-endian; the caller has checked the bytes are there.
    private static func littleEndian<T: FixedWidthInteger>(_ bytes: [UInt8], at offset: Int) -> T {
        (0..<MemoryLayout<T>.size).reduce(T.zero) { $0 | T(truncatingIfNeeded: bytes[offset + $1]) << ($1 * 8) }
    }
}
