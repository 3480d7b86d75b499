// The async client over loopback TCP against the in-memory server behind a SwiftNIO listener: a key exchange,
// then many concurrent calls matched to their answers, typed results through a generated call, and failures.
import Foundation
import Synchronization
import MTProto
import MTProtoApi
import MTProtoClient
import MTProtoCrypto
import MTProtoTransport
import NIOCore
import NIOPosix
import TLRuntime
import TelegramSession
import Testing

/// The auth keys a loopback server knows, shared by its connections.
final class KeyBox: Sendable {
    private let keys = Mutex<[UInt64: (AuthKey, Int64)]>([:])
    func withLock<R>(_ body: (inout [UInt64: (AuthKey, Int64)]) -> R) -> R { keys.withLock { body(&$0) } }
}

/// MiniServer behind a real socket on 127.0.0.1, one MiniServer per connection; auth keys outlive connections.
final class LoopbackServer: Sendable {
    let channel: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
    let task: Task<Void, Never>
    let keys = KeyBox()
    var port: Int { channel.channel.localAddress?.port ?? 0 }
    /// Key exchanges completed so far.
    var exchanges: Int { keys.withLock { $0.count } }

    init(key: RSAPrivateKey, secret: MTProxySecret? = nil) async throws {
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0) { child in
                child.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: child)
                }
            }
        let listener = channel
        let keys = self.keys
        task = Task {
            try? await listener.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        group.addTask {
                            try? await connection.executeThenClose { inbound, outbound in
                                var server = try MiniServer(secret: secret, key: key, now: wallClock(),
                                                            knownKeys: keys.withLock { $0 })
                                for try await var buffer in inbound {
                                    let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
                                    let reply = try server.receive(bytes, now: wallClock())
                                    keys.withLock { $0.merge(server.keys) { a, _ in a } }
                                    if !reply.isEmpty { try await outbound.write(ByteBuffer(bytes: reply)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    func stop() async {
        try? await channel.channel.close()
        task.cancel()
    }
}

func wallClock() -> Double { Date().timeIntervalSince1970 }

@Suite(.timeLimit(.minutes(1))) struct MTProtoClientTests {
    func makeClient(port: Int, key: RSAPrivateKey, transport: TransportConfiguration = .init(kind: .intermediate),
                    store: (any AuthKeyStore)? = nil,
                    executor: EventLoopTaskExecutor? = nil,
                    _ configure: (inout MTProtoClient.Configuration) -> Void = { _ in }) -> MTProtoClient {
        var configuration = MTProtoClient.Configuration(
            host: "127.0.0.1", port: port,
            connection: .init(transport: transport, serverKeys: [key.publicKey], dcID: 2),
            requestTimeout: .seconds(10), store: store)
        configure(&configuration)
        if let executor { return MTProtoClient(configuration: configuration, taskExecutor: executor) }
        return MTProtoClient(configuration: configuration)
    }

    /// A loop for tests that bound how long something takes, away from the shared singleton loops.
    static let timingLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    /// A client closed and reopened from its SQLite file makes its next call with no new key exchange.
    @Test func reopenedFromItsSQLiteFileWithoutANewHandshake() async throws {
        let key = try #require(TestKey.privateKey)
        let server = try await LoopbackServer(key: key)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mtproto-\(UInt64.random(in: 0...UInt64.max)).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }

        let firstStore = try await SQLiteSessionStore.open(path: path)
        let first = makeClient(port: server.port, key: key, transport: TransportConfiguration(kind: .intermediate),
                               store: firstStore)
        try await first.connect()
        #expect(try await first.invoke(raw: [0x01, 0xee, 0xff, 0xc0, 1, 0, 0, 0]) == [0x02, 0xee, 0xff, 0xc0, 1, 0, 0, 0])
        let firstKey = try #require(await first.authKey)
        await first.close()
        try await firstStore.close()
        #expect(server.exchanges == 1)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let reopened = try await SQLiteSessionStore.open(path: path)
        #expect(try await reopened.load().permanentKeys[2] == firstKey)
        let second = makeClient(port: server.port, key: key, transport: TransportConfiguration(kind: .abridged),
                                store: reopened)
        try await second.connect()
        #expect(try await second.invoke(raw: [0x01, 0xee, 0xff, 0xc0, 2, 0, 0, 0]) == [0x02, 0xee, 0xff, 0xc0, 2, 0, 0, 0])
        #expect(server.exchanges == 1, "no second key exchange")
        #expect(await second.authKey?.authKey == firstKey.authKey)
        await second.close()
        try await reopened.close()
        await server.stop()
    }

    @Test(arguments: [TransportKind.abridged, .intermediate, .paddedIntermediate, .full])
    func exchangeThenConcurrentCalls(kind: TransportKind) async throws {
        let key = try #require(TestKey.privateKey)
        let server = try await LoopbackServer(key: key)
        let client = makeClient(port: server.port, key: key,
                                transport: kind == .full ? TransportConfiguration(kind: kind)
                                    : TransportConfiguration(kind: kind, obfuscation: .obfuscated2, dcId: 2))
        try await client.connect()
        #expect(await client.authKey != nil)
        let answers = try await withThrowingTaskGroup(of: (UInt8, [UInt8]).self) { group in
            for n in 0..<50 as Range<UInt8> {
                group.addTask { (n, try await client.invoke(raw: [0x01, 0xee, 0xff, 0xc0, n, 0, 0, 0])) }
            }
            var out: [UInt8: [UInt8]] = [:]
            for try await (n, answer) in group { out[n] = answer }
            return out
        }
        #expect(answers.count == 50)
        for (n, answer) in answers { #expect(answer == [0x02, 0xee, 0xff, 0xc0, n, 0, 0, 0]) }
        await client.close()
        await server.stop()
    }

    @Test func typedCallsAndClosedConnections() async throws {
        let key = try #require(TestKey.privateKey)
        let server = try await LoopbackServer(key: key)
        let client = makeClient(port: server.port, key: key, transport: TransportConfiguration(kind: .intermediate))
        try await client.connect()
        // ping is answered by the server session itself, and the pong is the typed result.
        let pong = try await client.invoke(MT.functions.ping(pingId: 7))
        guard case .pong(let fields) = pong else { Issue.record("\(pong)"); return }
        #expect(fields.pingId == 7)
        // The echo server answers anything else with its constructor replaced, which a typed parse must reject.
        do {
            _ = try await client.invoke(MT.functions.req_pq_multi(nonce: TLInt128(1, 2)))
            Issue.record("a mangled answer parsed")
        } catch let error as MTProtoClientError {
            if case .decoding = error {} else { Issue.record("\(error)") }
        }
        await client.close()
        await #expect(throws: MTProtoClientError.self) { _ = try await client.invoke(raw: [1, 2, 3, 4]) }
        await server.stop()
    }

    /// Twenty lost connections, each replaced before the next call is answered: the client's own tasks stay as
    /// few as after the first connect (each reconnect and each lost reader takes itself out when it ends).
    @Test func reconnectsLeaveNoFinishedTasksBehind() async throws {
        let key = try #require(TestKey.privateKey)
        let server = try await LoopbackServer(key: key)
        let client = makeClient(port: server.port, key: key) {
            $0.reconnect = .init(maxAttempts: 8, initialDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        }
        try await client.connect()
        let settled = await client.runningTasks
        for round in 0..<20 {
            await client.dropConnection()
            let pong = try await client.invoke(MT.functions.ping(pingId: Int64(round)))
            guard case .pong(let fields) = pong else { Issue.record("\(pong)"); return }
            #expect(fields.pingId == Int64(round))
        }
        #expect(await client.connectionCount == 21)
        // The last reconnect and the last lost reader may still be on their way out (at most 2 s).
        for _ in 0..<200 where await client.runningTasks > settled { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await client.runningTasks == settled)
        await client.close()
        #expect(await client.runningTasks == 0)
        await server.stop()
    }

    @Test func shortFloodWaitsAreWaitedOutLongOnesThrown() async throws {
        let key = try #require(TestKey.privateKey)
        let server = try await LoopbackServer(key: key)
        let client = makeClient(port: server.port, key: key) { $0.floodWaitThreshold = 2 }
        try await client.connect()
        let started = ContinuousClock.now
        let answer = try await client.invoke(raw: [1, 0xd0, 0x00, 0xf1, 7, 7, 7, 7])  // FLOOD_WAIT_1, then the echo
        #expect(answer == [0x02, 0xee, 0xff, 0xc0, 7, 7, 7, 7])
        #expect(ContinuousClock.now - started >= .seconds(1))
        do {
            _ = try await client.invoke(raw: [5, 0xd0, 0x00, 0xf1, 8, 8, 8, 8])  // FLOOD_WAIT_5, above the threshold
            Issue.record("a long flood wait was waited out")
        } catch MTProtoClientError.rpc(let error) {
            #expect(error.kind == .floodWait(seconds: 5))
        }
        await client.close()
        await server.stop()
    }

    /// A call the echo server never answers (`[n, de, ad, c0]`), with its own timeout: when it ended, counted from
    /// `started`, and the error it ended with (nil if it was answered).
    static func unanswered(_ client: MTProtoClient, _ n: UInt8, timeout: Duration,
                           since started: ContinuousClock.Instant) async -> (Duration, (any Error)?) {
        do {
            _ = try await client.invoke(raw: [n, 0xde, 0xad, 0xc0], timeout: timeout)
            return (ContinuousClock.now - started, nil)
        } catch {
            return (ContinuousClock.now - started, error)
        }
    }

    /// Each call fails with `.timeout` at its own deadline — the earlier one first, though it was made second —
    /// while a call answered in time between them is unaffected, and the connection goes on afterwards.
    @Test func callsTimeOutAtTheirOwnDeadlines() async throws {
        let key = try #require(TestKey.privateKey)
        let server = try await LoopbackServer(key: key)
        let client = makeClient(port: server.port, key: key, transport: TransportConfiguration(kind: .intermediate))
        try await client.connect()
        let started = ContinuousClock.now
        async let late = Self.unanswered(client, 1, timeout: .milliseconds(3000), since: started)
        try await Task.sleep(for: .milliseconds(50))
        async let early = Self.unanswered(client, 2, timeout: .milliseconds(300), since: started)
        #expect(try await client.invoke(raw: [0x01, 0xee, 0xff, 0xc0, 9, 0, 0, 0]) == [0x02, 0xee, 0xff, 0xc0, 9, 0, 0, 0])
        let (earlyAt, earlyError) = await early
        let (lateAt, lateError) = await late
        for error in [earlyError, lateError] {
            guard case MTProtoClientError.timeout? = error else { Issue.record("not a timeout: \(String(describing: error))"); continue }
        }
        // Lower bounds only: a loaded machine may fire a timer late, never early. That the second call ended at its
        // own deadline, not the first's, shows as the order of the two ends (2.65 s apart).
        #expect(earlyAt >= .milliseconds(350), "not before its own deadline")
        #expect(earlyAt < lateAt, "at its own deadline, not the other's")
        #expect(lateAt >= .milliseconds(3000))
        #expect(try await client.invoke(raw: [0x01, 0xee, 0xff, 0xc0, 10, 0, 0, 0]) == [0x02, 0xee, 0xff, 0xc0, 10, 0, 0, 0])
        await client.close()
        await server.stop()
    }

    /// A call is cancelled wherever its task is cancelled: before it is made, while queued for the connection, in
    /// flight, or while the connection is being replaced. Each such call throws `.cancelled` once and soon, and the
    /// connection goes on answering.
    @Test func cancellationAtEveryStage() async throws {
        let key = try #require(TestKey.privateKey)
        let server = try await LoopbackServer(key: key)
        let client = makeClient(port: server.port, key: key) {
            $0.reconnect = .init(maxAttempts: 8, initialDelay: .milliseconds(50), maxDelay: .milliseconds(100))
        }
        try await client.connect()
        @Sendable func outcome(_ body: [UInt8]) async -> Result<[UInt8], any Error> {
            do { return .success(try await client.invoke(raw: body)) } catch { return .failure(error) }
        }
        @Sendable func isCancelled(_ result: Result<[UInt8], any Error>) -> Bool {
            if case .failure(MTProtoClientError.cancelled) = result { true } else { false }
        }
        // Cancelled before the call is made.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await outcome([0x01, 0xee, 0xff, 0xc0, 1, 0, 0, 0])
        }
        #expect(isCancelled(await early.value))
        // 200 unanswered calls cancelled after 0–4 ms each (seeded), racing the queue and the flush.
        let random = SeededRandom(seed: 7)
        let calls = (0..<200).map { n in
            let delay = Int(random.next() % 5)
            let call = Task { await outcome([UInt8(n), 0xde, 0xad, 0xc0]) }
            return (call, delay)
        }
        for (call, delay) in calls {
            Task {
                try? await Task.sleep(for: .milliseconds(delay))
                call.cancel()
            }
        }
        for (call, _) in calls { #expect(isCancelled(await call.value)) }
        // Made and cancelled while the connection is down: it waits for the next one, and is dropped from there.
        await client.dropConnection()
        let waiting = Task { await outcome([7, 0xde, 0xad, 0xc0]) }
        try await Task.sleep(for: .milliseconds(5))
        waiting.cancel()
        // A cancellation that did not take effect would end its call at the 10 s request timeout, with `.timeout`.
        #expect(isCancelled(await waiting.value))
        #expect(try await client.invoke(raw: [0x01, 0xee, 0xff, 0xc0, 3, 0, 0, 0]) == [0x02, 0xee, 0xff, 0xc0, 3, 0, 0, 0])
        await client.close()
        await server.stop()
    }

    /// Deadlines of finished calls are dropped in bulk once they outnumber the calls in flight: an unanswered call
    /// made first still times out at its own deadline after 600 answered calls, and one made last at its own.
    @Test func deadlinesSurviveManyFinishedCalls() async throws {
        let key = try #require(TestKey.privateKey)
        let server = try await LoopbackServer(key: key)
        // The client, its calls and the clock readings on a loop of their own: in a whole `swift test` beside a
        // build, the cooperative pool's other work delayed the first call's result past 4 s.
        let executor = EventLoopTaskExecutor(Self.timingLoop)
        let client = makeClient(port: server.port, key: key, executor: executor)
        try await client.connect()
        // Each of the two is made beside a call with a later deadline (4 s after the first's, 5 s after the
        // last's), timed from the same instant: each must end first. A deadline lost with the finished calls', or
        // kept but not acted on until some later timer, fails that order (or, lost for both, the suite's limit).
        let (first, firstLater, last, lastLater) = try await withTaskExecutorPreference(executor) {
            let started = ContinuousClock.now
            async let first = Self.unanswered(client, 1, timeout: .milliseconds(1500), since: started)
            async let firstLater = Self.unanswered(client, 3, timeout: .milliseconds(5500), since: started)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<600 {
                    group.addTask {
                        let body: [UInt8] = [0x01, 0xee, 0xff, 0xc0, UInt8(n & 0xff), UInt8(n >> 8), 0, 0]
                        let answer = try await client.invoke(raw: body)
                        #expect(answer == [0x02] + body.dropFirst())
                    }
                }
                try await group.waitForAll()
            }
            // Timed from its own start: the 600 calls before it take longer on a busy machine, which is not its
            // deadline.
            let lastStarted = ContinuousClock.now
            async let last = Self.unanswered(client, 2, timeout: .milliseconds(300), since: lastStarted)
            async let lastLater = Self.unanswered(client, 4, timeout: .milliseconds(5300), since: lastStarted)
            return await (first, firstLater, last, lastLater)
        }
        for error in [first.1, firstLater.1, last.1, lastLater.1] {
            guard case MTProtoClientError.timeout? = error else { Issue.record("not a timeout: \(String(describing: error))"); continue }
        }
        #expect(first.0 >= .milliseconds(1500) && first.0 < firstLater.0, "\(first.0), \(firstLater.0)")
        #expect(last.0 >= .milliseconds(300) && last.0 < lastLater.0, "\(last.0), \(lastLater.0)")
        await client.close()
        await server.stop()
    }

    @Test func connectingToNothingFails() async throws {
        let key = try #require(TestKey.privateKey)
        let client = makeClient(port: 1, key: key, transport: TransportConfiguration(kind: .abridged))
        await #expect(throws: (any Error).self) { try await client.connect() }
    }
}
