// The SwiftNIO shell of `ProxyHandshake`: first in a client pipeline, it speaks to the proxy when the channel
// becomes active, holds the pipeline's writes until the tunnel is open, then passes on what came after the proxy's
// reply and takes itself out. `established` completes then, or fails with the `ProxyError` (a refusal, a malformed
// reply, an early close, or the handshake timeout).
import MTProtoTransport
import NIOCore

/// Opens a tunnel through a SOCKS5 or HTTP CONNECT proxy before anything else on the channel.
public final class ProxyHandshakeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    /// Bytes from the proxy, then from the tunnel.
    public typealias InboundIn = ByteBuffer
    /// The tunnel's bytes.
    public typealias InboundOut = ByteBuffer
    /// Bytes for the tunnel, held until it is open.
    public typealias OutboundIn = ByteBuffer
    /// Bytes to the proxy.
    public typealias OutboundOut = ByteBuffer

    private var handshake: ProxyHandshake
    private let timeout: TimeAmount
    private let promise: EventLoopPromise<Void>
    private var timer: Scheduled<Void>?
    private var started = false
    private var done = false
    /// Writes made before the tunnel was open, in order.
    private var held: [(ByteBuffer, EventLoopPromise<Void>?)] = []

    /// Completes once the tunnel is open; fails with a `ProxyError` (or the channel's own error) otherwise.
    public var established: EventLoopFuture<Void> { promise.futureResult }

    /// A handler for `handshake` on a channel of `eventLoop`; the handshake fails if it takes longer than
    /// `timeout`.
    public init(handshake: ProxyHandshake, timeout: TimeAmount, eventLoop: any EventLoop) {
        self.handshake = handshake
        self.timeout = timeout
        promise = eventLoop.makePromise()
    }

    /// Starts the handshake if the channel is already active.
    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { begin(context: context) }
    }

    /// Fails `established` if the handler goes before the tunnel opened.
    public func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        if !done {
            done = true
            promise.fail(ProxyError.closed(stage: handshake.stage))
            for (_, promise) in held { promise?.fail(ProxyError.closed(stage: handshake.stage)) }
            held = []
        }
    }

    /// Sends the handshake's first bytes and starts its timeout.
    public func channelActive(context: ChannelHandlerContext) {
        begin(context: context)
        context.fireChannelActive()
    }

    private func begin(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let opening = handshake.start()
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            fail(context: context, error: .timedOut(stage: handshake.stage))
        }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: opening)), promise: nil)
    }

    /// Feeds the proxy's bytes to the handshake; passes the tunnel's on.
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return context.fireChannelRead(data) }
        let buffer = unwrapInboundIn(data)
        do {
            let output = try handshake.receive(buffer.readableBytesView)
            if !output.outbound.isEmpty {
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: output.outbound)),
                                      promise: nil)
            }
            if let rest = output.established { open(context: context, rest: rest) }
        } catch {
            fail(context: context, error: error)
        }
    }

    /// The tunnel is open: release the held writes, pass on what already came through it, and step aside.
    private func open(context: ChannelHandlerContext, rest: [UInt8]) {
        done = true
        timer?.cancel()
        for (buffer, promise) in held { context.write(wrapOutboundOut(buffer), promise: promise) }
        if !held.isEmpty { context.flush() }
        held = []
        promise.succeed()
        if !rest.isEmpty { context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: rest))) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// A close before the tunnel opened fails `established` with the step it stopped at.
    public func channelInactive(context: ChannelHandlerContext) {
        if !done, let error = handshake.closed() { fail(context: context, error: error) }
        context.fireChannelInactive()
    }

    /// An error before the tunnel opened fails `established` with it.
    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            timer?.cancel()
            promise.fail(error)
            failHeld(error)
        }
        context.fireErrorCaught(error)
    }

    /// Holds writes until the tunnel is open.
    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !done else { return context.write(data, promise: promise) }
        held.append((unwrapOutboundIn(data), promise))
    }

    /// Flushes once the tunnel is open (held writes are flushed when it opens).
    public func flush(context: ChannelHandlerContext) {
        if done { context.flush() }
    }

    private func fail(context: ChannelHandlerContext, error: ProxyError) {
        guard !done else { return }
        done = true
        timer?.cancel()
        promise.fail(error)
        failHeld(error)
        context.close(promise: nil)
    }

    private func failHeld(_ error: any Error) {
        for (_, promise) in held { promise?.fail(error) }
        held = []
    }
}

@available(*, unavailable)
extension ProxyHandshakeHandler: Sendable {}
