// Handlers that answer later: the sans-IO connection keeps a request pending (its work handed out, its answer fed
// back, its timeout answered at a deadline that comes in with the time, its caps), and over real sockets a test
// Telegram handler waits for another session's call while the same connection's other calls are answered. Every
// wait is a barrier or a count; no assertion depends on how long something took.
import MTProto
import MTProtoApi
import MTProtoClient
import MTProtoServer
import MTProtoTransport
import Synchronization
import TLRuntime
import TelegramApi
import TelegramApiServer
import TestTelegram
import Testing

/// A signal handlers wait for. `fire(_:)` wakes every waiter with a message; the test waits (without sleeping) until
/// a number of handlers have started waiting, or a number of waits were cancelled.
final class Gate: Sendable {
    private struct State {
        var message: String?
        var waiting: [Int: CheckedContinuation<String?, Never>] = [:]
        var cancelledTokens: Set<Int> = []
        var lastToken = 0
        var arrivals = 0
        var cancellations = 0
        var watchers: [(ready: @Sendable (Int, Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

        /// The watchers whose condition holds now, removed.
        mutating func due() -> [CheckedContinuation<Void, Never>] {
            var ready: [CheckedContinuation<Void, Never>] = []
            watchers.removeAll { watcher in
                guard watcher.ready(arrivals, cancellations) else { return false }
                ready.append(watcher.continuation)
                return true
            }
            return ready
        }
    }
    private let state = Mutex(State())

    /// Waits for `fire`: its message, or nil when the waiting task is cancelled first.
    func wait() async -> String? {
        let token = state.withLock { state in
            state.lastToken += 1
            return state.lastToken
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                let (now, due): (String??, [CheckedContinuation<Void, Never>]) = state.withLock { state in
                    if let message = state.message { return (.some(message), []) }
                    if state.cancelledTokens.contains(token) { return (.some(nil), []) }
                    state.waiting[token] = continuation
                    state.arrivals += 1
                    return (nil, state.due())
                }
                if let now { continuation.resume(returning: now) }
                for watcher in due { watcher.resume() }
            }
        } onCancel: {
            // Counted whether or not the wait had begun: a task cancelled before it got here is cancelled too.
            let (waiter, due) = state.withLock { state in
                state.cancelledTokens.insert(token)
                state.cancellations += 1
                return (state.waiting.removeValue(forKey: token), state.due())
            }
            waiter?.resume(returning: nil)
            for watcher in due { watcher.resume() }
        }
    }

    /// Wakes every waiter, and those to come, with `message`.
    func fire(_ message: String) {
        let waiters = state.withLock { state in
            state.message = message
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for waiter in waiters { waiter.resume(returning: message) }
    }

    var fired: Bool { state.withLock { $0.message != nil } }
    var cancellations: Int { state.withLock { $0.cancellations } }

    /// Returns once `count` waits have begun.
    func arrivals(_ count: Int) async { await until { arrivals, _ in arrivals >= count } }

    /// Returns once `count` waits were cancelled.
    func cancelled(_ count: Int) async { await until { _, cancellations in cancellations >= count } }

    private func until(_ ready: @escaping @Sendable (Int, Int) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard !ready(state.arrivals, state.cancellations) else { return true }
                state.watchers.append((ready, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}

@Suite struct LaterAnswerTests {
    static var promo: (FunctionDescription, Buffer, DeserializeFunctionResponse<Api.help.PromoData>) {
        Api.functions.help.getPromoData()
    }

    /// Handlers with `help.getPromoData` answered later, within `seconds`.
    static func handlers(seconds: Double? = nil) -> RPCHandlers {
        var handlers = TestTelegram.handlers()
        handlers.on(Api.functions.help.GetPromoData.self, timeout: AnswerTimeout(seconds: seconds)) { call, _ in
            .promoDataEmpty(.init(expires: Int32(call.now) + 60))
        }
        return handlers
    }

    // MARK: The sans-IO connection

    @Test func aPendingAnswerIsAStateItsAnswerAnInputAndTheOtherRequestsGoOn() async throws {
        let context = try Fixture.context(handlers: Self.handlers(seconds: 5))
        var pair = try Pair(context: context, seed: 71)
        _ = try pair.handshake()
        let later = try pair.queue(Self.promo)
        #expect(try pair.roundTrip().isEmpty)
        #expect(pair.awaiting.count == 1 && pair.server.pendingAnswerCount == 1)
        #expect(context.sessions.pendingAnswerCount == 1)
        #expect(!pair.events.contains { if case .handled(method: "help.getPromoData", _, _) = $0 { true } else { false } })

        // Meanwhile the connection answers the session's next call.
        let nearest = try pair.queue(Api.functions.help.getNearestDc())
        let answered = try pair.roundTrip()
        #expect(answered.keys.sorted() == [nearest])

        // The handler's work, run by the driver, and its answer fed back.
        let awaited = try #require(pair.awaiting.first)
        let result = await awaited.call.run()
        let answer = try pair.take(pair.server.complete(awaited.id, with: result, now: pair.now))
        guard case .success(let bytes)? = answer[later], case .promoDataEmpty(let empty) = try Self.promo.2.parse(bytes: bytes)
        else { throw HarnessFailure(description: "not the handler's answer: \(answer)") }
        #expect(empty.expires == Int32(Fixture.now) + 60)
        #expect(pair.server.pendingAnswerCount == 0 && context.sessions.pendingAnswerCount == 0)
        // Given twice, the second is dropped.
        #expect(pair.server.complete(awaited.id, with: result, now: pair.now).isEmpty)
    }

    @Test func theTimeoutComesInWithTheTimeAndIsAnsweredMinus503() throws {
        let context = try Fixture.context(handlers: Self.handlers(seconds: 5))
        var pair = try Pair(context: context, seed: 72)
        _ = try pair.handshake()
        let later = try pair.queue(Self.promo)
        _ = try pair.roundTrip()
        let awaited = try #require(pair.awaiting.first)
        let deadline = pair.now + 5
        #expect(try #require(pair.server.nextDeadline) <= deadline)
        #expect(try pair.take(pair.server.tick(now: deadline - 0.001))[later] == nil)
        #expect(pair.server.pendingAnswerCount == 1)

        let output = pair.server.tick(now: deadline)
        #expect(output.cancelled == [awaited.id])
        #expect(try pair.take(output)[later] == .failure(RPCError(code: -503, message: "Timeout")))
        #expect(pair.server.pendingAnswerCount == 0 && context.sessions.pendingAnswerCount == 0)
        // The handler's answer coming after its timeout is dropped.
        #expect(pair.server.complete(awaited.id, with: .success([0, 0, 0, 0]), now: deadline).isEmpty)
    }

    @Test func pastEitherCapACallIsRefusedAtOnce() throws {
        var limits = ServerLimits()
        limits.maxPendingAnswersPerConnection = 2
        limits.maxPendingAnswers = 3
        let context = try Fixture.context(limits: limits, handlers: Self.handlers())
        var first = try Pair(context: context, seed: 73)
        _ = try first.handshake()
        var calls = try (0..<3).map { _ in try first.queue(Self.promo) }
        let refused = try first.roundTrip()
        #expect(first.server.pendingAnswerCount == 2)
        #expect(refused == [calls[2]: .failure(.pendingAnswersTooMany)])
        #expect(RPCError.pendingAnswersTooMany == RPCError(code: 500, message: "PENDING_ANSWERS_TOO_MANY"))

        // The DC's cap counts every connection's pending answers.
        var second = try Pair(context: context, seed: 74)
        _ = try second.handshake()
        calls = try (0..<2).map { _ in try second.queue(Self.promo) }
        #expect(try second.roundTrip() == [calls[1]: .failure(.pendingAnswersTooMany)])
        #expect(second.server.pendingAnswerCount == 1 && context.sessions.pendingAnswerCount == 3)

        // A connection closed by the server gives its pending answers up and lists their work to cancel.
        let closed = first.server.receive([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], now: first.now)
        #expect(closed.close != nil)
        #expect(closed.cancelled == first.awaiting.map(\.id))
        #expect(context.sessions.pendingAnswerCount == 1)
        #expect(second.server.dropPendingAnswers() == second.awaiting.map(\.id))
        #expect(context.sessions.pendingAnswerCount == 0)
    }

    @Test func aDestroyedSessionsPendingAnswerIsGivenUp() throws {
        let context = try Fixture.context(handlers: Self.handlers())
        var pair = try Pair(context: context, seed: 75)
        _ = try pair.handshake()
        _ = try pair.queue(Self.promo)
        _ = try pair.roundTrip()
        let awaited = try #require(pair.awaiting.first)
        let key = try #require(pair.server.sessionKeys.first)
        #expect(context.sessions.remove(key))
        let output = pair.server.flush(now: pair.now)
        #expect(output.cancelled == [awaited.id])
        #expect(pair.server.pendingAnswerCount == 0 && context.sessions.pendingAnswerCount == 0)
    }

    /// A call whose typed request the registry cannot read dynamically: `call.request` throws the answer a
    /// malformed call gets, rather than standing in an empty request.
    @Test func aCallTheRegistryCannotReadIsRefusedWhenItsDynamicViewIsAskedFor() throws {
        var handlers = RPCHandlers(registry: MT.registry)  // mtproto.tl: no auth.bindTempAuthKey
        handlers.on(BindTemporaryKey.self) { call, _ throws(RPCError) in
            _ = try call.request
            return true
        }
        let body = Api.functions.auth.bindTempAuthKey(permAuthKeyId: 1, nonce: 2, expiresAt: 3,
                                                      encryptedMessage: [4]).1.bytes
        let endpoint = TypedHandlerTests.endpoint
        let (method, outcome) = handlers.dispatch(body: body, authKeyID: 1, sessionID: 1, messageID: 4,
                                                  endpoint: endpoint, dcs: [endpoint], now: Fixture.now)
        #expect(method == "auth.bindTempAuthKey")
        #expect(outcome.now == .failure(RPCError(code: 400, message: "INPUT_METHOD_INVALID")))
    }

    // MARK: Over sockets, on the test Telegram

    /// A test Telegram whose `getBotCallbackAnswer` waits for `setBotCallbackAnswer` (`answeredByTheBot`), with a
    /// user and a bot connected, each over a connection and session of its own.
    struct Loopback {
        let service = TestTelegramService()
        let gate = Gate()
        let server: MTProtoTestServer
        let user: MTProtoClient
        let bot: MTProtoClient

        init(timeout: AnswerTimeout = .standard, limits: ServerLimits = ServerLimits()) async throws {
            LaterAnswerTests.answeredByTheBot(service, gate, timeout: timeout)
            server = try await MTProtoTestServer.start(.init(rsaKeys: [try Fixture.rsaKey()],
                                                             handlers: service.handlers(), limits: limits))
            service.attach(server)
            user = try TestTelegramLoopbackTests.client(server, dc: 2)
            bot = try TestTelegramLoopbackTests.client(server, dc: 2)
            try await user.connect()
            try await bot.connect()
        }

        var pendingAnswers: Int { server.context.sessions.pendingAnswerCount }

        func stop() async throws {
            await user.close()
            await bot.close()
            try await server.shutdown()
        }
    }

    static var callback: (FunctionDescription, Buffer, DeserializeFunctionResponse<Api.messages.BotCallbackAnswer>) {
        Api.functions.messages.getBotCallbackAnswer(peer: .inputPeerUser(.init(userId: 7, accessHash: 0)), msgId: 1,
                                                    data: [1])
    }

    /// The user's `getBotCallbackAnswer` waits for the bot's `setBotCallbackAnswer`, from another session; while it
    /// waits, the user's connection answers another call.
    static func answeredByTheBot(_ service: TestTelegramService, _ gate: Gate, timeout: AnswerTimeout) {
        service.on(Api.functions.messages.GetBotCallbackAnswer.self, timeout: timeout) { _, _ in
            .botCallbackAnswer(.init(message: await gate.wait(), cacheTime: 0))
        }
        service.on(Api.functions.messages.SetBotCallbackAnswer.self) { _, request in
            gate.fire(request.message ?? "")
            return true
        }
    }

    static func message(_ answer: Api.messages.BotCallbackAnswer) -> String? {
        guard case .botCallbackAnswer(let answer) = answer else { return nil }
        return answer.message
    }

    static func rpcError(_ body: @escaping @Sendable () async throws -> Void) async -> RPCError? {
        do {
            try await body()
            return nil
        } catch MTProtoClientError.rpc(let error) {
            return error
        } catch {
            return RPCError(code: 0, message: "\(error)")
        }
    }

    @Test func aHandlerWaitsForAnotherSessionsCallWhileTheConnectionServesTheRest() async throws {
        let loop = try await Loopback()
        let waiting = Task { try await loop.user.invoke(Self.callback) }
        try await TestServerTests.within(20) { await loop.gate.arrivals(1) }
        #expect(loop.pendingAnswers == 1)

        // The same connection answers another call while the first waits: the signal has not been sent.
        guard case .nearestDc = try await loop.user.invoke(Api.functions.help.getNearestDc()) else {
            throw HarnessFailure(description: "no nearestDc")
        }
        #expect(!loop.gate.fired)

        #expect(try await loop.bot.invoke(Api.functions.messages.setBotCallbackAnswer(queryId: 1, message: "pong",
                                                                                      cacheTime: 0)))
        let answer = try await TestServerTests.within(20) { try await waiting.value }
        #expect(Self.message(answer) == "pong")
        #expect(loop.pendingAnswers == 0 && loop.gate.cancellations == 0)
        try await loop.stop()
    }

    /// The timeout answers for the handler, -503 Timeout or the method's own error, and cancels its wait.
    @Test func aHandlerPastItsTimeoutIsAnsweredForAndCancelled() async throws {
        let loop = try await Loopback(timeout: AnswerTimeout(seconds: 0.05))
        let timedOut = await Self.rpcError { _ = try await loop.user.invoke(Self.callback) }
        #expect(timedOut == RPCError(code: -503, message: "Timeout"))
        #expect(loop.pendingAnswers == 0)
        try await TestServerTests.within(20) { await loop.gate.cancelled(1) }

        let botTimeout = RPCError(code: 400, message: "BOT_RESPONSE_TIMEOUT")
        Self.answeredByTheBot(loop.service, loop.gate, timeout: AnswerTimeout(seconds: 0.05, error: botTimeout))
        #expect(await Self.rpcError { _ = try await loop.user.invoke(Self.callback) } == botTimeout)
        #expect(loop.pendingAnswers == 0)
        try await TestServerTests.within(20) { await loop.gate.cancelled(2) }
        #expect(!loop.gate.fired)
        try await loop.stop()
    }

    @Test func theConnectionClosingWhileAnAnswerIsPendingCancelsTheWait() async throws {
        let loop = try await Loopback()
        let waiting = Task { try await loop.user.invoke(Self.callback) }
        try await TestServerTests.within(20) { await loop.gate.arrivals(1) }
        #expect(loop.pendingAnswers == 1)
        await loop.user.close()
        try await TestServerTests.within(20) { await loop.gate.cancelled(1) }
        #expect(loop.pendingAnswers == 0)
        _ = await waiting.result
        // The other connection is served as before.
        guard case .nearestDc = try await loop.bot.invoke(Api.functions.help.getNearestDc()) else {
            throw HarnessFailure(description: "no nearestDc")
        }
        try await loop.stop()
    }

    @Test func oneMorePendingAnswerThanAllowedIsRefused() async throws {
        var limits = ServerLimits()
        limits.maxPendingAnswersPerConnection = 1
        let loop = try await Loopback(limits: limits)
        let waiting = Task { try await loop.user.invoke(Self.callback) }
        try await TestServerTests.within(20) { await loop.gate.arrivals(1) }
        #expect(await Self.rpcError { _ = try await loop.user.invoke(Self.callback) } == .pendingAnswersTooMany)
        _ = try await loop.bot.invoke(Api.functions.messages.setBotCallbackAnswer(queryId: 1, message: "late",
                                                                                  cacheTime: 0))
        #expect(Self.message(try await TestServerTests.within(20) { try await waiting.value }) == "late")
        #expect(loop.pendingAnswers == 0)
        try await loop.stop()
    }
}

extension Pair {
    /// Queues a call in the client session; it goes out with the next `roundTrip()`.
    mutating func queue<T>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>)) throws -> RequestID {
        guard var session else { throw HarnessFailure(description: "no session") }
        defer { self.session = session }
        return try session.send(call)
    }

    /// Sends what the client session has queued and returns the answers that came back, by request.
    mutating func roundTrip() throws -> [RequestID: Result<[UInt8], RPCError>] {
        guard var client = session else { throw HarnessFailure(description: "no session") }
        var answers: [RequestID: Result<[UInt8], RPCError>] = [:]
        for frame in client.outgoing(now: now) {
            let frames = try deliver(frame.bytes)
            for answer in frames {
                let events = try client.receive(frame: answer, now: now)
                answers.merge(Self.answers(events)) { $1 }
            }
        }
        session = client
        return answers
    }

    /// The answers in what the server wrote outside `receive` (`complete`, `tick`, `flush`).
    mutating func take(_ output: ServerConnectionOutput) throws -> [RequestID: Result<[UInt8], RPCError>] {
        guard var client = session else { throw HarnessFailure(description: "no session") }
        defer { session = client }
        events += output.events
        awaiting += output.awaiting
        guard !output.outbound.isEmpty else { return [:] }
        var answers: [RequestID: Result<[UInt8], RPCError>] = [:]
        let decoded = try transport.receive(output.outbound)
        for case .frame(let payload, _) in decoded.events {
            let events = try client.receive(frame: payload, now: now)
            answers.merge(Self.answers(events)) { $1 }
        }
        return answers
    }

    static func answers(_ events: [SessionEvent]) -> [RequestID: Result<[UInt8], RPCError>] {
        var answers: [RequestID: Result<[UInt8], RPCError>] = [:]
        for event in events {
            switch event {
            case .result(let id, let bytes): answers[id] = .success(Array(bytes))
            case .rpcError(let id, let error): answers[id] = .failure(error)
            default: break
            }
        }
        return answers
    }
}
