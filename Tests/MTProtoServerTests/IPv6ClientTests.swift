// `TelegramClient` over IPv6 loopback: the test Telegram listens on ::1 as well as 127.0.0.1 and lists both in
// help.getConfig; a client given DC 2 as the literal ::1 and `preferIPv6` follows Bob's PHONE_MIGRATE_1 to DC 1's
// IPv6 option, one without `preferIPv6` to its IPv4 option. The server's connection reports say which was used.
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import MTProtoTransport
import Synchronization
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

@Suite struct IPv6ClientTests {
    /// The server, and the remote addresses of the connections it accepted, in order.
    static func start(seed: UInt64) async throws -> (LocalTelegram, Remotes) {
        let remotes = Remotes()
        let service = TestTelegramService(random: SeededRandom(seed: seed))
        try service.addUser(phone: "9996610002", firstName: "Bob", username: "bob_test")
        var configuration = MTProtoTestServer.Configuration(
            rsaKeys: [try Fixture.rsaKey()], handlers: service.handlers(), dcIDs: [1, 2],
            random: SeededRandom(seed: seed + 1))
        configuration.ipv6Host = "::1"
        configuration.onEvent = { report in
            if case .opened(let remote) = report.kind { remotes.list.withLock { $0.append(remote) } }
        }
        let server = try await MTProtoTestServer.start(configuration)
        service.attach(server)
        return (LocalTelegram(service: service, server: server), remotes)
    }

    @Test(arguments: [true, false])
    func migrationFollowsTheIPv6OptionOnlyWhenPreferred(preferIPv6: Bool) async throws {
        let (telegram, remotes) = try await Self.start(seed: preferIPv6 ? 810 : 820)
        let port = try #require(telegram.server.ports[2])
        let client = TelegramClient(configuration: .init(
            app: .init(apiID: 1, apiHash: "test"), dcs: [2: DCAddress(host: "::1", port: port)], homeDC: 2,
            serverKeys: [try Fixture.rsaKey().publicKey], store: MemorySessionStore(), preferIPv6: preferIPv6))
        // help.getConfig lists each DC twice: its IPv4 option and its IPv6 one, on the same port.
        guard case .config(let config) = try await client.invoke(Api.functions.help.getConfig()) else { return }
        let options = config.dcOptions.compactMap { option -> String? in
            guard case .dcOption(let o) = option else { return nil }
            return "\(o.id) \(o.ipv6 ? "v6" : "v4") \(o.ipAddress):\(o.port)"
        }
        let ports = telegram.server.ports
        #expect(options.sorted() == [
            "1 v4 127.0.0.1:\(ports[1] ?? 0)", "1 v6 ::1:\(ports[1] ?? 0)",
            "2 v4 127.0.0.1:\(ports[2] ?? 0)", "2 v6 ::1:\(ports[2] ?? 0)",
        ])
        guard case .user(let bob) = try await LocalTelegram.signIn(client, phone: "9996610002") else {
            throw HarnessFailure(description: "no user")
        }
        #expect(bob.phone == "9996610002")
        let opened = remotes.list.withLock { $0 }
        // The first connection went to the configured ::1 literal; the migration's to DC 1 over the option chosen.
        #expect(opened.count >= 2, "\(opened)")
        #expect(opened.first?.hasPrefix("[IPv6]") == true, "\(opened)")
        #expect(opened.dropFirst().allSatisfy { $0.hasPrefix(preferIPv6 ? "[IPv6]" : "[IPv4]") }, "\(opened)")
        await client.close()
        try await telegram.server.shutdown()
    }
}

/// The remote addresses of accepted connections, in order.
final class Remotes: Sendable {
    let list = Mutex<[String]>([])
}
