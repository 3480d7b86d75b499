// Client ↔ server for every framing × {plain, obfuscated2, dd, ee}: through the sans-IO stacks over random
// chunking, through SwiftNIO EmbeddedChannel pipelines, and over a loopback TCP connection. Plus malformed streams
// that must end the connection with a typed error.
import MTProtoCrypto
import MTProtoTransport
import MTProtoTransportNIO
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

enum Mode: String, CaseIterable, Sendable {
    case plain, obfuscated2, dd, ee
}

struct Scenario: Sendable, CustomStringConvertible {
    let kind: TransportKind
    let mode: Mode
    static let time: Int32 = 1_700_000_000
    static let key: [UInt8] = Array(0x20..<0x30)

    static var all: [Scenario] {
        TransportKind.allCases.flatMap { kind in Mode.allCases.map { Scenario(kind: kind, mode: $0) } }
    }

    var description: String { "\(kind) × \(mode)" }

    /// Full framing cannot be obfuscated; dd and ee force padded intermediate whatever was asked.
    var isValid: Bool { !(kind == .full && mode == .obfuscated2) }

    var secret: MTProxySecret? {
        switch mode {
        case .plain, .obfuscated2: nil
        case .dd: try? MTProxySecret(key: Self.key, kind: .paddedIntermediate)
        case .ee: try? MTProxySecret(key: Self.key, kind: .fakeTLS(domain: "example.com"))
        }
    }

    var clientConfiguration: TransportConfiguration {
        switch mode {
        case .plain: TransportConfiguration(kind: kind)
        case .obfuscated2: TransportConfiguration(kind: kind, obfuscation: .obfuscated2, dcId: 2)
        case .dd, .ee:
            TransportConfiguration(kind: kind, obfuscation: secret.map { .mtproxy($0) } ?? .none, dcId: -4,
                                   fakeTLSTemplate: kind == .abridged ? .legacy : .current)
        }
    }

    var serverConfiguration: ServerTransportConfiguration { ServerTransportConfiguration(secret: secret) }

    func makeClient(seed: UInt64) throws -> ClientTransport {
        try ClientTransport(configuration: clientConfiguration, random: SeededRandom(seed: seed), unixTime: Self.time)
    }

    func makeServer(seed: UInt64) -> ServerTransport {
        ServerTransport(configuration: serverConfiguration, random: SeededRandom(seed: seed), unixTime: Int64(Self.time))
    }

    var effectiveKind: TransportKind { clientConfiguration.effectiveKind }
    var quickAcks: Bool { effectiveKind != .full }

    var expectedNegotiation: NegotiatedTransport {
        NegotiatedTransport(kind: effectiveKind, obfuscated: mode != .plain, fakeTLS: mode == .ee,
                            dcId: mode == .plain ? nil : (mode == .obfuscated2 ? 2 : -4))
    }
}

@Suite struct SansIORoundTripTests {
    /// `inPlace`: the client is fed through `receive(bytes:)` (a socket buffer read in place) instead of arrays,
    /// and sends through `sendPieces`; the events must be the same.
    @Test(arguments: Scenario.all, [false, true]) func clientAndServerAgree(scenario: Scenario, inPlace: Bool) throws {
        guard scenario.isValid else {
            #expect(throws: TransportError.self) { try scenario.makeClient(seed: 1) }
            return
        }
        let random = SeededRandom(seed: 77)
        var client = try scenario.makeClient(seed: 1)
        var server = scenario.makeServer(seed: 2)
        let requests = (0..<15).map { _ in mtprotoPayload(random: random) }
        let replies = (0..<15).map { _ in mtprotoPayload(random: random) }

        var clientEvents: [TransportEvent] = []
        var serverEvents: [TransportEvent] = []
        var toServer = client.start()
        for (index, request) in requests.enumerated() {
            let quickAck = scenario.quickAcks && index % 4 == 1
            guard inPlace else {
                toServer += try client.send(request, quickAck: quickAck)
                continue
            }
            let pieces = try client.sendPieces(request, quickAck: quickAck)
            // Plain and not waiting for a ServerHello: the request is handed on as it is, between its framing.
            if scenario.mode == .plain { #expect(pieces.count >= 2 && pieces[1] == request) }
            #expect(pieces.allSatisfy { !$0.isEmpty })
            toServer += pieces.joined()
        }
        func receive(_ piece: [UInt8]) throws -> TransportOutput {
            guard inPlace else { return try client.receive(piece) }
            return try piece.withUnsafeBytes { try client.receive(bytes: $0) }
        }
        func pump(_ first: [UInt8]) throws {
            var toServer = first
            var toClient: [UInt8] = []
            while !toServer.isEmpty || !toClient.isEmpty {
                for piece in chunks(toServer, random: random, maxChunk: 200) {
                    let output = try server.receive(piece)
                    serverEvents += output.events
                    toClient += output.outbound
                }
                toServer = []
                for piece in chunks(toClient, random: random, maxChunk: 200) {
                    let output = try receive(piece)
                    clientEvents += output.events
                    toServer += output.outbound
                }
                toClient = []
            }
        }
        try pump(toServer)
        #expect(serverEvents == requests.enumerated().map { .frame($1, quickAckRequested: scenario.quickAcks && $0 % 4 == 1) })
        #expect(server.negotiated == scenario.expectedNegotiation)

        var toClient: [UInt8] = []
        var expected: [TransportEvent] = []
        for (index, reply) in replies.enumerated() {
            if scenario.quickAcks, index % 4 == 1 {
                toClient += try server.sendQuickAck(UInt32(index))
                expected.append(.quickAck(UInt32(index) | 0x8000_0000))
            }
            // In pieces, the payload is handed on as it is unless the obfuscation encrypts it.
            let pieces = try server.sendPieces(reply)
            if scenario.mode == .plain {
                #expect(pieces.count >= 2 && pieces[1] == reply)
                #expect(pieces[0].count == [.abridged: reply.count / 4 < 0x7f ? 1 : 4, .full: 8][scenario.kind] ?? 4)
            }
            #expect(pieces.allSatisfy { !$0.isEmpty })
            toClient += pieces.joined()
            expected.append(.frame(reply))
        }
        toClient += try server.sendTransportError(-429)
        expected.append(.transportError(code: -429))
        for piece in chunks(toClient, random: random, maxChunk: 333) { clientEvents += try receive(piece).events }
        #expect(clientEvents == expected)
        try client.finish()
        try server.finish()
    }
}

@Suite struct EmbeddedChannelTests {
    /// Moves everything each channel wrote to the other, in random pieces, until both are quiet.
    func shuttle(_ client: EmbeddedChannel, _ server: EmbeddedChannel, random: SeededRandom) throws {
        var moved = true
        while moved {
            moved = false
            for (from, to) in [(client, server), (server, client)] {
                while let buffer = try from.readOutbound(as: ByteBuffer.self) {
                    moved = true
                    for piece in chunks(Array(buffer.readableBytesView), random: random, maxChunk: 150) {
                        try to.writeInbound(ByteBuffer(bytes: piece))
                    }
                }
            }
        }
    }

    func drain(_ channel: EmbeddedChannel) throws -> [TransportEvent] {
        var events: [TransportEvent] = []
        while let event = try channel.readInbound(as: TransportEvent.self) { events.append(event) }
        return events
    }

    @Test(arguments: Scenario.all.filter(\.isValid)) func pipelinesExchangeFrames(scenario: Scenario) throws {
        let random = SeededRandom(seed: 5)
        let client = EmbeddedChannel(handler: MTProtoTransportHandler(client: try scenario.makeClient(seed: 3)))
        let server = EmbeddedChannel(handler: MTProtoTransportHandler(server: scenario.makeServer(seed: 4)))
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 1)
        try client.connect(to: address).wait()
        try server.connect(to: address).wait()

        let requests = (0..<10).map { _ in mtprotoPayload(random: random) }
        for request in requests { try client.writeOutbound(TransportOutbound.payload(request)) }
        try shuttle(client, server, random: random)
        #expect(try drain(server) == requests.map { .frame($0) })
        let handler = try server.pipeline.syncOperations.handler(type: MTProtoTransportHandler.self)
        #expect(handler.negotiated == scenario.expectedNegotiation)

        for reply in requests.reversed() { try server.writeOutbound(TransportOutbound.payload(reply)) }
        try server.writeOutbound(TransportOutbound.transportError(-404))
        try shuttle(client, server, random: random)
        #expect(try drain(client) == requests.reversed().map { .frame($0) } + [.transportError(code: -404)])
        #expect(try client.finish().isClean)
        #expect(try server.finish().isClean)
    }

    @Test func badChecksumClosesTheChannelWithATypedError() throws {
        let server = EmbeddedChannel(handler: MTProtoTransportHandler(server: Scenario(kind: .full, mode: .plain).makeServer(seed: 1)))
        try server.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        var codec = FullCodec(role: .client)
        var frame = try codec.encode([1, 2, 3, 4, 5, 6, 7, 8], quickAck: false)
        frame[frame.count - 1] ^= 0xff
        #expect(throws: TransportError.self) { try server.writeInbound(ByteBuffer(bytes: frame)) }
        #expect(!server.isActive)
    }

    @Test func wrongServerHelloHMACClosesTheClient() throws {
        let scenario = Scenario(kind: .paddedIntermediate, mode: .ee)
        let client = EmbeddedChannel(handler: MTProtoTransportHandler(client: try scenario.makeClient(seed: 1)))
        try client.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let hello = try #require(try client.readOutbound(as: ByteBuffer.self))
        var server = scenario.makeServer(seed: 2)
        var response = try server.receive(Array(hello.readableBytesView)).outbound
        #expect(response.count > 1024)
        response[20] ^= 0x01
        do {
            try client.writeInbound(ByteBuffer(bytes: response))
            Issue.record("a tampered ServerHello was accepted")
        } catch {
            guard case let .fakeTLS(message) = error as? TransportError else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(message.contains("ServerHello HMAC"))
        }
        #expect(!client.isActive)
    }

    @Test func truncatedOpeningIsReportedAtClose() throws {
        let server = EmbeddedChannel(handler: MTProtoTransportHandler(server: Scenario(kind: .abridged, mode: .obfuscated2).makeServer(seed: 1)))
        try server.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try server.writeInbound(ByteBuffer(bytes: [UInt8](repeating: 0x41, count: 30)))
        #expect(throws: TransportError.truncated(context: "the connection's opening bytes", buffered: 30)) {
            _ = try server.finish()
        }
    }
}

@Suite struct MalformedStreamTests {
    @Test func errorsAreStickyAndTyped() throws {
        var server = Scenario(kind: .full, mode: .plain).makeServer(seed: 1)
        var codec = FullCodec(role: .client)
        let first = try codec.encode([UInt8](repeating: 1, count: 16), quickAck: false)
        var skipping = FullCodec(role: .client, sendSequence: 5)
        let second = try skipping.encode([UInt8](repeating: 2, count: 16), quickAck: false)
        let error = TransportError.sequenceMismatch(expected: 1, received: 5, offset: first.count)
        #expect(throws: error) { try server.receive(first + second) }
        // Once failed, every call reports the same error.
        #expect(throws: error) { try server.send([0, 0, 0, 0]) }
        #expect(throws: error) { try server.receive([]) }
        #expect(throws: error) { try server.finish() }
    }

    @Test func closingBeforeAnyByteIsCleanButMidOpeningIsNot() throws {
        let silent = Scenario(kind: .abridged, mode: .obfuscated2).makeServer(seed: 1)
        try silent.finish()
        var partial = Scenario(kind: .abridged, mode: .ee).makeServer(seed: 1)
        #expect(try partial.receive([0x16, 0x03, 0x01, 0x02]) == TransportOutput())
        #expect(throws: TransportError.truncated(context: "the connection's opening bytes", buffered: 4)) {
            try partial.finish()
        }
        var client = try Scenario(kind: .abridged, mode: .ee).makeClient(seed: 2)
        _ = client.start()
        #expect(throws: TransportError.truncated(context: "the fake-TLS ServerHello", buffered: 0)) { try client.finish() }
    }

    @Test func wrongSecretAndWrongTagAreRejected() throws {
        let good = Scenario(kind: .intermediate, mode: .dd)
        var client = try good.makeClient(seed: 1)
        let opening = client.start()
        var wrongKey = Scenario.key
        wrongKey[3] ^= 1
        var stranger = ServerTransport(configuration: ServerTransportConfiguration(
            secret: try MTProxySecret(key: wrongKey, kind: .paddedIntermediate)), unixTime: 0)
        #expect(throws: TransportError.self) { try stranger.receive(opening) }
        // A dd proxy refuses a client that obfuscates abridged with the same key.
        var abridgedClient = try ClientTransport(
            configuration: TransportConfiguration(kind: .abridged, obfuscation: .mtproxy(try MTProxySecret(key: Scenario.key, kind: .plain)), dcId: 1),
            random: SeededRandom(seed: 3), unixTime: 0)
        var ddServer = good.makeServer(seed: 2)
        #expect(throws: TransportError.obfuscation("this secret requires paddedIntermediate, the client asked for abridged")) {
            try ddServer.receive(abridgedClient.start())
        }
    }

    @Test func fakeTLSClockSkewAndWrongDomainAreRejected() throws {
        let scenario = Scenario(kind: .paddedIntermediate, mode: .ee)
        var client = try scenario.makeClient(seed: 1)
        var lateServer = ServerTransport(configuration: scenario.serverConfiguration, unixTime: Int64(Scenario.time) + 3600)
        #expect(throws: TransportError.self) { try lateServer.receive(client.start()) }
        var other = try ClientTransport(
            configuration: TransportConfiguration(kind: .paddedIntermediate, obfuscation: .mtproxy(
                try MTProxySecret(key: Scenario.key, kind: .fakeTLS(domain: "other.org"))), dcId: 2),
            random: SeededRandom(seed: 2), unixTime: Scenario.time)
        var server = scenario.makeServer(seed: 3)
        #expect(throws: TransportError.fakeTLS("ClientHello SNI is other.org, expected example.com")) {
            try server.receive(other.start())
        }
    }

    @Test func garbageOpeningsNeverCrash() {
        let random = SeededRandom(seed: 123)
        var rejected = 0
        for index in 0..<300 {
            let mode = Mode.allCases[index % 4]
            var server = Scenario(kind: .abridged, mode: mode).makeServer(seed: UInt64(index))
            let garbage = random.bytes(random.int(64...600))
            do {
                _ = try server.receive(garbage)
                try server.finish()
            } catch {
                rejected += 1
            }
        }
        // Plain servers may take garbage for a frame; proxies must refuse nearly all of it.
        #expect(rejected >= 225)
    }
}

/// Echoes every frame back (with a quick ack when asked) and ends with a −404.
final class EchoServer: ChannelInboundHandler {
    typealias InboundIn = TransportEvent
    typealias OutboundOut = TransportOutbound
    let expected: Int
    var seen = 0

    init(expected: Int) { self.expected = expected }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case let .frame(payload, quickAck) = unwrapInboundIn(data) else { return }
        if quickAck { context.write(wrapOutboundOut(.quickAck(UInt32(seen))), promise: nil) }
        context.write(wrapOutboundOut(.payload(payload)), promise: nil)
        seen += 1
        if seen == expected { context.write(wrapOutboundOut(.transportError(-404)), promise: nil) }
        context.flush()
    }
}

/// Collects events until the −404 arrives.
final class Collector: ChannelInboundHandler {
    typealias InboundIn = TransportEvent
    let promise: EventLoopPromise<[TransportEvent]>
    var events: [TransportEvent] = []
    var done = false

    init(promise: EventLoopPromise<[TransportEvent]>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let event = unwrapInboundIn(data)
        events.append(event)
        if case .transportError = event, !done {
            done = true
            promise.succeed(events)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            promise.fail(error)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(ChannelError.alreadyClosed)
        }
    }
}

@Suite struct LoopbackTCPTests {
    @Test(arguments: Scenario.all.filter(\.isValid)) func realSocketRoundTrip(scenario: Scenario) async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let count = 12
        let server = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(MTProtoTransportHandler(server: scenario.makeServer(seed: 9)))
                    try channel.pipeline.syncOperations.addHandler(EchoServer(expected: count))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        let promise = group.next().makePromise(of: [TransportEvent].self)
        let client = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(MTProtoTransportHandler(client: scenario.makeClient(seed: 8)))
                    try channel.pipeline.syncOperations.addHandler(Collector(promise: promise))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()

        let random = SeededRandom(seed: 10)
        let payloads = (0..<count).map { _ in mtprotoPayload(random: random, maxBlocks: 300) }
        for (index, payload) in payloads.enumerated() {
            client.write(TransportOutbound.payload(payload, quickAck: scenario.quickAcks && index == 3), promise: nil)
        }
        client.flush()
        let events = try await promise.futureResult.get()
        var expected: [TransportEvent] = []
        for (index, payload) in payloads.enumerated() {
            if scenario.quickAcks, index == 3 { expected.append(.quickAck(0x8000_0003)) }
            expected.append(.frame(payload))
        }
        expected.append(.transportError(code: -404))
        #expect(events == expected)
        try await client.close()
        try await server.close()
    }
}
