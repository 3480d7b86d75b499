// The NIO proxy handler against hostile proxies on an embedded channel: one that stalls, one that lies about a
// length and then stalls, one that closes mid-handshake, one whose head never ends; and the good path, where
// writes made early wait for the tunnel and bytes after the reply reach the next handler.
import MTProtoTransport
import MTProtoTransportNIO
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// What a future's callback saw (the embedded loop runs callbacks at once, on this thread).
final class Outcome: Sendable {
    let value = Mutex<Result<Void, any Error>?>(nil)

    init(_ future: EventLoopFuture<Void>) {
        future.whenComplete { result in self.value.withLock { $0 = result } }
    }

    var succeeded: Bool { value.withLock { if case .success = $0 { true } else { false } } }

    var proxyError: ProxyError? {
        value.withLock { if case .failure(let error) = $0 { error as? ProxyError } else { nil } }
    }
}

@Suite struct ProxyHandshakeHandlerTests {
    let target = HostPort(host: "10.0.0.1", port: 443)

    func channel(_ proxy: ProxyConfiguration, timeout: TimeAmount = .seconds(5)) throws
        -> (EmbeddedChannel, ProxyHandshakeHandler)
    {
        let channel = EmbeddedChannel()
        let handler = ProxyHandshakeHandler(handshake: try ProxyHandshake(proxy: proxy, target: target),
                                            timeout: timeout, eventLoop: channel.embeddedEventLoop)
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, handler)
    }

    func written(_ channel: EmbeddedChannel) throws -> [UInt8] {
        var out: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { out += buffer.readableBytesView }
        return out
    }

    func failure(_ future: EventLoopFuture<Void>) -> ProxyError? { Outcome(future).proxyError }

    @Test func aGoodProxyOpensTheTunnelAndTheHandlerStepsAside() throws {
        let (channel, handler) = try channel(ProxyConfiguration(kind: .socks5, host: "p", port: 1))
        let established = Outcome(handler.established)
        #expect(try written(channel) == [5, 1, 0])
        // The transport's opening, written before the tunnel is open, waits.
        channel.writeAndFlush(ByteBuffer(bytes: [0xef]), promise: nil)
        try channel.writeInbound(ByteBuffer(bytes: [5, 0]))
        #expect(try written(channel) == [5, 1, 0, 1, 10, 0, 0, 1, 1, 0xbb])
        try channel.writeInbound(ByteBuffer(bytes: [5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, 8]))
        #expect(established.succeeded)
        #expect(try written(channel) == [0xef])
        #expect(try channel.readInbound(as: ByteBuffer.self).map { Array($0.readableBytesView) } == [7, 8])
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.context(handlerType: ProxyHandshakeHandler.self) }
        // Once open, the timeout no longer fires.
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    @Test func aStallingProxyTimesOutNamingTheStep() throws {
        let (channel, handler) = try channel(ProxyConfiguration(kind: .socks5, host: "p", port: 1, username: "u",
                                                                password: "p"), timeout: .seconds(3))
        _ = try written(channel)
        try channel.writeInbound(ByteBuffer(bytes: [5, 2]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(failure(handler.established) == .timedOut(stage: "waiting for the SOCKS5 authentication status"))
        #expect(!channel.isActive)
    }

    @Test func aProxyThatLiesAboutTheBoundAddressLengthTimesOut() throws {
        let (channel, handler) = try channel(ProxyConfiguration(kind: .socks5, host: "p", port: 1), timeout: .seconds(3))
        try channel.writeInbound(ByteBuffer(bytes: [5, 0]))
        // A domain of 255 bytes announced, 3 sent.
        try channel.writeInbound(ByteBuffer(bytes: [5, 0, 0, 3, 255, 1, 2, 3]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(failure(handler.established) == .timedOut(stage: "waiting for the SOCKS5 CONNECT reply"))
        #expect(!channel.isActive)
    }

    @Test func aProxyThatClosesMidHandshakeFailsWithTheStep() throws {
        let (channel, handler) = try channel(ProxyConfiguration(kind: .httpConnect, host: "p", port: 1))
        try channel.writeInbound(ByteBuffer(bytes: Array("HTTP/1.1 200 OK\r\n".utf8)))
        let pending = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(ByteBuffer(bytes: [1]), promise: pending)
        channel.pipeline.fireChannelInactive()
        #expect(failure(handler.established) == .closed(stage: "waiting for the HTTP CONNECT response"))
        #expect(failure(pending.futureResult) == .closed(stage: "waiting for the HTTP CONNECT response"))
    }

    @Test func anEndlessHeadFailsAtTheLimitWithoutGrowing() throws {
        let (channel, handler) = try channel(ProxyConfiguration(kind: .httpConnect, host: "p", port: 1))
        try channel.writeInbound(ByteBuffer(bytes: Array("HTTP/1.1 200 OK\r\n".utf8)))
        let line = ByteBuffer(bytes: Array("X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".utf8))
        for _ in 0..<400 where channel.isActive { try channel.writeInbound(line) }
        #expect(failure(handler.established) == .replyTooLarge(limit: ProxyHandshake.httpHeadLimit))
        #expect(!channel.isActive)
    }
}
