// Acknowledges every burst of received bytes at once instead of after Linux's delayed-ACK timer.
//
// A relay that writes without TCP_NODELAY (microsocks, for one: 1 KiB reads, Nagle left on) holds each write
// until the previous one is acknowledged. With delayed ACKs on our side, pipelined calls through it are clocked
// by our ACK timer, not by the bytes: measured through microsocks, 5,000 pipelined calls ran at 0.3× the direct
// rate, and at the direct rate once the receiver acknowledged at once. Linux leaves quick-ACK mode on its own,
// so the option is re-armed after each read (tcp(7), TCP_QUICKACK).
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Re-arms `TCP_QUICKACK` after each burst of reads, so a peer that waits for our ACK before its next small write
/// (a relay with Nagle's algorithm on) is not held up by the delayed-ACK timer. Has no effect off Linux.
public final class QuickAckHandler: ChannelInboundHandler, Sendable {
    /// Bytes in, passed on unchanged.
    public typealias InboundIn = ByteBuffer

    /// A handler for one channel.
    public init() {}

    /// Arms quick ACKs on the new connection.
    public func channelActive(context: ChannelHandlerContext) {
        Self.arm(context.channel)
        context.fireChannelActive()
    }

    /// Arms quick ACKs again: the kernel may have left the mode since.
    public func channelReadComplete(context: ChannelHandlerContext) {
        Self.arm(context.channel)
        context.fireChannelReadComplete()
    }

    private static func arm(_ channel: any Channel) {
        #if os(Linux)
        // A failure (a socket already closed) only costs the ACK timer; nothing to report.
        try? channel.syncOptions?.setOption(
            ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: CInt(TCP_QUICKACK))),
            value: 1)
        #endif
    }
}
