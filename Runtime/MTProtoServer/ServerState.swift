// What a server shares between its connections: the auth keys it created (with each key's salt schedule, and for a
// temporary key its expiry and the permanent key it is bound to) and the sessions open on them, keyed by (auth key,
// session id). Both are bounded, evicting the oldest entry, so a client that makes keys or sessions without end costs
// a fixed amount of memory. Locked, because NIO runs connections on several threads: the tables each under one lock
// whose every operation is short and never calls out while holding it, and each session under a lock of its own, so
// connections on different threads encrypt their sessions' frames at the same time.
import MTProto
import MTProtoCrypto
import Synchronization

/// The auth keys a server knows, by auth_key_id, oldest evicted first. Temporary keys (perfect forward secrecy,
/// core.telegram.org/api/pfs) carry their expiry and, once `auth.bindTempAuthKey` succeeded, the permanent key whose
/// authorization they stand for; a permanent key is bound to one temporary key at a time.
public final class AuthKeyStore: Sendable {
    /// A key with the salts its sessions accept (one schedule per key, so every session of it agrees).
    public struct Entry: Sendable {
        /// The auth key.
        public let key: AuthKey
        /// The MTProto 2.0 cipher for the key (its key-derivation inputs prepared once).
        public let cipher: MTProto2Cipher
        /// The salts the key's sessions accept.
        public internal(set) var salts: SaltSchedule
        /// When the key was made, server time (Unix seconds).
        public let createdAt: Double
        /// For a temporary key: the server time it stops existing (server_time + expires_in of its exchange).
        public let expiresAt: Int32?
        /// For a bound temporary key: the permanent key and the binding's expires_at.
        public internal(set) var binding: Binding?

        /// Whether the key is temporary (made with `expires_in`).
        public var isTemporary: Bool { expiresAt != nil }
    }

    /// What `auth.bindTempAuthKey` established for a temporary key.
    public struct Binding: Sendable, Hashable {
        /// The permanent key's id the temporary key stands for.
        public let permanentKeyID: UInt64
        /// When the binding ends, server time (Unix seconds).
        public let expiresAt: Int32
    }

    /// Why a binding was not stored.
    public enum BindRefusal: Error, Sendable, Equatable {
        /// One of the two keys is gone (expired or evicted) since the caller looked.
        case unknownKey
        /// The temporary key is bound to another permanent key already.
        case alreadyBound(permanentKeyID: UInt64)
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var order: [UInt64] = []
        /// Permanent key → the temporary key bound to it now; at most one entry per stored key.
        var boundTemporary: [UInt64: UInt64] = [:]
        var created = 0

        /// Forgets a key and every binding that names it.
        mutating func drop(_ id: UInt64) -> Bool {
            guard let entry = entries.removeValue(forKey: id) else { return false }
            if let permanent = entry.binding?.permanentKeyID, boundTemporary[permanent] == id {
                boundTemporary[permanent] = nil
            }
            if let temporary = boundTemporary.removeValue(forKey: id) { entries[temporary]?.binding = nil }
            return true
        }
    }

    /// The most keys kept; past it the oldest is forgotten.
    public let capacity: Int
    private let state = Mutex(State())

    /// A store of at most `capacity` keys (at least 1).
    public init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Stores a key made by an exchange; its salts are hour-long from `now`, the first being the exchange's.
    /// `expiresAt` (server time) makes it a temporary key.
    public func insert(_ key: AuthKey, firstSalt: Int64, now: Double, random: any RandomSource, expiresAt: Int32? = nil) {
        let entry = Entry(key: key, cipher: MTProto2Cipher(authKey: key),
                          salts: SaltSchedule.hourly(first: firstSalt, start: now - 60, random: random), createdAt: now,
                          expiresAt: expiresAt, binding: nil)
        state.withLock { state in
            if state.drop(key.idValue) { state.order.removeAll { $0 == key.idValue } }
            state.entries[key.idValue] = entry
            state.order.append(key.idValue)
            state.created += 1
            while state.order.count > capacity {
                _ = state.drop(state.order.removeFirst())
            }
        }
    }

    /// The key with `id`, without the expiry check of `liveEntry(id:now:)`.
    public func entry(id: UInt64) -> Entry? { state.withLock { $0.entries[id] } }

    /// The key, unless it is a temporary key past its expiry: then it is forgotten (with its binding) and nil
    /// returned, so the caller answers as for a key it never had (core.telegram.org/api/pfs: −404).
    public func liveEntry(id: UInt64, now: Double) -> (entry: Entry?, expired: Bool) {
        state.withLock { state in
            guard let entry = state.entries[id] else { return (nil, false) }
            guard let expiresAt = entry.expiresAt, Double(expiresAt) <= now else { return (entry, false) }
            _ = state.drop(id)
            state.order.removeAll { $0 == id }
            return (nil, true)
        }
    }

    /// Binds temporary key `temporary` to `permanent` until `expiresAt`. Binding again to the same permanent key
    /// is allowed; to another one it is refused. The permanent key's previous temporary key loses its binding
    /// ("binding a new temporary key overwrites the previous one", core.telegram.org/method/auth.bindTempAuthKey).
    public func bind(temporary: UInt64, to permanent: UInt64, expiresAt: Int32) throws(BindRefusal) {
        try state.withLock { state throws(BindRefusal) in
            guard state.entries[temporary] != nil, state.entries[permanent] != nil else { throw .unknownKey }
            if let current = state.entries[temporary]?.binding, current.permanentKeyID != permanent {
                throw .alreadyBound(permanentKeyID: current.permanentKeyID)
            }
            if let previous = state.boundTemporary[permanent], previous != temporary {
                state.entries[previous]?.binding = nil
            }
            state.entries[temporary]?.binding = Binding(permanentKeyID: permanent, expiresAt: expiresAt)
            state.boundTemporary[permanent] = temporary
        }
    }

    /// The key whose authorization requests under `id` run with: `id` itself for a permanent key, the bound
    /// permanent key for a temporary one, nil for a temporary key not bound (or whose binding expired).
    public func authorizationKey(of id: UInt64, at now: Double) -> UInt64? {
        state.withLock { state in
            guard let entry = state.entries[id] else { return nil }
            guard entry.isTemporary else { return id }
            guard let binding = entry.binding, Double(binding.expiresAt) > now else { return nil }
            return binding.permanentKeyID
        }
    }

    /// The temporary key bound to a permanent key now, if any.
    public func boundTemporaryKey(of permanent: UInt64) -> UInt64? {
        state.withLock { $0.boundTemporary[permanent] }
    }

    /// Replaces a key's salt schedule (sessions created later take it); false if the key is unknown.
    func replaceSalts(id: UInt64, with schedule: SaltSchedule) -> Bool {
        state.withLock { state in
            guard state.entries[id] != nil else { return false }
            state.entries[id]?.salts = schedule
            return true
        }
    }

    /// Forgets key `id` and its binding; false when it was not there.
    @discardableResult
    public func remove(id: UInt64) -> Bool {
        state.withLock { state in
            guard state.drop(id) else { return false }
            state.order.removeAll { $0 == id }
            return true
        }
    }

    /// Moves every key's arrays (its bytes and derived ids, its salts) into new allocations made together, and
    /// lets the old ones go. Keys are made while a connection's exchange allocates and frees much around them, so
    /// each pins a few scattered pages of the heap once the sessions around them are forgotten; made together
    /// they share pages. A key a live session still holds keeps its old arrays too until the session goes.
    public func repack() {
        state.withLock { state in
            // Every copy is made before any old array is freed, so none lands in the hole an old one left.
            var moved: [(UInt64, Entry)] = []
            moved.reserveCapacity(state.order.count)
            for id in state.order {
                // `map`, not `Array(_:)`, which would share the old buffer.
                guard let entry = state.entries[id], let key = try? AuthKey(entry.key.bytes.map { $0 }) else {
                    continue
                }
                moved.append((id, Entry(key: key, cipher: MTProto2Cipher(authKey: key),
                                        salts: entry.salts, createdAt: entry.createdAt,
                                        expiresAt: entry.expiresAt, binding: entry.binding)))
            }
            for (id, entry) in moved { state.entries[id] = entry }
        }
    }

    /// How many keys are kept now.
    public var count: Int { state.withLock { $0.entries.count } }

    /// Keys stored since the store was made (every finished exchange counts, evicted or not).
    public var createdCount: Int { state.withLock { $0.created } }
}

/// A session's identity on a server.
public struct SessionKey: Sendable, Hashable {
    /// The auth key the session runs on.
    public let authKeyID: UInt64
    /// The client's session_id.
    public let sessionID: Int64

    /// A session's identity.
    public init(authKeyID: UInt64, sessionID: Int64) {
        self.authKeyID = authKeyID
        self.sessionID = sessionID
    }
}

/// The server-role `Session`s, at most `perKey` per auth key and `capacity` in all; the least recently used goes
/// first. A session outlives its connection: a client that reconnects with the same session_id finds it. Use
/// stamps make each access O(1); only creating a session past a bound scans for the one to evict.
///
/// The table's lock is held only to find, add or drop a session; the session itself is worked on under its own lock
/// (`Slot`), so the connections of different sessions, on different event-loop threads, run at the same time.
public final class SessionRegistry: Sendable {
    /// The most sessions kept in all.
    public let capacity: Int
    /// The most sessions kept per auth key.
    public let perKey: Int

    /// A session and the connection that carries it now (0: none yet).
    struct Entry {
        var session: Session
        var connection: UInt64
        /// `bad_msg_notification` codes its next messages are refused with (`ServerContext.injectBadMessages`),
        /// kept here so that the session itself holds no fault state.
        var refusals: [Int32] = []
        /// When the last connection carrying it went (server time); nil while one carries it.
        var detachedAt: Double?

        /// Whether a session left without a connection may be forgotten at `now`: `lifetime` seconds after its
        /// connection went, and not before every message it received is outside the time window.
        func expires(at now: Double, lifetime: Double) -> Bool {
            guard let detachedAt else { return false }
            return now - detachedAt >= lifetime && now >= session.replayHorizon
        }
    }

    /// One session's entry under its own lock: a session moves to a connection and is flushed to it in one step.
    private final class Slot: Sendable {
        let state: Mutex<Entry>

        init(_ session: consuming Session, connection: UInt64) {
            state = Mutex(Entry(session: session, connection: connection))
        }
    }

    private struct State {
        /// Each session's slot, and when it was last used.
        var sessions: [SessionKey: (slot: Slot, used: UInt64)] = [:]
        var connections: UInt64 = 0
        var perKey: [UInt64: Int] = [:]
        var clock: UInt64 = 0
        /// Sessions subscribed to updates (a subset of `sessions`' keys).
        var subscribed: Set<SessionKey> = []

        mutating func evictOldest(where include: (SessionKey) -> Bool) {
            guard let oldest = sessions.filter({ include($0.key) }).min(by: { $0.value.used < $1.value.used })?.key
            else { return }
            remove(oldest)
        }

        @discardableResult
        mutating func remove(_ key: SessionKey) -> Bool {
            guard sessions.removeValue(forKey: key) != nil else { return false }
            subscribed.remove(key)
            let left = (perKey[key.authKeyID] ?? 1) - 1
            perKey[key.authKeyID] = left > 0 ? left : nil
            return true
        }
    }
    private let state = Mutex(State())
    /// Answers pending across the DC's connections (`ServerLimits.maxPendingAnswers`).
    private let pendingAnswers = Mutex(0)

    /// Counts one more pending answer; false when `limit` are pending already.
    func reservePendingAnswer(limit: Int) -> Bool {
        pendingAnswers.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Counts `count` pending answers as answered or given up.
    func releasePendingAnswers(_ count: Int) { pendingAnswers.withLock { $0 -= count } }

    /// Requests whose handlers have not answered yet, on every connection carrying these sessions.
    public var pendingAnswerCount: Int { pendingAnswers.withLock { $0 } }

    /// A registry of at most `capacity` sessions in all and `perKey` per auth key (each at least 1).
    public init(capacity: Int, perKey: Int) {
        self.capacity = max(1, capacity)
        self.perKey = max(1, perKey)
    }

    // Every method runs `body` on the session where its slot stores it. Copying it out and back in would leave two
    // references to each of its tables while `body` mutates them, so every message would copy them all
    // (copy-on-write): measured as 42 % of a pipelined server's time.

    /// A number for a new connection, for `withSession(_:carriedBy:make:_:)` and `withExisting(_:carriedBy:_:)`.
    public func connectionNumber() -> UInt64 {
        state.withLock { state in
            state.connections += 1
            return state.connections
        }
    }

    /// Runs `body` on the session for `key`, creating it with `make` on first sight (evicting as the bounds
    /// require). Returns what `body` returns and whether the session was created by this call.
    ///
    /// `connection` (from `connectionNumber()`) is the connection the message came on: the session's answers and
    /// updates go out on it from now on. When it moves from another connection, the updates it sent there and the
    /// client has not acknowledged are queued again first (`Session.redeliverUnacknowledged()`): the old connection
    /// may have died with them on the wire.
    public func withSession<T>(_ key: SessionKey, carriedBy connection: UInt64 = 0, make: () -> Session,
                               _ body: (inout Session) -> T) -> (value: T, created: Bool) {
        withEntry(key, carriedBy: connection, make: make) { body(&$0.session) }
    }

    /// `withSession(_:carriedBy:make:_:)` with the session's whole entry, its refusals included.
    func withEntry<T>(_ key: SessionKey, carriedBy connection: UInt64, make: () -> Session,
                      _ body: (inout Entry) -> T) -> (value: T, created: Bool) {
        let (slot, created) = state.withLock { state -> (Slot, Bool) in
            state.clock += 1
            if let index = state.sessions.index(forKey: key) {
                state.sessions.values[index].used = state.clock
                return (state.sessions.values[index].slot, false)
            }
            if state.perKey[key.authKeyID] ?? 0 >= perKey {
                state.evictOldest { $0.authKeyID == key.authKeyID }
            }
            if state.sessions.count >= capacity { state.evictOldest { _ in true } }
            state.perKey[key.authKeyID, default: 0] += 1
            let slot = Slot(make(), connection: connection)
            state.sessions[key] = (slot, state.clock)
            return (slot, true)
        }
        let value = slot.state.withLock { entry -> T in
            entry.detachedAt = nil
            if connection != 0, entry.connection != connection {
                let previous = entry.connection
                entry.connection = connection
                if previous != 0 { entry.session.redeliverUnacknowledged() }
            }
            return body(&entry)
        }
        return (value, created)
    }

    /// Runs `body` on an existing session only.
    public func withExisting<T>(_ key: SessionKey, _ body: (inout Session) -> T) -> T? {
        withExistingEntry(key) { body(&$0.session) }
    }

    /// `withExisting(_:_:)` with the session's whole entry.
    func withExistingEntry<T>(_ key: SessionKey, _ body: (inout Entry) -> T) -> T? {
        guard let slot = state.withLock({ $0.sessions[key]?.slot }) else { return nil }
        return slot.state.withLock { body(&$0) }
    }

    /// Runs `body` on an existing session only while `connection` carries it (a connection the session has moved
    /// away from sends nothing more of it: it may be dead without knowing).
    public func withExisting<T>(_ key: SessionKey, carriedBy connection: UInt64, _ body: (inout Session) -> T) -> T? {
        guard let slot = state.withLock({ $0.sessions[key]?.slot }) else { return nil }
        return slot.state.withLock { entry in
            entry.connection == connection ? body(&entry.session) : nil
        }
    }

    /// Call when connection `connection` is gone: each of `keys` it still carries is left without a connection at
    /// `now`, compacted (`Session.compact(now:)`: a busy connection's tables are not kept at their peak size), and
    /// from then on may expire (`expireDetached(now:lifetime:)`). A session another connection carries now is left
    /// as it is.
    public func detach(_ keys: [SessionKey], from connection: UInt64, now: Double) {
        for key in keys {
            guard let slot = state.withLock({ $0.sessions[key]?.slot }) else { continue }
            slot.state.withLock { entry in
                guard entry.connection == connection, entry.detachedAt == nil else { return }
                entry.detachedAt = now
                entry.session.compact(now: now)
            }
        }
    }

    /// Forgets the sessions that have had no connection for `lifetime` seconds at `now` (server time), once every
    /// message each received is outside the time window (`Session.replayHorizon`), so that no replayed request runs
    /// twice. "The server may unilaterally forget any client sessions" (core.telegram.org/mtproto/description,
    /// "Session"): a client that comes back gets `new_session_created` and carries on. Returns the keys forgotten.
    @discardableResult
    public func expireDetached(now: Double, lifetime: Double) -> [SessionKey] {
        // Each session is looked at under its own lock, never under the table's (a session's work may reach the
        // table). A message arriving between the look and the removal is still handled; the client's next one
        // finds no session and is told so with new_session_created, as after any forgotten session.
        let candidates = state.withLock { state in state.sessions.map { ($0.key, $0.value.slot) } }
        let due = candidates.filter { _, slot in slot.state.withLock { $0.expires(at: now, lifetime: lifetime) } }
        guard !due.isEmpty else { return [] }
        return state.withLock { state in
            due.filter { key, slot in state.sessions[key]?.slot === slot && state.remove(key) }.map(\.0)
        }
    }

    /// How many sessions no connection carries now.
    public var detachedCount: Int {
        let slots = state.withLock { state in state.sessions.values.map(\.slot) }
        return slots.filter { slot in slot.state.withLock { $0.detachedAt != nil } }.count
    }

    /// Forgets the session; false when it was not there.
    @discardableResult
    public func remove(_ key: SessionKey) -> Bool { state.withLock { $0.remove(key) } }

    /// Forgets every session of an auth key (`destroy_auth_key`).
    public func removeAll(authKeyID: UInt64) {
        state.withLock { state in
            for key in state.sessions.keys where key.authKeyID == authKeyID { state.remove(key) }
        }
    }

    /// The sessions open on an auth key (a user's devices, once keys belong to users); with `subscribedOnly`, those
    /// subscribed to updates.
    public func keys(authKeyID: UInt64, subscribedOnly: Bool = false) -> [SessionKey] {
        state.withLock { state in
            subscribedOnly ? state.subscribed.filter { $0.authKeyID == authKeyID }
                           : state.sessions.keys.filter { $0.authKeyID == authKeyID }
        }
    }

    /// Subscribes an open session to updates: Telegram does so on its first query that is neither a file query nor
    /// wrapped in `invokeWithoutUpdates` (core.telegram.org/method/invokeWithoutUpdates). False if it is not open.
    @discardableResult
    public func subscribe(_ key: SessionKey) -> Bool {
        state.withLock { state in
            guard state.sessions[key] != nil else { return false }
            state.subscribed.insert(key)
            return true
        }
    }

    /// Whether the session is subscribed to updates.
    public func isSubscribed(_ key: SessionKey) -> Bool { state.withLock { $0.subscribed.contains(key) } }

    /// How many sessions are kept now.
    public var count: Int { state.withLock { $0.sessions.count } }

    /// Every session open now.
    public var allKeys: [SessionKey] { state.withLock { Array($0.sessions.keys) } }
}
