// How `MTProtoClient` opens its TCP channel: to the server directly, or to a SOCKS5 / HTTP CONNECT proxy whose
// handshake (`ProxyHandshakeHandler`) opens a tunnel to the server before the transport's first byte.
import MTProtoTransport
import MTProtoTransportNIO
import NIOCore
import NIOPosix

extension MTProtoClient {
    /// A connected channel to the configured server, through the configured proxy if any; the proxy's refusal is
    /// thrown as `MTProtoClientError.proxy`.
    func openChannel() async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let target = HostPort(host: configuration.host, port: configuration.port)
        let proxy = configuration.proxy
        let handshake: ProxyHandshake?
        do {
            handshake = try proxy.map { proxy throws(ProxyError) in try ProxyHandshake(proxy: proxy, target: target) }
        } catch {
            throw MTProtoClientError.proxy(error)
        }
        let timeout = TimeAmount.nanoseconds(Int64(clamping: (proxy?.handshakeTimeout ?? .seconds(10)).nanoseconds))
        let (channel, established) = try await ClientBootstrap(group: taskExecutor.eventLoop)
            .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16384,
                                                                                 maximum: 1 << 20))
            .connect(host: proxy?.host ?? target.host, port: proxy?.port ?? target.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    var established: EventLoopFuture<Void>?
                    if let handshake {
                        // Relays often write with Nagle on: ACK at once so they are not clocked by our timer.
                        try channel.pipeline.syncOperations.addHandler(QuickAckHandler())
                        let handler = ProxyHandshakeHandler(handshake: handshake, timeout: timeout,
                                                            eventLoop: channel.eventLoop)
                        try channel.pipeline.syncOperations.addHandler(handler)
                        established = handler.established
                    }
                    let wrapped = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    return (wrapped, established)
                }
            }
        guard let established else { return channel }
        do {
            try await established.get()
        } catch let error as ProxyError {
            try? await channel.channel.close()
            throw MTProtoClientError.proxy(error)
        } catch {
            try? await channel.channel.close()
            throw error
        }
        return channel
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue + attoseconds / 1_000_000_000
    }
}
