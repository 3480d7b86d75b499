// A thin SwiftNIO shell around the sans-IO transports: bytes from the socket go into `ClientTransport` or
// `ServerTransport`, events come out as inbound messages, and outbound messages are framed into bytes. The same
// handler serves the client and the test server. Any transport error is fired down the pipeline and closes the
// channel.
import MTProtoTransport
import NIOCore

/// What a handler's user writes.
public enum TransportOutbound: Sendable, Hashable {
    /// An MTProto payload; `quickAck` (client only) asks for a quick acknowledgment.
    case payload([UInt8], quickAck: Bool)
    /// Server only: a quick-ack reply.
    case quickAck(UInt32)
    /// Server only: a transport error code such as −404.
    case transportError(Int32)

    public static func payload(_ bytes: [UInt8]) -> TransportOutbound { .payload(bytes, quickAck: false) }
}

/// Duplex handler: inbound `ByteBuffer` → `TransportEvent`, outbound `TransportOutbound` → `ByteBuffer`.
public final class MTProtoTransportHandler: ChannelDuplexHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = TransportEvent
    public typealias OutboundIn = TransportOutbound
    public typealias OutboundOut = ByteBuffer

    private enum Engine {
        case client(ClientTransport)
        case server(ServerTransport)
    }

    private var engine: Engine
    private var failed = false

    /// A client: its opening bytes are written as soon as the channel is active.
    public init(client: ClientTransport) { engine = .client(client) }

    /// A server: it waits for the client's opening.
    public init(server: ServerTransport) { engine = .server(server) }

    /// What the server learnt about its client, once known.
    public var negotiated: NegotiatedTransport? {
        if case let .server(server) = engine { return server.negotiated }
        return nil
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendOpening(context: context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        sendOpening(context: context)
        context.fireChannelActive()
    }

    private func sendOpening(context: ChannelHandlerContext) {
        guard case var .client(client) = engine else { return }
        let opening = client.start()
        engine = .client(client)
        guard !opening.isEmpty else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: opening)), promise: nil)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let buffer = unwrapInboundIn(data)
        do {
            let output: TransportOutput
            switch engine {
            case var .client(client):
                // Read where it lies: frames are copied out of NIO's buffer once.
                output = try buffer.withUnsafeReadableBytes { try client.receive(bytes: $0) }
                engine = .client(client)
            case var .server(server):
                output = try server.receive(Array(buffer.readableBytesView))
                engine = .server(server)
            }
            if !output.outbound.isEmpty {
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: output.outbound)),
                                      promise: nil)
            }
            for event in output.events { context.fireChannelRead(wrapInboundOut(event)) }
        } catch {
            fail(context: context, error: error)
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        if !failed {
            do {
                switch engine {
                case let .client(client): try client.finish()
                case let .server(server): try server.finish()
                }
            } catch {
                failed = true
                context.fireErrorCaught(error)
            }
        }
        context.fireChannelInactive()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let message = unwrapOutboundIn(data)
        do {
            let pieces: [[UInt8]]
            switch (engine, message) {
            case (var .client(client), let .payload(payload, quickAck)):
                pieces = try client.sendPieces(payload, quickAck: quickAck)
                engine = .client(client)
            case (var .server(server), let .payload(payload, quickAck)):
                guard !quickAck else { throw TransportError.wrongRole("a quick-ack request is sent by the client only") }
                pieces = try server.sendPieces(payload)
                engine = .server(server)
            case (var .server(server), let .quickAck(token)):
                pieces = [try server.sendQuickAck(token)]
                engine = .server(server)
            case (var .server(server), let .transportError(code)):
                pieces = [try server.sendTransportError(code)]
                engine = .server(server)
            case (.client, .quickAck), (.client, .transportError):
                throw TransportError.wrongRole("quick-ack replies and error codes are sent by the server only")
            }
            // Fake-TLS clients hold frames until the ServerHello; the write still succeeds.
            context.write(copying: pieces, promise: promise)
        } catch {
            promise?.fail(error)
            fail(context: context, error: error)
        }
    }

    private func fail(context: ChannelHandlerContext, error: any Error) {
        guard !failed else { return }
        failed = true
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension MTProtoTransportHandler: Sendable {}
