// The client's peer cache: fed with the users and chats of every result, pushed update and difference; saved to the
// session store when it changes (a `PeerStore`: the SQLite store's `peer` table, or the memory store) and restored
// on the first call after a reopen.
import MTProtoClient
import TelegramApi
import TelegramSession

extension TelegramClient {
    /// How the account names `peer` in a call: `inputPeerSelf`, the access hash it was given, or the message the
    /// peer was seen in when only `min` data came (core.telegram.org/api/min).
    /// - Throws: `PeerCacheError.unknownPeer` when nothing that names it was seen (or the session store's error
    ///   when the cache is read from it first).
    public func inputPeer(for peer: PeerID) async throws -> Api.InputPeer {
        try await named(peer, kind: nil) { $0.inputPeer(for: $1) }
    }

    /// `inputPeer(for:)` as an `InputUser`.
    /// - Throws: `PeerCacheError.wrongKind` for a group or channel, `.unknownPeer` for an unknown user.
    public func inputUser(for peer: PeerID) async throws -> Api.InputUser {
        try await named(peer, kind: .user) { $0.inputUser(for: $1) }
    }

    /// `inputPeer(for:)` as an `InputChannel`.
    /// - Throws: `PeerCacheError.wrongKind` for a user or basic group, `.unknownPeer` for an unknown channel.
    public func inputChannel(for peer: PeerID) async throws -> Api.InputChannel {
        try await named(peer, kind: .channel) { $0.inputChannel(for: $1) }
    }

    /// What `name` makes of `peer` once the store's records are read; saves the use (it moves the eviction order).
    private func named<T>(_ peer: PeerID, kind: PeerID.Kind?, _ name: (inout PeerCache, PeerID) -> T?) async throws -> T {
        if let kind, peer.kind != kind { throw PeerCacheError.wrongKind(peer) }
        try await load()
        defer { savePeers() }
        guard let input = name(&peerCache, peer) else { throw PeerCacheError.unknownPeer(peer) }
        return input
    }

    /// The peer with `username` (a leading "@" and case are ignored): from the cache when a user or channel seen
    /// had it, else through `contacts.resolveUsername` (whose answer feeds the cache).
    /// - Throws: `MTProtoClientError` (e.g. `USERNAME_NOT_OCCUPIED`) or `PeerCacheError.unresolved`.
    public func resolve(username: String) async throws -> PeerID {
        try await load()
        if let known = peerCache.peer(username: username) { return known }
        let name = String(username.drop { $0 == "@" })
        guard case .resolvedPeer(let found) = try await invoke(Api.functions.contacts.resolveUsername(username: name))
        else { throw PeerCacheError.unresolved(username: name) }
        return PeerID(found.peer)
    }

    /// What the cache knows of `peer` (the store's records are read first if no call has read them yet).
    public func cachedPeer(_ peer: PeerID) async throws -> PeerCache.Entry? {
        try await load()
        return peerCache.entry(peer)
    }

    /// How many peers the cache holds.
    public var cachedPeerCount: Int { peerCache.count }

    // MARK: Feeding

    /// Learns the users and chats a result carries (those of `Api.Updates`, message lists, dialogs, resolved
    /// usernames, full users, differences…) and saves what changed.
    func learnPeers<T>(from result: T) {
        switch result {
            case let updates as Api.Updates:
                peerCache.learn(updates)
            case let messages as Api.messages.Messages:
                let page = MessagePage(messages)
                learn(users: page.users, chats: page.chats, messages: page.messages)
            case let dialogs as Api.messages.Dialogs:
                switch dialogs {
                    case .dialogs(let d): learn(users: d.users, chats: d.chats, messages: d.messages)
                    case .dialogsSlice(let d): learn(users: d.users, chats: d.chats, messages: d.messages)
                    case .dialogsNotModified: break
                }
            case let resolved as Api.contacts.ResolvedPeer:
                guard case .resolvedPeer(let r) = resolved else { return }
                peerCache.learn(users: r.users, chats: r.chats)
            case let authorization as Api.auth.Authorization:
                guard case .authorization(let a) = authorization else { return }
                peerCache.learn(a.user)
            case let users as [Api.User]:
                peerCache.learn(users: users, chats: [])
            case let full as Api.users.UserFull:
                guard case .userFull(let f) = full else { return }
                peerCache.learn(users: f.users, chats: f.chats)
            case let chats as Api.messages.Chats:
                switch chats {
                    case .chats(let c): peerCache.learn(users: [], chats: c.chats)
                    case .chatsSlice(let c): peerCache.learn(users: [], chats: c.chats)
                }
            case let difference as Api.updates.Difference:
                switch difference {
                    case .difference(let d):
                        learn(users: d.users, chats: d.chats, messages: d.newMessages)
                        peerCache.learn(.updates(.init(updates: d.otherUpdates, users: [], chats: [], date: 0, seq: 0)))
                    case .differenceSlice(let d):
                        learn(users: d.users, chats: d.chats, messages: d.newMessages)
                        peerCache.learn(.updates(.init(updates: d.otherUpdates, users: [], chats: [], date: 0, seq: 0)))
                    default: break
                }
            case let difference as Api.updates.ChannelDifference:
                switch difference {
                    case .channelDifference(let d): learn(users: d.users, chats: d.chats, messages: d.newMessages)
                    case .channelDifferenceTooLong(let d): learn(users: d.users, chats: d.chats, messages: d.messages)
                    case .channelDifferenceEmpty: break
                }
            case let invited as Api.messages.InvitedUsers:
                guard case .invitedUsers(let i) = invited else { return }
                peerCache.learn(i.updates)
            case let dialogs as Api.messages.PeerDialogs:
                guard case .peerDialogs(let d) = dialogs else { return }
                learn(users: d.users, chats: d.chats, messages: d.messages)
            default:
                guard learnChatPeers(from: result) else { return }
        }
        savePeers()
    }

    private func learn(users: [Api.User], chats: [Api.Chat], messages: [Api.Message]) {
        peerCache.learn(users: users, chats: chats)
        for message in messages { peerCache.learn(message: message) }
    }

    // MARK: Saving

    /// Saves the cache's changes, one save at a time (a save started while one runs follows it).
    func savePeers() {
        guard peerSave == nil, peerCache.hasChanges, let store = configuration.store else { return }
        let (changed, removed) = peerCache.takeChanges()
        peerSave = Task(executorPreference: taskExecutor) { [logger = configuration.logger] in
            do {
                try await store.save([.peers(changed: changed, removed: removed)])
            } catch {
                logger.warning("peers: saving \(changed.count) peers failed: \(error)")
            }
            await self.peersSaved()
        }
    }

    private func peersSaved() {
        peerSave = nil
        savePeers()
    }

    /// Waits for the saves under way and writes what is left (on close).
    func flushPeers() async {
        savePeers()
        while let save = peerSave {
            await save.value
        }
    }
}

/// A message list's messages, users and chats, whatever its constructor.
struct MessagePage: Sendable {
    var messages: [Api.Message] = []
    var users: [Api.User] = []
    var chats: [Api.Chat] = []
    /// The total a slice reports (nil: the list is whole).
    var count: Int32?

    init(_ result: Api.messages.Messages) {
        switch result {
            case .messages(let m): (messages, users, chats) = (m.messages, m.users, m.chats)
            case .messagesSlice(let m): (messages, users, chats, count) = (m.messages, m.users, m.chats, m.count)
            case .channelMessages(let m): (messages, users, chats, count) = (m.messages, m.users, m.chats, m.count)
            case .messagesNotModified(let m): count = m.count
        }
    }
}
