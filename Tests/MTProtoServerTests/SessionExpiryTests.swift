// Sessions a server keeps after their connection closed: a client that reconnects within
// `ServerLimits.detachedSessionLifetime` finds its session; past it (and past the time window) the session is
// forgotten, its auth key kept, and the client's next message is told `new_session_created` and answered. The
// server's clock is given in, so nothing here waits.
import Foundation
import MTProto
import MTProtoCrypto
import MTProtoServer
import NIOCore
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

@Suite struct SessionExpiryTests {
    /// A client's first connection: key exchange and the first call; its server connection then goes away.
    static func connectedOnce(_ context: ServerContext, seed: UInt64) throws -> (pair: Pair, key: SessionKey) {
        var pair = try Pair(context: context, kind: .intermediate, wrapping: .plain, seed: seed)
        let result = try pair.handshake()
        guard case .success = try pair.call(firstCall()) else { throw HarnessFailure(description: "no config") }
        let session = try #require(pair.session)
        return (pair, SessionKey(authKeyID: result.authKey.idValue, sessionID: session.sessionID))
    }

    /// The same client session on a new connection at `now`.
    static func reconnected(_ first: Pair, context: ServerContext, seed: UInt64, now: Double) throws -> Pair {
        var pair = try Pair(context: context, kind: .intermediate, wrapping: .plain, seed: seed)
        pair.session = first.session
        pair.now = now
        return pair
    }

    /// Sends `help.getNearestDc` and exchanges frames until it is answered; returns the client events seen.
    static func nearestDC(_ pair: inout Pair) throws -> [SessionEvent] {
        var session = try #require(pair.session)
        defer { pair.session = session }
        let id = try session.send(Api.functions.help.getNearestDc())
        var events: [SessionEvent] = []
        for _ in 0..<6 {
            for frame in session.outgoing(now: pair.now) {
                for answer in try pair.deliver(frame.bytes) { events += try session.receive(frame: answer, now: pair.now) }
            }
            if events.contains(where: { if case .result(id, _) = $0 { true } else { false } }) { return events }
            pair.now += 0.01
        }
        throw HarnessFailure(description: "help.getNearestDc unanswered: \(events)")
    }

    static func created(_ events: [ServerConnectionEvent]) -> Int {
        events.filter { if case .sessionCreated = $0 { true } else { false } }.count
    }

    @Test func aClientReconnectingWithinTheLifetimeFindsItsSession() throws {
        var limits = ServerLimits()
        limits.detachedSessionLifetime = 600
        let context = try Fixture.context(limits: limits)
        var (first, key) = try Self.connectedOnce(context, seed: 5610)
        #expect(Self.created(first.events) == 1)
        first.server.detachSessions(now: first.now)
        #expect(context.sessions.detachedCount == 1)
        let later = first.now + 599
        #expect(context.expireSessions(now: later).isEmpty)
        var second = try Self.reconnected(first, context: context, seed: 5611, now: later)
        let events = try Self.nearestDC(&second)
        #expect(Self.created(second.events) == 0, "the session was found")
        #expect(!events.contains { if case .sessionCreated = $0 { true } else { false } })
        #expect(context.sessions.detachedCount == 0)
        #expect(context.sessions.allKeys == [key])
        // Carried again, it does not expire however long the connection stays.
        #expect(context.expireSessions(now: later + 10_000).isEmpty)
    }

    @Test func anExpiredSessionIsCreatedAgainOnTheSameKey() throws {
        var limits = ServerLimits()
        limits.detachedSessionLifetime = 600
        let context = try Fixture.context(limits: limits)
        var (first, key) = try Self.connectedOnce(context, seed: 5620)
        first.server.detachSessions(now: first.now)
        let later = first.now + 600
        #expect(context.expireSessions(now: later) == [key])
        #expect(context.sessions.count == 0)
        #expect(context.keys.entry(id: key.authKeyID) != nil, "the auth key stays")
        var second = try Self.reconnected(first, context: context, seed: 5621, now: later + 1)
        let events = try Self.nearestDC(&second)
        #expect(second.events.contains(.sessionCreated(key)))
        #expect(events.contains { if case .sessionCreated = $0 { true } else { false } })
        #expect(context.sessions.allKeys == [key])
    }

    /// However short the lifetime, a session is kept until every message it received is outside the 300 s time
    /// window, so a copy of one cannot run again in a new session.
    @Test func aSessionOutlivesTheTimeWindowOfWhatItReceived() throws {
        var limits = ServerLimits()
        limits.detachedSessionLifetime = 1
        let context = try Fixture.context(limits: limits)
        var (first, key) = try Self.connectedOnce(context, seed: 5630)
        first.server.detachSessions(now: first.now)
        #expect(context.expireSessions(now: first.now + 2).isEmpty)
        #expect(context.expireSessions(now: first.now + 299).isEmpty)
        #expect(context.expireSessions(now: first.now + 302) == [key])
    }

    /// A connection the session moved away from does not leave it detached; the one carrying it does.
    @Test func onlyTheCarryingConnectionDetaches() throws {
        let context = try Fixture.context()
        var (first, _) = try Self.connectedOnce(context, seed: 5640)
        var second = try Self.reconnected(first, context: context, seed: 5641, now: first.now + 1)
        _ = try Self.nearestDC(&second)
        first.server.detachSessions(now: second.now)
        #expect(context.sessions.detachedCount == 0)
        second.server.detachSessions(now: second.now)
        #expect(context.sessions.detachedCount == 1)
    }

    /// Repacking the key store (after a sweep) copies every key: the same key, salts and binding, and a session on
    /// it, old or new, is served as before.
    @Test func repackedKeysServeAsBefore() throws {
        let context = try Fixture.context()
        var (first, key) = try Self.connectedOnce(context, seed: 5670)
        let before = try #require(context.keys.entry(id: key.authKeyID))
        context.keys.repack()
        let after = try #require(context.keys.entry(id: key.authKeyID))
        #expect(after.key == before.key && after.salts == before.salts && after.createdAt == before.createdAt)
        _ = try Self.nearestDC(&first)
        first.server.detachSessions(now: first.now)
        #expect(context.expireSessions(now: first.now + 1_000) == [key])
        var second = try Self.reconnected(first, context: context, seed: 5671, now: first.now + 1_001)
        _ = try Self.nearestDC(&second)
        #expect(second.events.contains(.sessionCreated(key)))
    }

    @Test func sessionsNeverExpireWithAnInfiniteLifetime() throws {
        var limits = ServerLimits()
        limits.detachedSessionLifetime = .infinity
        let context = try Fixture.context(limits: limits)
        var (first, _) = try Self.connectedOnce(context, seed: 5650)
        first.server.detachSessions(now: first.now)
        #expect(context.expireSessions(now: first.now + 1e9).isEmpty)
        #expect(context.sessions.count == 1)
    }

    /// Over sockets: the listener's timer forgets the session a closed client left (the server's clock moved past
    /// its lifetime and the time window), and the auth key it keeps serves the next client of the same store.
    @Test func theListenerSweepsSessionsLeftByClosedConnections() async throws {
        let clock = TestClock()
        var limits = ServerLimits()
        limits.detachedSessionLifetime = 1
        let telegram = try await LocalTelegram.start(seed: 5660, clock: clock.now, serverLimits: limits)
        let context = try #require(telegram.server.contexts[2])
        let store = MemorySessionStore()
        let client = try telegram.client(store: store, followsUpdates: false, clock: clock.now)
        _ = try await client.invoke(Api.functions.help.getNearestDc())
        let keys = context.keys.createdCount
        #expect(context.sessions.count == 1)
        await client.close()
        // Bounds against a hang, not timings: the close reaches the server, then the sweep runs once a second.
        for _ in 0..<3_000 where context.sessions.detachedCount < 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(context.sessions.detachedCount == 1)
        clock.advance(by: 400)
        for _ in 0..<3_000 where context.sessions.count > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(context.sessions.count == 0)
        let again = try telegram.client(store: store, followsUpdates: false, clock: clock.now)
        _ = try await again.invoke(Api.functions.help.getNearestDc())
        #expect(context.keys.createdCount == keys, "the stored key still works: no new exchange")
        await again.close()
        try await telegram.server.shutdown()
    }
}
