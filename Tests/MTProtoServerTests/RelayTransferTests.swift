// The HTTP transport, the media connections and a secret chat through the fault relay: calls over HTTP whose
// connections are reset mid-request or mid-answer are each answered and run once; a file uploaded and downloaded over
// media connections that are cut inside parts arrives byte-identical, each part stored and served once; a secret
// chat's messages, sent and pushed over connections cut every few kilobytes, each arrive once and in order.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import SecretChats
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

@Suite struct RelayTransferTests {
    /// 3,000 calls over HTTP, 50 in flight (each POST carries several), through a relay that cuts every connection
    /// after 4–64 KiB in pieces of 1–4,096 bytes: every call answered, each run once by the server.
    @Test(arguments: [1, 2] as [UInt64])
    func httpCallsSurviveCutsMidStream(seed: UInt64) async throws {
        let counts = MethodCounts()
        // Every DC port serves HTTP too.
        let telegram = try await LocalTelegram.start(seed: 600 + seed, onEvent: counts.record)
        let relay = try await FaultRelay.start(upstreamPort: telegram.server.ports[2] ?? 0,
                                               plan: RelayCutTests.cutting, seed: seed)
        var configuration = TelegramClient.Configuration(
            app: .init(apiID: 1, apiHash: "test"), dcs: [2: DCAddress(host: "127.0.0.1", port: relay.port)],
            homeDC: 2, serverKeys: [try Fixture.rsaKey().publicKey], store: MemorySessionStore(),
            requestTimeout: .seconds(30), reconnect: .init(maxAttempts: 8))
        configuration.httpTransport = HTTPTransportOptions(host: "")
        let client = TelegramClient(configuration: configuration)
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        let total = 3_000
        let answered = try await RelayCutTests.pipelined(total, window: 50) {
            try await RelayCutTests.nearestDcIs2(client)
        }
        #expect(answered == total)
        #expect(counts["help.getNearestDc"] == total, "each request run once")
        #expect(relay.counts.cuts >= 2, "the relay cut \(relay.counts)")
        await client.close()
        await relay.shutdown()
        try await telegram.server.shutdown()
    }

    /// `megabytes` up and down over two media connections through a relay that cuts each after 256 KiB to 4 MiB
    /// (a 512 KiB part crosses many cut points), in pieces: byte-identical, each 512 KiB part stored once and
    /// served once.
    @Test(arguments: [16, 64])
    func aFileCrossesCutsIntact(megabytes: Int) async throws {
        let telegram = try await LocalTelegram.start(seed: 610, limits: FileTransferTests.bigLimits)
        let relay = try await FaultRelay.start(upstreamPort: telegram.server.ports[2] ?? 0,
                                               plan: try RelayPlan(parsing: "cut=262144-4194304,piece=1-65536"),
                                               seed: 11)
        let client = try RelayCutTests.client(through: relay)
        guard case .user(let user) = try await LocalTelegram.signIn(client, phone: "9996620001") else {
            throw HarnessFailure(description: "not signed in")
        }
        let data = SeededRandom(seed: 61).bytes(megabytes << 20)
        let parts = Int32(megabytes * 2)
        let file = try await client.upload(bytes: data, name: "cut.bin")
        guard case .inputFileBig(let big) = file else { throw HarnessFailure(description: "\(file)") }
        #expect(big.parts == parts)
        let stored = try #require(telegram.service.uploadStats(user: user.id, fileID: big.id))
        #expect(stored.parts == Int(parts), "each part stored once: \(stored)")
        let (location, document) = try await FileTransferTests.send(file, from: client, to: .inputPeerSelf,
                                                                    randomID: Int64(megabytes))
        var back: [UInt8] = []
        for try await chunk in client.download(location, dc: document.dcId, size: document.size) { back += chunk }
        #expect(back.count == data.count)
        #expect(Hash.sha256(back) == Hash.sha256(data))
        let served = try #require(telegram.service.downloadStats(document: document.id))
        #expect(served.parts == Int(parts), "each part served once: \(served)")
        #expect(relay.counts.cuts >= 4, "the relay cut \(relay.counts.cuts) connections")
        await client.close()
        await relay.shutdown()
        try await telegram.server.shutdown()
    }

    /// Alice and Bob (Carol to the server), both through a relay cutting every 4–64 KiB, open a secret chat; Alice
    /// sends 300 messages (sendEncrypted calls cut mid-way, Bob's updateNewEncryptedMessage pushes cut mid-way):
    /// Bob gets each once, in the order sent, then a last one after them all.
    @Test func secretChatMessagesArriveOnceInOrderAcrossCuts() async throws {
        let counts = MethodCounts()
        let telegram = try await LocalTelegram.start(seed: 620, onEvent: counts.record)
        // Both at home on DC 2, behind the relay (a test number's fifth digit is its DC).
        _ = try telegram.service.addUser(phone: "9996620002", firstName: "Carol", username: "carol_test")
        let relay = try await FaultRelay.start(upstreamPort: telegram.server.ports[2] ?? 0,
                                               plan: RelayCutTests.cutting, seed: 21)
        let alice = try RelayCutTests.client(through: relay), bob = try RelayCutTests.client(through: relay)
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        _ = try await LocalTelegram.signIn(bob, phone: "9996620002")
        let aliceManager = try await SecretChatManager(client: alice, options: .init(random: SeededRandom(seed: 1)))
        let bobManager = try await SecretChatManager(client: bob, options: .init(random: SeededRandom(seed: 2)))
        let aliceLog = EventLog(aliceManager, client: alice), bobLog = EventLog(bobManager, client: bob)
        let bobUser = try await alice.inputPeer(for: try await alice.resolve(username: "carol_test"))
        guard case .inputPeerUser(let peer) = bobUser else { throw HarnessFailure(description: "\(bobUser)") }
        let chat = try await aliceManager.requestChat(with: .inputUser(.init(userId: peer.userId,
                                                                             accessHash: peer.accessHash)))
        _ = try await bobLog.wait("requested") { if case .requested(chat, _) = $0 { true } else { nil } }
        try await bobManager.accept(chatID: chat)
        _ = try await aliceLog.wait("ready") { if case .ready(chat, _) = $0 { true } else { nil } }
        let sent = (0..<300).map { "secret \($0)" }
        for text in sent { try await aliceManager.send(chatID: chat, text: text) }
        try await aliceManager.send(chatID: chat, text: "last")
        _ = try await bobLog.wait("last") {
            if case .message(chat, let m) = $0, m.payload.text == "last" { m } else { nil }
        }
        #expect(await bobLog.texts(chat) == sent + ["last"])
        #expect(counts["messages.sendEncrypted"] == sent.count + 1, "each sent once")
        #expect(relay.counts.cuts >= 3, "the relay cut \(relay.counts)")
        await aliceLog.stop()
        await bobLog.stop()
        await alice.close()
        await bob.close()
        await relay.shutdown()
        try await telegram.server.shutdown()
    }
}
