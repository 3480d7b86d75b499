// The proxy handshakes byte by byte against RFC 1928/1929 and HTTP CONNECT: what is sent, what each reply leads
// to, and the typed error for every refusal and every malformed or oversized reply.
import MTProtoTransport
import Testing

@Suite struct ProxyHandshakeTests {
    let socks = ProxyConfiguration(kind: .socks5, host: "127.0.0.1", port: 1080, username: "alice", password: "s3cret")

    @Test func socks5WithCredentialsOffersBothMethodsThenAuthenticatesAndConnectsByIPv4() throws {
        var handshake = try ProxyHandshake(proxy: socks, target: HostPort(host: "10.1.2.3", port: 443))
        #expect(handshake.start() == [5, 2, 0, 2])
        let auth = try handshake.receive([5, 2])
        #expect(auth.outbound == [1, 5] + Array("alice".utf8) + [6] + Array("s3cret".utf8))
        #expect(auth.established == nil)
        let connect = try handshake.receive([1, 0])
        #expect(connect.outbound == [5, 1, 0, 1, 10, 1, 2, 3, 0x01, 0xbb])
        // The reply arrives in two reads; the second carries the server's first bytes too.
        #expect(try handshake.receive([5, 0, 0, 1, 127]).established == nil)
        let done = try handshake.receive([0, 0, 1, 0x12, 0x34, 0xee, 0xff])
        #expect(done.established == [0xee, 0xff])
        #expect(handshake.isEstablished)
        #expect(try handshake.receive([1, 2, 3]).established == [1, 2, 3])
    }

    @Test func socks5ConnectsToIPv6AndNamesAndSkipsEveryBoundAddressType() throws {
        let plain = ProxyConfiguration(kind: .socks5, host: "::1", port: 1080)
        var v6 = try ProxyHandshake(proxy: plain, target: HostPort(host: "::1", port: 8443))
        #expect(v6.start() == [5, 1, 0])
        #expect(try v6.receive([5, 0]).outbound == [5, 1, 0, 4] + Array(repeating: 0, count: 15) + [1, 0x20, 0xfb])
        // Bound address as IPv6 (16 bytes).
        #expect(try v6.receive([5, 0, 0, 4] + Array(repeating: 0, count: 16) + [0, 80, 42]).established == [42])

        var name = try ProxyHandshake(proxy: plain, target: HostPort(host: "dc2.example", port: 443))
        _ = name.start()
        #expect(try name.receive([5, 0]).outbound == [5, 1, 0, 3, 11] + Array("dc2.example".utf8) + [1, 0xbb])
        // Bound address as a 3-byte name.
        #expect(try name.receive([5, 0, 0, 3, 3, 97, 98, 99, 0, 80]).established == [])
    }

    @Test func everySocks5RefusalIsTypedAndNamesTheReply() throws {
        func run(_ replies: [[UInt8]], proxy: ProxyConfiguration? = nil) throws(ProxyError) {
            var handshake = try ProxyHandshake(proxy: proxy ?? socks, target: HostPort(host: "1.2.3.4", port: 443))
            _ = handshake.start()
            for reply in replies { _ = try handshake.receive(reply) }
        }
        #expect(throws: ProxyError.noAcceptableMethod(offered: [0, 2])) { try run([[5, 0xff]]) }
        #expect(throws: ProxyError.unexpectedMethod(2)) {
            try run([[5, 2]], proxy: ProxyConfiguration(kind: .socks5, host: "h", port: 1))
        }
        #expect(throws: ProxyError.authenticationFailed(status: 1)) { try run([[5, 2], [1, 1]]) }
        #expect(throws: ProxyError.socksRefused(reply: 5)) { try run([[5, 2], [1, 0], [5, 5, 0, 1]]) }
        // A refusal is reported from its first two bytes (the proxy may close without sending the rest).
        #expect(throws: ProxyError.socksRefused(reply: 2)) { try run([[5, 2], [1, 0], [5, 2]]) }
        #expect(throws: ProxyError.malformedReply("SOCKS version 4 in the method choice")) { try run([[4, 0]]) }
        #expect(throws: ProxyError.malformedReply("SOCKS5 reply address type 9")) {
            try run([[5, 0], [5, 0, 0, 9, 0]], proxy: ProxyConfiguration(kind: .socks5, host: "h", port: 1))
        }
        #expect(ProxyError.socksRefused(reply: 5).description.contains("connection refused"))
        #expect(ProxyError.authenticationFailed(status: 1).description.contains("refused the user name and password"))
    }

    @Test func aFailedHandshakeStaysFailed() throws {
        var handshake = try ProxyHandshake(proxy: socks, target: HostPort(host: "1.2.3.4", port: 443))
        _ = handshake.start()
        #expect(throws: ProxyError.noAcceptableMethod(offered: [0, 2])) { try handshake.receive([5, 0xff]) }
        #expect(throws: ProxyError.noAcceptableMethod(offered: [0, 2])) { try handshake.receive([5, 0]) }
        #expect(handshake.closed() == .noAcceptableMethod(offered: [0, 2]))
    }

    @Test func anEarlyCloseNamesTheStep() throws {
        var handshake = try ProxyHandshake(proxy: socks, target: HostPort(host: "1.2.3.4", port: 443))
        _ = handshake.start()
        _ = try handshake.receive([5, 2])
        #expect(handshake.closed() == .closed(stage: "waiting for the SOCKS5 authentication status"))
        _ = try handshake.receive([1, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        #expect(handshake.closed() == nil)
    }

    @Test func httpConnectSendsBasicCredentialsAndOpensOn2xx() throws {
        let proxy = ProxyConfiguration(kind: .httpConnect, host: "127.0.0.1", port: 8888, username: "Aladdin",
                                       password: "open sesame")
        var handshake = try ProxyHandshake(proxy: proxy, target: HostPort(host: "::1", port: 443))
        // RFC 7617 §2's example credentials.
        #expect(String(decoding: handshake.start(), as: UTF8.self)
                == "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\nProxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n\r\n")
        #expect(try handshake.receive(Array("HTTP/1.0 200 Connection established\r\nProxy-agent: x\r".utf8))
                    .established == nil)
        #expect(try handshake.receive(Array("\n\r\nabc".utf8)).established == Array("abc".utf8))
    }

    @Test func httpRefusalsAndMalformedOrEndlessHeadsAreTyped() throws {
        func run(_ reply: some Collection<UInt8>) throws(ProxyError) -> ProxyHandshake.Output {
            var handshake = try ProxyHandshake(proxy: ProxyConfiguration(kind: .httpConnect, host: "h", port: 1),
                                               target: HostPort(host: "example.org", port: 443))
            _ = handshake.start()
            return try handshake.receive(reply)
        }
        func run(_ reply: String) throws(ProxyError) -> ProxyHandshake.Output { try run(Array(reply.utf8)) }
        #expect(throws: ProxyError.httpRefused(status: 407, reason: "Proxy Authentication Required")) {
            try run("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n")
        }
        #expect(throws: ProxyError.httpRefused(status: 403, reason: "")) { try run("HTTP/1.1 403\r\n\r\n") }
        #expect(throws: ProxyError.malformedReply("not an HTTP/1.x status line: SSH-2.0-OpenSSH")) {
            try run("SSH-2.0-OpenSSH\r\n\r\n")
        }
        #expect(throws: ProxyError.malformedReply("bad HTTP header line: no colon here")) {
            try run("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n")
        }
        // An endless head: more than the limit without an empty line.
        let endless = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 400)
        #expect(throws: ProxyError.replyTooLarge(limit: ProxyHandshake.httpHeadLimit)) { try run(endless) }
        // Just under the limit, still waiting.
        #expect(try run(endless.utf8.prefix(ProxyHandshake.httpHeadLimit - 1)).established == nil)
    }

    @Test func urlsParseWithCredentialsIPv6AndPercentEscapes() throws {
        let socks = try ProxyConfiguration(url: "socks5://us%40er:p%3Ass@[::1]:1080")
        #expect(socks == ProxyConfiguration(kind: .socks5, host: "::1", port: 1080, username: "us@er", password: "p:ss"))
        #expect(socks.description == "socks5://us@er:***@[::1]:1080")
        let http = try ProxyConfiguration(url: "http://127.0.0.1:8888")
        #expect(http == ProxyConfiguration(kind: .httpConnect, host: "127.0.0.1", port: 8888))
        for bad in ["ftp://h:1", "socks5://h", "socks5://::1:80", "http://h:0", "http://h:65536", "socks5://u:p@:1",
                    "socks5://u:%zz@h:1", "http://[::1:80"] {
            #expect(throws: ProxyError.self, "\(bad)") { try ProxyConfiguration(url: bad) }
        }
        #expect(HostPort(parsing: "[::1]:443") == HostPort(host: "::1", port: 443))
        #expect(HostPort(parsing: "[not-v6]:443") == nil)
        #expect(HostPort(parsing: "1.2.3.4:+44") == nil)
    }

    @Test func credentialsAndTargetsTheProtocolCannotCarryAreRefusedBeforeSending() {
        let long = String(repeating: "u", count: 256)
        #expect(throws: ProxyError.self) {
            try ProxyHandshake(proxy: ProxyConfiguration(kind: .socks5, host: "h", port: 1, username: long, password: "p"),
                               target: HostPort(host: "1.2.3.4", port: 1))
        }
        #expect(throws: ProxyError.self) {
            try ProxyHandshake(proxy: ProxyConfiguration(kind: .httpConnect, host: "h", port: 1),
                               target: HostPort(host: "evil\r\nX: y", port: 1))
        }
    }
}
