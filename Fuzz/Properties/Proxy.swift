// Proxy handshakes fed whatever a hostile proxy might answer: the SOCKS5 replies (RFC 1928/1929) and HTTP
// response heads (the CONNECT answer). Neither traps; the outcome does not depend on how the bytes are split; what
// is sent is only ever the protocol's next request; what is handed to the tunnel is exactly the input's tail.
import MTProtoTransport

/// The outcome of one handshake run: the bytes sent after the opening, and the tunnel's first bytes or the error.
private struct Run {
    var sent: [UInt8] = []
    var tunnel: [UInt8]?
    var error: ProxyError?

    /// Same error or same tunnel; and, unless it failed, the same bytes sent (a request made in the same call as a
    /// failure is never handed out, and need not be: nothing goes to a proxy after its handshake failed).
    func sameOutcome(as other: Run) -> Bool {
        error == other.error && tunnel == other.tunnel && (error != nil || sent == other.sent)
    }
}

private func run(_ proxy: ProxyConfiguration, target: HostPort, _ pieces: [[UInt8]]) throws(Violation) -> Run {
    guard var handshake = try? ProxyHandshake(proxy: proxy, target: target) else {
        throw Violation("a valid configuration was refused")
    }
    var result = Run()
    _ = handshake.start()
    for piece in pieces {
        do {
            let output = try handshake.receive(piece)
            result.sent += output.outbound
            if let tunnel = output.established { result.tunnel = (result.tunnel ?? []) + tunnel }
        } catch {
            guard !handshake.isEstablished else { throw Violation("an established handshake threw \(error)") }
            // A failed handshake stays failed, with the same error.
            do {
                _ = try handshake.receive([0x05, 0x00])
                throw Violation("a failed handshake accepted more bytes after \(error)")
            } catch let again as ProxyError {
                guard again == error else { throw Violation("failed with \(error), then with \(again)") }
            } catch {
                throw error as? Violation ?? Violation("\(error)")
            }
            result.error = error
            return result
        }
    }
    if result.tunnel == nil, handshake.closed() == nil { throw Violation("not established, yet no error on close") }
    return result
}

/// Input: a control byte (bit 0: credentials; bits 1–2: the target's address family; the rest seeds the split),
/// then the proxy's replies.
public func fuzzSocks5Reply(_ data: [UInt8]) throws(Violation) {
    var reader = InputReader(data)
    let control = reader.byte()
    let replies = reader.rest()
    let proxy = control & 1 == 1
        ? ProxyConfiguration(kind: .socks5, host: "127.0.0.1", port: 1080, username: "user", password: "pass")
        : ProxyConfiguration(kind: .socks5, host: "127.0.0.1", port: 1080)
    let host = ["10.0.0.1", "::1", "dc.example"][Int(control >> 1 & 3) % 3]
    let target = HostPort(host: host, port: 443)
    let whole = try run(proxy, target: target, [replies])
    let split = try run(proxy, target: target, chunks(replies, seed: control >> 3))
    guard whole.sameOutcome(as: split) else { throw Violation("the outcome depends on how the replies are split") }
    // Only the protocol's next requests go out: authentication (RFC 1929) if offered, then CONNECT (RFC 1928 §4).
    var sent = whole.sent[...]
    let authentication: [UInt8] = [1, 4] + Array("user".utf8) + [4] + Array("pass".utf8)
    if sent.first == 0x01 {
        guard control & 1 == 1, sent.starts(with: authentication) else {
            throw Violation("unexpected authentication request \(Array(sent))")
        }
        sent = sent.dropFirst(authentication.count)
    }
    guard sent.isEmpty || (sent.count >= 7 && sent.starts(with: [5, 1, 0])) else {
        throw Violation("unexpected bytes sent: \(Array(sent))")
    }
    if let tunnel = whole.tunnel {
        // The tunnel starts exactly where the replies end: at most 2 + 2 + 262 bytes of replies before it.
        guard replies.count - tunnel.count <= 266, Array(replies.suffix(tunnel.count)) == tunnel else {
            throw Violation("the tunnel's bytes are not the input's tail")
        }
        guard !sent.isEmpty else { throw Violation("established without sending CONNECT") }
    }
}

/// Input: a control byte seeding the split, then an HTTP response head (and what follows it).
public func fuzzHTTPResponse(_ data: [UInt8]) throws(Violation) {
    var reader = InputReader(data)
    let control = reader.byte()
    let response = reader.rest()
    let limit = 512
    let parsed: (head: HTTPResponseHead, length: Int)?
    do {
        parsed = try HTTPResponseHead.parse(response, limit: limit)
    } catch {
        parsed = nil
    }
    if let (head, length) = parsed {
        guard length <= limit, length >= 16, Array(response[(length - 4)..<length]) == [13, 10, 13, 10] else {
            throw Violation("a head of \(length) bytes that does not end in CRLF CRLF within the limit")
        }
        guard (100...599).contains(head.status) else { throw Violation("status \(head.status)") }
        let texts = [head.reason] + head.headers.flatMap { [$0.name, $0.value] }
        guard texts.allSatisfy({ $0.utf8.allSatisfy { (32...126).contains($0) } }) else {
            throw Violation("non-printable bytes in a parsed head")
        }
        // The head ends at its first empty line: one byte less is incomplete; the head alone parses the same.
        guard case .some(.none) = try? HTTPResponseHead.parse(response.prefix(length - 1), limit: limit) else {
            throw Violation("a prefix of a complete head is not incomplete")
        }
        guard let again = try? HTTPResponseHead.parse(response.prefix(length), limit: limit), again.head == head,
              again.length == length
        else { throw Violation("the head alone parses differently") }
    }
    // Through the CONNECT handshake, split or whole, the outcome is the same; the tunnel gets the rest.
    let proxy = ProxyConfiguration(kind: .httpConnect, host: "127.0.0.1", port: 8080)
    let target = HostPort(host: "dc.example", port: 443)
    let whole = try run(proxy, target: target, [response])
    guard whole.sameOutcome(as: try run(proxy, target: target, chunks(response, seed: control))) else {
        throw Violation("the outcome depends on how the response is split")
    }
    guard whole.sent.isEmpty else { throw Violation("HTTP CONNECT sent more after its request") }
    if let tunnel = whole.tunnel {
        guard let (head, length) = try? HTTPResponseHead.parse(response, limit: ProxyHandshake.httpHeadLimit),
              (200...299).contains(head.status), Array(response.dropFirst(length)) == tunnel
        else { throw Violation("a tunnel opened without a 2xx head before it") }
    }
}
