// Outbound pieces copied into socket buffers: same bytes, in order, in buffers NIO does not round up.
import MTProtoTransportNIO
import NIOCore
import Testing

@Suite struct ByteBufferPiecesTests {
    let allocator = ByteBufferAllocator()

    func joined(_ buffers: [ByteBuffer]) -> [UInt8] {
        buffers.reduce(into: []) { out, buffer in out += buffer.readableBytesView }
    }

    @Test func aFilePartAndItsHeaderTakeNoMoreThanTheirSize() {
        let header: [UInt8] = [0x1c, 0x00, 0x08, 0x00]
        let payload = (0..<(512 << 10) + 24).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let buffers = allocator.buffers(copying: [header, payload])
        #expect(joined(buffers) == header + payload)
        // 512 KiB in one buffer of exactly that capacity, the 28 bytes left in a small one (in one buffer NIO
        // would have reserved 1 MiB).
        #expect(buffers.map(\.readableBytes) == [512 << 10, 28])
        #expect(buffers[0].capacity == 512 << 10)
        #expect(buffers.reduce(0) { $0 + $1.capacity } < (512 << 10) + 64)
    }

    @Test func largeWritesSplitAtPowersOfTwoAndSmallOnesStayWhole() {
        for total in [1, 3, 4096, 64 << 10, (64 << 10) + 1, 300_001, 3 << 20] {
            let bytes = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
            // Split into uneven pieces, some empty.
            var pieces: [[UInt8]] = [[]]
            var rest = bytes[...]
            var size = 1
            while !rest.isEmpty {
                pieces.append(Array(rest.prefix(size)))
                rest = rest.dropFirst(size)
                size = size * 3 + 1
            }
            let buffers = allocator.buffers(copying: pieces)
            #expect(joined(buffers) == bytes, "total \(total)")
            for buffer in buffers.dropLast() {
                #expect(buffer.readableBytes.nonzeroBitCount == 1 && buffer.readableBytes >= 64 << 10, "total \(total)")
            }
            if total <= 64 << 10 { #expect(buffers.count == 1) }
        }
        #expect(allocator.buffers(copying: []).isEmpty)
        #expect(allocator.buffers(copying: [[], []]).isEmpty)
    }
}
