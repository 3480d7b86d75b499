// The peer cache's rules, sans-IO: a `min` user or channel never replaces a full hash, a peer seen only as `min` is
// named through the message it was seen in (core.telegram.org/api/min), usernames resolve from the cache, the
// bound evicts the least recently used (never the account itself), and records survive an SQLite store's reopen.
import Foundation
import MTProtoClient
import TLRuntime
import TelegramApi
import TelegramClient
import TelegramSession
import Testing

@Suite struct PeerCacheTests {
    static func user(_ id: Int64, hash: Int64?, min: Bool = false, username: String? = nil, isSelf: Bool = false,
                     phone: String? = nil) -> Api.User {
        .user(.init(isSelf: isSelf, min: min, id: id, accessHash: hash, firstName: "U\(id)", username: username, phone: phone))
    }

    static func channel(_ id: Int64, hash: Int64?, min: Bool = false) -> Api.Chat {
        .channel(.init(megagroup: true, min: min, id: id, accessHash: hash, title: "C\(id)", photo: .chatPhotoEmpty, date: 0))
    }

    static func message(_ id: Int32, from user: Int64, inChannel channel: Int64) -> Api.Message {
        .message(.init(id: id, fromId: .peerUser(.init(userId: user)), peerId: .peerChannel(.init(channelId: channel)),
                       date: 0, message: "m"))
    }

    /// The forms a peer is written in read back: what `description` prints (`user#ID`), and `kind:ID`.
    @Test func peerIDsReadTheFormsTheyAreWrittenIn() {
        for peer in [PeerID.user(1_000_001), .chat(5), .channel(Int64.max)] {
            #expect(PeerID(peer.description) == peer)
            #expect(PeerID("\(peer.kind):\(peer.id)") == peer)
        }
        for text in ["user#", "user:-5", "user:0", "user:+5", "user:5x", "group:5", "user 5", "5", "", "#5", "channel:99999999999999999999",
                     "user:٣"] {
            #expect(PeerID(text) == nil, "\(text)")
        }
    }

    @Test func aMinUserNeverReplacesAFullHash() {
        var cache = PeerCache()
        cache.learn(Self.user(7, hash: 1111, username: "seven"))
        cache.learn(Self.user(7, hash: 9999, min: true, username: "seven"))
        cache.learn(users: [], chats: [Self.channel(70, hash: 2222)])
        cache.learn(users: [], chats: [Self.channel(70, hash: 8888, min: true)])
        guard case .inputPeerUser(let user)? = cache.inputPeer(for: .user(7)),
              case .inputPeerChannel(let channel)? = cache.inputPeer(for: .channel(70)) else {
            Issue.record("not named by hash")
            return
        }
        #expect(user.accessHash == 1111)
        #expect(channel.accessHash == 2222)
        // Nor does a min user's message make it "seen only in a message".
        cache.learn(message: Self.message(5, from: 7, inChannel: 70))
        #expect(cache.entry(.user(7))?.source == nil)
    }

    @Test func aMinOnlyPeerIsNamedThroughTheMessageItWasSeenIn() throws {
        var cache = PeerCache()
        cache.learn(users: [Self.user(8, hash: 5555, min: true)], chats: [Self.channel(80, hash: 3333)])
        // The min constructor's hash is not the account's: nothing names the user yet.
        #expect(cache.inputPeer(for: .user(8)) == nil)
        cache.learn(message: Self.message(41, from: 8, inChannel: 80))
        guard case .inputPeerUserFromMessage(let from)? = cache.inputPeer(for: .user(8)),
              case .inputPeerChannel(let via) = from.peer,
              case .inputUserFromMessage(let input)? = cache.inputUser(for: .user(8)) else {
            Issue.record("not named through the message: \(String(describing: cache.inputPeer(for: .user(8))))")
            return
        }
        #expect((from.userId, from.msgId, via.channelId, via.accessHash) == (8, 41, 80, 3333))
        #expect((input.userId, input.msgId) == (8, 41))
        // Once a full user comes, its hash names it.
        cache.learn(Self.user(8, hash: 4444))
        guard case .inputPeerUser(let full)? = cache.inputPeer(for: .user(8)) else {
            Issue.record("a full user did not give its hash")
            return
        }
        #expect(full.accessHash == 4444)
    }

    @Test func usernamesResolveFromTheCacheInAnyCase() {
        var cache = PeerCache()
        cache.learn(Self.user(9, hash: 1, username: "Nine_User"))
        #expect(cache.peer(username: "@nine_user") == .user(9))
        #expect(cache.peer(username: "NINE_USER") == .user(9))
        // A changed username no longer names the old one.
        cache.learn(Self.user(9, hash: 1, username: "renamed"))
        #expect(cache.peer(username: "nine_user") == nil)
        #expect(cache.peer(username: "renamed") == .user(9))
        #expect(cache.inputPeer(for: .user(10)) == nil)
    }

    @Test func theBoundEvictsTheLeastRecentlyUsedButNeverSelf() {
        var cache = PeerCache(capacity: 16)
        cache.learn(Self.user(1, hash: 1, isSelf: true))
        for id in Int64(2)...12 { cache.learn(Self.user(id, hash: id, username: "user\(id)")) }
        _ = cache.takeChanges()
        // User 2 is the oldest seen, but used now: the next oldest go first.
        _ = cache.inputPeer(for: .user(2))
        for id in Int64(13)...17 { cache.learn(Self.user(id, hash: id)) }
        #expect(cache.count == 14)  // 17 > 16: down to nine tenths of 16
        #expect(cache.entry(.user(1)) != nil)
        #expect(cache.entry(.user(2)) != nil)
        #expect(cache.entry(.user(3)) == nil && cache.entry(.user(4)) == nil && cache.entry(.user(5)) == nil)
        #expect(cache.peer(username: "user3") == nil)
        #expect(cache.inputPeer(for: .user(1)) == .inputPeerSelf)
        let changes = cache.takeChanges()
        #expect(changes.removed.map(\.id) == [3, 4, 5])
        #expect(changes.changed.map(\.id) == Array(13...17))
    }

    @Test func recordsSurviveReopeningTheSQLiteStoreOwnerOnly() async throws {
        let path = NSTemporaryDirectory() + "peers-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var cache = PeerCache()
        cache.learn(users: [Self.user(1, hash: 11, username: "me_user", isSelf: true, phone: "9996620001"),
                            Self.user(2, hash: 22, username: "two"), Self.user(3, hash: 33, min: true)],
                    chats: [Self.channel(30, hash: 300)])
        cache.learn(message: Self.message(7, from: 3, inChannel: 30))
        var store = try await SQLiteSessionStore.open(path: path)
        let (changed, removed) = cache.takeChanges()
        try await store.save([.peers(changed: changed, removed: removed)])
        try await store.save([.peers(changed: [], removed: [PeerRecord.Key(kind: .user, id: 2)])])
        try await store.close()
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        store = try await SQLiteSessionStore.open(path: path)
        var restored = PeerCache()
        restored.restore(Array(try await store.load().peers.values))
        try await store.close()
        #expect(restored.count == 3)
        #expect(restored.entry(.user(2)) == nil)
        #expect(restored.inputPeer(for: .user(1)) == .inputPeerSelf)
        #expect(restored.entry(.user(1))?.phone == "9996620001")
        #expect(restored.peer(username: "me_user") == .user(1))
        guard case .inputPeerUserFromMessage(let from)? = restored.inputPeer(for: .user(3)) else {
            Issue.record("the message source was not kept")
            return
        }
        #expect((from.userId, from.msgId) == (3, 7))
        #expect(restored.inputPeer(for: .channel(30)) == cache.inputPeer(for: .channel(30)))
    }
}

extension Api.InputPeer: Equatable {
    /// Equal when serialized alike (tests only).
    public static func == (lhs: Api.InputPeer, rhs: Api.InputPeer) -> Bool {
        let a = Buffer(), b = Buffer()
        lhs.serialize(a, true)
        rhs.serialize(b, true)
        return a.bytes == b.bytes
    }
}
