// The HTTP transport sans-IO, both roles in memory with a fixed clock: a `ClientConnection` speaking HTTP against an
// `HTTPServerConnection`: the key exchange and calls over POSTs, several requests in flight on one connection, the
// long poll (held until a pushed update, or answered empty at max_wait and renewed), the cap on held requests, −404,
// and hostile clients (endless heads, too many fields, lying or oversized Content-Length, a stalled body, garbage,
// chunked bodies, an idle keep-alive connection): each ends in a typed close with the matching status, never a hang.
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TelegramApi
import TestTelegram
import Testing

/// A client and a server connection wired together in memory.
struct HTTPPair {
    let context: ServerContext
    var client: ClientConnection
    var server: HTTPServerConnection
    var now = Fixture.now
    var events: [ClientConnection.Event] = []
    /// Bytes the client wrote that the server has not been given yet.
    var toServer: [UInt8] = []

    init(seed: UInt64, longPollWait: Int32 = 25_000, limits: ServerLimits = ServerLimits()) throws {
        context = try Fixture.context(seed: seed, limits: limits)
        let transport = TransportConfiguration(kind: .intermediate,
                                               http: HTTPTransportOptions(host: "127.0.0.1:80", longPollWait: longPollWait))
        client = try ClientConnection(configuration: .init(transport: transport, serverKeys: [try Fixture.rsaKey().publicKey],
                                                           dcID: 2), random: SeededRandom(seed: seed + 1), now: Fixture.now)
        server = HTTPServerConnection(context: context, now: Fixture.now)
        let start = try client.start(now: now)
        toServer = start.bytes
        events += start.events
    }

    /// Delivers what each side wrote to the other until neither writes; returns the server's output bytes seen.
    @discardableResult
    mutating func pump() throws -> [UInt8] {
        var seen: [UInt8] = []
        for _ in 0..<64 {
            guard !toServer.isEmpty else { return seen }
            let output = server.receive(toServer, now: now)
            toServer = []
            try deliver(output)
            seen += output.outbound
        }
        throw HarnessFailure(description: "the pair did not settle in 64 rounds")
    }

    /// Gives the server's output to the client.
    mutating func deliver(_ output: ServerConnectionOutput) throws {
        guard !output.outbound.isEmpty else { return }
        let received = try client.receive(output.outbound, now: now)
        events += received.events
        toServer += received.bytes
    }

    /// Sends one call in a POST of its own; returns its request id.
    mutating func call(_ body: [UInt8]) throws -> RequestID {
        let request = try #require(try client.send(body))
        toServer += try client.flush(now: now)
        return request
    }

    mutating func ready() throws {
        try pump()
        guard client.isReady else { throw HarnessFailure(description: "not ready: \(String(describing: client.failure))") }
    }

    var results: [RequestID] {
        events.compactMap { if case .session(.result(let id, _)) = $0 { id } else { nil } }
    }

    var updates: [[UInt8]] {
        events.compactMap { if case .session(.update(let body, _)) = $0 { Array(body) } else { nil } }
    }
}

/// How many requests (`POST `) or responses (`HTTP/1.1 `) `bytes` hold.
func occurrences(_ marker: String, in bytes: [UInt8]) -> Int {
    let pattern = Array(marker.utf8)
    guard bytes.count >= pattern.count else { return 0 }
    return (0...(bytes.count - pattern.count)).filter { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }.count
}

@Suite struct HTTPServerConnectionTests {
    static let getConfig = Api.functions.help.getConfig().1.bytes
    /// updatesTooLong, boxed: the smallest `Updates`.
    static let update: [UInt8] = [0x7e, 0xaf, 0x17, 0xe3]

    @Test func theKeyExchangeAndACallTravelAsPosts() throws {
        var pair = try HTTPPair(seed: 1)
        try pair.ready()
        let request = try pair.call(Self.getConfig)
        try pair.pump()
        #expect(pair.results == [request])
    }

    /// Eight calls, each in a POST of its own, written before any response is read: the server answers them in
    /// order on one connection, and the long poll that was outstanding carries the first answer.
    @Test func severalRequestsInFlightOnOneConnection() throws {
        var pair = try HTTPPair(seed: 2)
        try pair.ready()
        #expect(pair.server.heldRequests == 1)  // the long poll sent once the session was idle
        var requests: [RequestID] = []
        for _ in 0..<8 { requests.append(try pair.call(Self.getConfig)) }
        #expect(occurrences("POST /api", in: pair.toServer) == 8)
        let responses = try pair.pump()
        #expect(occurrences("HTTP/1.1 200", in: responses) == 8)
        #expect(Set(pair.results) == Set(requests))
        // The last POST stays held: it is the client's long poll now, and no other is sent.
        #expect(pair.server.heldRequests == 1)
        #expect(pair.toServer.isEmpty)
    }

    /// An idle client's long poll is held; a pushed update is its answer at once. With nothing to send, the poll is
    /// answered empty when its max_wait passes, and the client sends the next.
    @Test func theLongPollCarriesAPushAndIsRenewedAtMaxWait() throws {
        var pair = try HTTPPair(seed: 3, longPollWait: 5_000)
        try pair.ready()
        _ = try pair.call(Self.getConfig)
        try pair.pump()
        #expect(pair.server.heldRequests == 1)
        let key = try #require(pair.server.sessionKeys.first)
        pair.context.sessions.withExisting(key) { $0.push(Self.update) }
        pair.now += 1
        try pair.deliver(pair.server.flush(now: pair.now))
        #expect(pair.updates == [Self.update])
        // The push answered the poll; the client sent a new one at once (with its ack).
        #expect(occurrences("POST /api", in: pair.toServer) == 1)
        try pair.pump()
        #expect(pair.server.heldRequests == 1)
        // Nothing to send for 5 s: the poll is answered with an empty body at its deadline, not before.
        let deadline = try #require(pair.server.nextDeadline)
        #expect(deadline <= pair.now + 5 + 1e-6)
        pair.now = deadline - 0.01
        let early = pair.server.tick(now: pair.now)
        #expect(early.outbound.isEmpty)
        pair.now = deadline
        let expired = pair.server.tick(now: pair.now)
        #expect(occurrences("Content-Length: 0\r\n", in: expired.outbound) == 1)
        try pair.deliver(expired)
        #expect(occurrences("POST /api", in: pair.toServer) == 1)
        #expect(pair.client.failure == nil)
    }

    /// Without long polls (`longPollWait` 0) an idle client has nothing held, so a push waits for its next request.
    @Test func withoutLongPollsAPushWaitsForTheNextRequest() throws {
        var pair = try HTTPPair(seed: 4, longPollWait: 0)
        try pair.ready()
        let first = try pair.call(Self.getConfig)
        try pair.pump()
        #expect(pair.results == [first])
        #expect(pair.server.heldRequests == 0)
        let key = try #require(pair.server.sessionKeys.first)
        pair.context.sessions.withExisting(key) { $0.push(Self.update) }
        let flushed = pair.server.flush(now: pair.now)
        #expect(flushed.outbound.isEmpty)
        try pair.deliver(flushed)
        #expect(pair.updates.isEmpty)
        _ = try pair.call(Self.getConfig)
        try pair.pump()
        #expect(pair.updates == [Self.update])
    }

    /// More requests held than `maxHeldRequests`: the oldest are answered with empty bodies.
    @Test func heldRequestsAreCappedPerConnection() throws {
        var limits = ServerLimits()
        limits.http.maxHeldRequests = 2
        var pair = try HTTPPair(seed: 5, limits: limits)
        try pair.ready()
        var session = try #require(pair.client.session)
        var posts: [UInt8] = []
        for _ in 0..<5 {
            session.httpWait(maxDelay: 0, waitAfter: 0, maxWait: 30_000)
            for frame in session.outgoing(now: pair.now) {
                posts += HTTPTransportHead.request(host: "x", length: frame.bytes.count) + frame.bytes
            }
        }
        #expect(occurrences("POST /api", in: posts) == 5)
        // The client's own long poll plus five: four answered empty at once, two held.
        let output = pair.server.receive(posts, now: pair.now)
        #expect(occurrences("HTTP/1.1 200 OK", in: output.outbound) == 4)
        #expect(pair.server.heldRequests == 2)
        #expect(output.close == nil)
    }

    /// The client's long poll is outstanding and the server says nothing: past `responseTimeout` the connection
    /// fails with a typed error (its deadline says when), not before.
    @Test func aSilentServerFailsTheClientAtTheResponseTimeout() throws {
        var pair = try HTTPPair(seed: 7)
        try pair.ready()
        let sent = pair.now
        pair.toServer = []  // the long poll (and anything with it) never reaches a server
        _ = try pair.call(Self.getConfig)
        // The session's own deadlines (a state query for the call) come first; the response's is 40 s on.
        #expect(try #require(pair.client.nextDeadline) <= sent + 40)
        #expect(throws: Never.self) { try pair.client.flush(now: sent + 39) }
        #expect(pair.client.nextDeadline == sent + 40)
        #expect(throws: ClientConnectionError.transport(.http(.responseTimedOut(seconds: 40)))) {
            try pair.client.flush(now: sent + 40)
        }
    }

    @Test func anUnknownAuthKeyIsAnswered404() throws {
        var pair = try HTTPPair(seed: 6)
        try pair.ready()
        let key = try #require(pair.server.sessionKeys.first)
        #expect(pair.context.keys.remove(id: key.authKeyID))
        _ = try? pair.call(Self.getConfig)
        let output = pair.server.receive(pair.toServer, now: pair.now)
        #expect(occurrences("HTTP/1.1 404", in: output.outbound) >= 1)
        #expect(output.close == .unknownAuthKey(key.authKeyID))
        #expect(throws: ClientConnectionError.server(code: -404)) { try pair.client.receive(output.outbound, now: pair.now) }
    }

    /// A POST of a key exchange's first message, with `fields` in its head.
    static func reqPQ(seed: UInt64, fields: String = "") throws -> [UInt8] {
        var exchange = AuthKeyExchange.Client(configuration: .init(keys: [try Fixture.rsaKey().publicKey], dcID: 2),
                                              random: SeededRandom(seed: seed))
        let first = exchange.start(now: Fixture.now)
        return Array("POST /api HTTP/1.1\r\n\(fields)Content-Length: \(first.count)\r\n\r\n".utf8) + first
    }

    // MARK: Hostile clients

    static func closes(_ bytes: [UInt8], status: String, with error: HTTPTransportError,
                       limits: ServerLimits = ServerLimits()) throws {
        var server = HTTPServerConnection(context: try Fixture.context(seed: 9, limits: limits), now: Fixture.now)
        let output = server.receive(bytes, now: Fixture.now)
        #expect(String(decoding: output.outbound, as: UTF8.self).hasPrefix("HTTP/1.1 \(status)"))
        #expect(output.close == .transport(.http(error)))
        #expect(server.receive(Array("POST /api HTTP/1.1\r\n".utf8), now: Fixture.now).isEmpty)
    }

    @Test func anEndlessHeadIsRefused() throws {
        var bytes = Array("POST /api HTTP/1.1\r\n".utf8)
        for index in 0..<400 { bytes += Array("X-Filler-\(index): aaaaaaaaaaaaaaaa\r\n".utf8) }
        try Self.closes(bytes, status: "431", with: .headTooLarge(limit: 8192))
    }

    @Test func tooManyHeaderFieldsAreRefused() throws {
        var bytes = Array("POST /api HTTP/1.1\r\n".utf8)
        for index in 0..<65 { bytes += Array("X-\(index): a\r\n".utf8) }
        try Self.closes(bytes + Array("\r\n".utf8), status: "431", with: .tooManyHeaderFields(limit: 64))
    }

    @Test func anOversizedOrLyingContentLengthIsRefused() throws {
        try Self.closes(Array("POST /api HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n".utf8), status: "413",
                        with: .bodyTooLarge(length: 99_999_999_999, limit: FrameLimits.defaultMaximumPayload))
        try Self.closes(Array("POST /api HTTP/1.1\r\nContent-Length: 12\r\nContent-Length: 13\r\n\r\n".utf8),
                        status: "400", with: .invalidContentLength("12,13"))
        try Self.closes(Array("POST /api HTTP/1.1\r\nContent-Length: -5\r\n\r\n".utf8), status: "400",
                        with: .invalidContentLength("-5"))
        try Self.closes(Array("POST /api HTTP/1.1\r\nHost: x\r\n\r\n".utf8), status: "411", with: .lengthRequired)
        try Self.closes(Array("POST /api HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8), status: "501",
                        with: .unsupportedTransferEncoding("chunked"))
    }

    @Test func garbageAndOtherMethodsAreRefused() throws {
        try Self.closes(Array("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\r\n\r\n".utf8), status: "400",
                        with: .malformedHead("not an HTTP/1.x request line: "))
        try Self.closes(Array("GET /api HTTP/1.1\r\n\r\n".utf8), status: "405", with: .methodNotAllowed("GET"))
        try Self.closes(Array("POST /other HTTP/1.1\r\nContent-Length: 1\r\n\r\nx".utf8), status: "404",
                        with: .notFound("/other"))
        try Self.closes(Array("POST /api HTTP/1.1\r\nContent-Length: 0\r\n\r\n".utf8), status: "400", with: .emptyBody)
    }

    /// A body that stops short of its Content-Length, or a head that stops, is closed at the request timeout.
    @Test func aStalledRequestTimesOut() throws {
        for partial in ["POST /api HTTP/1.1\r\nContent-Length: 100\r\n\r\n0123456789", "POST /api HTTP/1.1\r\nHost:"] {
            var server = HTTPServerConnection(context: try Fixture.context(seed: 10), now: Fixture.now)
            #expect(server.receive(Array(partial.utf8), now: Fixture.now).isEmpty)
            let deadline = try #require(server.nextDeadline)
            #expect(deadline == Fixture.now + 10)
            #expect(server.tick(now: deadline - 0.5).close == nil)
            #expect(server.tick(now: deadline).close == .idle(seconds: 10))
        }
    }

    /// The timeout runs from each request's own first byte: a request begun in the read that completed the one
    /// before it is not timed from that one's start.
    @Test func eachRequestIsTimedFromItsOwnStart() throws {
        var server = HTTPServerConnection(context: try Fixture.context(seed: 14), now: Fixture.now)
        let request = try Self.reqPQ(seed: 15)
        #expect(server.receive(Array(request.prefix(30)), now: Fixture.now).isEmpty)
        let answered = server.receive(Array(request.dropFirst(30)) + Array(request.prefix(30)), now: Fixture.now + 8)
        #expect(occurrences("HTTP/1.1 200 OK", in: answered.outbound) == 1)
        #expect(server.tick(now: Fixture.now + 12).close == nil)
        #expect(server.tick(now: Fixture.now + 18).close == .idle(seconds: 10))
    }

    @Test func anIdleKeepAliveConnectionIsClosed() throws {
        var pair = try HTTPPair(seed: 11, longPollWait: 0)
        try pair.ready()
        _ = try pair.call(Self.getConfig)
        try pair.pump()
        // Whatever is held is answered at its wait; then the connection idles out at the keep-alive timeout.
        for _ in 0..<8 {
            guard let deadline = pair.server.nextDeadline else { break }
            pair.now = deadline
            let output = pair.server.tick(now: pair.now)
            if let close = output.close {
                #expect(close == .idle(seconds: 75))
                return
            }
        }
        Issue.record("the idle connection was never closed")
    }

    /// `Connection: close` from the client: the server answers, then closes.
    @Test func connectionCloseIsHonoured() throws {
        var server = HTTPServerConnection(context: try Fixture.context(seed: 12), now: Fixture.now)
        let request = try Self.reqPQ(seed: 13, fields: "Connection: close\r\n")
        let output = server.receive(request, now: Fixture.now)
        #expect(occurrences("HTTP/1.1 200 OK", in: output.outbound) == 1)
        #expect(output.close == .clientClosed)
    }
}
