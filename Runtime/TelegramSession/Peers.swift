// The peers a session keeps (TelegramClient's peer cache): one record per user, basic group or channel with the
// access hash this account was given for it.

/// What a peer is: its id is unique only within its kind.
public enum PeerKind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A user or bot.
    case user
    /// A basic group (`chat`).
    case basicGroup
    /// A channel or supergroup.
    case channel

    /// The kind's name.
    public var description: String {
        switch self {
            case .user: "user"
            case .basicGroup: "basic group"
            case .channel: "channel"
        }
    }
}

/// One peer as a store keeps it.
public struct PeerRecord: Sendable, Hashable {
    /// A record's identity: its kind and id.
    public struct Key: Sendable, Hashable, Comparable {
        /// The peer's kind.
        public var kind: PeerKind
        /// The peer's id within its kind.
        public var id: Int64

        /// The key of the peer `kind`/`id`.
        public init(kind: PeerKind, id: Int64) {
            self.kind = kind
            self.id = id
        }

        /// Users first, then basic groups, then channels; by id within a kind.
        public static func < (lhs: Key, rhs: Key) -> Bool {
            func rank(_ kind: PeerKind) -> Int { PeerKind.allCases.firstIndex(of: kind) ?? 0 }
            return (rank(lhs.kind), lhs.id) < (rank(rhs.kind), rhs.id)
        }
    }

    /// A message a peer was seen in.
    public struct Source: Sendable, Hashable {
        /// The chat's kind (a basic group or a channel).
        public var chatKind: PeerKind
        /// The chat's id.
        public var chatID: Int64
        /// The message's id in that chat.
        public var messageID: Int32

        /// A message in the chat `chatKind`/`chatID`.
        public init(chatKind: PeerKind, chatID: Int64, messageID: Int32) {
            self.chatKind = chatKind
            self.chatID = chatID
            self.messageID = messageID
        }
    }

    /// What the peer is.
    public var kind: PeerKind
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
    /// A message the peer was seen in: how a peer without a hash is named (`inputPeerUserFromMessage`).
    public var source: Source?
    /// When the peer was last seen or used, in the cache's own ticks (its eviction order).
    public var lastUsed: UInt64

    /// The record's identity.
    public var key: Key { Key(kind: kind, id: id) }

    /// A record as the cache keeps it.
    public init(kind: PeerKind, id: Int64, accessHash: Int64?, username: String?, phone: String?, isSelf: Bool,
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
