// The peer cache end to end on the test Telegram, whose access hashes differ per viewer: a resolved username survives
// a reopen from SQLite (the server handles no second contacts.resolveUsername), a peer first seen in a pushed update
// is reachable, another account's hash is refused by the server (PEER_ID_INVALID, USER_ID_INVALID, CHANNEL_INVALID)
// while the client carries on, and a `min` user in a group neither replaces a full hash nor stays unreachable.
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import Synchronization
import TelegramApi
import TelegramClient
import TelegramSession
import Testing

/// Counts the methods a test Telegram handled, and those it answered with an error, by name.
final class MethodCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func record(_ report: MTProtoTestServer.ConnectionReport) {
        if case .opened = report.kind { counts.withLock { $0["connections", default: 0] += 1 } }
        guard case .event(.handled(let method, _, let error)) = report.kind else { return }
        counts.withLock {
            $0[method, default: 0] += 1
            if let error { $0["\(method) \(error.message)", default: 0] += 1 }
        }
    }

    /// Calls of `method`, or with `error` those answered with that error message ("connections": those opened).
    func count(_ method: String, error: String? = nil) -> Int {
        counts.withLock { $0[error.map { "\(method) \($0)" } ?? method] ?? 0 }
    }
}

/// A client's typed events as they come.
actor TypedEventLog {
    private(set) var events: [UpdateEvent] = []

    init(_ client: TelegramClient) {
        let stream = client.events
        Task { for await event in stream { await self.append(event) } }
    }

    private func append(_ event: UpdateEvent) { events.append(event) }

    /// The first event `match` picks (waiting at most 30 s: a bound against a hang, not a timing).
    func first<T>(_ match: (UpdateEvent) -> T?) async throws -> T {
        for _ in 0..<3_000 {
            if let found = events.lazy.compactMap(match).first { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "no such event among \(events.count)")
    }
}

/// The RPC error `body` fails with.
func rpcError(_ body: () async throws -> Void) async -> RPCError? {
    do {
        try await body()
    } catch MTProtoClientError.rpc(let error) {
        return error
    } catch {
        Issue.record("not an rpc_error: \(error)")
    }
    return nil
}

@Suite struct PeerCacheClientTests {
    static func send(_ client: TelegramClient, to peer: Api.InputPeer, _ text: String) async throws -> Api.Updates {
        try await client.invoke(Api.functions.messages.sendMessage(
            peer: peer, message: text, randomId: text.utf8.reduce(Int64(41)) { $0 &* 31 &+ Int64($1) }))
    }

    @Test func aResolvedUsernameIsUsedAfterAReopenWithoutResolvingAgain() async throws {
        let counter = MethodCounter()
        let telegram = try await LocalTelegram.start(seed: 301, onEvent: counter.record)
        let path = NSTemporaryDirectory() + "peers-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var store = try await SQLiteSessionStore.open(path: path)
        var alice = try telegram.client(store: store)
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        let bob = try await alice.resolve(username: "bob_test")
        #expect(try await alice.resolve(username: "@Bob_Test") == bob)
        #expect(counter.count("contacts.resolveUsername") == 1)
        await alice.close()
        try await store.close()

        store = try await SQLiteSessionStore.open(path: path)
        alice = try telegram.client(store: store)
        #expect(try await alice.resolve(username: "bob_test") == bob)
        let peer = try await alice.inputPeer(for: bob)
        guard case .inputPeerUser = peer else { throw HarnessFailure(description: "\(peer)") }
        _ = try await Self.send(alice, to: peer, "after the reopen")
        #expect(counter.count("messages.sendMessage") == 1)
        #expect(counter.count("messages.sendMessage", error: "PEER_ID_INVALID") == 0)
        #expect(counter.count("contacts.resolveUsername") == 1)
        await alice.close()
        try await store.close()
        try await telegram.server.shutdown()
    }

    @Test func aPeerFirstSeenInAPushedUpdateIsReachable() async throws {
        let counter = MethodCounter()
        let telegram = try await LocalTelegram.start(seed: 302, onEvent: counter.record)
        try telegram.service.addUser(phone: "9996620003", firstName: "Carol", username: "carol_test")
        let alice = try telegram.client(), carol = try telegram.client()
        let log = TypedEventLog(alice)
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        _ = try await LocalTelegram.signIn(carol, phone: "9996620003")
        let aliceID = try await carol.resolve(username: "alice_test")
        _ = try await Self.send(carol, to: try await carol.inputPeer(for: aliceID), "hello alice")
        let sender = try await log.first { event -> PeerID? in
            guard case .newMessage(let m) = event, !m.outgoing else { return nil }
            return m.sender?.id
        }
        let peer = try await alice.inputPeer(for: sender)
        guard case .inputPeerUser(let carolPeer) = peer else { throw HarnessFailure(description: "\(peer)") }
        #expect(carolPeer.userId == telegram.service.user(phone: "9996620003"))
        _ = try await Self.send(alice, to: peer, "hello carol")
        // Only Carol looked anybody up.
        #expect(counter.count("contacts.resolveUsername") == 1)
        #expect(counter.count("messages.sendMessage") == 2)
        #expect(counter.count("messages.sendMessage", error: "PEER_ID_INVALID") == 0)
        for client in [alice, carol] { await client.close() }
        try await telegram.server.shutdown()
    }

    @Test func anotherAccountsHashIsRefusedByTheServer() async throws {
        let telegram = try await LocalTelegram.start(seed: 303)
        try telegram.service.addUser(phone: "9996620003", firstName: "Carol", username: "carol_test")
        let alice = try telegram.client(), bob = try telegram.client()
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        _ = try await LocalTelegram.signIn(bob, phone: "9996610002")
        let carol = try await alice.resolve(username: "carol_test")
        let created = try await alice.invoke(Api.functions.channels.createChannel(megagroup: true, title: "G", about: ""))
        guard case .updates(let made) = created, case .channel(let group)? = made.chats.first else {
            throw HarnessFailure(description: "\(created)")
        }
        let alicesPeer = try await alice.inputPeer(for: carol)
        let alicesUser = try await alice.inputUser(for: carol)
        let alicesChannel = try await alice.inputChannel(for: .channel(group.id))

        let refusedSend = await rpcError { _ = try await Self.send(bob, to: alicesPeer, "with alice's hash") }
        let refusedUser = await rpcError { _ = try await bob.invoke(Api.functions.users.getFullUser(id: alicesUser)) }
        let refusedChannel = await rpcError {
            _ = try await bob.invoke(Api.functions.channels.getChannels(id: [alicesChannel]))
        }
        #expect(refusedSend?.message == "PEER_ID_INVALID")
        #expect(refusedUser?.message == "USER_ID_INVALID")
        #expect(refusedChannel?.message == "CHANNEL_INVALID")

        // Bob's own hash for Carol differs, and works.
        let bobsPeer = try await bob.inputPeer(for: try await bob.resolve(username: "carol_test"))
        guard case .inputPeerUser(let mine) = bobsPeer, case .inputPeerUser(let theirs) = alicesPeer else {
            throw HarnessFailure(description: "\(bobsPeer)")
        }
        #expect(mine.accessHash != theirs.accessHash)
        _ = try await Self.send(bob, to: bobsPeer, "with bob's own hash")
        for client in [alice, bob] { await client.close() }
        try await telegram.server.shutdown()
    }

    /// Bob knows Carol's full hash (he resolved her) but has no chat with her, and knows nothing of Dave: in Alice's
    /// group both come to him as `min` users. Carol's hash stays; Dave is named through his message.
    @Test func aMinUserNeverReplacesAFullHashAndAMinOnlyUserIsReachable() async throws {
        let telegram = try await LocalTelegram.start(seed: 304)
        try telegram.service.addUser(phone: "9996620003", firstName: "Carol", username: "carol_test")
        try telegram.service.addUser(phone: "9996620004", firstName: "Dave", username: "dave_test")
        let alice = try telegram.client(), bob = try telegram.client()
        let carol = try telegram.client(), dave = try telegram.client()
        let bobLog = TypedEventLog(bob)
        for (client, phone) in [(alice, "9996620001"), (bob, "9996610002"), (carol, "9996620003"), (dave, "9996620004")] {
            _ = try await LocalTelegram.signIn(client, phone: phone)
        }
        let carolID = try await bob.resolve(username: "carol_test")
        guard case .inputPeerUser(let known) = try await bob.inputPeer(for: carolID) else {
            throw HarnessFailure(description: "no hash for Carol")
        }
        let created = try await alice.invoke(Api.functions.channels.createChannel(megagroup: true, title: "G", about: ""))
        guard case .updates(let made) = created, case .channel(let group)? = made.chats.first else {
            throw HarnessFailure(description: "\(created)")
        }
        var invited: [Api.InputUser] = []
        for name in ["bob_test", "carol_test", "dave_test"] {
            invited.append(try await alice.inputUser(for: try await alice.resolve(username: name)))
        }
        _ = try await alice.invoke(Api.functions.channels.inviteToChannel(
            channel: try await alice.inputChannel(for: .channel(group.id)), users: invited))
        for (client, text) in [(carol, "carol in the group"), (dave, "dave in the group")] {
            _ = try await Self.send(client, to: try await Self.inputPeer(client, channel: group.id), text)
        }
        let seen = try await bobLog.first { event -> [Api.User]? in
            guard case .newMessage(let m) = event, case .message(let message) = m.message,
                  message.message == "dave in the group" else { return nil }
            return [m.sender?.user].compactMap { $0 }
        }
        let carolSeen = try await bobLog.first { event -> Api.User? in
            guard case .newMessage(let m) = event, case .message(let message) = m.message,
                  message.message == "carol in the group" else { return nil }
            return m.sender?.user
        }
        // The server did send both as min: the rule was put to the test.
        guard case .user(let carolMin) = carolSeen, case .user(let daveMin)? = seen.first else {
            throw HarnessFailure(description: "senders not carried")
        }
        #expect(carolMin.min && daveMin.min)
        #expect(carolMin.accessHash != known.accessHash)
        #expect(try await bob.cachedPeer(carolID)?.accessHash == known.accessHash)
        guard case .inputPeerUser(let still) = try await bob.inputPeer(for: carolID) else {
            throw HarnessFailure(description: "Carol lost her hash")
        }
        #expect(still.accessHash == known.accessHash)
        _ = try await Self.send(bob, to: .inputPeerUser(still), "to carol by her full hash")

        let daveInput = try await bob.inputPeer(for: .user(daveMin.id))
        guard case .inputPeerUserFromMessage(let viaMessage) = daveInput else {
            throw HarnessFailure(description: "Dave named as \(daveInput)")
        }
        #expect(viaMessage.userId == daveMin.id)
        _ = try await Self.send(bob, to: daveInput, "to dave through his message")
        for client in [alice, bob, carol, dave] { await client.close() }
        try await telegram.server.shutdown()
    }

    /// A client's input for a channel it was invited to (the invitation's push feeds its cache; waits at most 10 s).
    static func inputPeer(_ client: TelegramClient, channel: Int64) async throws -> Api.InputPeer {
        for _ in 0..<1_000 {
            if let peer = try? await client.inputPeer(for: .channel(channel)) { return peer }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "channel \(channel) never reached the cache")
    }
}
