// Fault injection: each fault the server can be told to commit, and a client session that copes with it (or the
// typed close it causes). Seeded: the draws come from the context's fault seed.
import MTProto
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

@Suite struct FaultTests {
    /// A connected pair with a session on a fresh key, and that session's server key.
    static func connected(seed: UInt64) throws -> (Pair, ServerContext, SessionKey) {
        let context = try Fixture.context(seed: seed)
        var pair = try Pair(context: context, kind: .intermediate, wrapping: .obfuscated2, seed: seed)
        let key = try pair.handshake()
        guard case .success = try pair.call(firstCall()) else { throw HarnessFailure(description: "no config") }
        return (pair, context, SessionKey(authKeyID: key.authKey.idValue, sessionID: pair.session?.sessionID ?? 0))
    }

    @Test func chosenMethodsAnswerChosenErrors() throws {
        var (pair, context, _) = try Self.connected(seed: 1)
        context.faults.errors["help.getConfig"] = RPCError(code: 420, message: "FLOOD_WAIT_5")
        guard case .failure(let error) = try pair.call(firstCall()) else {
            Issue.record("the injected error was not sent")
            return
        }
        #expect(error.kind == .floodWait(seconds: 5))
        context.faults.errors["help.getConfig"] = RPCError(code: 303, message: "PHONE_MIGRATE_3")
        guard case .failure(let migrate) = try pair.call(firstCall()) else { return }
        #expect(migrate.code == 303 && migrate.value == 3)
    }

    @Test func aOneShotErrorAnswersOnlyTheFirstCall() throws {
        var (pair, context, _) = try Self.connected(seed: 3)
        context.faults.errorsOnce["help.getConfig"] = RPCError(code: 420, message: "FLOOD_WAIT_1")
        guard case .failure(let error) = try pair.call(firstCall()) else {
            Issue.record("the one-shot error was not sent")
            return
        }
        #expect(error.kind == .floodWait(seconds: 1))
        #expect(context.faults.errorsOnce.isEmpty)
        guard case .success(.config) = try pair.call(firstCall()) else {
            Issue.record("the call after the one-shot error was not answered")
            return
        }
    }

    @Test func connectionClosesMidRequest() throws {
        var (pair, context, _) = try Self.connected(seed: 2)
        context.faults.closeOn = ["help.getConfig"]
        #expect(throws: HarnessFailure.self) { _ = try pair.call(firstCall()) }
        #expect(pair.server.closed == .faultInjected(method: "help.getConfig"))
    }

    @Test func duplicatedAndReorderedFramesAreHarmless() throws {
        var (pair, context, _) = try Self.connected(seed: 3)
        context.faults.duplicateOutgoing = 1
        context.faults.reorderOutgoing = 1
        for _ in 0..<3 {
            guard case .success(.config) = try pair.call(firstCall()) else {
                Issue.record("not answered with duplicated, reordered frames")
                return
            }
        }
    }

    @Test func droppedFramesAreNotSent() throws {
        var (pair, context, key) = try Self.connected(seed: 4)
        context.faults.dropOutgoing = 1
        #expect(context.sessions.withExisting(key) { $0.push(TestTelegram.serialized(Api.Updates.updatesTooLong)) } != nil)
        #expect(pair.server.flush(now: pair.now).outbound.isEmpty)
    }

    @Test(arguments: [16, 17, 32, 33, 48] as [Int32])
    func injectedBadMessagesAreRecoveredFrom(code: Int32) throws {
        var (pair, context, key) = try Self.connected(seed: 5)
        #expect(context.injectBadMessages([code], into: key))
        guard case .success(.config) = try pair.call(firstCall()) else {
            Issue.record("bad_msg_notification \(code) was not recovered from")
            return
        }
    }

    @Test func resetSessionIsAnnounced() throws {
        var (pair, context, key) = try Self.connected(seed: 6)
        #expect(context.resetSession(key))
        guard case .success(.config) = try pair.call(firstCall()) else {
            Issue.record("not answered after the session was reset")
            return
        }
    }

    @Test func rotatedSaltsAreAdopted() throws {
        var (pair, context, key) = try Self.connected(seed: 7)
        let salt = try #require(context.rotateSalts(authKeyID: key.authKeyID, now: pair.now))
        #expect(pair.session?.salt != salt)
        guard case .success(.config) = try pair.call(firstCall()) else {
            Issue.record("not answered after salts rotated")
            return
        }
        #expect(pair.session?.salt == salt)
        #expect(context.keys.entry(id: key.authKeyID)?.salts.current(at: pair.now) == salt)
    }

    @Test func closeOnceClosesOnlyTheFirstCall() throws {
        var (pair, context, _) = try Self.connected(seed: 9)
        context.faults.closeOnceOn = ["help.getConfig"]
        #expect(throws: HarnessFailure.self) { _ = try pair.call(firstCall()) }
        #expect(pair.server.closed == .faultInjected(method: "help.getConfig"))
        #expect(context.faults.closeOnceOn.isEmpty)
        // A new connection's call is answered.
        var next = try Pair(context: context, kind: .abridged, wrapping: .plain, seed: 11)
        _ = try next.handshake()
        guard case .success(.config) = try next.call(firstCall()) else {
            Issue.record("a later call was closed too")
            return
        }
    }

    @Test func delayedFramesGoOutWhenTheirTimeComes() throws {
        var (pair, context, key) = try Self.connected(seed: 12)
        context.faults.delayOutgoing = 1
        context.faults.delaySeconds = 2
        context.sessions.withExisting(key) { $0.push(TestTelegram.serialized(Api.Updates.updatesTooLong)) }
        #expect(pair.server.flush(now: pair.now).outbound.isEmpty)
        let deadline = try #require(pair.server.nextDeadline)
        #expect(deadline <= pair.now + 2)
        #expect(pair.server.tick(now: pair.now + 1).outbound.isEmpty)
        context.faults.delayOutgoing = 0
        #expect(!pair.server.tick(now: pair.now + 2).outbound.isEmpty)
    }

    /// The same seeds give the same drops: a failing run replays.
    @Test func dropsReplayFromTheSeed() throws {
        func pattern() throws -> [Bool] {
            var (pair, context, key) = try Self.connected(seed: 8)
            context.faults.dropOutgoing = 0.5
            return (0..<24).map { _ in
                context.sessions.withExisting(key) { $0.push(TestTelegram.serialized(Api.Updates.updatesTooLong)) }
                return pair.server.flush(now: pair.now).outbound.isEmpty
            }
        }
        let first = try pattern()
        #expect(try pattern() == first)
        #expect(first.contains(true) && first.contains(false))
    }
}

@Suite struct FaultSpecTests {
    @Test func specIsRead() throws {
        let plan = try FaultPlan(parsing: "drop=0.25, duplicate=1,reorder=0,error=help.getConfig:420:FLOOD_WAIT_5,close=updates.getState,delay=0.5:3,close-once=messages.getHistory,error-once=help.getNearestDc:420:FLOOD_WAIT_1")
        #expect(plan.delayOutgoing == 0.5 && plan.delaySeconds == 3 && plan.closeOnceOn == ["messages.getHistory"])
        #expect(plan.dropOutgoing == 0.25 && plan.duplicateOutgoing == 1 && plan.reorderOutgoing == 0)
        #expect(plan.errors["help.getConfig"] == RPCError(code: 420, message: "FLOOD_WAIT_5"))
        #expect(plan.closeOn == ["updates.getState"])
        #expect(plan.errorsOnce == ["help.getNearestDc": RPCError(code: 420, message: "FLOOD_WAIT_1")])
    }

    @Test(arguments: ["drop=2", "drop", "error=help.getConfig:x:Y", "error=help.getConfig:400", "error-once=help.getConfig", "flood=1", "delay=0.5",
                      "delay=2:1", "delay=0.5:-1"])
    func badSpecsAreRefused(spec: String) {
        #expect(throws: FaultPlan.SpecError.self) { try FaultPlan(parsing: spec) }
    }
}
