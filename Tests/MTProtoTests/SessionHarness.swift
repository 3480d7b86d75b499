// A client session and a server session over one auth key, wired back to back in memory with a seeded network:
// frames can be dropped, duplicated and reordered, and the server answers every request with an echo. Time is
// simulated, so a run depends only on its seed.
import MTProtoCrypto
import TLRuntime
@testable import MTProto

/// A fake RPC: `0xc0ffee01 n:long`, answered with `0xc0ffee02 n:long`. Neither ID is a service message.
enum Echo {
    static func request(_ n: UInt64, padding: Int = 0) -> [UInt8] {
        let buffer = Buffer()
        buffer.appendUInt32(0xc0ff_ee01)
        buffer.appendInt64(Int64(bitPattern: n))
        buffer.appendRaw([UInt8](repeating: 0x5a, count: padding & ~3))
        return buffer.bytes
    }

    static func answer(to body: [UInt8]) -> [UInt8]? {
        var reader = BufferReader(bytes: body)
        guard (try? reader.readUInt32()) == 0xc0ff_ee01, let n = try? reader.readInt64() else { return nil }
        let buffer = Buffer()
        buffer.appendUInt32(0xc0ff_ee02)
        buffer.appendInt64(n)
        return buffer.bytes
    }

    static func value(ofRequest body: [UInt8]) -> UInt64? {
        var reader = BufferReader(bytes: body)
        guard (try? reader.readUInt32()) == 0xc0ff_ee01, let n = try? reader.readInt64() else { return nil }
        return UInt64(bitPattern: n)
    }

    static func value(ofAnswer body: [UInt8]) -> UInt64? {
        var reader = BufferReader(bytes: body)
        guard (try? reader.readUInt32()) == 0xc0ff_ee02, let n = try? reader.readInt64() else { return nil }
        return UInt64(bitPattern: n)
    }
}

struct Faults {
    var drop = 0.0
    var duplicate = 0.0
    /// Chance that a frame waits for a later step instead of being delivered now (reordering).
    var delay = 0.0
}

struct SessionPair {
    var client: Session
    var server: Session
    var now: Double = 1_700_000_000
    let network: SeededRandom
    var faults = Faults()
    /// Whether the server answers `.request` events itself (echo); otherwise they wait in `serverRequests`.
    var autoAnswer = true
    var serverRequests: [(Int64, [UInt8])] = []
    var clientEvents: [SessionEvent] = []
    var serverEvents: [SessionEvent] = []
    var toServer: [[UInt8]] = []
    var toClient: [[UInt8]] = []
    var executions = 0
    /// `bad_msg_notification` codes the server answers its next messages with instead of handling them.
    var refusals: [Int32] = []
    /// What the server decrypts with before handing a frame to the session with the refusals.
    let serverCipher = MTProto2Cipher(authKey: Self.authKey)
    var stats = (dropped: 0, duplicated: 0, delayed: 0)

    static let authKey: AuthKey = {
        // Cannot fail: 256 bytes.
        try! AuthKey(SeededRandom(seed: 0xa11ce).bytes(256))
    }()

    init(seed: UInt64, configuration: SessionConfiguration = SessionConfiguration(),
         serverConfiguration: SessionConfiguration? = nil) {
        let salt: Int64 = 0x0123_4567_89ab_cdef
        client = Session(role: .client, authKey: Self.authKey, salt: salt, configuration: configuration,
                         random: SeededRandom(seed: seed))
        server = Session(role: .server, authKey: Self.authKey, sessionID: client.sessionID, salt: salt,
                         now: 1_700_000_000, configuration: serverConfiguration ?? configuration,
                         random: SeededRandom(seed: seed &+ 1))
        network = SeededRandom(seed: seed &+ 2)
    }

    func chance(_ p: Double) -> Bool { p > 0 && Double(network.next() >> 11) / Double(1 << 53) < p }

    mutating func post(_ frames: [OutgoingFrame], toServer: Bool) {
        for frame in frames {
            if chance(faults.drop) {
                stats.dropped += 1
                continue
            }
            let copies = chance(faults.duplicate) ? 2 : 1
            if copies == 2 { stats.duplicated += 1 }
            for _ in 0..<copies {
                if toServer { self.toServer.append(frame.bytes) } else { self.toClient.append(frame.bytes) }
            }
        }
    }

    /// Delivers what is due in one direction; delayed frames stay queued (and so arrive after later ones).
    mutating func deliver(toServer: Bool) throws {
        var queue = toServer ? self.toServer : self.toClient
        var later: [[UInt8]] = []
        var now: [[UInt8]] = []
        for frame in queue {
            if chance(faults.delay) {
                later.append(frame)
                stats.delayed += 1
            } else {
                now.append(frame)
            }
        }
        queue = later
        if toServer { self.toServer = queue } else { self.toClient = queue }
        for frame in now {
            if toServer {
                let message = try serverCipher.decrypt(frame, direction: .client)
                let events = try server.receive(message, now: self.now, refusing: &refusals)
                for event in events {
                    if case .request(let id, let body) = event {
                        executions += 1
                        if autoAnswer, let answer = Echo.answer(to: body) {
                            server.answer(id, result: answer)
                        } else {
                            serverRequests.append((id, body))
                        }
                    }
                }
                serverEvents += events
            } else {
                clientEvents += try client.receive(frame: frame, now: self.now)
            }
        }
    }

    /// One exchange: the client sends, the server handles and answers, the client handles the answers.
    mutating func step(advance: Double = 0.05) throws {
        post(client.outgoing(now: now), toServer: true)
        try deliver(toServer: true)
        post(server.outgoing(now: now), toServer: false)
        try deliver(toServer: false)
        clientEvents += client.takeEvents()
        now += advance
    }

    /// Steps until `done` holds or `limit` steps pass; returns whether `done` held.
    mutating func run(limit: Int = 2_000, advance: Double = 0.05, until done: (SessionPair) -> Bool) throws -> Bool {
        for _ in 0..<limit {
            if done(self) { return true }
            try step(advance: advance)
        }
        return done(self)
    }

    /// Takes the client events collected so far.
    mutating func takeClientEvents() -> [SessionEvent] {
        defer { clientEvents.removeAll() }
        return clientEvents
    }

    mutating func takeServerEvents() -> [SessionEvent] {
        defer { serverEvents.removeAll() }
        return serverEvents
    }
}

extension [SessionEvent] {
    var results: [(RequestID, [UInt8])] {
        compactMap { if case .result(let id, let body) = $0 { (id, [UInt8](body)) } else { nil } }
    }

    var failures: [(RequestID, RequestFailure)] {
        compactMap { if case .failed(let id, let why) = $0 { (id, why) } else { nil } }
    }

    var resends: [(RequestID, ResendReason)] {
        compactMap { if case .resent(let id, let why) = $0 { (id, why) } else { nil } }
    }

    var ignored: [(Int64, IgnoredMessage)] {
        compactMap { if case .ignored(let id, let why) = $0 { (id, why) } else { nil } }
    }
}

/// Decrypts a frame a session sent, to look inside: (salt, session, msg_id, seq_no, body).
func open(_ frame: [UInt8], from role: Role) throws -> (salt: Int64, session: Int64, id: Int64, seqNo: Int32, body: [UInt8]) {
    let message = try MTProto2Cipher(authKey: SessionPair.authKey).decrypt(frame, direction: role.outgoing)
    return (Session.int64(message.plaintext, at: 0), Session.int64(message.plaintext, at: 8), message.messageID,
            message.seqNo, message.messageData)
}

/// Encrypts a hand-made message as `role` would send it, for feeding odd messages to a session.
func seal(_ body: [UInt8], id: Int64, seqNo: Int32, salt: Int64, session: Int64, from role: Role,
          random: SeededRandom = SeededRandom(seed: 99)) throws -> [UInt8] {
    let plain = Buffer()
    plain.appendInt64(salt)
    plain.appendInt64(session)
    plain.appendInt64(id)
    plain.appendInt32(seqNo)
    plain.appendInt32(Int32(body.count))
    plain.appendRaw(body)
    return try MTProto2Cipher(authKey: SessionPair.authKey).encrypt(plaintext: plain.bytes, direction: role.outgoing,
                                                                    random: random)
}

/// A server msg_id at `time`, with residue 1 (response) or 3.
func serverID(at time: Double, response: Bool = true, step: Int64 = 0) -> Int64 {
    (MessageIDGenerator.rawID(at: time) & ~3) + step * 4 + (response ? 1 : 3)
}
