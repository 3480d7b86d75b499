// Where a client keeps the peers it has seen (TelegramClient's peer cache): one row per user, basic group or channel
// with the access hash this account was given for it, kept beside the session (the SQLite store's `peer` table, in
// the same owner-only file).
import SQLiteNIO

/// One cached peer as a store keeps it.
public struct PeerRecord: Sendable, Hashable {
    /// 1 user, 2 basic group, 3 channel.
    public var kind: UInt8
    /// The peer's id within its kind.
    public var id: Int64
    /// The account's access hash for the peer; nil when only `min` data was seen (core.telegram.org/api/min).
    public var accessHash: Int64?
    /// Its username (without "@").
    public var username: String?
    /// Its phone number, when known.
    public var phone: String?
    /// Whether the peer is the account itself.
    public var isSelf: Bool
    /// A message the peer was seen in (its chat's kind and id, and the message id): how a peer without a hash is
    /// named (`inputPeerUserFromMessage`).
    public var source: Source?
    /// When the peer was last seen or used, in the cache's own ticks (its eviction order).
    public var lastUsed: UInt64

    /// A message a peer was seen in.
    public struct Source: Sendable, Hashable {
        /// The chat's kind (2 basic group, 3 channel).
        public var chatKind: UInt8
        /// The chat's id.
        public var chatID: Int64
        /// The message's id in that chat.
        public var messageID: Int32

        /// A message in the chat `chatKind`/`chatID`.
        public init(chatKind: UInt8, chatID: Int64, messageID: Int32) {
            self.chatKind = chatKind
            self.chatID = chatID
            self.messageID = messageID
        }
    }

    /// A record as the cache keeps it.
    public init(kind: UInt8, id: Int64, accessHash: Int64?, username: String?, phone: String?, isSelf: Bool,
                source: Source?, lastUsed: UInt64) {
        self.kind = kind
        self.id = id
        self.accessHash = accessHash
        self.username = username
        self.phone = phone
        self.isSelf = isSelf
        self.source = source
        self.lastUsed = lastUsed
    }
}

/// A store that keeps peer records beside the session.
public protocol PeerStore: Sendable {
    /// Every record kept.
    func loadPeers() async throws -> [PeerRecord]
    /// Writes `changed` (replacing records of the same kind and id) and forgets `removed` (kind, id), in one step.
    func savePeers(_ changed: [PeerRecord], removing removed: [(kind: UInt8, id: Int64)]) async throws
}

extension MemorySessionStore: PeerStore {
    /// Every record kept.
    public func loadPeers() -> [PeerRecord] { Array(peers.values) }

    /// Writes `changed` and forgets `removed`.
    public func savePeers(_ changed: [PeerRecord], removing removed: [(kind: UInt8, id: Int64)]) {
        for key in removed { peers[PeerKey(kind: key.kind, id: key.id)] = nil }
        for record in changed { peers[PeerKey(kind: record.kind, id: record.id)] = record }
    }
}

/// A record's identity in a memory store.
struct PeerKey: Hashable {
    let kind: UInt8
    let id: Int64
}

extension SQLiteSessionStore: PeerStore {
    static let peerTable = """
        CREATE TABLE IF NOT EXISTS peer (
            kind INTEGER NOT NULL, id INTEGER NOT NULL, access_hash INTEGER, username TEXT, phone TEXT,
            is_self INTEGER NOT NULL, source_kind INTEGER, source_id INTEGER, source_message INTEGER,
            last_used INTEGER NOT NULL, PRIMARY KEY (kind, id))
        """

    /// Every row of the `peer` table.
    public func loadPeers() async throws -> [PeerRecord] {
        try await connection.query("SELECT * FROM peer").map { row throws -> PeerRecord in
            guard let kind = row.column("kind")?.integer, (1...3).contains(kind), let id = row.column("id")?.integer,
                  let isSelf = row.column("is_self")?.integer, let lastUsed = row.column("last_used")?.integer
            else { throw SessionStoreError.corrupt("a peer row without kind, id, is_self or last_used") }
            var source: PeerRecord.Source?
            if let chatKind = row.column("source_kind")?.integer, let chatID = row.column("source_id")?.integer,
               let message = row.column("source_message")?.integer {
                source = PeerRecord.Source(chatKind: UInt8(clamping: chatKind), chatID: Int64(chatID),
                                           messageID: Int32(clamping: message))
            }
            return PeerRecord(kind: UInt8(kind), id: Int64(id), accessHash: row.column("access_hash")?.integer.map(Int64.init),
                              username: row.column("username")?.string, phone: row.column("phone")?.string,
                              isSelf: isSelf != 0, source: source, lastUsed: UInt64(clamping: lastUsed))
        }
    }

    /// Writes `changed` and deletes `removed` in one transaction.
    public func savePeers(_ changed: [PeerRecord], removing removed: [(kind: UInt8, id: Int64)]) async throws {
        guard !changed.isEmpty || !removed.isEmpty else { return }
        _ = try await connection.query("BEGIN IMMEDIATE")
        do {
            for key in removed {
                _ = try await connection.query("DELETE FROM peer WHERE kind = ? AND id = ?",
                                               [.integer(Int(key.kind)), .integer(Int(key.id))])
            }
            for record in changed {
                let optional: (Int?) -> SQLiteData = { $0.map { .integer($0) } ?? .null }
                _ = try await connection.query("INSERT OR REPLACE INTO peer VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
                    .integer(Int(record.kind)), .integer(Int(record.id)), optional(record.accessHash.map(Int.init)),
                    record.username.map { .text($0) } ?? .null, record.phone.map { .text($0) } ?? .null,
                    .integer(record.isSelf ? 1 : 0), optional(record.source.map { Int($0.chatKind) }),
                    optional(record.source.map { Int($0.chatID) }), optional(record.source.map { Int($0.messageID) }),
                    // SQLite integers are signed 64-bit; the tick never gets near the top.
                    .integer(Int(clamping: record.lastUsed)),
                ])
            }
            _ = try await connection.query("COMMIT")
        } catch {
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
    }
}
