// What the test Telegram saw of each file's transfer, for tests of clients: how many parts, over which sessions (each
// connection of a client runs its own), and how many parts were in flight at once. A part is in flight from the
// time it was sent until the server made its answer; two parts whose spans overlap were both asked before either
// answer existed. The send time is the msg_id's (core.telegram.org/mtproto/description#message-identifier-msg-id) in
// the client's clock, put on the server's clock with the least delay seen in that session (arrival minus msg_id
// time): that bound is never below the clocks' true offset, so a span is never made longer than it was and the count
// is never more than the truth.
import MTProtoServer
import TLRuntime

/// One file's transfer as the server saw it.
public struct FileTransferStats: Sendable, Equatable {
    /// Part requests answered (retries included).
    public var parts = 0
    /// Bytes in those parts.
    public var bytes: Int64 = 0
    /// The most parts in flight at once.
    public var maxPartsInFlight = 0
    /// The sessions (auth key, session id) that carried parts, at most `TransferLog.maxSessions`.
    public var sessions: Set<SessionID> = []

    /// A client session: each connection of a client runs its own.
    public struct SessionID: Sendable, Hashable {
        /// The key the session runs on (the permanent one for a bound temporary key).
        public let authKeyID: UInt64
        /// The session's id, which the client draws for each connection.
        public let sessionID: Int64
    }
}

/// Stats by file, bounded: the oldest files are forgotten first.
struct TransferLog {
    static let maxFiles = 256
    static let maxSessions = 64
    /// Recent spans kept per file to find overlaps with (more than any client keeps in flight).
    static let maxSpans = 64

    enum File: Hashable {
        case upload(user: Int64, fileID: Int64)
        case document(Int64)
        case photo(Int64)
        case cdn(Int64)
    }

    private var files: [File: (stats: FileTransferStats, spans: [Span])] = [:]
    private var order: [File] = []
    /// Per session, the least (arrival - msg_id time) seen: the clock offset bound.
    private var offsets: [FileTransferStats.SessionID: Double] = [:]

    struct Span {
        let session: FileTransferStats.SessionID
        let sent: Double
        let answered: Double
    }

    /// Records a part that arrived with `call` and was answered at `answered` (the server's clock).
    mutating func record(_ file: File, bytes: Int, call: RPCCall, answered: Double) {
        let sent = Double(UInt64(bitPattern: call.messageID)) / 4_294_967_296
        let session = FileTransferStats.SessionID(authKeyID: call.authKeyID, sessionID: call.sessionID)
        if offsets[session] == nil, offsets.count >= Self.maxFiles * 4 { offsets.removeAll() }
        offsets[session] = min(offsets[session] ?? .infinity, call.now - sent)
        if files[file] == nil {
            if order.count >= Self.maxFiles { files[order.removeFirst()] = nil }
            order.append(file)
            files[file] = (FileTransferStats(), [])
        }
        guard var entry = files[file] else { return }
        entry.stats.parts += 1
        entry.stats.bytes += Int64(bytes)
        if entry.stats.sessions.count < Self.maxSessions { entry.stats.sessions.insert(session) }
        entry.spans.append(Span(session: session, sent: sent, answered: answered))
        if entry.spans.count > Self.maxSpans { entry.spans.removeFirst() }
        // Spans on the server's clock; the most that overlap is at some span's start.
        let spans = entry.spans.map { span -> (start: Double, end: Double) in
            (span.sent + (offsets[span.session] ?? 0), span.answered)
        }
        for point in spans.map(\.start) {
            let overlapping = spans.filter { $0.start <= point && point < $0.end }.count
            entry.stats.maxPartsInFlight = max(entry.stats.maxPartsInFlight, overlapping)
        }
        files[file] = entry
    }

    func stats(_ file: File) -> FileTransferStats? { files[file]?.stats }

    /// A message fetched by id: of a user's own box, or of a channel.
    enum FetchedMessage: Hashable {
        case user(Int64, Int32)
        case channel(Int64, Int32)
    }

    /// Fetches by message, at most `maxFiles * 16` messages (the count starts over past that).
    private(set) var fetches: [FetchedMessage: Int] = [:]

    mutating func fetched(_ message: FetchedMessage) {
        if fetches[message] == nil, fetches.count >= Self.maxFiles * 16 { fetches.removeAll() }
        fetches[message, default: 0] += 1
    }
}

extension TestTelegramService {
    /// What the server saw of a document's downloads (`upload.getFile`), nil if none.
    public func downloadStats(document id: Int64) -> FileTransferStats? {
        transfers.withLock { $0.stats(.document(id)) }
    }

    /// What the server saw of a photo's downloads (every size, and a profile photo's), nil if none.
    public func downloadStats(photo id: Int64) -> FileTransferStats? {
        transfers.withLock { $0.stats(.photo(id)) }
    }

    /// What the server saw of an upload by `user` of the client's file id `fileID` (the `InputFile`'s id).
    public func uploadStats(user: Int64, fileID: Int64) -> FileTransferStats? {
        transfers.withLock { $0.stats(.upload(user: user, fileID: fileID)) }
    }

    /// Gives a document a new file reference: locations with the old one are answered `FILE_REFERENCE_EXPIRED`, as
    /// Telegram does when a reference ages (core.telegram.org/api/file_reference). Returns the new reference.
    @discardableResult
    public func expireFileReference(document id: Int64) -> [UInt8]? {
        let fresh = random.bytes(16)
        return state.withLock { state in
            guard state.documents[id] != nil else { return nil }
            state.documents[id]?.fileReference = fresh
            return fresh
        }
    }

    /// How many times `user` fetched its message `id` by id (`messages.getMessages`), as a client does for a fresh
    /// file reference (core.telegram.org/api/file_reference).
    public func messageFetches(user: Int64, id: Int32) -> Int {
        transfers.withLock { $0.fetches[.user(user, id)] ?? 0 }
    }

    /// How many times message `id` of channel `channel` was fetched by id (`channels.getMessages`).
    public func messageFetches(channel: Int64, id: Int32) -> Int {
        transfers.withLock { $0.fetches[.channel(channel, id)] ?? 0 }
    }

    func recordFetches(_ messages: [TransferLog.FetchedMessage]) {
        transfers.withLock { log in
            for message in messages { log.fetched(message) }
        }
    }

    /// Counts `bytes` served of `file` with its reference: `FaultPlan.expireFileReferenceEvery` bytes renew it.
    func served(_ file: TransferLog.File, bytes: Int, every: Int64) {
        let fresh = random.bytes(16)
        state.withLock { state in
            switch file {
                case .document(let id): state.documents[id]?.served(bytes, every: every, fresh: fresh)
                case .photo(let id): state.photos[id]?.served(bytes, every: every, fresh: fresh)
                case .upload, .cdn: break
            }
        }
    }

    func recordPart(_ file: TransferLog.File, bytes: Int, call: RPCCall) {
        let answered = call.now + (ServerContext.wallClock() - call.now).clamped(0, 60)
        transfers.withLock { $0.record(file, bytes: bytes, call: call, answered: answered) }
    }
}

extension Double {
    fileprivate func clamped(_ low: Double, _ high: Double) -> Double { Swift.min(high, Swift.max(low, self)) }
}
