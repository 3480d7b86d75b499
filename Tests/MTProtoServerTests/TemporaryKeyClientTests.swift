// `TelegramClient` with temporary keys against the test Telegram on loopback: calls run as the signed-in account over
// a temporary key bound to the permanent one; a key near its expiry (an injected clock moved forward) is replaced by
// a new bound key and never used again; a key the server let expire is answered −404 and replaced while the call
// in flight goes through; a permanent key the server no longer knows is found out through the binding's refusal and
// replaced, at the first connection or at a renewal, while a refusal for a key it knows ends the client and keeps
// the key; and a client reopened from its SQLite file reuses its temporary key with no exchange.
// What happened is read from the server: its key store, its bindings and the key each request arrived under.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import Synchronization
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

/// The wall clock plus an offset a test moves forward.
final class TestClock: Sendable {
    private let offset = Mutex<Double>(0)

    func advance(by seconds: Double) { offset.withLock { $0 += seconds } }

    var now: @Sendable () -> Double { { [self] in Date().timeIntervalSince1970 + offset.withLock { $0 } } }
}

/// The requests a server handled, with the key each arrived under.
final class HandledLog: Sendable {
    private let entries = Mutex<[(method: String, authKeyID: UInt64)]>([])
    private let expired = Mutex<[UInt64]>([])
    private let sessionKeys = Mutex<[UInt64]>([])
    private let unknownKeys = Mutex<[UInt64]>([])

    /// The methods, less the client's own catch-up (`updates.getState`/`getDifference`, asked whenever the home DC
    /// is ready, at a time of the client's choosing).
    static func calls(_ handled: [(method: String, authKeyID: UInt64)]) -> [String] {
        handled.map(\.method).filter { !$0.hasPrefix("updates.") }
    }

    var record: @Sendable (MTProtoTestServer.ConnectionReport) -> Void {
        { [self] report in
            switch report.kind {
            case .event(.handled(let method, let key, _)): entries.withLock { $0.append((method, key.authKeyID)) }
            case .event(.authKeyExpired(let id)): expired.withLock { $0.append(id) }
            case .event(.sessionCreated(let key)): sessionKeys.withLock { $0.append(key.authKeyID) }
            case .closed(.unknownAuthKey(let id)?): unknownKeys.withLock { $0.append(id) }
            default: break
            }
        }
    }

    /// Takes what was logged so far.
    func take() -> [(method: String, authKeyID: UInt64)] {
        entries.withLock { entries in
            defer { entries.removeAll() }
            return entries
        }
    }

    var expiredKeys: [UInt64] { expired.withLock { $0 } }
    /// The auth keys sessions were created under, in order.
    var sessionsCreated: [UInt64] { sessionKeys.withLock { $0 } }
    /// Keys answered −404 because the server did not know them.
    var unknownKeysSeen: [UInt64] { unknownKeys.withLock { $0 } }
}

@Suite struct TemporaryKeyClientTests {
    static func me(_ client: TelegramClient) async throws -> Int64 {
        let users = try await client.invoke(Api.functions.users.getUsers(id: [.inputUserSelf]))
        guard case .user(let me)? = users.first, me.isSelf else { throw HarnessFailure(description: "\(users)") }
        return me.id
    }

    static func keys(_ store: MemorySessionStore) async throws -> (permanent: UInt64, temporary: TemporaryAuthKey) {
        let state = await store.load()
        let permanent = try #require(state.permanentKeys[2]), temporary = try #require(state.temporaryKeys[2])
        return (permanent.authKey.idValue, temporary)
    }

    /// A test Telegram logging what it handles into `log`, and a client with temporary keys signed in as Alice.
    static func signedIn(seed: UInt64, policy: TemporaryKeyPolicy, log: HandledLog,
                         serverClock: @escaping @Sendable () -> Double = ServerContext.wallClock,
                         clientClock: @escaping @Sendable () -> Double = MTProtoClient.wallClock) async throws
        -> (telegram: LocalTelegram, client: TelegramClient, store: MemorySessionStore, alice: Int64)
    {
        let telegram = try await LocalTelegram.start(seed: seed, clock: serverClock, onEvent: log.record)
        let store = MemorySessionStore()
        let client = try telegram.client(store: store, temporaryKeys: policy, clock: clientClock)
        guard case .user(let alice) = try await LocalTelegram.signIn(client, phone: "9996620001") else {
            throw HarnessFailure(description: "no user")
        }
        // The sign-in starts the client's update sequence with updates.getState; let it finish, so it is not
        // handled (under this key) in the middle of what a test looks at next.
        for _ in 0..<500 where await client.updateBox == nil { try await Task.sleep(for: .milliseconds(10)) }
        guard await client.updateBox != nil else { throw HarnessFailure(description: "updates.getState unanswered") }
        return (telegram, client, store, alice.id)
    }

    @Test func callsRunAsTheSignedInAccountOverABoundTemporaryKey() async throws {
        let log = HandledLog()
        let (telegram, client, store, alice) = try await Self.signedIn(
            seed: 110, policy: TemporaryKeyPolicy(lifetime: 3600, renewBefore: 600), log: log)
        #expect(try await Self.me(client) == alice)

        let (permanent, temporary) = try await Self.keys(store)
        let context = try #require(telegram.server.contexts[2])
        #expect(context.keys.entry(id: temporary.key.authKey.idValue)?.binding?.permanentKeyID == permanent)
        #expect(context.keys.entry(id: temporary.key.authKey.idValue)?.expiresAt == temporary.expiresAt)
        // The login under the temporary key logged the permanent key in.
        #expect(telegram.service.userID(authKeyID: permanent, dcID: 2) == alice)
        // Every request arrived under the temporary key, the binding first; none under the permanent key.
        let handled = log.take()
        #expect(handled.first?.method == "auth.bindTempAuthKey")
        #expect(handled.map(\.method).contains("users.getUsers"))
        #expect(handled.allSatisfy { $0.authKeyID == temporary.key.authKey.idValue })
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func aTemporaryKeyNearItsExpiryIsReplacedByANewBoundOne() async throws {
        let clock = TestClock(), log = HandledLog()
        let (telegram, client, store, alice) = try await Self.signedIn(
            seed: 111, policy: TemporaryKeyPolicy(lifetime: 120, renewBefore: 40), log: log, serverClock: clock.now,
            clientClock: clock.now)
        let (permanent, first) = try await Self.keys(store)
        let context = try #require(telegram.server.contexts[2])
        let created = context.keys.createdCount
        #expect(try await Self.me(client) == alice)
        #expect(context.keys.createdCount == created, "a fresh key is kept")

        // 30 s left, below renewBefore: the next call waits for a new key, made and bound, and goes over it.
        _ = log.take()
        clock.advance(by: 90)
        #expect(try await Self.me(client) == alice)
        let (_, second) = try await Self.keys(store)
        let firstID = first.key.authKey.idValue, secondID = second.key.authKey.idValue
        #expect(secondID != firstID && second.expiresAt > first.expiresAt)
        #expect(context.keys.createdCount == created + 1, "one exchange: the temporary key; the permanent one is kept")
        #expect(context.keys.boundTemporaryKey(of: permanent) == secondID)
        #expect(context.keys.entry(id: firstID)?.binding == nil, "the new binding took the old key's")
        for _ in 0..<3 { #expect(try await Self.me(client) == alice) }
        let handled = log.take()
        #expect(HandledLog.calls(handled).first == "auth.bindTempAuthKey")
        #expect(handled.filter { $0.method == "users.getUsers" }.count == 4)
        #expect(handled.allSatisfy { $0.authKeyID == secondID }, "the old key is no longer used")
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func aTemporaryKeyTheServerLetExpireIsReplacedAndTheCallGoesThrough() async throws {
        let serverClock = TestClock(), log = HandledLog()
        let (telegram, client, store, alice) = try await Self.signedIn(
            seed: 112, policy: TemporaryKeyPolicy(lifetime: 120, renewBefore: 40), log: log, serverClock: serverClock.now)
        let (permanent, first) = try await Self.keys(store)
        let context = try #require(telegram.server.contexts[2])

        // Past its expiry on the server's clock only: the client still thinks it fresh and sends under it.
        _ = log.take()
        serverClock.advance(by: 130)
        #expect(try await Self.me(client) == alice)
        let (_, second) = try await Self.keys(store)
        let firstID = first.key.authKey.idValue, secondID = second.key.authKey.idValue
        #expect(log.expiredKeys == [firstID])
        #expect(secondID != firstID)
        #expect(context.keys.entry(id: firstID) == nil)
        #expect(context.keys.boundTemporaryKey(of: permanent) == secondID)
        let handled = log.take()
        #expect(HandledLog.calls(handled) == ["auth.bindTempAuthKey", "users.getUsers"])
        #expect(handled.allSatisfy { $0.authKeyID == secondID })
        await client.close()
        try await telegram.server.shutdown()
    }

    /// A stored permanent key the server does not know: the binding is refused (ENCRYPTED_MESSAGE_INVALID), a
    /// `ping` under the permanent key gets −404, so the client makes a new permanent key and a new temporary key,
    /// binds them and the call goes through (no call ever went out unbound); the new keys replace the old in the store.
    @Test func aPermanentKeyTheServerNoLongerKnowsIsReplaced() async throws {
        let log = HandledLog()
        let telegram = try await LocalTelegram.start(seed: 114, onEvent: log.record)
        let unknown = StoredAuthKey(authKey: try AuthKey(SeededRandom(seed: 115).bytes(256)), salt: 0, timeOffset: 0)
        let store = MemorySessionStore(SessionState(permanentKeys: [2: unknown]))
        let client = try telegram.client(store: store, temporaryKeys: TemporaryKeyPolicy(lifetime: 3600, renewBefore: 600))
        guard case .nearestDc = try await client.invoke(Api.functions.help.getNearestDc()) else {
            throw HarnessFailure(description: "no nearestDc")
        }
        let (permanent, temporary) = try await Self.keys(store)
        #expect(permanent != unknown.authKey.idValue)
        let context = try #require(telegram.server.contexts[2])
        #expect(context.keys.entry(id: permanent)?.isTemporary == false)
        #expect(context.keys.boundTemporaryKey(of: permanent) == temporary.key.authKey.idValue)
        let handled = log.take()
        #expect(HandledLog.calls(handled) == ["auth.bindTempAuthKey", "auth.bindTempAuthKey", "help.getNearestDc"])
        #expect(handled.last?.authKeyID == temporary.key.authKey.idValue)
        #expect(log.unknownKeysSeen == [unknown.authKey.idValue], "the probe under the old key was answered −404")
        await client.close()
        try await telegram.server.shutdown()
    }

    /// A signed-in client whose permanent key the server forgets (the session was terminated elsewhere): the next
    /// key renewal finds out, makes new keys, and the account's calls now fail as unregistered instead of the client
    /// ending; the old key is not used again.
    @Test func aLoggedOutPermanentKeyIsReplacedAtTheNextRenewal() async throws {
        let clock = TestClock(), log = HandledLog()
        let (telegram, client, store, alice) = try await Self.signedIn(
            seed: 116, policy: TemporaryKeyPolicy(lifetime: 120, renewBefore: 40), log: log, serverClock: clock.now,
            clientClock: clock.now)
        #expect(try await Self.me(client) == alice)
        let (oldPermanent, _) = try await Self.keys(store)
        let context = try #require(telegram.server.contexts[2])
        #expect(context.keys.remove(id: oldPermanent))

        clock.advance(by: 90)  // below renewBefore: the next call waits for a new temporary key
        await #expect {
            _ = try await Self.me(client)
        } throws: { error in
            guard case MTProtoClientError.rpc(let refusal) = error else { return false }
            return refusal.code == 401
        }
        let (newPermanent, temporary) = try await Self.keys(store)
        #expect(newPermanent != oldPermanent)
        #expect(context.keys.boundTemporaryKey(of: newPermanent) == temporary.key.authKey.idValue)
        #expect(log.take().allSatisfy { $0.authKeyID != oldPermanent })
        #expect(log.unknownKeysSeen == [oldPermanent])
        await client.close()
        try await telegram.server.shutdown()
    }

    /// A binding refused with ENCRYPTED_MESSAGE_INVALID although the server knows the permanent key (injected here):
    /// the `ping` under the permanent key is answered, so the refusal ends the client and the permanent key is kept.
    @Test func aRefusalForAKnownPermanentKeyKeepsTheKey() async throws {
        let log = HandledLog()
        let (telegram, client, store, _) = try await Self.signedIn(
            seed: 117, policy: TemporaryKeyPolicy(lifetime: 3600, renewBefore: 600), log: log)
        await client.close()
        let (permanent, _) = try await Self.keys(store)
        var state = await store.load()
        state.temporaryKeys = [:]
        let reopened = MemorySessionStore(state)
        telegram.server.faults = try FaultPlan(parsing: "error=auth.bindTempAuthKey:400:ENCRYPTED_MESSAGE_INVALID")
        let second = try telegram.client(store: reopened, temporaryKeys: TemporaryKeyPolicy(lifetime: 3600, renewBefore: 600))
        await #expect {
            _ = try await second.invoke(Api.functions.help.getNearestDc())
        } throws: { error in
            guard case MTProtoClientError.connection(.bindingRefused(let refusal)) = error else { return false }
            return refusal.message == "ENCRYPTED_MESSAGE_INVALID"
        }
        #expect(await reopened.load().permanentKeys[2]?.authKey.idValue == permanent, "a key the server knows is kept")
        #expect(telegram.server.contexts[2]?.keys.entry(id: permanent) != nil)
        #expect(log.sessionsCreated.last == permanent, "the probe: a session under the permanent key itself")
        #expect(log.unknownKeysSeen.isEmpty)
        await second.close()
        try await telegram.server.shutdown()
    }

    @Test func aClientReopenedFromSQLiteReusesItsTemporaryKey() async throws {
        let log = HandledLog()
        let telegram = try await LocalTelegram.start(seed: 113, onEvent: log.record)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pfs-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let policy = TemporaryKeyPolicy(lifetime: 3600, renewBefore: 600)
        let firstStore = try await SQLiteSessionStore.open(path: path)
        let first = try telegram.client(store: firstStore, temporaryKeys: policy)
        guard case .user(let alice) = try await LocalTelegram.signIn(first, phone: "9996620001") else { return }
        await first.close()
        try await firstStore.close()
        let created = telegram.server.contexts.mapValues(\.keys.createdCount)

        let store = try await SQLiteSessionStore.open(path: path)
        let stored = try #require(try await store.load().temporaryKeys[2])
        let reopened = try telegram.client(store: store, temporaryKeys: policy)
        _ = log.take()
        #expect(try await Self.me(reopened) == alice.id)
        #expect(telegram.server.contexts.mapValues(\.keys.createdCount) == created, "no exchange")
        #expect(try await store.load().temporaryKeys[2] == stored)
        let handled = log.take()
        #expect(HandledLog.calls(handled) == ["users.getUsers"], "no new binding either")
        #expect(handled.allSatisfy { $0.authKeyID == stored.key.authKey.idValue })
        await reopened.close()
        try await store.close()
        try await telegram.server.shutdown()
    }
}
