// The test Telegram over real sockets: two clients log in on a two-DC server, one writes to the other, and the
// message reaches the recipient's open connection as a pushed `updates` — also after 1,000 hostile connections were
// opened and dropped in between, which must leave no connection, key or session behind and the others unaffected.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import NIOCore
import NIOPosix
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

@Suite struct TestTelegramLoopbackTests {
    static func client(_ server: MTProtoTestServer, dc: Int32) throws -> MTProtoClient {
        MTProtoClient(configuration: .init(
            host: "127.0.0.1", port: server.ports[dc] ?? 0, connection: .init(
                transport: TransportConfiguration(kind: .intermediate), serverKeys: [try Fixture.rsaKey().publicKey],
                dcID: dc), requestTimeout: .seconds(20)))
    }

    static func login(_ client: MTProtoClient, phone: String, code: String) async throws -> Api.User {
        guard case .sentCode(let sent) = try await client.invoke(Api.functions.auth.sendCode(
            phoneNumber: phone, apiId: 1, apiHash: "x", settings: .codeSettings(.init())))
        else { throw HarnessFailure(description: "no code") }
        guard case .authorization(let authorization) = try await client.invoke(Api.functions.auth.signIn(
            phoneNumber: phone, phoneCodeHash: sent.phoneCodeHash, phoneCode: code))
        else { throw HarnessFailure(description: "not signed in") }
        return authorization.user
    }

    /// The next pushed update carrying a new message, as its text.
    static func nextMessage(_ client: MTProtoClient) async throws -> String? {
        for await bytes in client.updates {
            var reader = BufferReader(bytes: bytes)
            guard case .updates(let updates) = try Api.Updates.parse(&reader) else { continue }
            for case .updateNewMessage(let new) in updates.updates {
                if case .message(let message) = new.message { return message.message }
            }
        }
        return nil
    }

    /// A two-DC server with Alice signed in on DC 2 and Bob on DC 1, each over a connection of its own. Alice uses
    /// Bob's own user to reach him, so every account gets the same access hashes.
    static func startPair(seed: UInt64) async throws
        -> (server: MTProtoTestServer, alice: MTProtoClient, bob: MTProtoClient, bobUser: Api.User) {
        let service = TestTelegramService(random: SeededRandom(seed: seed), sharedAccessHashes: true)
        try service.addUser(phone: "9996620001", firstName: "Alice")
        try service.addUser(phone: "9996610002", firstName: "Bob")
        let server = try await MTProtoTestServer.start(.init(
            rsaKeys: [try Fixture.rsaKey()], handlers: service.handlers(), dcIDs: [1, 2], random: SeededRandom(seed: seed + 1)))
        service.attach(server)
        let alice = try client(server, dc: 2), bob = try client(server, dc: 1)
        try await alice.connect()
        try await bob.connect()
        _ = try await login(alice, phone: "9996620001", code: "22222")
        let bobUser = try await login(bob, phone: "9996610002", code: "11111")
        return (server, alice, bob, bobUser)
    }

    @Test func messagesArePushedAndSurviveAFloodOfDroppedConnections() async throws {
        let (server, alice, bob, bobUser) = try await Self.startPair(seed: 21)
        guard case .user(let bobInfo) = bobUser else { throw HarnessFailure(description: "\(bobUser)") }
        let peer = Api.InputPeer.inputPeerUser(.init(userId: bobInfo.id, accessHash: bobInfo.accessHash ?? 0))

        let first = Task { try await Self.nextMessage(bob) }
        _ = try await alice.invoke(Api.functions.messages.sendMessage(peer: peer, message: "across DCs", randomId: 1))
        #expect(try await TestServerTests.within(10) { try await first.value } == "across DCs")

        let keys = server.contexts.values.map(\.keys.count), sessions = server.contexts.values.map(\.sessions.count)
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        for round in 0..<1_000 {
            let channel = try await bootstrap.connect(host: "127.0.0.1", port: server.ports[round % 2 == 0 ? 1 : 2] ?? 0).get()
            // Half a frame, random bytes, or nothing: then gone.
            let bytes: [UInt8] = switch round % 3 {
                case 0: [0xee, 0xee, 0xee, 0xee, 0x40, 0, 0, 0, 1, 2]
                case 1: SeededRandom(seed: UInt64(round)).bytes(64)
                default: []
            }
            // The server may have closed first (it refuses random bytes at once): a hostile client does not care.
            if !bytes.isEmpty { try? await channel.writeAndFlush(ByteBuffer(bytes: bytes)) }
            try? await channel.close()
        }
        for _ in 0..<200 where server.connectionCount > 2 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(server.connectionCount == 2)
        #expect(server.contexts.values.map(\.keys.count) == keys && server.contexts.values.map(\.sessions.count) == sessions)

        // The two logged-in connections still work, both ways.
        let second = Task { try await Self.nextMessage(bob) }
        _ = try await alice.invoke(Api.functions.messages.sendMessage(peer: peer, message: "after the flood", randomId: 2))
        #expect(try await TestServerTests.within(10) { try await second.value } == "after the flood")
        let dialogs = try await bob.invoke(Api.functions.messages.getDialogs(
            offsetDate: 0, offsetId: 0, offsetPeer: .inputPeerEmpty, limit: 10, hash: 0))
        guard case .dialogs(let list) = dialogs, case .dialog(let dialog)? = list.dialogs.first else {
            throw HarnessFailure(description: "\(dialogs)")
        }
        #expect(list.dialogs.count == 1 && dialog.unreadCount == 2)
        await alice.close()
        await bob.close()
        try await server.shutdown()
    }
}
