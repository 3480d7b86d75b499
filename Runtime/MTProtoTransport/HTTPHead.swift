// The head of an HTTP/1.1 response (RFC 9112 §4–5): status line and header fields up to the empty line, parsed
// from bytes with a size bound, as the HTTP CONNECT handshake reads it.

/// A parsed HTTP/1.x response head.
public struct HTTPResponseHead: Sendable, Hashable {
    /// `1` or `0` of `HTTP/1.x`.
    public var minorVersion: Int
    /// The three-digit status code.
    public var status: Int
    /// The reason phrase (may be empty), non-printable bytes dropped.
    public var reason: String
    /// Header fields in order, names lowercased, values trimmed.
    public var headers: [Field]

    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The field name, lowercased.
        public var name: String
        /// The value, without leading or trailing spaces.
        public var value: String
    }

    /// The first value of `name` (lowercase), if present.
    public func value(of name: String) -> String? { headers.first { $0.name == name }?.value }

    /// Finds a complete head at the start of `bytes`: nil while the empty line has not come yet (and `bytes` is
    /// shorter than `limit`), the head and the bytes it took once it has.
    /// - Throws: `ProxyError.replyTooLarge` when `limit` bytes hold no complete head, `.malformedReply` for a
    ///   status line or header that HTTP/1.x does not allow.
    public static func parse(_ bytes: some RandomAccessCollection<UInt8>, limit: Int)
        throws(ProxyError) -> (head: HTTPResponseHead, length: Int)?
    {
        let bytes = Array(bytes.prefix(limit + 4))
        guard let end = headEnd(bytes) else {
            if bytes.count >= limit { throw .replyTooLarge(limit: limit) }
            return nil
        }
        guard end <= limit else { throw .replyTooLarge(limit: limit) }
        var lines = splitLines(bytes[..<(end - 4)])
        guard !lines.isEmpty else { throw .malformedReply("empty HTTP response head") }
        let statusLine = lines.removeFirst()
        // HTTP/1.x SP 3DIGIT SP reason (RFC 9112 §4); some servers omit the space before an empty reason.
        let prefix = Array("HTTP/1.".utf8)
        guard statusLine.count >= 12, statusLine.prefix(7).elementsEqual(prefix),
              let minor = digit(statusLine[statusLine.startIndex + 7]), minor <= 1,
              statusLine[statusLine.startIndex + 8] == UInt8(ascii: " "),
              let d0 = digit(statusLine[statusLine.startIndex + 9]), let d1 = digit(statusLine[statusLine.startIndex + 10]),
              let d2 = digit(statusLine[statusLine.startIndex + 11]), (1...5).contains(d0),
              statusLine.count == 12 || statusLine[statusLine.startIndex + 12] == UInt8(ascii: " ")
        else {
            throw .malformedReply("not an HTTP/1.x status line: \(printable(statusLine.prefix(64)))")
        }
        var headers: [Field] = []
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                  line[..<colon].allSatisfy(isTokenByte)
            else {
                throw .malformedReply("bad HTTP header line: \(printable(line.prefix(64)))")
            }
            let name = String(decoding: line[..<colon].map { ($0 >= 65 && $0 <= 90) ? $0 + 32 : $0 }, as: UTF8.self)
            let value = line[(colon + 1)...].drop { $0 == 32 || $0 == 9 }
            headers.append(Field(name: name, value: printable(value).trimmingTrailingSpaces()))
        }
        let head = HTTPResponseHead(minorVersion: minor, status: d0 * 100 + d1 * 10 + d2,
                                    reason: printable(statusLine.dropFirst(13)), headers: headers)
        return (head, end)
    }

    /// The index just past the first CRLF CRLF, if any.
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = 3
        while index < bytes.count {
            if bytes[index] == 10, bytes[index - 1] == 13, bytes[index - 2] == 10, bytes[index - 3] == 13 {
                return index + 1
            }
            index += 1
        }
        return nil
    }

    private static func splitLines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 10 {
                let end = index > start && bytes[index - 1] == 13 ? index - 1 : index
                lines.append(bytes[start..<end])
                start = index + 1
            }
            index += 1
        }
        lines.append(bytes[start..<bytes.endIndex])
        return lines
    }

    private static func digit(_ byte: UInt8) -> Int? { (48...57).contains(byte) ? Int(byte - 48) : nil }

    /// RFC 9110 §5.6.2 tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Visible ASCII and spaces only, so a hostile reply cannot put control characters into an error message.
    static func printable(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: bytes.filter { (32...126).contains($0) }, as: UTF8.self)
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = Substring(self)
        while copy.last == " " { copy = copy.dropLast() }
        return String(copy)
    }
}
