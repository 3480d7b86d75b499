// How `MTProtoClient` opens its channel: through a `ChannelDialer`, by default `TCPDialer`, which connects to the
// server directly or to a SOCKS5 / HTTP CONNECT proxy whose handshake (`ProxyHandshakeHandler`) opens a tunnel to the
// server before the transport's first byte. Another dialer runs the client over any channel (in memory, faulty).
import MTProtoTransport
import MTProtoTransportNIO
import NIOCore
import NIOPosix

/// Where a connection goes: the server's address and the proxy in front of it, if any.
public struct DialTarget: Sendable, Hashable {
    /// The server's host name or IP address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// A SOCKS5 or HTTP CONNECT proxy the connection is opened through (nil: directly).
    public var proxy: ProxyConfiguration?

    /// The address of a server, and the proxy in front of it.
    public init(host: String, port: Int, proxy: ProxyConfiguration? = nil) {
        self.host = host
        self.port = port
        self.proxy = proxy
    }
}

/// Opens the byte channel an `MTProtoClient` runs its transport over, once per connection (reconnects included).
///
/// The default, ``TCPDialer``, opens TCP. Another dialer runs the client over any NIO channel: one in memory for a
/// test without a socket, or one that drops or delays bytes.
public protocol ChannelDialer: Sendable {
    /// A connected channel to `target`, running on `eventLoop` (the client's) where it can. A refusal of the proxy
    /// is thrown as `MTProtoClientError.proxy`.
    func dial(_ target: DialTarget, on eventLoop: any EventLoop) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer>
}

/// The default dialer: TCP to the server, or through the target's SOCKS5 / HTTP CONNECT proxy.
public struct TCPDialer: ChannelDialer {
    /// The TCP dialer.
    public init() {}

    /// A TCP connection to `target` (through its proxy, whose handshake has completed when this returns).
    public func dial(_ target: DialTarget,
                     on eventLoop: any EventLoop) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let server = HostPort(host: target.host, port: target.port)
        let proxy = target.proxy
        let handshake: ProxyHandshake?
        do {
            handshake = try proxy.map { proxy throws(ProxyError) in try ProxyHandshake(proxy: proxy, target: server) }
        } catch {
            throw MTProtoClientError.proxy(error)
        }
        let timeout = TimeAmount.nanoseconds(Int64(clamping: (proxy?.handshakeTimeout ?? .seconds(10)).nanoseconds))
        let (channel, established) = try await ClientBootstrap(group: eventLoop)
            .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16384,
                                                                                 maximum: 1 << 20))
            .connect(host: proxy?.host ?? server.host, port: proxy?.port ?? server.port) { channel in
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

extension MTProtoClient {
    /// A connected channel to the configured server, opened by the configured dialer.
    func openChannel() async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        try await configuration.dialer.dial(DialTarget(host: configuration.host, port: configuration.port,
                                                       proxy: configuration.proxy),
                                            on: taskExecutor.eventLoop)
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue + attoseconds / 1_000_000_000
    }
}
