// The server end of one HTTP transport connection (core.telegram.org/mtproto/transports#http), sans-IO. Each
// `POST /api` carries one MTProto message; it is handed to a `ServerConnection` as an intermediate-framed frame, so
// the key exchange, sessions, handlers and limits are the TCP listener's, and what that connection writes is split
// back into messages. Each message goes out as the body of the oldest request not yet answered (HTTP/1.1 answers
// in order, and MTProto messages name what they answer, so any request may carry any message of its session). A
// request with nothing to carry is held: until its `http_wait`'s `max_wait` (capped), or, without one, the implicit
// wait; then it is answered with an empty body. A transport error (−404) is a 4-byte body with the matching status.
import MTProto
import MTProtoCrypto
import MTProtoTransport

/// Bounds of the HTTP listener, on top of `ServerLimits`.
public struct HTTPServerLimits: Sendable, Hashable {
    /// Sizes of one request's head and body.
    public var message = HTTPLimits()
    /// Seconds a started request may take to arrive whole (a stalled head or body closes the connection).
    public var requestTimeout: Double = 10
    /// Seconds a keep-alive connection may sit with no request held or arriving.
    public var keepAliveTimeout: Double = 75
    /// Requests held (waiting for something to send) per connection; past it the oldest is answered empty.
    public var maxHeldRequests = 4
    /// The longest a request is held, whatever its `http_wait` asks.
    public var maxWait: Double = 60
    /// How long a request without `http_wait` is held when there is nothing to send. Telethon never sends
    /// `http_wait` and takes an empty body for a broken connection, so its requests wait this long for a message.
    public var implicitWait: Double = 25

    /// The defaults.
    public init() {}
}

/// The server end of one HTTP connection: bytes and the time in, bytes out (see the file's comment).
public struct HTTPServerConnection: Sendable {
    private var inner: ServerConnection
    private var decoder: HTTPRequestDecoder
    private let limits: HTTPServerLimits
    private let context: ServerContext
    /// Requests not yet answered, oldest first, each with when it is answered empty.
    private var held: [Double] = []
    /// Messages waiting for a request to carry them, with the status each goes out with.
    private var outbox: [(status: Int, body: [UInt8])] = []
    private var outboxBytes = 0
    private var opened = false
    /// When the request now arriving started (nil between requests).
    private var requestStarted: Double?
    private var lastActivity: Double
    /// The client asked to close after its last response.
    private var closeAfterAnswers = false
    private var closed: ServerConnectionError?

    /// A connection at server time `now`, on `context`'s DC.
    public init(context: ServerContext, now: Double) {
        self.context = context
        limits = context.limits.http
        inner = ServerConnection(context: context, now: now)
        decoder = HTTPRequestDecoder(limits: context.limits.http.message)
        lastActivity = now
    }

    /// The sessions this connection carries.
    public var sessionKeys: [SessionKey] { inner.sessionKeys }

    /// Requests received and not yet answered.
    public var heldRequests: Int { held.count }

    /// When `tick(now:)` has timed work: a held request's end, a stalled request, the keep-alive and session timers.
    public var nextDeadline: Double? {
        guard closed == nil else { return nil }
        var deadline = inner.nextDeadline ?? .infinity
        if let first = held.first { deadline = min(deadline, first) }
        if let requestStarted { deadline = min(deadline, requestStarted + limits.requestTimeout) }
        if held.isEmpty, requestStarted == nil { deadline = min(deadline, lastActivity + limits.keepAliveTimeout) }
        return deadline
    }

    /// Feeds bytes from the client: complete requests are handed to the session layer and answered as far as
    /// there is something to answer with.
    public mutating func receive(_ bytes: [UInt8], now: Double) -> ServerConnectionOutput {
        var output = ServerConnectionOutput()
        guard closed == nil else { return output }
        lastActivity = now
        let requests: [HTTPRequest]
        do {
            requests = try decoder.receive(bytes)
        } catch {
            let (code, reason) = error.status
            output.write(HTTPTransportHead.response(status: code, reason: reason, length: 0, keepAlive: false))
            return fail(.transport(.http(error)), output)
        }
        // A request begun in this read (after one it completed) is timed from now, one still arriving from its start.
        requestStarted = decoder.isInsideRequest ? (requests.isEmpty ? requestStarted ?? now : now) : nil
        for request in requests {
            if !request.keepAlive { closeAfterAnswers = true }
            held.append(now + wait(for: request.body, now: now))
            var framed = opened ? [] : [0xee, 0xee, 0xee, 0xee] as [UInt8]
            opened = true
            let count = UInt32(request.body.count)
            framed += [UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: count >> 8),
                       UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 24)]
            framed += request.body
            take(inner.receive(framed, now: now), into: &output)
            if output.close != nil { break }
            while !held.isEmpty, !outbox.isEmpty { answerNext(output: &output) }
            // Past the cap, the oldest held request is answered with nothing.
            while held.count > limits.maxHeldRequests { answer(status: 200, body: [], output: &output) }
        }
        answerDue(now: now, output: &output)
        return output
    }

    /// What the sessions queued outside a request (pushed updates), carried by held requests.
    public mutating func flush(now: Double) -> ServerConnectionOutput {
        var output = ServerConnectionOutput()
        guard closed == nil else { return output }
        take(inner.flush(now: now), into: &output)
        answerDue(now: now, output: &output)
        return output
    }

    /// Timed work: held requests whose wait ended, a stalled request, the keep-alive timeout, session timers.
    public mutating func tick(now: Double) -> ServerConnectionOutput {
        var output = ServerConnectionOutput()
        guard closed == nil else { return output }
        if let requestStarted, now - requestStarted >= limits.requestTimeout {
            return fail(.idle(seconds: now - requestStarted), output)
        }
        if held.isEmpty, requestStarted == nil, now - lastActivity >= limits.keepAliveTimeout {
            return fail(.idle(seconds: now - lastActivity), output)
        }
        take(inner.tick(now: now), into: &output)
        answerDue(now: now, output: &output)
        return output
    }

    /// Hands in what a handler that answers later returned (see `ServerConnection.complete(_:with:now:)`); the
    /// answer goes out on a held request, or waits for the next.
    public mutating func complete(_ id: UInt64, with result: Result<[UInt8], RPCError>,
                                  now: Double) -> ServerConnectionOutput {
        var output = ServerConnectionOutput()
        guard closed == nil else { return output }
        take(inner.complete(id, with: result, now: now), into: &output)
        answerDue(now: now, output: &output)
        return output
    }

    /// Call when the connection is gone: gives up its pending answers (see `ServerConnection.dropPendingAnswers()`).
    public mutating func dropPendingAnswers() -> [UInt64] { inner.dropPendingAnswers() }

    /// Call when the connection is gone: its sessions are left without it (see `ServerConnection.detachSessions(now:)`).
    public mutating func detachSessions(now: Double) { inner.detachSessions(now: now) }

    /// Call when the client closed: the error if it ended inside a request.
    public mutating func finish() -> ServerConnectionError? {
        guard closed == nil else { return nil }
        _ = inner.finish()
        do {
            try decoder.finish()
            closed = .clientClosed
            return nil
        } catch {
            closed = .transport(.http(error))
            return closed
        }
    }

    /// How long to hold a request: its `http_wait`'s `max_wait` (milliseconds, capped), else the implicit wait.
    /// The session layer decrypts the message too; it is decrypted here once more to read `http_wait`, which the
    /// session accepts and ignores, rather than giving the session an event only this transport needs.
    private func wait(for body: [UInt8], now: Double) -> Double {
        guard body.count >= 8 else { return 0 }
        let authKeyID = body.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        guard authKeyID != 0, let entry = context.keys.entry(id: authKeyID),
              let message = try? entry.cipher.decrypt(body, direction: .client)
        else { return authKeyID == 0 ? 0 : limits.implicitWait }
        guard let maxWait = Self.httpWait(in: message.messageData[...]) else { return limits.implicitWait }
        return min(limits.maxWait, max(0, Double(maxWait) / 1000))
    }

    /// `max_wait` of an `http_wait` at the top level or in a `msg_container`, if there is one.
    static func httpWait(in data: ArraySlice<UInt8>) -> Int32? {
        func int32(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> Int32? {
            let start = bytes.startIndex + offset
            guard offset >= 0, start + 4 <= bytes.endIndex else { return nil }
            return Int32(bitPattern: UInt32(bytes[start]) | UInt32(bytes[start + 1]) << 8
                | UInt32(bytes[start + 2]) << 16 | UInt32(bytes[start + 3]) << 24)
        }
        guard let constructor = int32(data, 0).map(UInt32.init(bitPattern:)) else { return nil }
        if constructor == 0x9299_359f { return int32(data, 12) }  // http_wait max_delay wait_after max_wait
        guard constructor == 0x73f1_f8dc, let count = int32(data, 4), count > 0 else { return nil }  // msg_container
        var offset = 8
        for _ in 0..<min(Int(count), 1024) {
            // message msg_id:long seqno:int bytes:int body:bytes
            guard let length = int32(data, offset + 12), length >= 0, offset + 16 + Int(length) <= data.count else {
                return nil
            }
            let body = data[(data.startIndex + offset + 16)...].prefix(Int(length))
            if int32(body, 0).map(UInt32.init(bitPattern:)) == 0x9299_359f { return int32(body, 12) }
            offset += 16 + Int(length)
        }
        return nil
    }

    /// Splits what the inner connection wrote (intermediate frames) into messages for the outbox, and keeps its
    /// events and close.
    private mutating func take(_ produced: ServerConnectionOutput, into output: inout ServerConnectionOutput) {
        output.events += produced.events
        output.awaiting += produced.awaiting
        output.cancelled += produced.cancelled
        var bytes = produced.outbound[...]
        while bytes.count >= 4 {
            let length = Int(UInt32(bytes[bytes.startIndex]) | UInt32(bytes[bytes.startIndex + 1]) << 8
                | UInt32(bytes[bytes.startIndex + 2]) << 16 | UInt32(bytes[bytes.startIndex + 3]) << 24)
            guard bytes.count >= 4 + length else { break }
            let body = Array(bytes.dropFirst(4).prefix(length))
            bytes = bytes.dropFirst(4 + length)
            var status = 200
            if body.count == 4 {
                // A transport error code: its status is the code's magnitude (−404 → 404).
                let code = body.withUnsafeBytes { Int32(littleEndian: $0.loadUnaligned(as: Int32.self)) }
                status = (400...599).contains(-Int(code)) ? -Int(code) : 400
            }
            outbox.append((status, body))
            outboxBytes += body.count
        }
        if outboxBytes > context.limits.maxQueuedBytes {
            output = fail(.queueOverflow(bytes: outboxBytes), output)
            return
        }
        if let reason = produced.close {
            // Last words (a −404) go out on the requests held now; then the connection closes.
            while !held.isEmpty, !outbox.isEmpty { answerNext(output: &output) }
            output = fail(reason, output)
        }
    }

    /// Answers held requests with queued messages, then the oldest ones whose wait is over with empty bodies.
    private mutating func answerDue(now: Double, output: inout ServerConnectionOutput) {
        while closed == nil, !held.isEmpty, !outbox.isEmpty { answerNext(output: &output) }
        while closed == nil, let first = held.first, first <= now { answer(status: 200, body: [], output: &output) }
        if closed == nil, closeAfterAnswers, held.isEmpty { output = fail(.clientClosed, output) }
    }

    private mutating func answerNext(output: inout ServerConnectionOutput) {
        let next = outbox.removeFirst()
        outboxBytes -= next.body.count
        answer(status: next.status, body: next.body, output: &output)
    }

    private mutating func answer(status: Int, body: [UInt8], output: inout ServerConnectionOutput) {
        guard !held.isEmpty else { return }
        held.removeFirst()
        let reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Error"
        output.write(HTTPTransportHead.response(status: status, reason: reason, length: body.count))
        output.write(body)
    }

    private mutating func fail(_ error: ServerConnectionError, _ output: ServerConnectionOutput)
        -> ServerConnectionOutput
    {
        var output = output
        if closed == nil {
            closed = error
            output.close = error
            output.cancelled += inner.dropPendingAnswers()
        }
        return output
    }
}
