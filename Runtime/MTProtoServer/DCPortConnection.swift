// One connection to a DC's port, which serves the HTTP transport and the TCP ones on the same port as Telegram's DCs
// do: the first bytes decide. An HTTP request starts with its method; no TCP transport can start so, since
// obfuscated2's random header must not begin with "POST", "GET ", "HEAD" or "OPTI" for this very reason
// (core.telegram.org/mtproto/mtproto-transports#transport-obfuscation), and the plain framings begin with 0xef,
// 0xeeeeeeee, 0xdddddddd or a full-framing length. Sans-IO like the connections it chooses between.
import MTProto

/// A connection to a DC port: an `HTTPServerConnection` when the client's first bytes are an HTTP method, else a
/// `ServerConnection` (which tells the TCP transports apart itself).
public struct DCPortConnection: Sendable {
    private let context: ServerContext
    private var tcp: ServerConnection
    private var http: HTTPServerConnection?
    /// First bytes kept until they decide (at most 3).
    private var undecided: [UInt8]? = []

    /// The HTTP methods a request may start with; with a space, 4 bytes each.
    static let httpPrefixes: [[UInt8]] = ["POST", "GET ", "HEAD", "OPTI"].map { Array($0.utf8) }

    /// A connection at server time `now`, on `context`'s DC.
    public init(context: ServerContext, now: Double) {
        self.context = context
        tcp = ServerConnection(context: context, now: now)
    }

    /// Whether the first bytes chose HTTP: nil until they decide.
    public var isHTTP: Bool? { undecided == nil ? http != nil : nil }

    /// HTTP (true), TCP (false), or nil while `bytes` are still a prefix of an HTTP method.
    static func chooseHTTP(_ bytes: [UInt8]) -> Bool? {
        if bytes.count >= 4 { return httpPrefixes.contains { bytes.starts(with: $0) } }
        return httpPrefixes.contains { $0.starts(with: bytes) } ? nil : false
    }

    /// The sessions this connection carries.
    public var sessionKeys: [SessionKey] { http?.sessionKeys ?? tcp.sessionKeys }

    /// When `tick(now:)` has timed work (before the first bytes decide, the TCP connection's idle timer).
    public var nextDeadline: Double? { http != nil ? http?.nextDeadline : tcp.nextDeadline }

    /// Feeds bytes from the client, all of them at once (see `ServerConnection.receive(_:now:)`).
    public mutating func receive(_ bytes: [UInt8], now: Double) -> ServerConnectionOutput {
        guard let first = decide(bytes, now: now) else { return ServerConnectionOutput() }
        if http != nil { return http?.receive(first, now: now) ?? ServerConnectionOutput() }
        return tcp.receive(first, now: now)
    }

    /// Feeds bytes from the client, answering frame by frame with `step(now:readContinues:)` (TCP) or whole
    /// requests at once (HTTP).
    public mutating func feed(_ bytes: [UInt8], now: Double) -> ServerConnectionOutput {
        guard let first = decide(bytes, now: now) else { return ServerConnectionOutput() }
        if http != nil { return http?.receive(first, now: now) ?? ServerConnectionOutput() }
        return tcp.feed(first, now: now)
    }

    /// The bytes to hand to the chosen connection, or nil while they are still undecided (then kept).
    private mutating func decide(_ bytes: [UInt8], now: Double) -> [UInt8]? {
        guard var kept = undecided else { return bytes }
        kept += bytes
        guard let chosen = Self.chooseHTTP(kept) else {
            undecided = kept
            return nil
        }
        undecided = nil
        if chosen { http = HTTPServerConnection(context: context, now: now) }
        return kept
    }

    /// Runs more of what arrived (TCP only; HTTP answers in `feed`).
    public mutating func step(now: Double, readContinues: Bool) -> ServerConnectionOutput? {
        guard undecided == nil, http == nil else { return nil }
        return tcp.step(now: now, readContinues: readContinues)
    }

    /// What is ready to send now.
    public mutating func flush(now: Double) -> ServerConnectionOutput {
        if http != nil { return http?.flush(now: now) ?? ServerConnectionOutput() }
        return tcp.flush(now: now)
    }

    /// Runs the timers due at `now`.
    public mutating func tick(now: Double) -> ServerConnectionOutput {
        if http != nil { return http?.tick(now: now) ?? ServerConnectionOutput() }
        return tcp.tick(now: now)
    }

    /// The connection is gone: runs what a frame left unrun, as `ServerConnection.runRemainingRequests(now:)` does
    /// (an HTTP connection runs each request whole, so nothing is left).
    public mutating func runRemainingRequests(now: Double) -> [ServerConnectionEvent] {
        http == nil ? tcp.runRemainingRequests(now: now) : []
    }

    /// Hands in what a handler that answers later returned (see `ServerConnection.complete(_:with:now:)`).
    public mutating func complete(_ id: UInt64, with result: Result<[UInt8], RPCError>,
                                  now: Double) -> ServerConnectionOutput {
        if http != nil { return http?.complete(id, with: result, now: now) ?? ServerConnectionOutput() }
        return tcp.complete(id, with: result, now: now)
    }

    /// The connection is gone: gives up its pending answers (see `ServerConnection.dropPendingAnswers()`).
    public mutating func dropPendingAnswers() -> [UInt64] {
        if http != nil { return http?.dropPendingAnswers() ?? [] }
        return tcp.dropPendingAnswers()
    }

    /// The connection is gone: its sessions are left without it (see `ServerConnection.detachSessions(now:)`).
    public mutating func detachSessions(now: Double) {
        if http != nil { http?.detachSessions(now: now) } else { tcp.detachSessions(now: now) }
    }

    /// The connection ended: why, if it was not a clean close.
    public mutating func finish() -> ServerConnectionError? {
        if http != nil { return http?.finish() }
        return tcp.finish()
    }
}
