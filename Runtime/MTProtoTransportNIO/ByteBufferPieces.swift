// Outbound pieces (a frame's header, its payload, its padding) copied into socket buffers once.
import NIOCore

extension ByteBufferAllocator {
    /// `pieces` copied back to back into buffers whose capacities are powers of two, the largest first. NIO rounds
    /// every buffer's capacity up to a power of two, so a 512 KiB payload with its 4-byte header in one buffer would
    /// take 1 MiB; here it takes 512 KiB and a small buffer for the rest. Written one after another, the buffers go
    /// out in one gathered write.
    public func buffers(copying pieces: [[UInt8]]) -> [ByteBuffer] {
        var remaining = pieces.reduce(0) { $0 + $1.count }
        var out: [ByteBuffer] = []
        var current: ByteBuffer?
        var room = 0
        for piece in pieces {
            var rest = piece[...]
            while !rest.isEmpty {
                if room == 0 {
                    if let full = current { out.append(full) }
                    // Small remainders go in one buffer; large ones are split at the largest power of two.
                    room = remaining <= Self.smallestSplit
                        ? remaining : 1 << (Int.bitWidth - 1 - remaining.leadingZeroBitCount)
                    current = buffer(capacity: room)
                }
                let take = min(room, rest.count)
                current?.writeBytes(rest.prefix(take))
                rest = rest.dropFirst(take)
                room -= take
                remaining -= take
            }
        }
        if let last = current { out.append(last) }
        return out
    }

    /// Below this many bytes, what is left goes in one buffer whatever its rounding.
    static let smallestSplit = 64 << 10
}

extension ChannelHandlerContext {
    /// Writes `pieces` (without flushing) in `buffers(copying:)`'s buffers, for a handler whose outbound type is
    /// `ByteBuffer`. `promise` goes with the last write, which NIO completes after the ones before it; with nothing
    /// to write it succeeds at once.
    public func write(copying pieces: [[UInt8]], promise: EventLoopPromise<Void>?) {
        let buffers = channel.allocator.buffers(copying: pieces)
        guard let last = buffers.last else {
            promise?.succeed(())
            return
        }
        for buffer in buffers.dropLast() { write(NIOAny(buffer), promise: nil) }
        write(NIOAny(last), promise: promise)
    }
}
