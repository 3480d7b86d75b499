// What a client needs to open its connections through a SOCKS5 (RFC 1928, RFC 1929) or HTTP CONNECT (RFC 9110
// §9.3.6) proxy, and the typed errors a proxy handshake ends with. The handshake itself is `ProxyHandshake`.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A SOCKS5 or HTTP CONNECT proxy that connections are opened through. Its description hides the password.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The proxy protocol.
    public enum Kind: String, Sendable, Hashable {
        /// SOCKS version 5 (RFC 1928), with username/password authentication (RFC 1929) when credentials are set.
        case socks5
        /// An HTTP proxy's `CONNECT` tunnel, with `Proxy-Authorization: Basic` when credentials are set.
        case httpConnect
    }

    /// The proxy protocol.
    public var kind: Kind
    /// The proxy's host name or address (an IPv6 literal without brackets).
    public var host: String
    /// The proxy's TCP port.
    public var port: Int
    /// The user name, if the proxy wants one (1–255 bytes of UTF-8 for SOCKS5).
    public var username: String?
    /// The password that goes with `username`.
    public var password: String?
    /// How long the whole handshake (TCP connect excluded) may take before it fails with `ProxyError.timedOut`.
    public var handshakeTimeout: Duration

    /// A proxy at `host`:`port`; credentials are sent only when `username` is set.
    public init(kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil,
                handshakeTimeout: Duration = .seconds(10)) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.handshakeTimeout = handshakeTimeout
    }

    /// Parses `socks5://[user:password@]host:port` or `http://[user:password@]host:port`; the user and password
    /// may be percent-encoded, an IPv6 host is written in brackets (`socks5://[::1]:1080`).
    public init(url: String) throws(ProxyError) {
        let kind: Kind
        let rest: Substring
        if url.hasPrefix("socks5://") {
            kind = .socks5
            rest = url.dropFirst("socks5://".count)
        } else if url.hasPrefix("http://") {
            kind = .httpConnect
            rest = url.dropFirst("http://".count)
        } else {
            throw .invalidConfiguration("a proxy URL starts with socks5:// or http://: \(url)")
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        var username: String?, password: String?
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            username = try Self.percentDecoded(parts[0])
            password = parts.count > 1 ? try Self.percentDecoded(parts[1]) : ""
        }
        guard let endpoint = HostPort(parsing: authority) else {
            throw .invalidConfiguration("a proxy URL needs host:port (an IPv6 host in brackets): \(authority)")
        }
        self.init(kind: kind, host: endpoint.host, port: endpoint.port, username: username, password: password)
    }

    private static func percentDecoded(_ text: Substring) throws(ProxyError) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard utf8.count >= 2, let high = hexValue(utf8.removeFirst()), let low = hexValue(utf8.removeFirst()) else {
                throw .invalidConfiguration("a bad percent escape in the proxy URL's credentials")
            }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
        }
    }

    /// The proxy as a URL, the password replaced by `***`.
    public var description: String {
        let scheme = kind == .socks5 ? "socks5" : "http"
        let user = username.map { "\($0):***@" } ?? ""
        return "\(scheme)://\(user)\(HostPort(host: host, port: port))"
    }
}

/// A host and a port as written in an address: `host:port`, `1.2.3.4:443` or `[::1]:443` (an IPv6 literal in
/// brackets, RFC 3986 §3.2.2). `host` never carries the brackets.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    /// A name, an IPv4 literal, or an IPv6 literal without brackets.
    public var host: String
    /// 1–65535 when parsed.
    public var port: Int

    /// A host and a port as they are.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT` or `[IPV6]:PORT`; nil if the port is not 1–65535, the host is empty, or an IPv6 literal is
    /// not in brackets.
    public init?(parsing text: some StringProtocol) {
        let text = Substring(text)
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            guard after.hasPrefix(":") else { return nil }
            portPart = after.dropFirst()
            guard IPAddressLiteral(String(hostPart))?.isIPv6 == true else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            // More colons: an IPv6 literal without its brackets, ambiguous with the port.
            guard !hostPart.contains(":") else { return nil }
        }
        guard !hostPart.isEmpty, portPart.utf8.count <= 5, portPart.utf8.allSatisfy({ (48...57).contains($0) }),
              let port = Int(portPart), (1...65535).contains(port)
        else { return nil }
        self.init(host: String(hostPart), port: port)
    }

    /// `host:port`, an IPv6 host in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A numeric IPv4 or IPv6 address, as its network-order bytes.
public struct IPAddressLiteral: Sendable, Hashable {
    /// 4 bytes (IPv4) or 16 (IPv6).
    public let bytes: [UInt8]

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { bytes.count == 16 }

    /// `text` as a dotted-quad IPv4 or an IPv6 address (no brackets, no zone); nil for anything else (a name).
    public init?(_ text: String) {
        guard text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }
}

/// Why a connection through a proxy failed. Each case names what the proxy answered, or which step it did not
/// finish.
public enum ProxyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration cannot be sent (e.g. a SOCKS5 user name over 255 bytes, a bad proxy URL).
    case invalidConfiguration(String)
    /// SOCKS5: the proxy accepts none of the offered methods (it answered `0xff`); with no credentials set this
    /// usually means it wants a user and a password.
    case noAcceptableMethod(offered: [UInt8])
    /// SOCKS5: the proxy chose a method that was not offered.
    case unexpectedMethod(UInt8)
    /// SOCKS5: the user name and password were refused (RFC 1929 status, non-zero).
    case authenticationFailed(status: UInt8)
    /// SOCKS5: the proxy refused the CONNECT (RFC 1928 reply code, non-zero).
    case socksRefused(reply: UInt8)
    /// HTTP: the proxy answered the CONNECT with a status other than 2xx (407, or 401 from some proxies such as
    /// tinyproxy: credentials missing or wrong).
    case httpRefused(status: Int, reason: String)
    /// The proxy's answer is not what the protocol allows (`what` says where).
    case malformedReply(String)
    /// The proxy's answer grew past `limit` bytes without ending.
    case replyTooLarge(limit: Int)
    /// The proxy closed the connection before the handshake finished (`stage` says at which step).
    case closed(stage: String)
    /// The handshake did not finish within the configured timeout (`stage` says at which step it stalled).
    case timedOut(stage: String)

    /// What happened, naming the proxy's reply or the step that did not finish.
    public var description: String {
        switch self {
            case .invalidConfiguration(let why): "proxy configuration: \(why)"
            case .noAcceptableMethod(let offered):
                "SOCKS5 proxy accepts none of the offered authentication methods (\(offered.map(String.init).joined(separator: ", ")))"
                    + (offered.contains(2) ? "" : "; does it want a user and password?")
            case .unexpectedMethod(let method): "SOCKS5 proxy chose method \(method), which was not offered"
            case .authenticationFailed(let status):
                "SOCKS5 proxy refused the user name and password (RFC 1929 status \(status))"
            case .socksRefused(let reply): "SOCKS5 proxy refused the connection: reply \(reply) (\(Self.socksReplyMeaning(reply)))"
            case .httpRefused(let status, let reason):
                "HTTP proxy refused CONNECT: \(status) \(reason)"
                    + (status == 407 || status == 401 ? " (proxy credentials missing or wrong)" : "")
            case .malformedReply(let what): "proxy reply malformed: \(what)"
            case .replyTooLarge(let limit): "proxy reply longer than \(limit) bytes"
            case .closed(let stage): "proxy closed the connection \(stage)"
            case .timedOut(let stage): "proxy handshake timed out \(stage)"
        }
    }

    /// RFC 1928 §6's name for a reply code.
    public static func socksReplyMeaning(_ reply: UInt8) -> String {
        switch reply {
            case 0: "succeeded"
            case 1: "general SOCKS server failure"
            case 2: "connection not allowed by ruleset"
            case 3: "network unreachable"
            case 4: "host unreachable"
            case 5: "connection refused"
            case 6: "TTL expired"
            case 7: "command not supported"
            case 8: "address type not supported"
            default: "unassigned"
        }
    }
}
