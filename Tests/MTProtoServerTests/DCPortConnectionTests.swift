// A DC port serves HTTP and the TCP transports on one port, told apart by the first bytes: each client's first
// request, fed one byte at a time, is answered in its own transport, and the client reads the answer.
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TelegramApi
import TestTelegram
import Testing

@Suite struct DCPortConnectionTests {
    static let transports: [(String, TransportConfiguration)] = [
        ("HTTP", TransportConfiguration(kind: .intermediate, http: HTTPTransportOptions(host: "127.0.0.1:80"))),
        ("abridged", TransportConfiguration(kind: .abridged)),
        ("intermediate", TransportConfiguration(kind: .intermediate)),
        ("padded", TransportConfiguration(kind: .paddedIntermediate)),
        ("full", TransportConfiguration(kind: .full)),
        ("obfuscated2", TransportConfiguration(kind: .intermediate, obfuscation: .obfuscated2, dcId: 2)),
    ]

    @Test(arguments: transports.indices)
    func theFirstBytesChooseTheTransport(index: Int) throws {
        let (name, transport) = Self.transports[index]
        let context = try Fixture.context(seed: 70 + UInt64(index))
        var client = try ClientConnection(
            configuration: .init(transport: transport, serverKeys: [try Fixture.rsaKey().publicKey], dcID: 2),
            random: SeededRandom(seed: 80 + UInt64(index)), now: Fixture.now)
        let start = try client.start(now: Fixture.now)
        var server = DCPortConnection(context: context, now: Fixture.now)
        var answer: [UInt8] = []
        for byte in start.bytes {
            let output = server.feed([byte], now: Fixture.now)
            answer += output.outbound
            #expect(output.close == nil, "\(name): closed by \(String(describing: output.close))")
            while let more = server.step(now: Fixture.now, readContinues: false) { answer += more.outbound }
        }
        answer += server.flush(now: Fixture.now).outbound
        #expect(server.isHTTP == (name == "HTTP"), "\(name) was taken for \(String(describing: server.isHTTP))")
        #expect(!answer.isEmpty, "\(name): no answer to the first request")
        // The answer is resPQ in the client's transport: it reads it and sends req_DH_params.
        let received = try client.receive(answer, now: Fixture.now)
        #expect(!received.bytes.isEmpty, "\(name): the client did not go on with the exchange")
    }

    @Test func anHTTPMethodsPrefixWaitsAndAnythingElseIsTCP() throws {
        let context = try Fixture.context(seed: 79)
        var server = DCPortConnection(context: context, now: Fixture.now)
        _ = server.feed(Array("POS".utf8), now: Fixture.now)
        #expect(server.isHTTP == nil, "three bytes of POST decide nothing")
        _ = server.feed(Array("T /api HTTP/1.1\r\n".utf8), now: Fixture.now)
        #expect(server.isHTTP == true)
        var other = DCPortConnection(context: context, now: Fixture.now)
        _ = other.feed(Array("PU".utf8), now: Fixture.now)
        #expect(other.isHTTP == false, "no HTTP method the server takes starts with PU")
    }

    /// Two bytes that could start "POST", then nothing: the idle timeout closes the connection all the same.
    @Test func aConnectionThatNeverDecidesTimesOut() throws {
        let context = try Fixture.context(seed: 78)
        var server = DCPortConnection(context: context, now: Fixture.now)
        #expect(server.feed(Array("PO".utf8), now: Fixture.now).isEmpty)
        let deadline = try #require(server.nextDeadline)
        #expect(deadline <= Fixture.now + context.limits.idleTimeout)
        #expect(server.tick(now: deadline).close != nil, "an undecided connection outlived its idle timeout")
    }

    /// Random bytes after each HTTP method's first bytes, and alone, in random pieces: the connection closes with a
    /// typed error or reports at its end what it was still waiting for; nothing is stored either way.
    @Test(arguments: 0..<30 as Range<UInt64>)
    func randomBytesBehindEachPrefix(seed: UInt64) throws {
        let context = try Fixture.context(seed: seed)
        let random = SeededRandom(seed: 1000 + seed)
        let prefixes = ["POST", "GET ", "HEAD", "OPTI", "PO", ""].map { Array($0.utf8) }
        let bytes = prefixes[Int(seed) % prefixes.count] + random.bytes(Int(random.next() % 4096) + 1)
        var server = DCPortConnection(context: context, now: Fixture.now)
        var closed: ServerConnectionError?
        var offset = 0
        while offset < bytes.count, closed == nil {
            let size = Int(random.next() % 300) + 1
            closed = server.feed(Array(bytes[offset..<min(bytes.count, offset + size)]), now: Fixture.now).close
            while closed == nil, let more = server.step(now: Fixture.now, readContinues: false) { closed = more.close }
            offset += size
        }
        if seed % 6 < 4 { #expect(server.isHTTP == true, "a method's four bytes chose HTTP") }
        let outcome = closed ?? server.finish()
        #expect(outcome != nil, "seed \(seed): \(bytes.count) random bytes were taken for a request or a frame")
        #expect(context.keys.count == 0 && context.sessions.count == 0)
    }
}
