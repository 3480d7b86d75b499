// The MTProto session's incoming path (decrypt, checks, containers, gzip, service messages, dispatch) for one
// role, with a fixed auth key. Raw frames mostly fail the msg_key check, so most messages are encrypted here with
// the right key: either a body under a fresh, valid envelope, or a whole plaintext (envelope included) from the
// fuzzer. Between messages time moves and the session sends; its frames and events are checked.
import MTProto
import MTProtoCrypto
import TLRuntime

let sessionKey: AuthKey = {
    do {
        return try AuthKey((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
    } catch {
        fatalError("the fixed auth key is refused: \(error)")
    }
}()
let sessionCipher = MTProto2Cipher(authKey: sessionKey)

/// Words in a body equal to `placeholder + k` (k < 8) are replaced by the k-th msg_id the session under test
/// sent, so answers (`rpc_result`, acks, `bad_msg_notification`…) can name real messages.
let placeholder: Int64 = 0x7777_7777_7777_7770

func patchMessageIDs(_ body: [UInt8], sent: [Int64]) -> [UInt8] {
    guard !sent.isEmpty, body.count >= 8 else { return body }
    var out = body
    var offset = 0
    while offset + 8 <= out.count {
        let word = out.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: Int64.self)) }
        let k = word &- placeholder
        if k >= 0, k < 8 {
            let id = sent[sent.count - 1 - Int(k) % sent.count]
            withUnsafeBytes(of: id.littleEndian) { out.replaceSubrange(offset..<(offset + 8), with: $0) }
        }
        offset += 4
    }
    return out
}

/// Input: up to 32 records `op, length (2 bytes LE), bytes`. `op & 3`: 0 a raw frame, 1 a body under a valid
/// envelope (seq_no from the next byte), 2 a whole plaintext after salt and session id, 3 the session sends
/// (and, as a client, queues a request). `op >> 2`: seconds that pass first.
public func fuzzSession(_ role: Role, _ data: [UInt8]) throws(Violation) {
    let start: Double = 1_700_000_000
    let salt: Int64 = 0x0123_4567_89ab_cdef
    let random = SeededRandom(seed: 7)
    var session = Session(role: role, authKey: sessionKey, sessionID: 0x1122_3344_5566_7788, salt: salt, now: start,
                          random: random)
    let peerRole: Role = role == .client ? .server : .client
    var peerIDs = MessageIDGenerator(role: peerRole)
    var checker = SessionChecker(role: role)
    var now = start
    if role == .client {
        for n in 0..<3 {
            guard let id = try? session.send([0x01, 0xee, 0xff, 0xc0] + [UInt8](repeating: UInt8(n), count: 8)) else {
                throw Violation("a fresh client session refuses a request")
            }
            checker.issued.insert(id)
        }
    }
    try checker.sent(session.outgoing(now: now))
    var reader = InputReader(data)
    for _ in 0..<32 {
        guard reader.offset < data.count else { break }
        let op = reader.byte()
        let length = Int(reader.byte()) | Int(reader.byte()) << 8
        now += Double(op >> 2)
        var events: [SessionEvent] = []
        switch op & 3 {
        case 0:
            events = (try? session.receive(frame: reader.take(length), now: now)) ?? []
        case 1:
            let seqNo = Int32(reader.byte())
            let body = patchMessageIDs(reader.take(length), sent: checker.sentIDs)
            let id = peerIDs.next(now: now, isResponse: seqNo & 2 == 2)
            var plain = envelope(salt: salt, session: session.sessionID)
            plain += le(id) + le(seqNo) + le(Int32(body.count)) + body
            events = try receive(&session, plain, from: peerRole, now: now)
        case 2:
            let plain = envelope(salt: salt, session: session.sessionID)
                + patchMessageIDs(reader.take(length), sent: checker.sentIDs)
            events = try receive(&session, plain, from: peerRole, now: now)
        default:
            if role == .client, let id = try? session.send(Array(reader.take(length))) { checker.issued.insert(id) }
        }
        try checker.check(events)
        if role == .server {
            for case let .request(messageID, _) in events { _ = session.answer(messageID, result: [0x02, 0xee, 0xff, 0xc0]) }
        }
        try checker.sent(session.outgoing(now: now))
        try checker.check(session.takeEvents())
    }
    // Long after: timeouts, resends and state queries run out.
    for later in [60.0, 600, 3600] {
        try checker.sent(session.outgoing(now: now + later))
        try checker.check(session.takeEvents())
    }
}

func envelope(salt: Int64, session: Int64) -> [UInt8] { le(salt) + le(session) }

func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

func receive(_ session: inout Session, _ plaintext: [UInt8], from peer: Role, now: Double) throws(Violation)
    -> [SessionEvent]
{
    guard plaintext.count >= 32 else { return [] }
    let frame: [UInt8]
    do {
        frame = try sessionCipher.encrypt(plaintext: plaintext, direction: peer.outgoing, random: FixedRandom())
    } catch {
        throw Violation("encrypting a plaintext of \(plaintext.count) bytes failed: \(error)")
    }
    return (try? session.receive(frame: frame, now: now)) ?? []
}

/// What a session's output must satisfy whatever it was fed.
struct SessionChecker {
    let role: Role
    /// Client: the requests queued; each ends (result, error, failure) at most once.
    var issued: Set<RequestID> = []
    var ended: Set<RequestID> = []
    /// The msg_ids of the frames sent, newest last, and the last one per session id.
    var sentIDs: [Int64] = []
    var lastID: [Int64: Int64] = [:]

    init(role: Role) { self.role = role }

    mutating func sent(_ frames: [OutgoingFrame]) throws(Violation) {
        for frame in frames {
            let message: DecryptedMessage
            do {
                message = try sessionCipher.decrypt(frame.bytes, direction: role.outgoing)
            } catch {
                throw Violation("\(role) sent a frame that does not decrypt: \(error)")
            }
            let id = message.messageID
            guard id == frame.messageID else { throw Violation("frame msg_id \(id), reported \(frame.messageID)") }
            let residue = id & 3
            guard role == .client ? residue == 0 : (residue == 1 || residue == 3) else {
                throw Violation("\(role) sent msg_id \(id) with residue \(residue)")
            }
            let sessionID = Int64(littleEndian: message.plaintext.withUnsafeBytes {
                $0.loadUnaligned(fromByteOffset: 8, as: Int64.self)
            })
            if let last = lastID[sessionID], id <= last {
                throw Violation("\(role) sent msg_id \(id) after \(last) in session \(sessionID)")
            }
            lastID[sessionID] = id
            sentIDs.append(id)
            sentIDs += frame.messageIDs
        }
        if sentIDs.count > 64 { sentIDs.removeFirst(sentIDs.count - 64) }
    }

    mutating func check(_ events: [SessionEvent]) throws(Violation) {
        for event in events {
            switch (role, event) {
            case (.server, .result), (.server, .rpcError), (.server, .pong), (.server, .update),
                 (.client, .request), (.client, .destroySessionRequested), (.client, .destroyAuthKeyRequested),
                 (.client, .disconnectDeadline):
                throw Violation("a \(role) session raised \(event)")
            case (.client, .result(let id, _)), (.client, .rpcError(let id, _)), (.client, .failed(let id, _)):
                guard issued.contains(id) else { throw Violation("an event for request \(id), never issued") }
                guard ended.insert(id).inserted else { throw Violation("request \(id) ended twice") }
            case (.client, .resent(let id, _)):
                guard issued.contains(id) else { throw Violation("request \(id), never issued, was resent") }
            case (.client, .acknowledged(let ids)):
                guard ids.allSatisfy(issued.contains) else { throw Violation("acks name requests never issued: \(ids)") }
            default:
                break
            }
        }
    }
}
