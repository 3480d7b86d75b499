// `TelegramClient` over the HTTP transport against the test Telegram: a login moved to another DC over HTTP (every DC
// port serves it), then on its HTTP listener sign-in, many calls in flight on one keep-alive connection, a message Bob
// sends reaching idle Alice through her long poll (and not without one), and a hostile HTTP server that the client
// leaves with a typed error.
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import MTProtoTransport
import NIOCore
import NIOPosix
import Synchronization
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

@Suite struct HTTPClientTests {
    static let alice = "9996620001", bob = "9996620002"

    /// `implicitWait` 0: only a request carrying `http_wait` is held, so a push reaches an idle client only through
    /// a long poll.
    static func start(seed: UInt64, connections: Remotes, implicitWait: Double = 25) async throws -> LocalTelegram {
        let service = TestTelegramService(random: SeededRandom(seed: seed))
        try service.addUser(phone: alice, firstName: "Alice", username: "alice_test")
        try service.addUser(phone: bob, firstName: "Bob", username: "bob_test")
        var configuration = MTProtoTestServer.Configuration(
            rsaKeys: [try Fixture.rsaKey()], handlers: service.handlers(), dcIDs: [2], random: SeededRandom(seed: seed + 1))
        configuration.httpPort = 0
        configuration.limits.http.implicitWait = implicitWait
        configuration.onEvent = { report in
            if case .opened(let remote) = report.kind { connections.list.withLock { $0.append(remote) } }
        }
        let server = try await MTProtoTestServer.start(configuration)
        service.attach(server)
        return LocalTelegram(service: service, server: server)
    }

    /// A client of DC 2 at `port`: by default its TCP port, or with `http` the HTTP-only listener's.
    static func client(_ telegram: LocalTelegram, http: HTTPTransportOptions?, port: Int? = nil) throws -> TelegramClient {
        let port = port ?? (http == nil ? telegram.server.port : telegram.server.httpPort ?? 0)
        var configuration = TelegramClient.Configuration(
            app: .init(apiID: 1, apiHash: "test"), dcs: [2: DCAddress(host: "127.0.0.1", port: port)], homeDC: 2,
            serverKeys: [try Fixture.rsaKey().publicKey], store: MemorySessionStore(), requestTimeout: .seconds(20),
            reconnect: .init(maxAttempts: 2, initialDelay: .milliseconds(20), maxDelay: .milliseconds(100)))
        configuration.httpTransport = http
        return TelegramClient(configuration: configuration)
    }

    /// Every DC's port serves HTTP too, as Telegram's do: a client that speaks only HTTP and knows only DC 2 signs
    /// Bob in through PHONE_MIGRATE_1 on DC 1, at the address `help.getConfig` lists, and calls there.
    @Test func aLoginMovedToAnotherDCFollowsOverHTTP() async throws {
        let telegram = try await LocalTelegram.start(seed: 930)
        #expect(telegram.server.httpPort == nil, "no HTTP-only listener: the DC ports serve HTTP")
        let bob = try Self.client(telegram, http: HTTPTransportOptions(host: ""), port: telegram.server.ports[2])
        guard case .user(let user) = try await LocalTelegram.signIn(bob, phone: "9996610002") else {
            Issue.record("Bob was not signed in")
            return
        }
        #expect(user.firstName == "Bob")
        #expect(await bob.homeDC == 1)
        let resolved = try await bob.invoke(Api.functions.contacts.resolveUsername(username: "alice_test"))
        guard case .resolvedPeer(let peer) = resolved, case .user(let alice)? = peer.users.first else {
            Issue.record("\(resolved)")
            return
        }
        #expect(alice.username == "alice_test")
        await bob.close()
        try await telegram.server.shutdown()
    }

    /// Fifty calls at once over HTTP: each gets its own answer, all on one connection.
    @Test func manyCallsInFlightOverOneConnection() async throws {
        let connections = Remotes()
        let telegram = try await Self.start(seed: 900, connections: connections)
        let alice = try Self.client(telegram, http: HTTPTransportOptions(host: ""))
        _ = try await LocalTelegram.signIn(alice, phone: Self.alice)
        let usernames = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let name = index.isMultiple(of: 2) ? "alice_test" : "bob_test"
                    let resolved = try await alice.invoke(Api.functions.contacts.resolveUsername(username: name))
                    guard case .resolvedPeer(let peer) = resolved, case .user(let user)? = peer.users.first else {
                        return "?"
                    }
                    return "\(index) \(user.username ?? "")"
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(usernames.sorted() == (0..<50).map { "\($0) \($0.isMultiple(of: 2) ? "alice_test" : "bob_test")" }.sorted())
        #expect(connections.list.withLock { $0.count } == 1)
        await alice.close()
        try await telegram.server.shutdown()
    }

    /// Bob (over TCP) sends idle Alice (over HTTP) a message: it arrives in the answer to her held long poll, within
    /// seconds and without a call of hers. With long polls off, it does not arrive while she stays idle.
    @Test(arguments: [true, false])
    func aPushedUpdateArrivesThroughTheLongPoll(longPolls: Bool) async throws {
        let telegram = try await Self.start(seed: longPolls ? 910 : 920, connections: Remotes(), implicitWait: 0)
        let alice = try Self.client(telegram, http: HTTPTransportOptions(
            host: "", longPollWait: longPolls ? 55_000 : 0, responseTimeout: 70))
        let bob = try Self.client(telegram, http: nil)
        _ = try await LocalTelegram.signIn(alice, phone: Self.alice)
        _ = try await LocalTelegram.signIn(bob, phone: Self.bob)
        let texts = Texts(alice)
        let resolved = try await bob.invoke(Api.functions.contacts.resolveUsername(username: "alice_test"))
        guard case .resolvedPeer(let found) = resolved, case .user(let user)? = found.users.first,
              let hash = user.accessHash else { throw HarnessFailure(description: "\(resolved)") }
        // Alice's own calls (sign-in, her state) are answered and acknowledged (after the 1 s ack delay): she is
        // idle, and a message can reach her only in the answer to a request the server holds.
        try await Task.sleep(for: .milliseconds(2500))
        _ = try await bob.invoke(Api.functions.messages.sendMessage(
            peer: .inputPeerUser(.init(userId: user.id, accessHash: hash)), message: "over the long poll", randomId: 7))
        // Through the long poll it arrives while the request is held: one held to its end (55 s) would bring it some
        // 50 s after the send, past this 30 s wait. Without long polls nothing carries it to an idle client.
        let arrived = await texts.wait(for: "over the long poll", upTo: .seconds(longPolls ? 30 : 3))
        if longPolls {
            #expect(arrived)
        } else {
            #expect(!arrived)
        }
        for client in [alice, bob] { await client.close() }
        try await telegram.server.shutdown()
    }

    /// The server drops, duplicates and reorders a share of the messages it sends: the session's state queries,
    /// resend requests and acknowledgments, all travelling as POSTs, still end every call with its own answer.
    @Test func acksAndResendsWorkOverHTTP() async throws {
        let telegram = try await Self.start(seed: 930, connections: Remotes())
        var session = SessionConfiguration()
        session.stateRequestAfter = 0.3
        session.answerTimeout = 2
        var configuration = TelegramClient.Configuration(
            app: .init(apiID: 1, apiHash: "test"),
            dcs: [2: DCAddress(host: "127.0.0.1", port: telegram.server.httpPort ?? 0)], homeDC: 2,
            serverKeys: [try Fixture.rsaKey().publicKey], store: MemorySessionStore(), requestTimeout: .seconds(30),
            session: session)
        configuration.httpTransport = HTTPTransportOptions(host: "")
        let alice = TelegramClient(configuration: configuration)
        _ = try await LocalTelegram.signIn(alice, phone: Self.alice)
        var faults = FaultPlan()
        faults.dropOutgoing = 0.1
        faults.duplicateOutgoing = 0.1
        faults.reorderOutgoing = 0.1
        telegram.server.faults = faults
        let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<60 {
                group.addTask {
                    let name = index.isMultiple(of: 2) ? "alice_test" : "bob_test"
                    let resolved = try await alice.invoke(Api.functions.contacts.resolveUsername(username: name))
                    guard case .resolvedPeer(let peer) = resolved, case .user(let user)? = peer.users.first else {
                        return false
                    }
                    return user.username == name
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers.count == 60)
        #expect(answers.allSatisfy { $0 })
        await alice.close()
        try await telegram.server.shutdown()
    }

    /// Hostile HTTP clients of the listener: garbage is answered 400 and closed; a body that stalls is closed at
    /// the request timeout, never held open.
    @Test func theListenerClosesHostileClients() async throws {
        let service = TestTelegramService(random: SeededRandom(seed: 940))
        var configuration = MTProtoTestServer.Configuration(
            rsaKeys: [try Fixture.rsaKey()], handlers: service.handlers(), dcIDs: [2], random: SeededRandom(seed: 941))
        configuration.httpPort = 0
        configuration.limits.http.requestTimeout = 0.5
        let server = try await MTProtoTestServer.start(configuration)
        let port = try #require(server.httpPort)
        let garbage = try await RawConnection.exchange(port: port, sending: Array("\u{0}\u{1}garbage\r\n\r\n".utf8))
        #expect(String(decoding: garbage.reply, as: UTF8.self).hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(garbage.closed)
        let stalled = try await RawConnection.exchange(
            port: port, sending: Array("POST /api HTTP/1.1\r\nContent-Length: 500\r\n\r\nonly this".utf8))
        #expect(stalled.reply.isEmpty)
        #expect(stalled.closed, "closed at the 0.5 s request timeout, not held open")
        // The server counts a connection closed when its channel goes inactive, just after the client saw the close.
        for _ in 0..<200 where server.connectionCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.connectionCount == 0)
        try await server.shutdown()
    }

    /// A server that accepts and never answers: the connection fails once `responseTimeout` passes.
    @Test func aSilentServerTimesOut() async throws {
        let silent = try await ServerBootstrap(group: Fixture.timingLoops)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = silent.localAddress?.port ?? 0
        let error = try await Self.connectionFailure(port: port, HTTPTransportOptions(
            host: "127.0.0.1:\(port)", longPollWait: 100, responseTimeout: 0.5))
        #expect(error == .transport(.http(.responseTimedOut(seconds: 0.5))))
        try await silent.close()
    }

    /// A server that answers the first request with a head claiming a 100 MB body: the connection fails with the
    /// HTTP transport's typed error instead of waiting for or buffering the body.
    @Test func aHostileServerFailsTheConnectionWithATypedError() async throws {
        let reply = "HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\nabc"
        let hostile = try await ServerBootstrap(group: Fixture.timingLoops)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ScriptedReply(reply: Array(reply.utf8)))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = hostile.localAddress?.port ?? 0
        let error = try await Self.connectionFailure(port: port, HTTPTransportOptions(host: "127.0.0.1:\(port)"))
        #expect(error == .transport(.http(.bodyTooLarge(length: 100_000_000, limit: FrameLimits.defaultMaximumPayload))))
        try await hostile.close()
    }

    /// Why `MTProtoClient.connect()` over HTTP to `port` failed, without reconnecting; nil if it did not.
    static func connectionFailure(port: Int, _ options: HTTPTransportOptions) async throws -> ClientConnectionError? {
        let executor = EventLoopTaskExecutor(Fixture.timingLoops.next())
        let client = MTProtoClient(configuration: .init(
            host: "127.0.0.1", port: port,
            connection: .init(transport: TransportConfiguration(kind: .intermediate, http: options),
                              serverKeys: [try Fixture.rsaKey().publicKey], dcID: 2),
            reconnect: .init(maxAttempts: 0)), taskExecutor: executor)
        // The callers check the error: a client that waited for the 40 s timeout instead would fail with that.
        let failure = await withTaskExecutorPreference(executor) {
            var failure: ClientConnectionError?
            do {
                try await client.connect()
                Issue.record("connected to a server that should have failed the connection")
            } catch MTProtoClientError.connection(let error) {
                failure = error
            } catch {
                Issue.record("failed with \(error) instead of a connection error")
            }
            return failure
        }
        await client.close()
        return failure
    }
}

/// Writes `reply` once the first bytes arrive, then reads and ignores the rest.
final class ScriptedReply: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let reply: [UInt8]
    private let sent = Mutex(false)

    init(reply: [UInt8]) { self.reply = reply }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !sent.withLock({ let was = $0; $0 = true; return was }) else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: reply)), promise: nil)
    }
}

/// The message texts a client's updates carry, as they arrive.
actor Texts {
    private var seen: [String] = []

    init(_ client: TelegramClient) {
        let updates = client.updates
        Task { for await update in updates { await self.append(UpdatesStateTests.texts(update)) } }
    }

    private func append(_ more: [String]) { seen += more }

    /// Whether `text` arrived within `limit`.
    func wait(for text: String, upTo limit: Duration) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if seen.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return seen.contains(text)
    }
}

/// One TCP connection that sends bytes and reads until the server closes (at most 10 s).
enum RawConnection {
    static func exchange(port: Int, sending bytes: [UInt8]) async throws -> (reply: [UInt8], closed: Bool) {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(bytes: bytes))
            return try await withThrowingTaskGroup(of: (reply: [UInt8], closed: Bool).self) { group in
                group.addTask {
                    var reply: [UInt8] = []
                    for try await buffer in inbound { reply += Array(buffer.readableBytesView) }
                    return (reply, true)
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(30))  // a hang guard: "not closed"
                    return ([], false)
                }
                let first = try await group.next() ?? ([], false)
                group.cancelAll()
                return first
            }
        }
    }
}
