// Secret chats end to end through the test Telegram: two TelegramClients on different DCs, each with a
// SecretChatManager fed by its client's updates. A request and its acceptance, the layer settling on the lower side,
// text both ways, a multi-part encrypted file, a re-key, and a manager restored from its store mid-chat.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import SecretChats
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

/// Collects a manager's events so a test can wait for one.
actor EventLog {
    private(set) var events: [SecretChatEvent] = []
    private var pump: Task<Void, Never>?

    init(_ manager: SecretChatManager, client: TelegramClient) {
        let stream = manager.events
        Task { await self.start(stream, manager: manager, client: client) }
    }

    private func start(_ stream: AsyncStream<SecretChatEvent>, manager: SecretChatManager, client: TelegramClient) {
        pump = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await event in stream { await self.append(event) } }
                group.addTask { for await update in client.updates { try? await manager.handle(update) } }
            }
        }
    }

    private func append(_ event: SecretChatEvent) { events.append(event) }

    /// Waits up to 20 s for an event `match` accepts, and returns what it extracted.
    func wait<T>(_ what: String, _ match: (SecretChatEvent) -> T?) async throws -> T {
        for _ in 0..<2_000 {
            if let found = events.lazy.compactMap(match).first { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "no \(what) in \(events)")
    }

    func texts(_ chat: Int32) -> [String] {
        events.compactMap { if case .message(chat, let m) = $0 { m.payload.text } else { nil } }.filter { !$0.isEmpty }
    }

    func stop() { pump?.cancel() }
}

@Suite struct SecretChatLoopbackTests {
    @Test func secretChatAcrossDCsWithFileRekeyAndRestore() async throws {
        let telegram = try await LocalTelegram.start(seed: 71)
        let alice = try telegram.client(), bob = try telegram.client()
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        _ = try await LocalTelegram.signIn(bob, phone: "9996610002")
        let bobStore = MemorySessionStore()
        let aliceManager = try await SecretChatManager(client: alice, options: .init(random: SeededRandom(seed: 1)))
        var bobManager = try await SecretChatManager(client: bob, options: .init(
            engine: .init(maxLayer: .layer73), store: bobStore, random: SeededRandom(seed: 2)))
        let aliceLog = EventLog(aliceManager, client: alice)
        var bobLog = EventLog(bobManager, client: bob)

        guard case .resolvedPeer(let resolved) = try await alice.invoke(Api.functions.contacts.resolveUsername(username: "bob_test")),
              case .user(let bobUser)? = resolved.users.first, let hash = bobUser.accessHash
        else { throw HarnessFailure(description: "bob_test not resolved") }
        let chat = try await aliceManager.requestChat(with: .inputUser(.init(userId: bobUser.id, accessHash: hash)))
        let requested = try await bobLog.wait("requested") { if case .requested(let id, _) = $0 { id } else { nil } }
        #expect(requested == chat)
        try await bobManager.accept(chatID: chat)
        let aliceKey = try await aliceLog.wait("ready") { if case .ready(chat, let f) = $0 { f } else { nil } }
        let bobKey = try await bobLog.wait("ready") { if case .ready(chat, let f) = $0 { f } else { nil } }
        #expect(aliceKey == bobKey)
        _ = try await aliceLog.wait("layer 73") { if case .layerChanged(chat, .layer73) = $0 { true } else { nil } }
        _ = try await bobLog.wait("layer 73") { if case .layerChanged(chat, .layer73) = $0 { true } else { nil } }

        try await aliceManager.send(chatID: chat, text: "hi bob")
        try await bobManager.send(chatID: chat, text: "hi alice")
        _ = try await bobLog.wait("hi bob") { if case .message(chat, let m) = $0, m.payload.text == "hi bob" { m } else { nil } }
        let fromBob = try await aliceLog.wait("hi alice") {
            if case .message(chat, let m) = $0, m.payload.text == "hi alice" { m } else { nil }
        }
        #expect(fromBob.payload.layer == .layer73)

        // A 300 KB file: three 128 KB parts, uploaded to Alice's DC, downloaded by Bob from there.
        let file = SeededRandom(seed: 9).bytes(300_001)
        try await aliceManager.sendFile(chatID: chat, bytes: file, fileName: "photo.bin", mimeType: "application/octet-stream",
                                        caption: "a file")
        let withFile = try await bobLog.wait("file") {
            if case .message(chat, let m) = $0, m.payload.document != nil { m } else { nil }
        }
        #expect(withFile.payload.document?.fileName == "photo.bin")
        #expect(try await bobManager.download(withFile) == file)

        // Re-key on Alice's request; both switch; text flows under the new key.
        try await aliceManager.rekey(chatID: chat)
        let newAlice = try await aliceLog.wait("rekeyed") { if case .rekeyed(chat, let f) = $0 { f } else { nil } }
        let newBob = try await bobLog.wait("rekeyed") { if case .rekeyed(chat, let f) = $0 { f } else { nil } }
        #expect(newAlice == newBob && newAlice != aliceKey)
        try await aliceManager.send(chatID: chat, text: "after rekey")
        _ = try await bobLog.wait("after rekey") { if case .message(chat, let m) = $0, m.payload.text == "after rekey" { m } else { nil } }

        // Bob's manager is replaced by one restored from his store: same chat, same counters, keeps talking.
        let before = await bobManager.chat(chat)
        await bobLog.stop()
        bobManager = try await SecretChatManager(client: bob, options: .init(
            engine: .init(maxLayer: .layer73), store: bobStore, random: SeededRandom(seed: 3)))
        let restored = await bobManager.chat(chat)
        #expect(restored?.inSeqNo == before?.inSeqNo && restored?.outSeqNo == before?.outSeqNo)
        #expect(restored?.keyFingerprint == newBob)
        bobLog = EventLog(bobManager, client: bob)
        try await bobManager.send(chatID: chat, text: "restored")
        _ = try await aliceLog.wait("restored") { if case .message(chat, let m) = $0, m.payload.text == "restored" { m } else { nil } }
        #expect(await aliceLog.texts(chat) == ["hi alice", "restored"])
        #expect(await bobLog.texts(chat).isEmpty)  // the new log saw nothing yet

        await aliceLog.stop()
        await bobLog.stop()
        await alice.close()
        await bob.close()
        try await telegram.server.shutdown()
    }

    /// The SQLite store keeps the secret chats (the manager's persistence path) across a reopen, the last save winning.
    @Test func sqliteStoreKeepsSecretChatsAcrossReopen() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try await SQLiteSessionStore.open(path: path)
        #expect(try await first.load().secretChats.dhConfig == nil)
        try await first.save([.secretChats(StoredSecretChats(dhConfig: SecretDHConfig(prime: [1], g: 2, version: 1)))])
        try await first.save([.secretChats(StoredSecretChats(dhConfig: SecretDHConfig(prime: [4, 5], g: 3, version: 2)))])
        try await first.close()
        let second = try await SQLiteSessionStore.open(path: path)
        #expect(try await second.load().secretChats.dhConfig == SecretDHConfig(prime: [4, 5], g: 3, version: 2))
        try await second.close()
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
