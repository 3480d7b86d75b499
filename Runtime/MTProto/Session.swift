// The encrypted MTProto 2.0 session as a sans-IO state machine, for both ends of a connection. Frames and the
// current time go in; frames to send and events come out; padding, session ids and salts' randomness come from an
// injected source. One type serves the client and the server role: the role decides msg_id residues, the KDF
// direction, and which service messages are answered.

import MTProtoCrypto
import TLRuntime

/// An MTProto session (core.telegram.org/mtproto/description): one auth key, one session_id, its msg_ids,
/// seq_nos, salts, acks, containers and service messages.
///
/// How each service message is handled, in our words (service_messages, service_messages_about_messages):
///
/// | message | sent by | what this session does on receipt |
/// | --- | --- | --- |
/// | `msgs_ack` | both | Marks the listed requests acknowledged (event) and stops keeping those messages for resending. |
/// | `bad_msg_notification` 16, 17 | server | Client: takes the server's clock from the notification's own msg_id, then resends the message (and every item of a container it names) under a new msg_id. |
/// | `bad_msg_notification` 18, 19 | server | Resends under a new msg_id (our ids are always well formed; this heals a corrupted one). |
/// | `bad_msg_notification` 20 | server | Fails the request with `.deliveryUnknown`: resending might run it twice, so the caller decides. |
/// | `bad_msg_notification` 32 | server | Moves our seq_no 64 ahead, then resends. |
/// | `bad_msg_notification` 33, 34, 35 | server | Resends under a new msg_id and seq_no. |
/// | `bad_msg_notification` 48 / `bad_server_salt` | server | Adopts the new salt, forgets future salts (they were wrong), asks for new ones, resends. |
/// | `bad_msg_notification` 64 | server | Resends each item of the container alone. |
/// | any code, too often | server | After `maxResends` a request fails with `.rejected(code:attempts:)`; nothing loops forever. |
/// | `new_session_created` | server | Adopts its salt, resends requests whose last container/message id is below `first_msg_id` (the server kept no state for them), reports `.sessionCreated` so the client fetches missed updates. |
/// | `msgs_state_req` | both | Answers `msgs_state_info` with one status byte per id from the received-id store (1, 2, 3, 4 +16 +32 +64). |
/// | `msgs_state_info` | both | For each request asked about: 2 or 3 → resend; 4 → acknowledged, and +64 (answer generated) → `msg_resend_ans_req`; 1 → fail with `.deliveryUnknown`. |
/// | `msgs_all_info` | both | Read like `msgs_state_info` for the ids it lists. |
/// | `msg_detailed_info` / `msg_new_detailed_info` | server | If we lack the answer it names, `msg_resend_req` for it; otherwise ack it. |
/// | `msg_resend_req` | both | Sends the named messages again under their original msg_id and seq_no, if still kept; others are ignored. |
/// | `msg_resend_ans_req` | client | Server: sends the kept answer to each named request again. |
/// | `rpc_result` | server | Matched to its request by `req_msg_id` (any id the request was ever sent under); an `rpc_error` inside becomes `RPCError`; `gzip_packed` is inflated; a result matching nothing is reported and ignored. |
/// | `rpc_drop_answer` | client | Server: answers `rpc_answer_dropped_running` if the request is being handled (its answer is then discarded), `rpc_answer_dropped` if an unacknowledged answer was kept (and forgets it), else `rpc_answer_unknown`. |
/// | `future_salts` | server | Merges the salts; each message uses the newest salt valid at the server's time. Asked for with `get_future_salts` ahead of expiry, never learned only from errors. |
/// | `get_future_salts` | client | Server: answers from its salt schedule. |
/// | `ping` | both | Answers `pong` (server role: also a `ping_delay_disconnect` moves the disconnect deadline, reported as an event). |
/// | `pong` | server | Completes the ping it names (event). |
/// | `destroy_session` | client | Server: the current session answers `destroy_session_none`; another is reported for the driver to destroy and answer. |
/// | `destroy_session_ok` / `_none` | server | Completes the matching `destroySession` request (event), wrapped in `rpc_result` or not. |
/// | `destroy_auth_key` | client | Server: reported; the driver forgets the key and closes. |
/// | `destroy_auth_key_ok` / `_none` / `_fail` | server | Completes `destroyAuthKey` (event). |
/// | `http_wait` | client | Accepted and ignored here: it only shapes HTTP long polls, which the HTTP server in front of the session holds. |
/// | `msg_container` | both | Each item is checked and handled as its own message; an item that fails to decode is reported and skipped, the others are delivered. |
/// | `msg_copy` | both | Its inner message is handled as if sent alone (duplicates dropped). |
/// | `gzip_packed` | both | Inflated (bounded) and handled as its content. |
///
/// Every received message is first checked: msg_id parity for its sender, a time within 300 s back and 30 s ahead
/// of our (corrected) clock, not a duplicate. A server session also checks the salt (48), seq_no parity for acks,
/// containers and requests (34, 35) and order (32, 33), and answers a failed check with `bad_msg_notification`.
public struct Session: Sendable {
    /// Which end of the connection this session is.
    public let role: Role
    /// The session's timing and bounds.
    public let configuration: SessionConfiguration
    /// The session_id every message carries (a client's is random; after a reset it is replaced).
    public internal(set) var sessionID: Int64
    /// The salt the next message carries (client), or the newest the schedule allows (server).
    public internal(set) var salt: Int64
    /// Salts learned from `future_salts`, oldest first (client).
    public internal(set) var futureSalts: [FutureSalt] = []
    /// The salts this server accepts.
    public internal(set) var saltSchedule: SaltSchedule
    /// Seconds to add to the local clock to get the server's.
    public var timeOffset: Double { messageIDs.timeOffset }
    /// The auth key messages are encrypted with.
    public let authKey: AuthKey

    let cipher: MTProto2Cipher
    let random: any RandomSource
    var messageIDs: MessageIDGenerator
    var contentMessagesSent: Int32 = 0

    // Incoming
    var received: ReceivedIDs
    var pendingAcks: [Int64] = []
    var oldestPendingAck: Double?

    // Outgoing
    var queue: [Outgoing] = []
    var requests = IDMap<RequestID, TrackedRequest>()
    /// What a `.bindTemporaryKey` request's body is written from, by request; kept here so that `TrackedRequest` holds
    /// no key: with the key's arrays in its `kind`, copies and destroys of records took the runtime's value witnesses
    /// more often (moving the key here saved ~350 instructions per call on the client's send side, callgrind on
    /// `SessionProfile`).
    var bindings: [RequestID: (permanentKey: AuthKey, expiresAt: Int32)] = [:]
    var requestByMessageID = IDMap<Int64, RequestID>()
    var nextRequestNumber: UInt64 = 1
    var retained: RetainedMessages
    /// Container msg_id → the msg_ids inside, so a notification about a container reaches every item.
    var containers = IDMap<Int64, [Int64]>()
    var containerOrder: [Int64] = []
    /// msgs_state_req msg_id → the ids it asked about, and when.
    var stateQueries: [Int64: (ids: [Int64], sentAt: Double)] = [:]
    var nextStateScan = Double.infinity
    /// Re-sent requests (`resendUnanswered(now:)`) that may still go out before more of them are answered, and
    /// until when that holds; `.max` when nothing is held.
    var resendCredit = Int.max
    var resendHeldUntil = -Double.infinity
    var quickAckTokens: [UInt32: [RequestID]] = [:]
    var quickAckOrder: [UInt32] = []
    /// Events raised while sending (a request given up on), handed out by the next `receive` or `takeEvents()`.
    var pendingEvents: [SessionEvent] = []
    /// Requests the session made itself (`get_future_salts`): the driver never saw their ids, so how they end is
    /// not reported.
    var ownRequests: Set<RequestID> = []

    // Server role
    var inProgress = IDMap<Int64, Void>(peerSeed: IDMap<Int64, Void>.peerSeed)
    /// A large frame `outgoing(now:holdingLast:)` hashed and left unencrypted, with its msg_key_large: the next
    /// call encrypts it first (while hashing the frame after it) and sends it.
    var held: (frame: AssembledFrame, large: [UInt8])?
    /// Request msg_id → the msg_id its answer was last sent under.
    var answers = IDMap<Int64, Int64>(peerSeed: IDMap<Int64, Int64>.peerSeed)
    var announcedCreation = false
    var uniqueID: Int64

    /// A session over `authKey`.
    /// - Parameters:
    ///   - role: which end of the connection this session is.
    ///   - authKey: the key every message is encrypted with.
    ///   - sessionID: a client picks a random one (`nil` draws it from `random`); a server uses the client's.
    ///   - salt: the key exchange's first salt, or the last salt known.
    ///   - timeOffset: server time minus local time, from the key exchange (client).
    ///   - saltSchedule: the salts a server accepts; by default hour-long salts starting with `salt`.
    ///   - now: the local time, for the default schedule.
    ///   - configuration: timing and bounds.
    ///   - random: where session ids, padding and message nonces come from.
    public init(role: Role, authKey: AuthKey, sessionID: Int64? = nil, salt: Int64, timeOffset: Double = 0,
                saltSchedule: SaltSchedule? = nil, now: Double = 0,
                configuration: SessionConfiguration = SessionConfiguration(), random: any RandomSource) {
        self.role = role
        self.authKey = authKey
        self.configuration = configuration
        self.random = random
        self.cipher = MTProto2Cipher(authKey: authKey)
        self.sessionID = sessionID ?? random.int64()
        self.salt = salt
        self.messageIDs = MessageIDGenerator(role: role, timeOffset: timeOffset)
        self.saltSchedule = saltSchedule ?? SaltSchedule.hourly(first: salt, start: now - 60, random: random)
        self.received = ReceivedIDs(capacity: configuration.maxRememberedIDs)
        self.retained = RetainedMessages(budget: configuration.maxRetainedBytes,
                                         maxCount: configuration.maxRetainedMessages,
                                         maxAge: configuration.retainedMessageLifetime)
        self.uniqueID = random.int64()
    }

    /// Requests queued, in flight or awaiting an answer (client).
    public var pendingRequestCount: Int { requests.count }
}

// MARK: - Internal records

/// A message waiting for its msg_id.
struct Outgoing: Sendable {
    enum Kind: Sendable {
        /// A tracked client request; its body is read from the record when sent.
        case request(RequestID)
        /// Anything else; `answers` names the client msg_id a server answer belongs to.
        case message(body: MessageBody, contentRelated: Bool, isResponse: Bool, answers: Int64?)
        /// `msgs_state_req` for these ids.
        case stateQuery([Int64])
        /// A kept message sent again under its own msg_id and seq_no (`msg_resend_req`).
        case again(id: Int64, RetainedMessages.Message)
    }

    var kind: Kind
}

extension Outgoing.Kind {
    static func message(body: [UInt8], contentRelated: Bool, isResponse: Bool, answers: Int64?) -> Self {
        .message(body: MessageBody(body), contentRelated: contentRelated, isResponse: isResponse, answers: answers)
    }
}

/// A message body as it is written: `head ‖ data`. An answer's `rpc_result` header is the head, kept apart so that
/// a large result (a 512 KiB file part) is copied once, into its frame, rather than first into a new array to put
/// 12 bytes in front of it.
struct MessageBody: Sendable {
    var head: [UInt8] = []
    var data: [UInt8]

    init(_ data: [UInt8]) { self.data = data }

    init(head: [UInt8], data: [UInt8]) {
        self.head = head
        self.data = data
    }

    var count: Int { head.count + data.count }

    /// Appends `head ‖ data` to `bytes`.
    func write(to bytes: inout [UInt8]) {
        bytes += head
        bytes += data
    }
}

/// A client request and its delivery state.
struct TrackedRequest: Sendable {
    enum Kind: Sendable, Equatable {
        case rpc
        case ping(Int64)
        case futureSalts
        case destroySession(Int64)
        case destroyAuthKey
        case dropAnswer(RequestID)
        /// `auth.bindTempAuthKey` for this session's (temporary) key; its body is written anew for each msg_id,
        /// from `Session.bindings`.
        case bindTemporaryKey
    }

    let kind: Kind
    var body: [UInt8]
    /// Every msg_id it was sent under, newest last (an answer to any of them completes it).
    var messageIDs: [Int64] = []
    /// The top-level msg_id (its container's, if packed) of the newest send.
    var topLevelID: Int64 = 0
    var queued = true
    /// Queued to go out again under its newest msg_id and `seqNo` (a new connection carrying the session on).
    var reuseID = false
    /// The seq_no of its newest send.
    var seqNo: Int32 = 0
    var acknowledged = false
    var solo = false
    var lastProgress: Double = 0
    var lastStateQuery = -Double.infinity
    var unansweredStateQueries = 0
    var resends = 0
    var lastCode: Int32 = 0
}

extension RetainedMessages.Message {
    var contentRelated: Bool { seqNo & 1 == 1 }
}
