// A `TelegramClient` with no socket: its dialer hands it one end of an in-memory NIO channel, whose other end a
// task feeds to the test Telegram's sans-IO `DCPortConnection`. No listener is bound; the client signs in and calls.
import MTProto
import MTProtoClient
import MTProtoServer
import MTProtoTransport
import NIOCore
import NIOEmbedded
import Synchronization
import TLRuntime
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

/// Opens each connection in memory, served by `context`'s sans-IO server connection.
final class InMemoryDialer: ChannelDialer {
    private let context: ServerContext
    private let servers = Mutex<[Task<Void, Never>]>([])
    let dials = Mutex(0)

    init(context: ServerContext) {
        self.context = context
    }

    func dial(_ target: DialTarget, on eventLoop: any EventLoop) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let channel = NIOAsyncTestingChannel()
        let wrapped = try await channel.testingEventLoop.executeInContext {
            try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1))
        dials.withLock { $0 += 1 }
        let context = context
        let server = Task { await Self.serve(channel, context: context) }
        servers.withLock { $0.append(server) }
        return wrapped
    }

    /// The server's end: what the client writes goes to the connection, its answers come back as reads.
    private static func serve(_ channel: NIOAsyncTestingChannel, context: ServerContext) async {
        var connection = DCPortConnection(context: context, now: context.clock())
        do {
            while !Task.isCancelled {
                var written = try await channel.waitForOutboundWrite(as: ByteBuffer.self)
                let bytes = written.readBytes(length: written.readableBytes) ?? []
                let output = connection.receive(bytes, now: context.clock())
                if !output.pieces.isEmpty { try await channel.writeInbound(ByteBuffer(bytes: output.outbound)) }
                if output.close != nil { break }
            }
        } catch {}
        try? await channel.close()
    }

    func stop() {
        for server in servers.withLock({ $0 }) { server.cancel() }
    }
}

@Suite struct InMemoryClientTests {
    @Test func aClientSignsInAndCallsOverAnInMemoryChannel() async throws {
        let service = TestTelegramService(random: SeededRandom(seed: 91))
        try service.addUser(phone: "9996620001", firstName: "Alice", username: "alice_test")
        let context = ServerContext(
            exchange: try .init(keys: [try Fixture.rsaKey()], dcID: 2),
            transport: ServerTransportConfiguration(maximumPadding: 3), handlers: service.handlers(),
            endpoint: ServerEndpoint(dcID: 2, host: "in-memory", port: 1), random: SeededRandom(seed: 92))
        let dialer = InMemoryDialer(context: context)
        var configuration = TelegramClient.Configuration(
            app: .init(apiID: 1, apiHash: "test"), dcs: [2: DCAddress(host: "in-memory", port: 1)], homeDC: 2,
            serverKeys: [try Fixture.rsaKey().publicKey], store: MemorySessionStore(), followsUpdates: false)
        configuration.dialer = dialer
        let client = TelegramClient(configuration: configuration)
        let user = try await LocalTelegram.signIn(client, phone: "9996620001")
        guard case .user(let alice) = user else {
            Issue.record("not a user")
            return
        }
        #expect(alice.firstName == "Alice")
        guard case .nearestDc(let nearest) = try await client.invoke(Api.functions.help.getNearestDc()) else {
            Issue.record("no nearestDc")
            return
        }
        #expect(nearest.thisDc == 2)
        #expect(dialer.dials.withLock { $0 } == 1)
        await client.close()
        dialer.stop()
    }
}
