// A client and a server session in memory, as a pipelined call uses them: batches of 100 requests in containers,
// answered and matched (`SessionBenchmarks` times it, `SessionProfile` runs it under callgrind, one side at a time).
import MTProto
import MTProtoCrypto

public struct SessionPair {
    public var client: Session
    public var server: Session
    public var now = 1_700_000_000.0
    /// Results the client has matched so far.
    public private(set) var results = 0
    let request: [UInt8] = [0x01, 0xee, 0xff, 0xc0] + [UInt8](repeating: 7, count: 60)
    let answer: [UInt8] = [0x02, 0xee, 0xff, 0xc0] + [UInt8](repeating: 9, count: 60)

    public init(authKey: AuthKey) {
        client = Session(role: .client, authKey: authKey, salt: 1, timeOffset: 0, random: SeededRandom(seed: 1))
        server = Session(role: .server, authKey: authKey, sessionID: client.sessionID, salt: 1, now: now,
                         random: SeededRandom(seed: 2))
    }

    /// One batch: 100 requests out of the client, answered by the server, read back by the client.
    public mutating func batch() throws {
        let frames = try clientSends()
        let answers = try serverAnswers(frames)
        try clientReceives(answers)
        now += 0.01
    }

    @inline(never) public mutating func clientSends() throws -> [OutgoingFrame] {
        for _ in 0..<100 { _ = try client.send(request) }
        return client.outgoing(now: now)
    }

    @inline(never) public mutating func serverAnswers(_ frames: [OutgoingFrame]) throws -> [OutgoingFrame] {
        for frame in frames {
            for case .request(let id, _) in try server.receive(frame: frame.bytes, now: now) {
                server.answer(id, result: answer)
            }
        }
        return server.outgoing(now: now)
    }

    @inline(never) public mutating func clientReceives(_ frames: [OutgoingFrame]) throws {
        for frame in frames {
            for case .result in try client.receive(frame: frame.bytes, now: now) { results += 1 }
        }
    }
}
