// The HTTP transport's parsers (core.telegram.org/mtproto/transports#http): requests and responses split anywhere
// decode the same; the client's `ClientTransport` posts payloads and turns response bodies into frames, 4-byte
// bodies into transport errors and empty ones into nothing; and a hostile server (endless or oversized heads, a
// lying Content-Length, a response nobody asked for, chunked bodies, garbage, a close mid-body) is a typed error.
import MTProtoTransport
import Testing

@Suite struct HTTPTransportTests {
    static func response(_ body: [UInt8], status: String = "200 OK") -> [UInt8] {
        Array("HTTP/1.1 \(status)\r\nServer: test\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
    }

    static func client() throws -> ClientTransport {
        try ClientTransport(configuration: TransportConfiguration(kind: .intermediate,
                                                                  http: HTTPTransportOptions(host: "h:1")), unixTime: 0)
    }

    @Test func requestsDecodeTheSameHoweverSplit() throws {
        let bodies: [[UInt8]] = [Array(repeating: 7, count: 40), Array(0..<200), [1]]
        let stream = bodies.flatMap { HTTPTransportHead.request(host: "example:80", length: $0.count) + $0 }
        for split in [1, 2, 3, 7, 64, stream.count] {
            var decoder = HTTPRequestDecoder()
            var got: [HTTPRequest] = []
            var index = 0
            while index < stream.count {
                got += try decoder.receive(stream[index..<min(stream.count, index + split)])
                index += split
            }
            #expect(got.map(\.body) == bodies)
            #expect(got.allSatisfy { $0.keepAlive })
            try decoder.finish()
        }
    }

    @Test func theClientPostsAndReadsFrames() throws {
        var transport = try Self.client()
        #expect(transport.start().isEmpty)
        let payload = Array(repeating: UInt8(9), count: 24)
        let written = try transport.send(payload)
        #expect(written == HTTPTransportHead.request(host: "h:1", length: 24) + payload)
        #expect(transport.httpRequestsInFlight == 1)
        _ = try transport.send(payload)
        let replies = Self.response(payload) + Self.response([])
        var events: [TransportEvent] = []
        for byte in replies { events += try transport.receive([byte]).events }
        #expect(events == [.frame(payload)])
        #expect(transport.httpRequestsInFlight == 0)
        try transport.finish()
    }

    @Test func aFourByteBodyIsATransportError() throws {
        var transport = try Self.client()
        _ = try transport.send(Array(repeating: 1, count: 24))
        let events = try transport.receive(Self.response([0x6c, 0xfe, 0xff, 0xff], status: "404 Not Found")).events
        #expect(events == [.transportError(code: -404)])
    }

    static func refuses(_ reply: [UInt8], with error: HTTPTransportError, requests: Int = 1) throws {
        var transport = try client()
        for _ in 0..<requests { _ = try transport.send(Array(repeating: 1, count: 24)) }
        #expect(throws: TransportError.http(error)) { try transport.receive(reply) }
        // Failed for good.
        #expect(throws: TransportError.http(error)) { try transport.receive(response([1, 2, 3, 4, 5, 6, 7, 8])) }
    }

    @Test func hostileResponsesAreTypedErrors() throws {
        try Self.refuses(Array(repeating: UInt8(ascii: "a"), count: 9000), with: .headTooLarge(limit: 8192))
        try Self.refuses(Array("HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n".utf8),
                         with: .bodyTooLarge(length: 2_000_000, limit: FrameLimits.defaultMaximumPayload))
        try Self.refuses(Array("HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\n".utf8), with: .invalidContentLength("5x"))
        try Self.refuses(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8),
                         with: .unsupportedTransferEncoding("chunked"))
        try Self.refuses(Array("HTTP/1.1 200 OK\r\n\r\n".utf8), with: .lengthRequired)
        try Self.refuses(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8),
                         with: .malformedHead("not an HTTP/1.x status line: SSH-2.0-OpenSSH"))
        try Self.refuses(Self.response(Array(repeating: 1, count: 16), status: "500 Internal Server Error"),
                         with: .unexpectedStatus(500, reason: ""))
        try Self.refuses(Self.response(Array(repeating: 1, count: 16)), with: .unsolicitedResponse, requests: 0)
        var fields = Array("HTTP/1.1 200 OK\r\n".utf8)
        for index in 0..<70 { fields += Array("X-\(index): y\r\n".utf8) }
        try Self.refuses(fields + Array("\r\n".utf8), with: .tooManyHeaderFields(limit: 64))
    }

    /// A response two bytes long announces 100; the server closes: a truncation, not a frame.
    @Test func aCloseInsideABodyIsATruncation() throws {
        var transport = try Self.client()
        _ = try transport.send(Array(repeating: 1, count: 24))
        #expect(try transport.receive(Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nab".utf8)).events.isEmpty)
        #expect(throws: TransportError.http(.truncated(context: "an HTTP response", buffered: 2))) {
            try transport.finish()
        }
    }

    @Test func theHTTPTransportIsNotObfuscated() {
        #expect(throws: TransportError.invalidConfiguration("the HTTP transport is not obfuscated")) {
            try ClientTransport(configuration: TransportConfiguration(kind: .intermediate, obfuscation: .obfuscated2,
                                                                      http: HTTPTransportOptions(host: "h")),
                                unixTime: 0)
        }
    }

    @Test func requestsOfHTTP10CloseUnlessKeptAlive() throws {
        var decoder = HTTPRequestDecoder()
        let requests = try decoder.receive(Array(
            "POST http://h/api HTTP/1.0\r\nContent-Length: 1\r\n\r\nxPOST /api HTTP/1.0\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\ny".utf8))
        #expect(requests.map(\.keepAlive) == [false, true])
    }
}
