// The default frame bound (`FrameLimits.defaultMaximumPayload`) at its edges, for every framing, obfuscated2 and the
// HTTP transport, in both roles: a payload of exactly the bound is framed and read back, one past it (four for
// abridged, whose lengths count words) is a typed error, sending and receiving alike.
import MTProtoCrypto
import MTProtoTransport
import Testing

@Suite struct FrameBoundTests {
    static let bound = FrameLimits.defaultMaximumPayload

    /// The smallest payload past the bound that `kind` can express.
    static func past(_ kind: TransportKind) -> Int { kind == .abridged ? bound + 4 : bound + 1 }

    @Test func theBoundHoldsAWhole1MiBPartWithItsEnvelope() {
        // upload.file (16 bytes before the data) in rpc_result (12), auth_key_id and msg_key (24), the encrypted
        // header (32) and the most padding MTProto 2.0 allows (1024).
        #expect(Self.bound >= (1 << 20) + 16 + 12 + 24 + 32 + 1024)
        #expect(Self.bound % 16 == 0, "an encrypted payload and an abridged length both fit it exactly")
    }

    @Test(arguments: TransportKind.allCases, [TransportRole.client, .server])
    func aFrameOfTheBoundPassesAndOneMoreIsRefused(kind: TransportKind, receiver: TransportRole) throws {
        let sender: TransportRole = receiver == .client ? .server : .client
        let payload = SeededRandom(seed: 56).bytes(Self.bound)
        // `.keep`: the padded reader hands over payload and padding, so the edge is its own (bound + 15 bytes).
        var writer = makeFrameCodec(kind: kind, role: sender, random: SeededRandom(seed: 1), padding: .keep,
                                    maximumPadding: 15)
        var reader = makeFrameCodec(kind: kind, role: receiver, padding: .keep)
        let frame = try writer.encode(payload, quickAck: false)
        let events = try reader.decode(feed: frame)
        guard events.count == 1, case .frame(let got, _) = events[0] else {
            Issue.record("\(kind): \(events.count) events for one frame of the bound")
            return
        }
        #expect(Array(got.prefix(Self.bound)) == payload)

        var refusing = makeFrameCodec(kind: kind, role: sender)
        #expect {
            _ = try refusing.encode([UInt8](repeating: 0, count: Self.past(kind)), quickAck: false)
        } throws: { error in
            guard case TransportError.lengthOutOfRange(kind, _, _, let maximum, -1) = error else { return false }
            return maximum == Self.bound
        }

        // A header declaring one more than the reader takes: refused before any payload arrives.
        var big = makeFrameCodec(kind: kind, role: sender, maximumPayload: Self.bound + 64, random: SeededRandom(seed: 2),
                                 padding: .keep, maximumPadding: 0)
        let declared = kind == .paddedIntermediate ? Self.bound + 16 : Self.past(kind)
        let over = try big.encode([UInt8](repeating: 0, count: declared), quickAck: false)
        var strict = makeFrameCodec(kind: kind, role: receiver, padding: .keep)
        #expect {
            _ = try strict.decode(feed: Array(over.prefix(8)))
        } throws: { error in
            guard case TransportError.lengthOutOfRange(kind, _, _, let maximum, 0) = error else { return false }
            switch kind {
            case .full: return maximum == Self.bound + 12
            case .paddedIntermediate: return maximum == Self.bound + 15
            case .abridged, .intermediate: return maximum == Self.bound
            }
        }
    }

    @Test(arguments: [TransportKind.abridged, .intermediate, .paddedIntermediate])
    func obfuscatedFramesHaveTheSameBound(kind: TransportKind) throws {
        let payload = SeededRandom(seed: 57).bytes(Self.bound - 8)  // 24 + 16k: what padding stripping expects
        var client = try ClientTransport(configuration: TransportConfiguration(kind: kind, obfuscation: .obfuscated2),
                                         random: SeededRandom(seed: 3), unixTime: 0)
        var server = ServerTransport(configuration: ServerTransportConfiguration(), random: SeededRandom(seed: 4),
                                     unixTime: 0)
        #expect(try server.receive(client.send(payload)).events == [.frame(payload)])
        #expect(try client.receive(server.send(payload)).events == [.frame(payload)])
        #expect(throws: TransportError.self) { try client.send([UInt8](repeating: 0, count: Self.past(kind))) }
        #expect(throws: TransportError.self) { try server.send([UInt8](repeating: 0, count: Self.past(kind))) }

        // A client framing more than the bound: the server refuses the length it reads.
        var generous = try ClientTransport(
            configuration: TransportConfiguration(kind: kind, obfuscation: .obfuscated2,
                                                  maximumPayload: Self.bound + 64),
            random: SeededRandom(seed: 5), unixTime: 0)
        var strict = ServerTransport(configuration: ServerTransportConfiguration(), random: SeededRandom(seed: 6),
                                     unixTime: 0)
        let over = try generous.send([UInt8](repeating: 0, count: kind == .paddedIntermediate ? Self.bound + 16
                                                                                             : Self.past(kind)))
        #expect {
            _ = try strict.receive(over)
        } throws: { error in
            guard case TransportError.lengthOutOfRange(kind, _, _, _, _) = error else { return false }
            return true
        }
    }

    @Test func httpBodiesHaveTheSameBound() throws {
        let body = SeededRandom(seed: 58).bytes(Self.bound)
        var requests = HTTPRequestDecoder()
        let posted = try requests.receive(HTTPTransportHead.request(host: "h:1", length: body.count) + body)
        #expect(posted.map(\.body) == [body])
        var strictRequests = HTTPRequestDecoder()
        #expect(throws: HTTPTransportError.bodyTooLarge(length: Self.bound + 1, limit: Self.bound)) {
            try strictRequests.receive(HTTPTransportHead.request(host: "h:1", length: Self.bound + 1))
        }

        var client = try ClientTransport(
            configuration: TransportConfiguration(kind: .intermediate, http: HTTPTransportOptions(host: "h:1")),
            unixTime: 0)
        _ = try client.send(body)
        let events = try client.receive(HTTPTransportHead.response(length: body.count) + body).events
        #expect(events == [.frame(body)])
        _ = try client.send(body)
        #expect(throws: TransportError.http(.bodyTooLarge(length: Self.bound + 1, limit: Self.bound))) {
            try client.receive(HTTPTransportHead.response(length: Self.bound + 1))
        }
        var sender = try ClientTransport(
            configuration: TransportConfiguration(kind: .intermediate, http: HTTPTransportOptions(host: "h:1")),
            unixTime: 0)
        #expect(throws: TransportError.http(.bodyTooLarge(length: Self.bound + 1, limit: Self.bound))) {
            try sender.send([UInt8](repeating: 0, count: Self.bound + 1))
        }
    }
}
