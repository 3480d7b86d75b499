// `TelegramClient`'s middleware chain against the test Telegram: each built-in rule (a flood wait below and above
// the threshold, each `*_MIGRATE_X` kind, the migration bound) seen from the server's side, and a user's middleware
// that counts calls and holds them at a barrier, seeing each call once however often it was sent.
import MTProto
import MTProtoClient
import MTProtoServer
import Synchronization
import TLRuntime
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

/// How often the server ran each method, and how often it answered it with an error.
private final class Handled: Sendable {
    private let counts = Mutex<[String: (ok: Int, failed: Int)]>([:])

    func record(_ report: MTProtoTestServer.ConnectionReport) {
        guard case .event(.handled(let method, _, let error)) = report.kind else { return }
        counts.withLock { counts in
            var count = counts[method] ?? (0, 0)
            if error == nil { count.ok += 1 } else { count.failed += 1 }
            counts[method] = count
        }
    }

    func ok(_ method: String) -> Int { counts.withLock { $0[method]?.ok ?? 0 } }
    func failed(_ method: String) -> Int { counts.withLock { $0[method]?.failed ?? 0 } }
}

/// Resumes everyone waiting once opened.
private actor Barrier {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiting { waiter.resume() }
        waiting.removeAll()
    }
}

/// A user's middleware: counts the calls of one method and holds each at a barrier until it opens.
private final class CountingGate: InvokeMiddleware {
    let method: String
    let barrier = Barrier()
    let entered = Mutex(0)
    let finished = Mutex(0)
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    init(method: String) {
        self.method = method
        (arrivals, arrived) = AsyncStream.makeStream()
    }

    func invoke(_ invocation: Invocation, next: Invoker) async throws -> ArraySlice<UInt8> {
        guard invocation.function?.name == method else { return try await next(invocation) }
        entered.withLock { $0 += 1 }
        arrived.yield()
        await barrier.wait()
        let result = try await next(invocation)
        finished.withLock { $0 += 1 }
        return result
    }
}

@Suite struct MiddlewareTests {
    private static func start(seed: UInt64) async throws -> (LocalTelegram, Handled) {
        let handled = Handled()
        let telegram = try await LocalTelegram.start(seed: seed, onEvent: { handled.record($0) })
        return (telegram, handled)
    }

    /// The DC that answered `help.getNearestDc`.
    private static func answeringDC(_ client: TelegramClient) async throws -> Int32 {
        guard case .nearestDc(let nearest) = try await client.invoke(Api.functions.help.getNearestDc()) else { return 0 }
        return nearest.thisDc
    }

    @Test func aFloodWaitBelowTheThresholdIsWaitedOutAndTheCallSentAgain() async throws {
        let (telegram, handled) = try await Self.start(seed: 81)
        let gate = CountingGate(method: "help.getNearestDc")
        await gate.barrier.open()
        let client = try telegram.client(floodWaitThreshold: 5, followsUpdates: false, middlewares: [gate])
        telegram.server.contexts[2]?.faults.errorsOnce["help.getNearestDc"] = RPCError(code: 420, message: "FLOOD_WAIT_0")
        _ = try await client.invoke(Api.functions.help.getNearestDc())
        #expect(handled.failed("help.getNearestDc") == 1)
        #expect(handled.ok("help.getNearestDc") == 1)
        // The user's middleware runs outside the built-in ones: it saw one call, sent twice.
        #expect(gate.entered.withLock { $0 } == 1)
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func aFloodWaitAboveTheThresholdIsThrownWithoutASecondAttempt() async throws {
        let (telegram, handled) = try await Self.start(seed: 82)
        let client = try telegram.client(floodWaitThreshold: 5, followsUpdates: false)
        telegram.server.contexts[2]?.faults.errors["help.getNearestDc"] = RPCError(code: 420, message: "FLOOD_WAIT_6")
        await #expect {
            _ = try await client.invoke(Api.functions.help.getNearestDc())
        } throws: { error in
            guard case MTProtoClientError.rpc(let rpc) = error else { return false }
            return rpc.kind == .floodWait(seconds: 6)
        }
        #expect(handled.failed("help.getNearestDc") == 1)
        #expect(handled.ok("help.getNearestDc") == 0)
        await client.close()
        try await telegram.server.shutdown()
    }

    /// With only the built-in middlewares and the home connection open, a call goes to the home DC before the
    /// chain and enters it only when it fails: the rules must come out the same. A flood wait below the threshold
    /// is waited out with one more attempt, one above is thrown after one, and a home migration is followed.
    @Test(arguments: [("FLOOD_WAIT_0", 2, 1), ("FLOOD_WAIT_6", 1, 1), ("PHONE_MIGRATE_1", 2, 1)])
    func aCallSentBeforeTheChainMeetsTheSameRules(message: String, ok: Int, failed: Int) async throws {
        let (telegram, handled) = try await Self.start(seed: 86)
        let client = try telegram.client(floodWaitThreshold: 5, followsUpdates: false)
        #expect(try await Self.answeringDC(client) == 2)  // the home connection is open from here on
        let code: Int32 = message.hasPrefix("FLOOD") ? 420 : 303
        telegram.server.contexts[2]?.faults.errorsOnce["help.getNearestDc"] = RPCError(code: code, message: message)
        let answer: Result<Int32, any Error>
        do { answer = .success(try await Self.answeringDC(client)) } catch { answer = .failure(error) }
        switch message {
            case "FLOOD_WAIT_6":
                guard case .failure(MTProtoClientError.rpc(let rpc)) = answer else {
                    Issue.record("expected FLOOD_WAIT_6, got \(answer)")
                    break
                }
                #expect(rpc.kind == .floodWait(seconds: 6))
            case "PHONE_MIGRATE_1":
                let home = await client.homeDC
                #expect(try answer.get() == 1 && home == 1)
            default:
                #expect(try answer.get() == 2)
        }
        // The warm-up and each attempt, as the server saw them: no attempt more or less than the rule says.
        #expect(handled.ok("help.getNearestDc") == ok)
        #expect(handled.failed("help.getNearestDc") == failed)
        await client.close()
        try await telegram.server.shutdown()
    }

    /// PHONE_MIGRATE, USER_MIGRATE and NETWORK_MIGRATE move the home DC, in the store too, and the call follows.
    @Test(arguments: ["PHONE_MIGRATE_1", "USER_MIGRATE_1", "NETWORK_MIGRATE_1"])
    func aHomeMigrationMovesTheAccountAndTheCall(message: String) async throws {
        let (telegram, handled) = try await Self.start(seed: 83)
        let store = MemorySessionStore()
        let client = try telegram.client(store: store, followsUpdates: false)
        telegram.server.contexts[2]?.faults.errorsOnce["help.getNearestDc"] = RPCError(code: 303, message: message)
        #expect(try await Self.answeringDC(client) == 1)
        #expect(await client.homeDC == 1)
        #expect(await store.load().homeDC == 1)
        #expect(handled.failed("help.getNearestDc") == 1)
        #expect(handled.ok("help.getNearestDc") == 1)
        await client.close()
        try await telegram.server.shutdown()
    }

    /// FILE_MIGRATE and STATS_MIGRATE send the call to the DC named after an authorization transfer; the home DC
    /// stays.
    @Test(arguments: ["FILE_MIGRATE_1", "STATS_MIGRATE_1"])
    func aCallMigrationSendsTheCallElsewhereAfterAnAuthorizationTransfer(message: String) async throws {
        let (telegram, handled) = try await Self.start(seed: 84)
        let client = try telegram.client(followsUpdates: false)
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        telegram.server.contexts[2]?.faults.errorsOnce["help.getNearestDc"] = RPCError(code: 303, message: message)
        #expect(try await Self.answeringDC(client) == 1)
        #expect(await client.homeDC == 2)
        #expect(await client.connectedDCs == [1, 2])
        #expect(handled.ok("auth.exportAuthorization") == 1)
        #expect(handled.ok("auth.importAuthorization") == 1)
        #expect(handled.failed("help.getNearestDc") == 1)
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func aCallFollowsAtMostMaxMigrations() async throws {
        let (telegram, handled) = try await Self.start(seed: 85)
        let client = try telegram.client(followsUpdates: false)
        telegram.server.contexts[2]?.faults.errors["help.getNearestDc"] = RPCError(code: 303, message: "NETWORK_MIGRATE_2")
        await #expect {
            _ = try await client.invoke(Api.functions.help.getNearestDc())
        } throws: { error in
            guard case TelegramClientError.tooManyMigrations(let last) = error else { return false }
            return last.message == "NETWORK_MIGRATE_2"
        }
        // The first attempt and one per migration followed (`maxMigrations` is 5 by default).
        #expect(handled.failed("help.getNearestDc") == 6)
        await client.close()
        try await telegram.server.shutdown()
    }

    /// A user's middleware holds five calls: none reaches the server until it lets them go, then all do.
    @Test func aUserMiddlewareCountsAndHoldsCalls() async throws {
        let (telegram, handled) = try await Self.start(seed: 86)
        let gate = CountingGate(method: "help.getNearestDc")
        let client = try telegram.client(followsUpdates: false, middlewares: [gate])
        try await client.connect()
        let calls = 5
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<calls {
                group.addTask { _ = try await client.invoke(Api.functions.help.getNearestDc()) }
            }
            var arrivals = gate.arrivals.makeAsyncIterator()
            for _ in 0..<calls { _ = await arrivals.next() }
            #expect(gate.entered.withLock { $0 } == calls)
            #expect(gate.finished.withLock { $0 } == 0)
            #expect(handled.ok("help.getNearestDc") == 0)
            await gate.barrier.open()
            try await group.waitForAll()
        }
        #expect(gate.finished.withLock { $0 } == calls)
        #expect(handled.ok("help.getNearestDc") == calls)
        await client.close()
        try await telegram.server.shutdown()
    }
}
