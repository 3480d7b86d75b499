// The NIO listener on loopback: a client over a real socket makes a key and gets help.getConfig from
// `MTProtoTestServer`; the connection limit turns extra clients away; shutdown stops everything.
import Foundation
import MTProto
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import NIOCore
import NIOPosix
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

@Suite struct TestServerTests {
    /// Runs `body` with a deadline, so a server that stops answering fails the test instead of hanging it.
    static func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw HarnessFailure(description: "no result within \(seconds) s")
            }
            return value
        }
    }

    /// Connects over TCP, runs the exchange and the first call; returns the config. With `push`, then calls it
    /// with the session's key and waits for the update it pushes, which it returns too.
    static func getConfig(port: Int, kind: TransportKind, obfuscation: TransportConfiguration.Obfuscation,
                          seed: UInt64, dcID: Int16 = 2, push: (@Sendable (SessionKey) -> Void)? = nil) async throws
        -> (Api.Config, [UInt8]?) {
        let random = SeededRandom(seed: seed)
        var transport = try ClientTransport(
            configuration: TransportConfiguration(kind: kind, obfuscation: obfuscation, dcId: dcID),
            random: random, unixTime: Int32(Date.now.timeIntervalSince1970))
        var exchange = AuthKeyExchange.Client(
            configuration: .init(keys: [try Fixture.rsaKey().publicKey], dcID: Int32(dcID)), random: random)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            func now() -> Double { Date.now.timeIntervalSince1970 }
            try await outbound.write(ByteBuffer(bytes: try transport.send(exchange.start(now: now()))))
            var session: Session?
            var request: RequestID?
            var config: Api.Config?
            let call = firstCall()
            for try await var buffer in inbound {
                let output = try transport.receive(buffer.readBytes(length: buffer.readableBytes) ?? [])
                for case .frame(let payload, _) in output.events {
                    if var active = session {
                        for event in try active.receive(frame: payload, now: now()) {
                            switch event {
                            case .result(request, let bytes):
                                let parsed = try call.2.parse(bytes: bytes)
                                guard let push else { return (parsed, nil) }
                                config = parsed
                                push(SessionKey(authKeyID: active.authKey.idValue, sessionID: active.sessionID))
                            case .update(let bytes, _):
                                if let config { return (config, bytes) }
                            default: break
                            }
                        }
                        session = active
                    } else {
                        switch try exchange.receive(frame: payload, now: now()) {
                        case .send(let next):
                            try await outbound.write(ByteBuffer(bytes: try transport.send(next)))
                        case .done(let result):
                            session = Session(role: .client, authKey: result.authKey, salt: result.firstSalt,
                                              timeOffset: result.timeOffset, random: random)
                            request = try session?.send(call)
                        }
                    }
                }
                if var active = session {
                    for frame in active.outgoing(now: now()) {
                        try await outbound.write(ByteBuffer(bytes: try transport.send(frame.bytes)))
                    }
                    session = active
                }
            }
            throw HarnessFailure(description: "the server closed the connection")
        }
    }

    @Test func loopbackClientsAreServed() async throws {
        let secret = try MTProxySecret(parsing: "dd" + Fixture.key)
        let server = try await MTProtoTestServer.start(.init(
            rsaKeys: [try Fixture.rsaKey()], handlers: TestTelegram.handlers(), proxySecret: secret,
            random: SeededRandom(seed: 5)))
        do {
            let port = server.port
            // The update is pushed from outside any request, and reaches the connection carrying the session.
            let update = TestTelegram.serialized(Api.Updates.updatesTooLong)
            let (direct, pushed) = try await Self.within(20) {
                try await Self.getConfig(port: port, kind: .full, obfuscation: .none, seed: 1) { key in
                    #expect(server.push(update, to: key))
                }
            }
            guard case .config(let config) = direct, case .dcOption(let option)? = config.dcOptions.first else {
                throw HarnessFailure(description: "no config")
            }
            #expect(option.port == Int32(port) && option.ipAddress == "127.0.0.1")
            #expect(pushed == update)
            let proxyPort = try #require(server.proxyPort)
            let (proxied, _) = try await Self.within(20) {
                try await Self.getConfig(port: proxyPort, kind: .paddedIntermediate, obfuscation: .mtproxy(secret), seed: 2)
            }
            guard case .config(let viaProxy) = proxied else { throw HarnessFailure(description: "no config") }
            #expect(viaProxy.thisDc == 2)
            #expect(server.context.keys.count == 2)
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    /// Three DCs, each on its port with its own keys; help.getConfig on DC 2 lists all three; the MTProxy port
    /// forwards a client naming DC 3 to DC 3.
    @Test func clusterListsEveryDC() async throws {
        let secret = try MTProxySecret(parsing: Fixture.key)
        let server = try await MTProtoTestServer.start(.init(
            rsaKeys: [try Fixture.rsaKey()], handlers: TestTelegram.handlers(), dcIDs: [1, 2, 3], proxySecret: secret,
            random: SeededRandom(seed: 6)))
        let ports = server.ports
        do {
            let port = try #require(ports[2])
            let (answer, _) = try await Self.within(20) {
                try await Self.getConfig(port: port, kind: .abridged, obfuscation: .obfuscated2, seed: 3)
            }
            guard case .config(let config) = answer else { throw HarnessFailure(description: "no config") }
            #expect(config.thisDc == 2)
            var listed: [Int32: Int32] = [:]
            for case .dcOption(let option) in config.dcOptions { listed[option.id] = option.port }
            #expect(listed == ports.mapValues { Int32($0) })
            #expect(Set(ports.values).count == 3)
            #expect(server.contexts[2]?.keys.count == 1 && server.contexts[1]?.keys.count == 0)
            let proxyPort = try #require(server.proxyPort)
            let (viaProxy, _) = try await Self.within(20) {
                try await Self.getConfig(port: proxyPort, kind: .intermediate, obfuscation: .mtproxy(secret), seed: 4,
                                         dcID: 3)
            }
            guard case .config(let third) = viaProxy else { throw HarnessFailure(description: "no config") }
            #expect(third.thisDc == 3)
            #expect(server.contexts[3]?.keys.count == 1 && server.contexts[1]?.keys.count == 0)
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    /// 300 real connections, each sending half an exchange message and dropped: every one is closed and counted
    /// out, nothing is kept, and the server still serves.
    @Test func droppedConnectionsLeaveNothing() async throws {
        let server = try await MTProtoTestServer.start(.init(
            rsaKeys: [try Fixture.rsaKey()], handlers: TestTelegram.handlers(), random: SeededRandom(seed: 7)))
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        for round in 0..<300 {
            let channel = try await bootstrap.connect(host: "127.0.0.1", port: server.port).get()
            var exchange = AuthKeyExchange.Client(configuration: .init(keys: [try Fixture.rsaKey().publicKey], dcID: 2),
                                                  random: SeededRandom(seed: UInt64(round)))
            var codec = IntermediateCodec(role: .client)
            var frame = try codec.encode(exchange.start(now: 0), quickAck: false)
            frame = [0xee, 0xee, 0xee, 0xee] + frame.prefix(frame.count / 2)
            try await channel.writeAndFlush(ByteBuffer(bytes: frame))
            try await channel.close()
        }
        let port = server.port
        let (answer, _) = try await Self.within(20) {
            try await Self.getConfig(port: port, kind: .intermediate, obfuscation: .none, seed: 4)
        }
        guard case .config = answer else { throw HarnessFailure(description: "no config") }
        // The last closes may still be in flight on the server's loop.
        for _ in 0..<100 where server.connectionCount > 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(server.connectionCount == 0)
        #expect(server.context.keys.count == 1 && server.context.sessions.count == 1)
        try await server.shutdown()
    }

    @Test func connectionLimitTurnsClientsAway() async throws {
        var limits = ServerLimits()
        limits.maxConnections = 1
        let server = try await MTProtoTestServer.start(.init(
            rsaKeys: [try Fixture.rsaKey()], handlers: TestTelegram.handlers(), limits: limits))
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        let first = try await bootstrap.connect(host: "127.0.0.1", port: server.port).get()
        // The second is accepted by the kernel, then closed by the server.
        let second = try await bootstrap.connect(host: "127.0.0.1", port: server.port).get()
        try await Self.within(10) { try await second.closeFuture.get() }
        #expect(server.connectionCount == 1)
        try await first.close()
        try await server.shutdown()
    }
}
