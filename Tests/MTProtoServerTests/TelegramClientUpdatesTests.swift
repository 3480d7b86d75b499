// Catching up on the test Telegram with two clients: Alice writes to Bob while Bob's client is closed, while its
// connection is down, and past a push the server withholds; Bob's `updates` stream then yields exactly Alice's
// messages, once and in order, with `.updating` reported before `.ready` (core.telegram.org/api/updates).
import Foundation
import MTProtoClient
import MTProtoServer
import TelegramApi
import TelegramClient
import TelegramSession
import Testing

/// Reads message texts off a client's update stream, in order.
actor MessageReader {
    private var texts: [String] = []
    private var task: Task<Void, Never>?

    init(_ client: TelegramClient) {
        let updates = client.updates
        Task { await self.start(updates) }
    }

    private func start(_ updates: AsyncStream<Api.Updates>) {
        task = Task {
            for await update in updates { self.append(UpdatesStateTests.texts(update)) }
        }
    }

    private func append(_ more: [String]) { texts += more }

    /// Waits (at most 10 s) until `count` texts were read, and returns all read so far.
    func first(_ count: Int) async throws -> [String] {
        for _ in 0..<1_000 {
            if texts.count >= count { return texts }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "only \(texts) read")
    }

    func all() -> [String] { texts }

    func stop() { task?.cancel() }
}

/// Records a client's connection states.
actor StateLog {
    private(set) var seen: [TelegramClient.ConnectionState] = []

    init(_ client: TelegramClient) {
        let states = client.connectionStates
        Task { for await state in states { await self.append(state) } }
    }

    private func append(_ state: TelegramClient.ConnectionState) { seen.append(state) }

    /// Waits (at most 10 s) until the states from `index` on hold `steps` in that order (others may come between),
    /// and returns all seen.
    func reached(_ steps: [(TelegramClient.ConnectionState) -> Bool], after index: Int = 0) async throws
        -> [TelegramClient.ConnectionState]
    {
        for _ in 0..<1_000 {
            var next = 0
            for state in seen.dropFirst(index) where next < steps.count && steps[next](state) { next += 1 }
            if next == steps.count { return seen }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "not reached: \(seen)")
    }

    /// How many states were seen once the client is `.ready` and nothing changed for 100 ms (at most 10 s).
    func settled() async throws -> Int {
        var last = -1
        for _ in 0..<100 {
            if seen.count == last, seen.last == .ready { return last }
            last = seen.count
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessFailure(description: "not settled: \(seen)")
    }

    /// `.updating`, then `.ready`, from `index` on.
    func caughtUp(after index: Int = 0) async throws -> [TelegramClient.ConnectionState] {
        try await reached([{ $0 == .updating }, { $0 == .ready }], after: index)
    }
}

/// Alice and Bob signed in on a test Telegram (Bob's home is DC 1), Bob's box saved, and Alice's peer for Bob.
struct Conversation {
    let telegram: LocalTelegram
    let alice: TelegramClient
    let bob: TelegramClient
    let bobStore: any SessionStore
    let peer: Api.InputPeer
    /// The box Bob's getState gave after the sign-in.
    let box: UpdateBox

    /// With `sqlitePath`, Bob's store is an SQLite file there; else in memory.
    static func start(seed: UInt64, sqlitePath: String? = nil) async throws -> Conversation {
        let telegram = try await LocalTelegram.start(seed: seed)
        let alice = try telegram.client()
        let bobStore: any SessionStore = if let sqlitePath {
            try await SQLiteSessionStore.open(path: sqlitePath)
        } else {
            MemorySessionStore()
        }
        let bob = try telegram.client(store: bobStore)
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        _ = try await LocalTelegram.signIn(bob, phone: "9996610002")
        let box = try await savedBox(in: bobStore)
        let resolved = try await alice.invoke(Api.functions.contacts.resolveUsername(username: "bob_test"))
        guard case .resolvedPeer(let found) = resolved, case .user(let user)? = found.users.first,
              let hash = user.accessHash else { throw HarnessFailure(description: "\(resolved)") }
        return Conversation(telegram: telegram, alice: alice, bob: bob, bobStore: bobStore,
                            peer: .inputPeerUser(.init(userId: user.id, accessHash: hash)), box: box)
    }

    /// Waits until a box is saved in `store` (at most 10 s).
    static func savedBox(in store: any SessionStore) async throws -> UpdateBox {
        for _ in 0..<1_000 {
            if let box = try await store.load().updateBox { return box }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "no update box saved")
    }

    /// Alice sends each text to Bob (the texts of a test differ, so their random_ids do).
    func send(_ texts: [String]) async throws {
        for text in texts {
            let randomID = text.utf8.reduce(Int64(17)) { $0 &* 31 &+ Int64($1) }
            _ = try await alice.invoke(Api.functions.messages.sendMessage(peer: peer, message: text, randomId: randomID))
        }
    }

    /// After `read` saw `expected`, nothing more comes within 200 ms.
    static func nothingMore(_ reader: MessageReader, than expected: [String]) async throws {
        #expect(try await reader.first(expected.count) == expected)
        try await Task.sleep(for: .milliseconds(200))
        #expect(await reader.all() == expected)
        await reader.stop()
    }

    func close() async throws {
        for client in [alice, bob] { await client.close() }
        try await (bobStore as? SQLiteSessionStore)?.close()
        try await telegram.server.shutdown()
    }
}

@Suite struct TelegramClientUpdatesTests {
    /// In memory and in an SQLite file.
    @Test(arguments: [false, true])
    func aReopenedClientYieldsWhatWasSentWhileItWasClosed(sqlite: Bool) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("up-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let chat = try await Conversation.start(seed: sqlite ? 94 : 91, sqlitePath: sqlite ? path : nil)
        let before = MessageReader(chat.bob)
        try await chat.send(["one"])
        #expect(try await before.first(1) == ["one"])
        await before.stop()
        await chat.bob.close()
        let closedAt = try await Conversation.savedBox(in: chat.bobStore)
        #expect(closedAt.pts == chat.box.pts + 1)

        try await chat.send(["two", "three", "four"])
        let reopened = try chat.telegram.client(store: chat.bobStore)
        let states = StateLog(reopened)
        let reader = MessageReader(reopened)
        try await reopened.connect()
        #expect(try await reader.first(3) == ["two", "three", "four"])
        let seen = try await states.caughtUp()
        #expect(seen.first == .connecting && seen.contains(.connected))
        // Later pushes continue the sequence, each once.
        try await chat.send(["five"])
        try await Conversation.nothingMore(reader, than: ["two", "three", "four", "five"])
        #expect(await reopened.updateBox?.pts == closedAt.pts + 4)
        await reopened.close()
        #expect(try await Conversation.savedBox(in: chat.bobStore).pts == closedAt.pts + 4)
        try await chat.close()
    }

    @Test func aDroppedConnectionCatchesUpOnceAndInOrder() async throws {
        let chat = try await Conversation.start(seed: 92)
        let states = StateLog(chat.bob)
        let reader = MessageReader(chat.bob)
        let mark = try await states.settled()
        await chat.bob.dropHomeConnection()
        try await chat.send(["a", "b", "c"])
        // Whether each came pushed (to the resumed session) or from getDifference, it comes once.
        #expect(try await reader.first(3) == ["a", "b", "c"])
        _ = try await states.reached([{ if case .waitingForNetwork = $0 { true } else { false } },
                                      { $0 == .updating }, { $0 == .ready }], after: mark)
        try await chat.send(["d"])
        try await Conversation.nothingMore(reader, than: ["a", "b", "c", "d"])
        try await chat.close()
    }

    /// A log-out forgets the box (stored as an empty document); the next sign-in starts from `updates.getState`,
    /// so what came while logged out is not fetched and later pushes continue from the new state.
    @Test func aLogOutEndsTheSequenceAndASignInStartsItAfresh() async throws {
        let chat = try await Conversation.start(seed: 95)
        let reader = MessageReader(chat.bob)
        guard case .loggedOut = try await chat.bob.invoke(Api.functions.auth.logOut()) else {
            throw HarnessFailure(description: "no loggedOut")
        }
        #expect(await chat.bob.updateBox == nil)
        for _ in 0..<1_000 where try await chat.bobStore.load().updateBox != nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await chat.bobStore.load().updateBox == nil)
        try await chat.send(["while out"])
        _ = try await LocalTelegram.signIn(chat.bob, phone: "9996610002")
        let box = try await Conversation.savedBox(in: chat.bobStore)
        #expect(box.pts == chat.box.pts + 1)
        try await chat.send(["back"])
        try await Conversation.nothingMore(reader, than: ["back"])
        try await chat.close()
    }

    /// With `followsUpdates: false` the client asks for no `updates.*` at all — not after its sign-in, not when its
    /// home connection is back — and pushes still come out on `updates` as they arrive.
    @Test func aClientThatDoesNotFollowUpdatesAsksForNoneAndStillYieldsPushes() async throws {
        let log = HandledLog()
        let telegram = try await LocalTelegram.start(seed: 96, onEvent: log.record)
        let aliceStore = MemorySessionStore()
        let alice = try telegram.client(store: aliceStore, followsUpdates: false)
        let bob = try telegram.client()
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        _ = try await LocalTelegram.signIn(bob, phone: "9996610002")
        let states = StateLog(alice)
        let reader = MessageReader(alice)
        let resolved = try await bob.invoke(Api.functions.contacts.resolveUsername(username: "alice_test"))
        guard case .resolvedPeer(let found) = resolved, case .user(let user)? = found.users.first,
              let hash = user.accessHash else { throw HarnessFailure(description: "\(resolved)") }
        let peer = Api.InputPeer.inputPeerUser(.init(userId: user.id, accessHash: hash))
        _ = try await bob.invoke(Api.functions.messages.sendMessage(peer: peer, message: "one", randomId: 1))
        #expect(try await reader.first(1) == ["one"])
        let mark = try await states.settled()
        await alice.dropHomeConnection()
        _ = try await states.reached([{ if case .waitingForNetwork = $0 { true } else { false } }, { $0 == .ready }],
                                     after: mark)
        _ = try await bob.invoke(Api.functions.messages.sendMessage(peer: peer, message: "two", randomId: 2))
        try await Conversation.nothingMore(reader, than: ["one", "two"])
        #expect(await alice.updateBox == nil)
        #expect(await !states.seen.contains(.updating))

        let aliceKey = try #require(await aliceStore.load().permanentKeys[2]).authKey.idValue
        let handled = log.take()
        let alices = handled.filter { $0.authKeyID == aliceKey }.map(\.method)
        #expect(alices.contains("auth.signIn"))
        #expect(alices.filter { $0.hasPrefix("updates.") } == [])
        // Bob follows his updates: the log does see such calls.
        #expect(handled.contains { $0.authKeyID != aliceKey && $0.method == "updates.getState" })
        for client in [alice, bob] { await client.close() }
        try await telegram.server.shutdown()
    }

    @Test func theWithheldPushFaultParses() throws {
        #expect(try FaultPlan(parsing: "withhold-push=3").withholdMessagePush == 3)
        #expect(throws: FaultPlan.SpecError.self) { try FaultPlan(parsing: "withhold-push=0") }
        #expect(throws: FaultPlan.SpecError.self) { try FaultPlan(parsing: "withhold-push=x") }
    }

    @Test func aPushThatSkipsAPtsIsFilledByGetDifference() async throws {
        let chat = try await Conversation.start(seed: 93)
        let states = StateLog(chat.bob)
        let reader = MessageReader(chat.bob)
        chat.telegram.server.faults.withholdMessagePush = 2
        try await chat.send(["first"])
        #expect(try await reader.first(1) == ["first"])
        let mark = try await states.settled()
        try await chat.send(["withheld", "after"])
        // "after" arrives with a pts gap; half a second later getDifference brings both, in order.
        #expect(try await reader.first(3) == ["first", "withheld", "after"])
        _ = try await states.caughtUp(after: mark)
        try await Conversation.nothingMore(reader, than: ["first", "withheld", "after"])
        try await chat.close()
    }
}
