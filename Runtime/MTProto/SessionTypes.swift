// The values a `Session` takes and gives: its configuration and limits, the requests it tracks, the events it reports,
// the frames it returns to send, salts, and the typed errors of a rejected frame or request.
import MTProtoCrypto

/// A request handed to a client session, stable across the msg_ids it may be sent under (resends get new ids).
public struct RequestID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The request's number, unique within its session.
    public let value: UInt64
    /// The request numbered `value`.
    public init(_ value: UInt64) { self.value = value }
    /// Orders requests by number, that is, in the order the session took them.
    public static func < (a: RequestID, b: RequestID) -> Bool { a.value < b.value }
    /// `request#N`.
    public var description: String { "request#\(value)" }
}

/// Limits and timers of a session. The defaults follow Telegram's documented and measured behaviour.
public struct SessionConfiguration: Sendable {
    /// Items per `msg_container`. Telegram answers `bad_msg_notification` 64 above 100 (Telethon's measurement).
    public var maxContainerItems = 100
    /// Bytes of messages per container; Telegram closes the connection above 1,044,456 (Telethon's measurement).
    public var maxContainerBytes = 1_044_448
    /// A message of this size or more is sent alone, never in a container.
    public var soloMessageBytes = 32 * 1024
    /// Requests and answers at least this long are sent as `gzip_packed` when that is smaller.
    public var gzipThreshold = 512
    /// Acks are sent on their own once this many are waiting ("over 16", service_messages_about_messages).
    public var maxPendingAcks = 16
    /// …or once the oldest has waited this long (seconds); otherwise they ride along with other messages.
    public var ackDelay: Double = 1.0
    /// Most ids in one `msgs_ack` ("max 8192 IDs are allowed per constructor").
    public var maxIDsPerAck = 8192
    /// Requests re-sent on a new connection that go out before any of them is answered; each answer lets two more
    /// go. A connection that dies every few kilobytes then still carries some re-sent requests and their answers,
    /// where sending hundreds at once would fill it before one answer could come back (for at most
    /// `stateRequestAfter` seconds; then the rest go).
    public var resendWindow = 32
    /// A request neither acknowledged nor answered for this long is asked about with `msgs_state_req`.
    public var stateRequestAfter: Double = 5
    /// An acknowledged request not answered for this long is asked about too.
    public var answerTimeout: Double = 30
    /// Unanswered `msgs_state_req` rounds for one request before it fails with `.noAnswer`.
    public var maxStateQueries = 20
    /// Resends of one request after `bad_msg_notification`/`bad_server_salt` before it fails.
    public var maxResends = 8
    /// Requests a client session holds at once (queued, in flight, awaiting an answer).
    public var maxPendingRequests = 65_536
    /// Requests a server session lets its driver handle at once; more are answered `rpc_error` 420
    /// `FLOOD_WAIT_1` at once instead of being reported.
    public var maxRequestsInProgress = 1024
    /// Received msg_ids remembered for duplicate detection and `msgs_state_info`, besides the time window.
    public var maxRememberedIDs = 65_536
    /// Bytes of sent content messages kept for `msg_resend_req` and of answers kept for `msg_resend_ans_req`.
    public var maxRetainedBytes = 4 << 20
    /// …and how many of them, at most.
    public var maxRetainedMessages = 16_384
    /// …and for how long, seconds: a message older than the receiver's 300-second window could not be taken again.
    public var retainedMessageLifetime: Double = 300
    /// How far back and ahead of the local (corrected) clock a received msg_id may claim to be (seconds):
    /// "300 seconds in the past or 30 seconds in the future" (description, "Checking msg_id").
    public var pastWindow: Double = 300
    /// How far ahead of the local (corrected) clock a received msg_id may be, seconds.
    public var futureWindow: Double = 30
    /// A client asks for future salts when none it knows stays valid for this much longer (seconds).
    public var saltRefreshMargin: Double = 600
    /// How many salts `get_future_salts` asks for (the server gives at most 64).
    public var futureSaltCount: Int32 = 32
    /// Bytes a `gzip_packed` payload may inflate to.
    public var maxUnpackedBytes = 16 << 20
    /// Whether a client asks for quick acks on frames carrying requests.
    public var quickAcks = false

    /// The defaults, as the spec and Telegram's clients choose them.
    public init() {}
}

/// A salt and the server-time interval it is valid in (`future_salt`).
public struct FutureSalt: Sendable, Hashable {
    /// Server time (Unix seconds) from which the salt is valid.
    public let validSince: Int32
    /// Server time (Unix seconds) until which the salt is valid.
    public let validUntil: Int32
    /// The salt.
    public let salt: Int64

    /// A salt valid from `validSince` to `validUntil` (server time).
    public init(validSince: Int32, validUntil: Int32, salt: Int64) {
        self.validSince = validSince
        self.validUntil = validUntil
        self.salt = salt
    }

    func isValid(at time: Double) -> Bool { Double(validSince) <= time && time < Double(validUntil) }
}

/// The salts a server accepts, oldest first. A server session checks each message's salt against it and answers
/// `get_future_salts` from it; the server replaces it to rotate salts.
public struct SaltSchedule: Sendable, Hashable {
    /// An hourly schedule is kept as its parameters and a seed, each salt derived when asked for: every key and
    /// session of a server holds one, and 64 salts stored in each were most of what a closed connection left behind
    /// (Benchmarks/README.md, "Many connections").
    private struct Hourly: Sendable, Hashable {
        let first: Int64, base: Int32, count: Int32, overlap: Int32, seed: UInt64

        /// Salt `index`; the first is the key exchange's, the others SplitMix64 of the seed and the index, so
        /// distinct indices give unrelated values.
        func salt(_ index: Int32) -> FutureSalt {
            let since = base &+ index &* 3600
            var salt = first
            if index > 0 {
                var z = seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                salt = Int64(bitPattern: z ^ (z >> 31))
            }
            return FutureSalt(validSince: since, validUntil: since &+ 3600 &+ overlap, salt: salt)
        }

        /// The indices whose salts may be valid at `time`: a salt stays valid `overlap` seconds into the ones
        /// after it, so at most `overlap / 3600 + 2` of them.
        func candidates(at time: Double) -> ClosedRange<Int32>? {
            guard time.isFinite, time >= Double(base) else { return nil }
            let newest = Int32(min(Double(count - 1), ((time - Double(base)) / 3600).rounded(.down)))
            return max(0, newest - overlap / 3600 - 1)...newest
        }
    }

    private enum Storage: Sendable, Hashable {
        case list([FutureSalt])
        case hourly(Hourly)
    }

    private var storage: Storage

    /// The salts, by `validSince` ascending.
    public var salts: [FutureSalt] {
        switch storage {
        case .list(let salts): salts
        case .hourly(let hourly): (0..<hourly.count).map(hourly.salt)
        }
    }

    /// A schedule of `salts`, sorted by when each becomes valid.
    public init(_ salts: [FutureSalt]) { storage = .list(salts.sorted { $0.validSince < $1.validSince }) }

    private init(_ hourly: Hourly) { storage = .hourly(hourly) }

    /// Equal when they hold the same salts, however each keeps them.
    public static func == (lhs: SaltSchedule, rhs: SaltSchedule) -> Bool {
        lhs.storage == rhs.storage || lhs.salts == rhs.salts
    }

    /// Hashes the salts, so that schedules equal by `==` hash alike.
    public func hash(into hasher: inout Hasher) { hasher.combine(salts) }

    /// A schedule of hour-long salts from `start`, overlapping by `overlap` seconds ("a salt stays valid for a
    /// while after the next one starts", as Telegram's do), the first being `first` (the key exchange's salt).
    /// The others derive from one draw of `random`.
    public static func hourly(first: Int64, start: Double, count: Int = 64, overlap: Int32 = 1800,
                              random: some RandomSource) -> SaltSchedule {
        let count = Int32(max(1, min(count, 256)))
        return SaltSchedule(Hourly(first: first, base: Int32(clamping: Int64(start.rounded(.down))), count: count,
                                   overlap: max(0, overlap), seed: count > 1 ? UInt64(bitPattern: random.int64()) : 0))
    }

    /// Whether `salt` is valid at server time `time` (Unix seconds).
    public func accepts(_ salt: Int64, at time: Double) -> Bool {
        switch storage {
        case .list(let salts): salts.contains { $0.salt == salt && $0.isValid(at: time) }
        case .hourly(let hourly):
            hourly.candidates(at: time)?.contains { index in
                let candidate = hourly.salt(index)
                return candidate.salt == salt && candidate.isValid(at: time)
            } ?? false
        }
    }

    /// The salt to tell a client to use now: the newest valid one.
    public func current(at time: Double) -> Int64? {
        switch storage {
        case .list(let salts): salts.last { $0.isValid(at: time) }?.salt
        case .hourly(let hourly):
            hourly.candidates(at: time)?.reversed().lazy.map(hourly.salt).first { $0.isValid(at: time) }?.salt
        }
    }

    /// Up to `count` salts valid now or later, for `future_salts`.
    public func upcoming(from time: Double, count: Int) -> [FutureSalt] {
        let limit = max(0, min(count, 64))
        switch storage {
        case .list(let salts):
            return Array(salts.filter { Double($0.validUntil) > time }.prefix(limit))
        case .hourly(let hourly):
            var found: [FutureSalt] = []
            var index = hourly.candidates(at: time)?.lowerBound ?? 0
            while index < hourly.count, found.count < limit {
                let salt = hourly.salt(index)
                if Double(salt.validUntil) > time { found.append(salt) }
                index += 1
            }
            return found
        }
    }
}

/// An encrypted frame ready for the transport.
public struct OutgoingFrame: Sendable, Hashable {
    /// auth_key_id ‖ msg_key ‖ encrypted data.
    public let bytes: [UInt8]
    /// The top-level msg_id (a container's, when several messages are packed).
    public let messageID: Int64
    /// Every msg_id the frame carries, the container's included.
    public let messageIDs: [Int64]
    /// Set when the frame carries a request and quick acks are on: ask the transport for a quick ack; the server
    /// will answer with this token (`msg_key_large`'s first 32 bits, top bit set).
    public let quickAckToken: UInt32?
}

/// Why a client request ended without an answer.
public enum RequestFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server rejected it with `bad_msg_notification` this many times; the last code is given.
    case rejected(code: Int32, attempts: Int)
    /// Code 20 or status 1 ("nothing is known about the message"): the server cannot say whether it received it,
    /// so resending might run it twice. The caller decides.
    case deliveryUnknown(messageID: Int64)
    /// Nothing answered `msgs_state_req` about it `maxStateQueries` times in a row.
    case noAnswer(stateQueries: Int)
    /// The answer could not be parsed as an `rpc_result` payload (gzip that does not inflate, a truncated error).
    case malformedAnswer(String)

    /// A one-line account of the failure.
    public var description: String {
        switch self {
            case let .rejected(code, attempts): "rejected by the server with bad_msg_notification \(code) (\(attempts) attempts)"
            case .deliveryUnknown(let id): "the server cannot tell whether it received msg_id \(id)"
            case .noAnswer(let n): "no answer after \(n) msgs_state_req rounds"
            case .malformedAnswer(let why): "malformed answer: \(why)"
        }
    }
}

/// Why a request was sent again (reported, so nothing is resent silently).
public enum ResendReason: Sendable, Hashable {
    /// `bad_msg_notification` with this code, or 48 for `bad_server_salt`.
    case badMessage(code: Int32)
    /// `msgs_state_info` said the server never received it (status 2 or 3).
    case notReceived
    /// `new_session_created`: the server holds no state for messages before `first_msg_id`.
    case sessionRecreated
}

/// Something a session tells its driver. Client roles see the first group, server roles the second; both see the rest.
public enum SessionEvent: Sendable {
    // MARK: Client role
    /// The result of a request (the `rpc_result` payload, `gzip_packed` already inflated). Parse it with the
    /// request's `DeserializeFunctionResponse`. A slice of the frame it arrived in, so a large result is never
    /// copied here; its indices are the frame's (`Array(_:)` makes a zero-based copy).
    case result(RequestID, ArraySlice<UInt8>)
    /// The request was answered with `rpc_error`.
    case rpcError(RequestID, RPCError)
    /// The request ended without an answer.
    case failed(RequestID, RequestFailure)
    /// The server received these requests (`msgs_ack`, a quick ack, or `msgs_state_info` status 4).
    case acknowledged([RequestID])
    /// A request was sent again under a new msg_id.
    case resent(RequestID, ResendReason)
    /// A content message that is not an answer: updates (`Updates`), as sent.
    case update([UInt8], messageID: Int64)
    /// `new_session_created`: updates may have been missed (call `updates.getDifference`).
    case sessionCreated(firstMessageID: Int64, uniqueID: Int64)
    /// `pong` for a ping sent with `ping(id:)`.
    case pong(pingID: Int64, requestID: RequestID)
    /// The answer to `destroySession(_:)`: whether the server had that session.
    case sessionDestroyed(sessionID: Int64, existed: Bool)
    /// The answer to `destroyAuthKey()`: `destroy_auth_key_ok` (true), `_none` or `_fail` (false).
    case authKeyDestroyed(ok: Bool)
    /// The answer to `rpc_drop_answer` for a cancelled request.
    case answerDropped(RequestID, DropAnswerOutcome)
    /// The clock offset changed (seconds to add to the local clock to get the server's).
    case clockAdjusted(offset: Double)
    /// The session started over under a new session_id (the clock moved back behind msg_ids already used); pending
    /// requests were queued again in it. Persist the new id.
    case sessionChanged(sessionID: Int64)

    // MARK: Server role
    /// A request to handle; answer with `answer(_:result:)` or `answer(_:error:)`.
    case request(messageID: Int64, body: [UInt8])
    /// `destroy_session` for another session of this auth key: answer with `answerDestroySession(_:existed:)`.
    case destroySessionRequested(sessionID: Int64, requestMessageID: Int64)
    /// `destroy_auth_key`: the driver should forget the key, then close the connection.
    case destroyAuthKeyRequested(requestMessageID: Int64)
    /// `ping_delay_disconnect`: close the connection at this time unless another ping moves it.
    case disconnectDeadline(at: Double)

    // MARK: Both roles
    /// A message was ignored and the session goes on: a duplicate, outside the time window, undecodable, or an
    /// answer that matches no request.
    case ignored(messageID: Int64, IgnoredMessage)
}

/// What `rpc_drop_answer` achieved (`RpcDropAnswer`).
public enum DropAnswerOutcome: Sendable, Hashable {
    /// The server knows nothing of the request (`rpc_answer_unknown`).
    case unknown
    /// The request is running and its answer will still come (`rpc_answer_dropped_running`).
    case droppedRunning
    /// The answer was dropped before it was sent (`rpc_answer_dropped`).
    case dropped(messageID: Int64, seqNo: Int32, bytes: Int32)
}

/// Why one message was ignored.
public enum IgnoredMessage: Sendable, Hashable, CustomStringConvertible {
    /// The msg_id was seen before.
    case duplicate
    /// Its msg_id claims a time this many seconds from ours (negative: in the past), outside the window.
    case outsideTimeWindow(seconds: Double)
    /// Its msg_id has the wrong residue mod 4 for its sender.
    case wrongParity
    /// Its body did not decode; the other messages of its container were delivered.
    case undecodable(String)
    /// An `rpc_result` (or pong, future_salts…) for a msg_id no pending request has.
    case unmatchedAnswer(requestMessageID: Int64)
    /// Older than anything remembered: cannot tell whether it is a duplicate.
    case tooOld

    /// A one-line account of why the message was ignored.
    public var description: String {
        switch self {
            case .duplicate: "duplicate msg_id"
            case .outsideTimeWindow(let s): "msg_id time \(s) s from now is outside the window"
            case .wrongParity: "msg_id has the wrong parity for its sender"
            case .undecodable(let why): "undecodable: \(why)"
            case .unmatchedAnswer(let id): "answer to msg_id \(id), which no pending request has"
            case .tooOld: "msg_id older than every remembered id"
        }
    }
}

/// Why a whole frame was rejected. The frame is dropped; the session is unchanged.
public enum SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Decryption failed a check (auth_key_id, msg_key, padding, length).
    case decryption(CryptoError)
    /// The plaintext's session_id is not this session's.
    case wrongSession(expected: Int64, received: Int64)
    /// A client session has too many requests pending.
    case tooManyPendingRequests(limit: Int)

    /// A one-line account of the error.
    public var description: String {
        switch self {
            case .decryption(let error): "frame rejected: \(error)"
            case let .wrongSession(expected, received): "frame for session \(received), this is session \(expected)"
            case .tooManyPendingRequests(let limit): "more than \(limit) requests pending"
        }
    }
}
