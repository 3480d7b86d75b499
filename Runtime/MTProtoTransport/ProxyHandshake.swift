// The client side of a proxy handshake as a sans-IO state machine: SOCKS5 (RFC 1928) with username/password
// authentication (RFC 1929), or an HTTP CONNECT tunnel (RFC 9110 §9.3.6) with Basic credentials (RFC 7617).
// Bytes from the proxy go in; bytes to send and, once the tunnel is open, the bytes that already belong to the
// tunnel come out. Every reply is bounded in size; the I/O layer bounds it in time and asks `stage` what stalled.

/// One proxy handshake towards one target.
public struct ProxyHandshake: Sendable {
    /// What `receive` produced.
    public struct Output: Sendable, Hashable {
        /// Bytes to send to the proxy.
        public var outbound: [UInt8]
        /// Set once the tunnel is open: bytes that came after the proxy's last reply and belong to the target.
        public var established: [UInt8]?
    }

    private enum State: Sendable {
        case idle
        case socksMethod
        case socksAuthentication
        case socksConnect
        case httpConnect
        case established
        case failed(ProxyError)
    }

    /// The largest reply kept while waiting for its end: a SOCKS5 reply is at most 262 bytes, an HTTP head is
    /// allowed 8 KiB.
    public static let httpHeadLimit = 8192

    /// The proxy and how to authenticate.
    public let proxy: ProxyConfiguration
    /// Where the tunnel leads.
    public let target: HostPort
    private var state: State = .idle
    private var buffer: [UInt8] = []

    /// A handshake with `proxy` for a tunnel to `target`.
    /// - Throws: `.invalidConfiguration` for credentials or a target the protocol cannot carry.
    public init(proxy: ProxyConfiguration, target: HostPort) throws(ProxyError) {
        guard (1...65535).contains(target.port) else { throw .invalidConfiguration("target port \(target.port)") }
        if proxy.kind == .socks5 {
            if let username = proxy.username {
                guard (1...255).contains(username.utf8.count), (1...255).contains((proxy.password ?? "").utf8.count) else {
                    throw .invalidConfiguration("a SOCKS5 user name and password are 1-255 bytes each (RFC 1929)")
                }
            }
            guard IPAddressLiteral(target.host) != nil || (1...255).contains(target.host.utf8.count) else {
                throw .invalidConfiguration("a SOCKS5 host name is 1-255 bytes")
            }
        } else {
            // The request line and Host header carry the target as is: no line breaks or spaces in it.
            guard !target.host.isEmpty, !target.host.utf8.contains(where: { $0 <= 32 || $0 == 127 }),
                  !(proxy.username ?? "").utf8.contains(where: { $0 < 32 || $0 == 127 }),
                  !(proxy.password ?? "").utf8.contains(where: { $0 < 32 || $0 == 127 })
            else {
                throw .invalidConfiguration("the target or credentials hold control characters or spaces")
            }
        }
        self.proxy = proxy
        self.target = target
    }

    /// Whether the tunnel is open.
    public var isEstablished: Bool { if case .established = state { true } else { false } }

    /// Which step the handshake is at, for a timeout's or an early close's error.
    public var stage: String {
        switch state {
            case .idle: "before the handshake began"
            case .socksMethod: "waiting for the SOCKS5 method choice"
            case .socksAuthentication: "waiting for the SOCKS5 authentication status"
            case .socksConnect: "waiting for the SOCKS5 CONNECT reply"
            case .httpConnect: "waiting for the HTTP CONNECT response"
            case .established: "after the tunnel opened"
            case .failed(let error): "after it failed (\(error))"
        }
    }

    private var methods: [UInt8] { proxy.username == nil ? [0x00] : [0x00, 0x02] }

    /// The first bytes to send: the SOCKS5 greeting, or the whole HTTP CONNECT request.
    public mutating func start() -> [UInt8] {
        guard case .idle = state else { return [] }
        switch proxy.kind {
            case .socks5:
                state = .socksMethod
                return [0x05, UInt8(methods.count)] + methods
            case .httpConnect:
                state = .httpConnect
                var request = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
                if let username = proxy.username {
                    let token = Base64.encode(Array("\(username):\(proxy.password ?? "")".utf8))
                    request += "Proxy-Authorization: Basic \(token)\r\n"
                }
                return Array((request + "\r\n").utf8)
        }
    }

    /// Feeds bytes from the proxy.
    /// - Throws: the `ProxyError` naming the proxy's refusal, or what was wrong with its reply; the handshake
    ///   stays failed after it.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(ProxyError) -> Output {
        switch state {
            case .failed(let error): throw error
            case .established: return Output(outbound: [], established: Array(bytes))
            case .idle: try fail(.malformedReply("bytes before the handshake began"))
            default: break
        }
        buffer.append(contentsOf: bytes)
        var out: [UInt8] = []
        while true {
            do throws(ProxyError) {
                guard let step = try advance() else {
                    return Output(outbound: out, established: nil)
                }
                out += step
                if isEstablished {
                    defer { buffer = [] }
                    return Output(outbound: out, established: buffer)
                }
            } catch {
                try fail(error)
            }
        }
    }

    /// The proxy closed the connection: the error saying where, unless the tunnel was already open.
    public func closed() -> ProxyError? {
        switch state {
            case .established: nil
            case .failed(let error): error
            default: .closed(stage: stage)
        }
    }

    private mutating func fail(_ error: ProxyError) throws(ProxyError) -> Never {
        state = .failed(error)
        buffer = []
        throw error
    }

    /// One reply from `buffer`, if complete: consumes it and returns what to send next (nil: wait for more).
    private mutating func advance() throws(ProxyError) -> [UInt8]? {
        switch state {
            case .socksMethod:
                guard buffer.count >= 2 else { return nil }
                guard buffer[0] == 0x05 else { throw .malformedReply("SOCKS version \(buffer[0]) in the method choice") }
                let method = buffer[1]
                buffer.removeFirst(2)
                if method == 0xff { throw .noAcceptableMethod(offered: methods) }
                guard methods.contains(method) else { throw .unexpectedMethod(method) }
                if method == 0x02, let username = proxy.username {
                    state = .socksAuthentication
                    let user = Array(username.utf8), password = Array((proxy.password ?? "").utf8)
                    return [0x01, UInt8(user.count)] + user + [UInt8(password.count)] + password
                }
                state = .socksConnect
                return connectRequest()
            case .socksAuthentication:
                guard buffer.count >= 2 else { return nil }
                guard buffer[0] == 0x01 else {
                    throw .malformedReply("username/password reply version \(buffer[0]), expected 1")
                }
                guard buffer[1] == 0 else { throw .authenticationFailed(status: buffer[1]) }
                buffer.removeFirst(2)
                state = .socksConnect
                return connectRequest()
            case .socksConnect:
                guard buffer.count >= 2 else { return nil }
                guard buffer[0] == 0x05 else { throw .malformedReply("SOCKS version \(buffer[0]) in the CONNECT reply") }
                guard buffer[1] == 0 else { throw .socksRefused(reply: buffer[1]) }
                guard buffer.count >= 5 else { return nil }
                let addressLength: Int
                switch buffer[3] {
                    case 0x01: addressLength = 4
                    case 0x04: addressLength = 16
                    case 0x03: addressLength = 1 + Int(buffer[4])
                    default: throw .malformedReply("SOCKS5 reply address type \(buffer[3])")
                }
                let length = 4 + addressLength + 2
                guard buffer.count >= length else { return nil }
                buffer.removeFirst(length)
                state = .established
                return []
            case .httpConnect:
                guard let (head, length) = try HTTPResponseHead.parse(buffer, limit: Self.httpHeadLimit) else {
                    return nil
                }
                guard (200...299).contains(head.status) else {
                    throw .httpRefused(status: head.status, reason: head.reason)
                }
                buffer.removeFirst(length)
                state = .established
                return []
            case .idle, .established, .failed:
                return nil
        }
    }

    /// RFC 1928 §4: CONNECT to the target, by IPv4, IPv6 or domain name.
    private func connectRequest() -> [UInt8] {
        var request: [UInt8] = [0x05, 0x01, 0x00]
        if let address = IPAddressLiteral(target.host) {
            request.append(address.isIPv6 ? 0x04 : 0x01)
            request += address.bytes
        } else {
            let name = Array(target.host.utf8)
            request += [0x03, UInt8(name.count)] + name
        }
        request += [UInt8(target.port >> 8), UInt8(target.port & 0xff)]
        return request
    }
}

/// RFC 4648 base64 with padding, for Basic credentials.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0f) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3f)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
