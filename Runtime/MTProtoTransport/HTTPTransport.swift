// The MTProto HTTP transport (core.telegram.org/mtproto/transports#http): each encrypted (or, during the key
// exchange, unencrypted) message is the body of one `POST /api` on a keep-alive HTTP/1.1 connection, and each
// response body is one message from the server. Both directions are parsed here, sans-IO, by a bounded parser of
// our own rather than NIOHTTP1: the same code then runs in the client, the server, the fuzz targets and the unit
// tests without a channel, its only inputs are bytes, and every bound (head size, header count, body size) is a
// typed error at the byte where it is crossed. The transport needs only Content-Length bodies, so chunked transfer
// encoding is refused rather than parsed.

/// Bounds on one HTTP message, each a cap on memory a peer can make the other side hold.
public struct HTTPLimits: Sendable, Hashable {
    /// The request or status line and the header fields, with their line ends.
    public var maxHeadBytes: Int
    /// Header fields in one head.
    public var maxHeaderFields: Int
    /// The body: one MTProto message, bounded like a frame of the TCP transports.
    public var maxBodyBytes: Int

    /// Limits; the defaults allow 8 KiB of head, 64 fields and a body of `FrameLimits.defaultMaximumPayload` bytes
    /// (a 1 MiB file part with its envelope).
    public init(maxHeadBytes: Int = 8 << 10, maxHeaderFields: Int = 64,
                maxBodyBytes: Int = FrameLimits.defaultMaximumPayload) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderFields = maxHeaderFields
        self.maxBodyBytes = maxBodyBytes
    }
}

/// Why an HTTP message of the transport was refused. After any of them the connection is closed.
public enum HTTPTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No empty line within `limit` bytes.
    case headTooLarge(limit: Int)
    /// More header fields than `limit`.
    case tooManyHeaderFields(limit: Int)
    /// A request or status line, or a header field, that HTTP/1.x does not allow (the text says which, printable).
    case malformedHead(String)
    /// A request method other than POST.
    case methodNotAllowed(String)
    /// A request target other than `/api`.
    case notFound(String)
    /// A message without Content-Length (the transport sends none without one).
    case lengthRequired
    /// A Content-Length that is not a decimal number, or two that disagree.
    case invalidContentLength(String)
    /// A body longer than the limit.
    case bodyTooLarge(length: Int, limit: Int)
    /// A request whose body is empty: it carries no MTProto message.
    case emptyBody
    /// Transfer-Encoding (chunked or any other): the transport does not use it.
    case unsupportedTransferEncoding(String)
    /// A response status other than 200 without the 4-byte transport error code body.
    case unexpectedStatus(Int, reason: String)
    /// A response with no request waiting for it.
    case unsolicitedResponse
    /// The connection ended inside a message (`context` names the part); `buffered` bytes were left.
    case truncated(context: String, buffered: Int)
    /// The client had requests in flight and the server sent nothing for this many seconds.
    case responseTimedOut(seconds: Double)

    /// A one-line account of the error.
    public var description: String {
        switch self {
            case .headTooLarge(let limit): "HTTP head longer than \(limit) bytes"
            case .tooManyHeaderFields(let limit): "more than \(limit) HTTP header fields"
            case .malformedHead(let why): "malformed HTTP head: \(why)"
            case .methodNotAllowed(let method): "HTTP method \(method) is not POST"
            case .notFound(let target): "HTTP target \(target) is not /api"
            case .lengthRequired: "HTTP message without Content-Length"
            case .invalidContentLength(let value): "invalid Content-Length \(value)"
            case let .bodyTooLarge(length, limit): "HTTP body of \(length) bytes, more than \(limit)"
            case .emptyBody: "HTTP request with an empty body"
            case .unsupportedTransferEncoding(let value): "unsupported Transfer-Encoding \(value)"
            case let .unexpectedStatus(status, reason): "HTTP status \(status) \(reason)"
            case .unsolicitedResponse: "an HTTP response with no request outstanding"
            case let .truncated(context, buffered): "connection ended inside \(context) (\(buffered) bytes buffered)"
            case .responseTimedOut(let seconds): "no response for \(seconds) s with requests in flight"
        }
    }

    /// The status a server answers the error with before closing.
    public var status: (code: Int, reason: String) {
        switch self {
            case .headTooLarge, .tooManyHeaderFields: (431, "Request Header Fields Too Large")
            case .methodNotAllowed: (405, "Method Not Allowed")
            case .notFound: (404, "Not Found")
            case .lengthRequired: (411, "Length Required")
            case .bodyTooLarge: (413, "Content Too Large")
            case .unsupportedTransferEncoding: (501, "Not Implemented")
            default: (400, "Bad Request")
        }
    }
}

/// One request as the server reads it: its body (one MTProto message) and whether the connection stays open.
public struct HTTPRequest: Sendable, Hashable {
    /// The body, one MTProto message.
    public var body: [UInt8]
    /// False when the client asked to close after the response (`Connection: close`, or HTTP/1.0 without keep-alive).
    public var keepAlive: Bool
}

/// One response as the client reads it.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// The body: one MTProto message, a 4-byte transport error code, or empty (a long poll that ended with nothing).
    public var body: [UInt8]
    /// False when the server will close after it.
    public var keepAlive: Bool
}

/// The byte buffer and head/body state both decoders share.
struct HTTPMessageReader: Sendable {
    let limits: HTTPLimits
    private var buffer: [UInt8] = []
    private var start = 0
    /// The head read, waiting for `bodyLength` body bytes.
    private var pending: (head: ParsedHead, bodyLength: Int)?
    /// After an error the reader stays failed with it.
    private var failure: HTTPTransportError?

    init(limits: HTTPLimits) { self.limits = limits }

    struct ParsedHead: Sendable {
        /// The three parts of the start line.
        var startLine: [String]
        var minorVersion: Int
        var fields: [(name: String, value: String)]

        func values(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }
    }

    var buffered: Int { buffer.count - start }
    /// Inside a head or a body (for the read timeout and for `finish`).
    var isInsideMessage: Bool { pending != nil || buffered > 0 }

    /// Runs `body` (appending and reading) unless the reader failed; an error it throws fails the reader for good.
    mutating func failing<T>(_ body: (inout HTTPMessageReader) throws(HTTPTransportError) -> T)
        throws(HTTPTransportError) -> T
    {
        if let failure { throw failure }
        do {
            return try body(&self)
        } catch {
            failure = error
            throw error
        }
    }

    /// Throws if the reader failed or the connection ended inside a message (`context` names it).
    func finish(_ context: String) throws(HTTPTransportError) {
        if let failure { throw failure }
        if isInsideMessage { throw .truncated(context: context, buffered: buffered) }
    }

    mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0, start * 2 >= buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, if buffered: `parseStart` checks the start line and returns its minor version.
    mutating func next(requireBody: Bool, parseStart: ([UInt8]) throws(HTTPTransportError) -> ([String], Int))
        throws(HTTPTransportError) -> (ParsedHead, [UInt8])?
    {
        if pending == nil {
            guard let end = headEnd() else {
                if buffered > limits.maxHeadBytes { throw .headTooLarge(limit: limits.maxHeadBytes) }
                return nil
            }
            guard end - start <= limits.maxHeadBytes else { throw .headTooLarge(limit: limits.maxHeadBytes) }
            let head = try parseHead(buffer[start..<(end - 4)], parseStart: parseStart)
            start = end
            if let encoding = head.values("transfer-encoding").first {
                throw .unsupportedTransferEncoding(HTTPResponseHead.printable(encoding.utf8.prefix(64)))
            }
            let lengths = head.values("content-length")
            guard let first = lengths.first else { throw .lengthRequired }
            guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.count <= 18,
                  first.utf8.allSatisfy({ (48...57).contains($0) }), let length = Int(first)
            else {
                throw .invalidContentLength(HTTPResponseHead.printable(lengths.joined(separator: ",").utf8.prefix(64)))
            }
            guard length <= limits.maxBodyBytes else { throw .bodyTooLarge(length: length, limit: limits.maxBodyBytes) }
            if requireBody, length == 0 { throw .emptyBody }
            pending = (head, length)
        }
        guard let (head, length) = pending, buffered >= length else { return nil }
        let body = Array(buffer[start..<(start + length)])
        start += length
        pending = nil
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 << 10)
            start = 0
        }
        return (head, body)
    }

    /// The index just past the first CRLF CRLF at or after `start`, looking no further than the head limit.
    private func headEnd() -> Int? {
        let last = min(buffer.count, start + limits.maxHeadBytes + 4)
        var index = start + 3
        while index < last {
            if buffer[index] == 10, buffer[index - 1] == 13, buffer[index - 2] == 10, buffer[index - 3] == 13 {
                return index + 1
            }
            index += 1
        }
        return nil
    }

    private func parseHead(_ bytes: ArraySlice<UInt8>,
                           parseStart: ([UInt8]) throws(HTTPTransportError) -> ([String], Int))
        throws(HTTPTransportError) -> ParsedHead
    {
        var lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map { line in
            line.last == 13 ? line.dropLast() : line
        }
        guard !lines.isEmpty else { throw .malformedHead("empty head") }
        let (startLine, minor) = try parseStart(Array(lines.removeFirst()))
        guard lines.count <= limits.maxHeaderFields else { throw .tooManyHeaderFields(limit: limits.maxHeaderFields) }
        var fields: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                  line[..<colon].allSatisfy(HTTPResponseHead.isTokenByte)
            else {
                throw .malformedHead("bad header line \(HTTPResponseHead.printable(line.prefix(64)))")
            }
            let name = String(decoding: line[..<colon].map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
            var value = line[(colon + 1)...].drop { $0 == 32 || $0 == 9 }
            while let last = value.last, last == 32 || last == 9 { value = value.dropLast() }
            fields.append((name, HTTPResponseHead.printable(value)))
        }
        return ParsedHead(startLine: startLine, minorVersion: minor, fields: fields)
    }

    /// `HTTP/1.0` or `HTTP/1.1`: the minor version.
    static func version(_ text: [UInt8]) -> Int? {
        guard text.count == 8, text.prefix(7).elementsEqual("HTTP/1.".utf8), (48...49).contains(text[7]) else {
            return nil
        }
        return Int(text[7] - 48)
    }

    /// HTTP/1.1 keeps the connection unless told `close`; HTTP/1.0 closes unless told `keep-alive` (RFC 9112 §9.3).
    static func keepAlive(_ head: ParsedHead) -> Bool {
        let tokens = head.values("connection").flatMap { $0.lowercased().split(separator: ",") }
            .map { $0.trimmingCharacters(in: " \t") }
        if tokens.contains("close") { return false }
        return head.minorVersion >= 1 || tokens.contains("keep-alive")
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var copy = self
        while let first = copy.first, set.contains(first) { copy = copy.dropFirst() }
        while let last = copy.last, set.contains(last) { copy = copy.dropLast() }
        return String(copy)
    }
}

/// The server's reader: bytes from a client in, complete `POST /api` requests out. After an error it stays failed.
public struct HTTPRequestDecoder: Sendable {
    private var reader: HTTPMessageReader

    /// A decoder within `limits`.
    public init(limits: HTTPLimits = HTTPLimits()) { reader = HTTPMessageReader(limits: limits) }

    /// Bytes received and not yet part of a returned request.
    public var buffered: Int { reader.buffered }

    /// Whether part of a request has arrived (a server times out a request that stalls here).
    public var isInsideRequest: Bool { reader.isInsideMessage }

    /// Feeds bytes; returns the requests they complete, in order.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(HTTPTransportError) -> [HTTPRequest] {
        try reader.failing { reader throws(HTTPTransportError) in
            reader.append(bytes)
            var requests: [HTTPRequest] = []
            while let (head, body) = try reader.next(requireBody: true, parseStart: Self.requestLine) {
                requests.append(HTTPRequest(body: body, keepAlive: HTTPMessageReader.keepAlive(head)))
            }
            return requests
        }
    }

    /// Call when the client closed: throws if it ended inside a request.
    public func finish() throws(HTTPTransportError) { try reader.finish("an HTTP request") }

    /// `POST SP /api SP HTTP/1.x` (RFC 9112 §3); the absolute form `http://host/api` is accepted too.
    static func requestLine(_ line: [UInt8]) throws(HTTPTransportError) -> ([String], Int) {
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, let minor = HTTPMessageReader.version(Array(parts[2])) else {
            throw .malformedHead("not an HTTP/1.x request line: \(HTTPResponseHead.printable(line.prefix(64)))")
        }
        let method = HTTPResponseHead.printable(parts[0].prefix(16))
        guard method == "POST" else { throw .methodNotAllowed(method) }
        var target = HTTPResponseHead.printable(parts[1].prefix(256))
        if let scheme = target.range(of: "://") {
            let rest = target[scheme.upperBound...]
            target = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
        }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/api" else { throw .notFound(target) }
        return ([method, target], minor)
    }
}

/// The client's reader: bytes from the server in, one response per request sent (HTTP/1.1 answers in order).
public struct HTTPResponseDecoder: Sendable {
    private var reader: HTTPMessageReader
    /// Requests sent and not yet answered.
    public private(set) var outstanding = 0

    /// Bytes received and not yet part of a returned response.
    public var buffered: Int { reader.buffered }

    /// A decoder within `limits`.
    public init(limits: HTTPLimits = HTTPLimits()) { reader = HTTPMessageReader(limits: limits) }

    /// Counts a request sent: its response may now arrive.
    public mutating func expectResponse() { outstanding += 1 }

    /// Feeds bytes; returns the responses they complete, in order.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(HTTPTransportError) -> [HTTPResponse] {
        var outstanding = self.outstanding
        let responses = try reader.failing { reader throws(HTTPTransportError) in
            reader.append(bytes)
            var responses: [HTTPResponse] = []
            while reader.isInsideMessage {
                guard outstanding > 0 else { throw .unsolicitedResponse }
                guard let (head, body) = try reader.next(requireBody: false, parseStart: Self.statusLine) else { break }
                outstanding -= 1
                let status = Int(head.startLine[1]) ?? 0
                responses.append(HTTPResponse(status: status, body: body, keepAlive: HTTPMessageReader.keepAlive(head)))
            }
            return responses
        }
        self.outstanding = outstanding
        return responses
    }

    /// Call when the server closed: throws if it ended inside a response.
    public func finish() throws(HTTPTransportError) { try reader.finish("an HTTP response") }

    /// `HTTP/1.x SP 3DIGIT SP reason` (RFC 9112 §4).
    static func statusLine(_ line: [UInt8]) throws(HTTPTransportError) -> ([String], Int) {
        let parts = line.split(separator: 32, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, let minor = HTTPMessageReader.version(Array(parts[0])), parts[1].count == 3,
              parts[1].allSatisfy({ (48...57).contains($0) }), (49...53).contains(parts[1].first ?? 0)
        else {
            throw .malformedHead("not an HTTP/1.x status line: \(HTTPResponseHead.printable(line.prefix(64)))")
        }
        let reason = parts.count == 3 ? HTTPResponseHead.printable(parts[2].prefix(64)) : ""
        return (["HTTP/1.\(minor)", String(decoding: parts[1], as: UTF8.self), reason], minor)
    }
}

/// The heads both roles write.
public enum HTTPTransportHead {
    /// A request head for a body of `length` bytes: `POST path`, `Host`, keep-alive.
    public static func request(host: String, path: String = "/api", length: Int) -> [UInt8] {
        Array("POST \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: keep-alive\r\nContent-Type: application/octet-stream\r\nContent-Length: \(length)\r\n\r\n".utf8)
    }

    /// A response head for a body of `length` bytes. Content-Length is the last field: Telethon 1.x reads header
    /// lines until it finds Content-Length and takes the next two bytes as the empty line.
    public static func response(status: Int = 200, reason: String = "OK", length: Int, keepAlive: Bool = true)
        -> [UInt8]
    {
        Array("HTTP/1.1 \(status) \(reason)\r\nConnection: \(keepAlive ? "keep-alive" : "close")\r\nContent-Type: application/octet-stream\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: \(length)\r\n\r\n".utf8)
    }
}

/// The client half of the HTTP transport inside `ClientTransport`: a POST per payload, a frame per response body.
struct HTTPClientCodec: Sendable {
    let options: HTTPTransportOptions
    private var decoder: HTTPResponseDecoder

    init(options: HTTPTransportOptions) {
        self.options = options
        decoder = HTTPResponseDecoder(limits: options.limits)
    }

    /// Requests sent whose responses have not arrived.
    var inFlight: Int { decoder.outstanding }

    mutating func encode(_ payload: [UInt8]) throws(TransportError) -> [[UInt8]] {
        guard payload.count <= options.limits.maxBodyBytes else {
            throw .http(.bodyTooLarge(length: payload.count, limit: options.limits.maxBodyBytes))
        }
        decoder.expectResponse()
        return [HTTPTransportHead.request(host: options.host, path: options.path, length: payload.count), payload]
    }

    mutating func receive(_ bytes: some Collection<UInt8>) throws(TransportError) -> [TransportEvent] {
        let responses: [HTTPResponse]
        do {
            responses = try decoder.receive(bytes)
        } catch {
            throw .http(error)
        }
        var events: [TransportEvent] = []
        for response in responses {
            if response.body.count == 4 {
                // A transport error code such as −404, as the TCP framings carry it (with status 404 from ours).
                let code = response.body.withUnsafeBytes { Int32(littleEndian: $0.loadUnaligned(as: Int32.self)) }
                events.append(.transportError(code: code))
            } else if response.status != 200 {
                throw .http(.unexpectedStatus(response.status, reason: ""))
            } else if !response.body.isEmpty {
                events.append(.frame(response.body))
            }
        }
        return events
    }

    func finish() throws(TransportError) {
        do {
            try decoder.finish()
        } catch {
            throw .http(error)
        }
    }
}

/// How a client speaks the HTTP transport.
public struct HTTPTransportOptions: Sendable, Hashable {
    /// The `Host` field of every request (`host:port`).
    public var host: String
    /// The request target.
    public var path: String
    /// Bounds on what the server sends.
    public var limits: HTTPLimits
    /// Milliseconds a long poll asks the server to hold it (`http_wait`'s `max_wait`); 0 sends no long polls, so
    /// the server's messages arrive only in answers to the client's own requests.
    public var longPollWait: Int32
    /// Seconds the server may stay silent while requests are in flight (a held long poll included, so it must
    /// exceed `longPollWait`); past it the connection fails with `HTTPTransportError.responseTimedOut`.
    public var responseTimeout: Double

    /// The `Host` field for `host` and `port` (an IPv6 literal in brackets, RFC 9110 §7.2).
    public static func hostField(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Options for a server reached as `host` (`host:port`); long polls wait up to 25 s by default, and a server
    /// silent for 40 s with requests in flight fails the connection.
    public init(host: String, path: String = "/api", limits: HTTPLimits = HTTPLimits(), longPollWait: Int32 = 25_000,
                responseTimeout: Double = 40) {
        self.responseTimeout = responseTimeout
        self.host = host
        self.path = path
        self.limits = limits
        self.longPollWait = longPollWait
    }
}
