// The peers an account has seen, sans-IO: id → the access hash Telegram gave this account (hashes are per account:
// core.telegram.org/api/peers), with username and phone. Fed with every `users`/`chats` vector a client sees. A `min`
// constructor (core.telegram.org/api/min) carries no usable hash, so it never replaces one; a peer seen only that way
// is named through the message it was seen in (`inputPeerUserFromMessage`).
import MTProtoClient
import TelegramApi
import TelegramSession

/// A user, basic group or channel: Telegram numbers each kind's ids apart.
public struct PeerID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// What kind of peer an id names.
    public enum Kind: UInt8, Sendable, Comparable {
        /// A user or bot.
        case user = 1
        /// A basic group.
        case chat = 2
        /// A channel or supergroup.
        case channel = 3

        /// Orders kinds as their raw values (user, chat, channel).
        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// User, basic group or channel.
    public var kind: Kind
    /// The id within its kind.
    public var id: Int64

    /// The peer of kind `kind` with id `id`.
    public init(_ kind: Kind, _ id: Int64) {
        self.kind = kind
        self.id = id
    }

    /// The user with id `id`.
    public static func user(_ id: Int64) -> PeerID { PeerID(.user, id) }
    /// The basic group with id `id`.
    public static func chat(_ id: Int64) -> PeerID { PeerID(.chat, id) }
    /// The channel or supergroup with id `id`.
    public static func channel(_ id: Int64) -> PeerID { PeerID(.channel, id) }

    /// The peer an `Api.Peer` names.
    public init(_ peer: Api.Peer) {
        switch peer {
            case .peerUser(let user): self.init(.user, user.userId)
            case .peerChat(let chat): self.init(.chat, chat.chatId)
            case .peerChannel(let channel): self.init(.channel, channel.channelId)
        }
    }

    /// The peer as Telegram names it in results.
    public var peer: Api.Peer {
        switch kind {
            case .user: .peerUser(.init(userId: id))
            case .chat: .peerChat(.init(chatId: id))
            case .channel: .peerChannel(.init(channelId: id))
        }
    }

    /// Orders by kind, then id.
    public static func < (lhs: PeerID, rhs: PeerID) -> Bool { (lhs.kind, lhs.id) < (rhs.kind, rhs.id) }

    /// `user#ID`, `chat#ID` or `channel#ID`.
    public var description: String { "\(kind)#\(id)" }
}

extension PeerID: LosslessStringConvertible {
    /// Reads a peer as people and tools write one: `user#ID` (what ``description`` prints), or `user:ID`, with `chat`
    /// and `channel` for the other kinds. Nil for anything else, and for an id that is not a positive 64-bit number.
    public init?(_ text: String) {
        guard let separator = text.firstIndex(where: { $0 == "#" || $0 == ":" }),
              let id = Int64(text[text.index(after: separator)...]), id > 0,
              text[text.index(after: separator)...].utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        switch text[..<separator] {
            case "user": self.init(.user, id)
            case "chat": self.init(.chat, id)
            case "channel": self.init(.channel, id)
            default: return nil
        }
    }
}

/// Why a peer could not be named.
public enum PeerCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Neither a hash nor a message it was seen in is known for the peer: it must be seen in a result or update
    /// first (a username can be resolved with `TelegramClient.resolve(username:)`).
    case unknownPeer(PeerID)
    /// `contacts.resolveUsername` named no peer for the username.
    case unresolved(username: String)
    /// The input is not one of the kind asked for (a channel passed as a user…).
    case wrongKind(PeerID)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
            case .unknownPeer(let peer): "no access hash or message is known for \(peer)"
            case .unresolved(let username): "@\(username) resolves to no peer"
            case .wrongKind(let peer): "\(peer) is not of the kind asked for"
        }
    }
}

/// The peers an account has seen, with what names them: `inputPeer(for:)` and its siblings.
///
/// Rules: a full (non-`min`) user or channel sets the hash, username and phone; a `min` one only adds a peer not
/// known yet (without a hash) and never touches a known hash. A message whose sender (or whose peer) has no hash
/// is remembered as where that peer was seen, and it is then named `input…FromMessage` through that message's chat.
///
/// Bounded: past `capacity` entries the least recently seen or used ones are evicted (down to nine tenths of the
/// capacity, so an eviction is not paid on every insertion); the account's own user is never evicted.
public struct PeerCache: Sendable {
    /// One peer as the cache knows it.
    public struct Entry: Sendable, Hashable {
        /// The peer this entry is about.
        public var peer: PeerID
        /// The account's access hash for the peer; nil when only `min` data was seen.
        public var accessHash: Int64?
        /// Its username, if it has one (without "@").
        public var username: String?
        /// Its phone number, when a result gave it.
        public var phone: String?
        /// Whether it is the account itself.
        public var isSelf: Bool
        /// A message the peer was seen in, for naming it without a hash.
        public var source: (chat: PeerID, messageID: Int32)? {
            get { sourceChat.map { ($0, sourceMessage) } }
            set {
                sourceChat = newValue?.chat
                sourceMessage = newValue?.messageID ?? 0
            }
        }
        var sourceChat: PeerID?
        var sourceMessage: Int32 = 0
        var lastUsed: UInt64 = 0
    }

    /// Most entries kept.
    public let capacity: Int
    private(set) var entries: [PeerID: Entry] = [:]
    /// Lower-cased usernames.
    private var usernames: [String: PeerID] = [:]
    private var tick: UInt64 = 0
    /// Entries changed or evicted since `takeChanges`.
    private var changed: Set<PeerID> = []
    private var evicted: Set<PeerID> = []

    /// An empty cache of at most `capacity` peers (at least 16).
    public init(capacity: Int = 20_000) {
        self.capacity = max(16, capacity)
    }

    /// How many peers are kept.
    public var count: Int { entries.count }

    /// What is known of `peer`.
    public func entry(_ peer: PeerID) -> Entry? { entries[peer] }

    /// The account's own user, once a result named it (`self` flag).
    public var selfUser: PeerID? { entries.values.first { $0.isSelf }?.peer }

    /// The peer with this username (without "@", any case), if one seen had it.
    public func peer(username: String) -> PeerID? {
        usernames[Self.normalized(username)]
    }

    // MARK: Learning

    /// Learns the users and chats of a result or update.
    public mutating func learn(users: [Api.User], chats: [Api.Chat]) {
        for user in users { learn(user) }
        for chat in chats { learn(chat) }
    }

    /// Learns one user: a full one sets its hash, username and phone; a `min` one is added only when not known.
    public mutating func learn(_ user: Api.User) {
        guard case .user(let u) = user else { return }
        let key = PeerID.user(u.id)
        if u.min {
            guard entries[key] == nil else { return touch(key) }
            // Named later through a message it was seen in; its hash (if any) is not this account's to use.
            store(Entry(peer: key, accessHash: nil, username: u.username, phone: nil, isSelf: false))
            return
        }
        var entry = entries[key] ?? Entry(peer: key, accessHash: nil, username: nil, phone: nil, isSelf: false)
        if let hash = u.accessHash { entry.accessHash = hash }
        entry.username = u.username ?? u.usernames?.lazy.compactMap(Self.activeUsername).first
        if let phone = u.phone { entry.phone = phone }
        if u.isSelf { entry.isSelf = true }
        store(entry)
    }

    /// Learns one chat: a channel's hash (not from a `min` channel), a basic group's id.
    public mutating func learn(_ chat: Api.Chat) {
        switch chat {
            case .chat(let c):
                let key = PeerID.chat(c.id)
                store(entries[key] ?? Entry(peer: key, accessHash: nil, username: nil, phone: nil, isSelf: false))
            case .chatForbidden(let c):
                let key = PeerID.chat(c.id)
                store(entries[key] ?? Entry(peer: key, accessHash: nil, username: nil, phone: nil, isSelf: false))
            case .channel(let c):
                let key = PeerID.channel(c.id)
                if c.min || c.accessHash == nil {
                    guard entries[key] == nil else { return touch(key) }
                    store(Entry(peer: key, accessHash: nil, username: c.username, phone: nil, isSelf: false))
                    return
                }
                var entry = entries[key] ?? Entry(peer: key, accessHash: nil, username: nil, phone: nil, isSelf: false)
                entry.accessHash = c.accessHash
                entry.username = c.username ?? c.usernames?.lazy.compactMap(Self.activeUsername).first
                store(entry)
            case .channelForbidden(let c):
                let key = PeerID.channel(c.id)
                var entry = entries[key] ?? Entry(peer: key, accessHash: nil, username: nil, phone: nil, isSelf: false)
                entry.accessHash = c.accessHash
                store(entry)
            default:
                return
        }
    }

    /// Remembers, for a message's sender that has no hash, that it was seen in this message (and so can be named
    /// through it). Call after learning the users and chats that came with the message.
    public mutating func learn(message: Api.Message) {
        guard case .message(let m) = message, let from = m.fromId else { return }
        let chat = PeerID(m.peerId), sender = PeerID(from)
        guard sender != chat, sender.kind != .chat, var entry = entries[sender], entry.accessHash == nil,
              chat.kind != .user else { return }
        entry.source = (chat, m.id)
        store(entry)
    }

    /// Learns every user, chat and message sender an `Api.Updates` carries.
    public mutating func learn(_ updates: Api.Updates) {
        switch updates {
            case .updates(let u):
                learn(users: u.users, chats: u.chats)
                for update in u.updates { learn(update) }
            case .updatesCombined(let u):
                learn(users: u.users, chats: u.chats)
                for update in u.updates { learn(update) }
            default:
                return
        }
    }

    private mutating func learn(_ update: Api.Update) {
        switch update {
            case .updateNewMessage(let u): learn(message: u.message)
            case .updateNewChannelMessage(let u): learn(message: u.message)
            case .updateEditMessage(let u): learn(message: u.message)
            case .updateEditChannelMessage(let u): learn(message: u.message)
            default: return
        }
    }

    // MARK: Naming

    /// How the account names `peer` in a call: its hash, or the message it was seen in; nil when neither is known.
    public mutating func inputPeer(for peer: PeerID) -> Api.InputPeer? {
        guard let entry = use(peer) else { return peer.kind == .chat ? .inputPeerChat(.init(chatId: peer.id)) : nil }
        switch peer.kind {
            case .user:
                if entry.isSelf { return .inputPeerSelf }
                if let hash = entry.accessHash { return .inputPeerUser(.init(userId: peer.id, accessHash: hash)) }
                guard let source = entry.source, let via = inputPeer(forSource: source.chat) else { return nil }
                return .inputPeerUserFromMessage(.init(peer: via, msgId: source.messageID, userId: peer.id))
            case .chat:
                return .inputPeerChat(.init(chatId: peer.id))
            case .channel:
                if let hash = entry.accessHash { return .inputPeerChannel(.init(channelId: peer.id, accessHash: hash)) }
                guard let source = entry.source, let via = inputPeer(forSource: source.chat) else { return nil }
                return .inputPeerChannelFromMessage(.init(peer: via, msgId: source.messageID, channelId: peer.id))
        }
    }

    /// `inputUser…` for a user (nil for another kind, or an unknown user).
    public mutating func inputUser(for peer: PeerID) -> Api.InputUser? {
        guard peer.kind == .user else { return nil }
        switch inputPeer(for: peer) {
            case .inputPeerSelf: return .inputUserSelf
            case .inputPeerUser(let u): return .inputUser(.init(userId: u.userId, accessHash: u.accessHash))
            case .inputPeerUserFromMessage(let u):
                return .inputUserFromMessage(.init(peer: u.peer, msgId: u.msgId, userId: u.userId))
            default: return nil
        }
    }

    /// `inputChannel…` for a channel (nil for another kind, or an unknown channel).
    public mutating func inputChannel(for peer: PeerID) -> Api.InputChannel? {
        guard peer.kind == .channel else { return nil }
        switch inputPeer(for: peer) {
            case .inputPeerChannel(let c): return .inputChannel(.init(channelId: c.channelId, accessHash: c.accessHash))
            case .inputPeerChannelFromMessage(let c):
                return .inputChannelFromMessage(.init(peer: c.peer, msgId: c.msgId, channelId: c.channelId))
            default: return nil
        }
    }

    /// The chat a `min` peer was seen in, by hash only: a chain of messages is not followed.
    private mutating func inputPeer(forSource chat: PeerID) -> Api.InputPeer? {
        switch chat.kind {
            case .chat: return .inputPeerChat(.init(chatId: chat.id))
            case .channel:
                guard let hash = use(chat)?.accessHash else { return nil }
                return .inputPeerChannel(.init(channelId: chat.id, accessHash: hash))
            case .user: return nil
        }
    }

    // MARK: Persistence

    /// The entries changed and evicted since the last call, for the session store.
    public mutating func takeChanges() -> (changed: [PeerRecord], removed: [PeerRecord.Key]) {
        defer {
            changed.removeAll()
            evicted.removeAll()
        }
        return (changed.sorted().compactMap { entries[$0]?.record },
                evicted.sorted().map { PeerRecord.Key(kind: $0.kind.stored, id: $0.id) })
    }

    /// Whether entries changed since `takeChanges`.
    public var hasChanges: Bool { !changed.isEmpty || !evicted.isEmpty }

    /// Fills the cache from a store's records, marking nothing changed.
    public mutating func restore(_ records: [PeerRecord]) {
        for record in records {
            let peer = PeerID(PeerID.Kind(record.kind), record.id)
            var entry = Entry(peer: peer, accessHash: record.accessHash, username: record.username, phone: record.phone,
                              isSelf: record.isSelf, lastUsed: record.lastUsed)
            if let source = record.source {
                entry.source = (PeerID(PeerID.Kind(source.chatKind), source.chatID), source.messageID)
            }
            if let old = entries[peer]?.username { usernames[Self.normalized(old)] = nil }
            entries[peer] = entry
            if let name = entry.username { usernames[Self.normalized(name)] = peer }
            tick = max(tick, record.lastUsed)
        }
        evictIfFull()
        changed.removeAll()
        evicted.removeAll()
    }

    // MARK: Storage

    private mutating func store(_ entry: Entry) {
        var entry = entry
        let old = entries[entry.peer]
        entry.lastUsed = old?.lastUsed ?? 0
        // A peer seen again unchanged is not written again (its new tick is not worth a write).
        if old != entry { changed.insert(entry.peer) }
        tick += 1
        entry.lastUsed = tick
        if let name = old?.username, name != entry.username, usernames[Self.normalized(name)] == entry.peer {
            usernames[Self.normalized(name)] = nil
        }
        if let name = entry.username { usernames[Self.normalized(name)] = entry.peer }
        entries[entry.peer] = entry
        evicted.remove(entry.peer)
        evictIfFull()
    }

    private mutating func touch(_ peer: PeerID) {
        tick += 1
        entries[peer]?.lastUsed = tick
    }

    private mutating func use(_ peer: PeerID) -> Entry? {
        guard entries[peer] != nil else { return nil }
        touch(peer)
        return entries[peer]
    }

    private mutating func evictIfFull() {
        guard entries.count > capacity else { return }
        let keep = capacity * 9 / 10
        let victims = entries.values.filter { !$0.isSelf }.sorted { ($0.lastUsed, $0.peer) < ($1.lastUsed, $1.peer) }
            .prefix(entries.count - keep)
        for victim in victims {
            entries[victim.peer] = nil
            if let name = victim.username, usernames[Self.normalized(name)] == victim.peer {
                usernames[Self.normalized(name)] = nil
            }
            changed.remove(victim.peer)
            evicted.insert(victim.peer)
        }
    }

    private static func normalized(_ username: String) -> String {
        String(username.drop { $0 == "@" }).lowercased()
    }

    private static func activeUsername(_ username: Api.Username) -> String? {
        guard case .username(let u) = username, u.active else { return nil }
        return u.username
    }
}

extension PeerCache.Entry {
    /// The entry as a session store keeps it.
    var record: PeerRecord {
        PeerRecord(kind: peer.kind.stored, id: peer.id, accessHash: accessHash, username: username, phone: phone,
                   isSelf: isSelf,
                   source: sourceChat.map { .init(chatKind: $0.kind.stored, chatID: $0.id, messageID: sourceMessage) },
                   lastUsed: lastUsed)
    }

    init(peer: PeerID, accessHash: Int64?, username: String?, phone: String?, isSelf: Bool, lastUsed: UInt64 = 0) {
        self.peer = peer
        self.accessHash = accessHash
        self.username = username
        self.phone = phone
        self.isSelf = isSelf
        self.lastUsed = lastUsed
    }
}

extension PeerID.Kind {
    /// The kind a session store keeps.
    init(_ kind: PeerKind) {
        switch kind {
            case .user: self = .user
            case .basicGroup: self = .chat
            case .channel: self = .channel
        }
    }

    /// The kind as a session store keeps it.
    var stored: PeerKind {
        switch self {
            case .user: .user
            case .chat: .basicGroup
            case .channel: .channel
        }
    }
}
