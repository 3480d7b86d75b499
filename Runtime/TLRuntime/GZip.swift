// gzip for `gzip_packed#3072cfa1 packed_data:bytes = Object`, through zlib.
//
// Telegram sends large results gzip-compressed inside `gzip_packed`; clients may send large requests the same way.
// Inflation is bounded: output grows only up to the caller's `maxSize`, and one byte more is a typed error, so a few
// hostile kilobytes cannot expand to gigabytes. `BufferReader.withUnpackedGzip` makes the wrapper transparent for
// readers of boxed objects (the registry and function results use it).
import CZlib

/// gzip compression for `gzip_packed`.
public enum GZip {
    /// Default bound on inflated size: 16 MiB, above any single Telegram result.
    public static let defaultMaxSize = 16 << 20

    /// gzip-compresses `data` (gzip header and trailer, as Telegram uses).
    public static func pack(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { input in
            deflateGzip(input) ?? storedGzip(input)
        }
    }

    /// Inflates gzip (or zlib) data, failing with `.unpackedTooLarge` once the output would exceed `maxSize` bytes.
    /// Error offsets are 0: the caller knows where the packed data was.
    public static func unpack(_ data: [UInt8], maxSize: Int = defaultMaxSize) throws(TLDecodingError) -> [UInt8] {
        let inflated = data.withUnsafeBytes { input in
            Result { () throws(TLDecodingError) -> ReaderStorage in try inflate(input, maxSize: maxSize) }
        }
        let storage = try inflated.get()
        return [UInt8](UnsafeRawBufferPointer(start: storage.base, count: storage.count))
    }

    /// `gzip_packed` wrapping an already serialized boxed object: the ID, then the compressed bytes as TL `bytes`.
    public static func packedObject(_ serialized: [UInt8]) -> [UInt8] {
        let buffer = Buffer()
        appendPackedObject(serialized, to: buffer)
        return buffer.bytes
    }

    /// Appends `gzip_packed` wrapping `serialized` to `buffer`.
    public static func appendPackedObject(_ serialized: [UInt8], to buffer: Buffer) {
        buffer.appendUInt32(TLConstructorID.gzipPacked)
        buffer.appendTLBytes(pack(serialized))
    }

    /// How often two bytes of `sample` are equal (the chance for a pair drawn without replacement): 1/256 for
    /// random or well-compressed bytes, far more for text and TL structures (zeros, small numbers, repeated
    /// strings). A look at whether data is worth deflating that costs a histogram, where a trial deflate costs
    /// more than 100 µs of zlib setup and work. 0 for fewer than 2 bytes.
    public static func byteCollisionRate(_ sample: UnsafeRawBufferPointer) -> Double {
        guard sample.count >= 2 else { return 0 }
        var counts = [Int](repeating: 0, count: 256)
        for byte in sample { counts[Int(byte)] += 1 }
        let pairs = counts.reduce(0) { $0 + $1 * ($1 - 1) }
        return Double(pairs) / (Double(sample.count) * Double(sample.count - 1))
    }

    // MARK: zlib

    /// `windowBits` for a gzip wrapper when deflating; inflating adds 32 instead to accept gzip and zlib.
    static let gzipWindowBits: Int32 = 15 + 16
    static let autoDetectWindowBits: Int32 = 15 + 32

    static func deflateGzip(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard input.count <= Int(UInt32.max) else { return nil }
        var stream = z_stream()
        let initialized = deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, gzipWindowBits, 8,
                                        Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard initialized == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var finished = false
        let output = [UInt8](unsafeUninitializedCapacity: bound) { out, written in
            stream.next_in = input.baseAddress.map {
                UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
            }
            stream.avail_in = uInt(input.count)
            stream.next_out = out.baseAddress
            stream.avail_out = uInt(bound)
            finished = deflate(&stream, Z_FINISH) == Z_STREAM_END
            written = finished ? Int(stream.total_out) : 0
        }
        return finished ? output : nil
    }

    /// A valid gzip stream of stored (uncompressed) deflate blocks; the fallback if zlib cannot allocate.
    static func storedGzip(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]
        out.reserveCapacity(input.count + input.count / 65535 * 5 + 23)
        var start = 0
        repeat {
            let n = Swift.min(65535, input.count - start)
            let last: UInt8 = start + n == input.count ? 1 : 0
            out += [last, UInt8(n & 0xff), UInt8(n >> 8), UInt8(~n & 0xff), UInt8(~n >> 8 & 0xff)]
            out += input[start..<start + n]
            start += n
        } while start < input.count
        let crc = UInt32(truncatingIfNeeded: crc32(0, input.baseAddress?.assumingMemoryBound(to: Bytef.self),
                                                   uInt(input.count)))
        let size = UInt32(truncatingIfNeeded: input.count)
        for v in [crc, size] {
            for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) }
        }
        return out
    }

    /// Inflates into reader storage, growing ×2 up to `maxSize + 1` bytes.
    static func inflate(_ input: UnsafeRawBufferPointer, maxSize: Int) throws(TLDecodingError) -> ReaderStorage {
        let limit = Swift.max(maxSize, 0)
        guard input.count <= Int(UInt32.max) else { throw TLDecodingError(.invalidLength(input.count), offset: 0) }
        var stream = z_stream()
        let initialized = inflateInit2_(&stream, autoDetectWindowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard initialized == Z_OK else { throw zlibError(initialized, stream) }
        defer { inflateEnd(&stream) }

        // One byte more than allowed, so that reaching it proves the limit is exceeded.
        let hardCapacity = limit == Int.max ? limit : limit + 1
        var capacity = Swift.min(hardCapacity, Swift.max(input.count * 4, 4096))
        var region = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        var produced = 0
        var ownsRegion = true
        defer { if ownsRegion { region.deallocate() } }

        stream.next_in = input.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self)) }
        stream.avail_in = uInt(input.count)
        while true {
            if produced == capacity {
                guard capacity < hardCapacity else { throw TLDecodingError(.unpackedTooLarge(limit: limit), offset: 0) }
                let grown = capacity > hardCapacity / 2 ? hardCapacity : capacity * 2
                let newRegion = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
                newRegion.copyMemory(from: region, byteCount: produced)
                region.deallocate()
                region = newRegion
                capacity = grown
            }
            let room = Swift.min(capacity - produced, Int(UInt32.max))
            stream.next_out = (region + produced).assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(room)
            let status = CZlib.inflate(&stream, Z_NO_FLUSH)
            produced += room - Int(stream.avail_out)
            switch status {
            case Z_STREAM_END:
                if produced > limit { throw TLDecodingError(.unpackedTooLarge(limit: limit), offset: 0) }
                ownsRegion = false
                return ReaderStorage(adopting: region, count: produced)
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.avail_out == 0:
                continue
            case Z_BUF_ERROR:
                throw TLDecodingError(.decompression("unexpected end of compressed data"), offset: 0)
            default:
                throw zlibError(status, stream)
            }
        }
    }

    static func zlibError(_ status: Int32, _ stream: z_stream) -> TLDecodingError {
        let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
        return TLDecodingError(.decompression(message), offset: 0)
    }
}

extension ReaderStorage {
    /// Storage that takes ownership of `region` (allocated with `UnsafeMutableRawPointer.allocate`).
    convenience init(adopting region: UnsafeMutableRawPointer, count: Int) {
        self.init(owning: UnsafeRawPointer(region), count: count)
    }
}

extension BufferReader {
    /// When the next value is `gzip_packed`, consumes it and returns a reader over the inflated bytes (one object
    /// deeper, same limits); otherwise returns nil and consumes nothing.
    public mutating func unpackingGzip() throws(TLDecodingError) -> BufferReader? {
        guard peekUInt32() == TLConstructorID.gzipPacked else { return nil }
        let at = _position
        try enterObject()
        defer { leaveObject() }
        _position += 4
        let (start, count) = try _takeTLBytes()
        let storage: ReaderStorage
        do {
            storage = try GZip.inflate(UnsafeRawBufferPointer(start: _base + start, count: count),
                                       maxSize: maxUnpackedSize)
        } catch {
            var located = error
            located.offset = at
            throw located
        }
        var inner = BufferReader(storage: storage)
        inner.maxDepth = maxDepth
        inner.maxUnpackedSize = maxUnpackedSize
        inner._depth = _depth
        return inner
    }

    /// Reads one boxed value with `body`, looking through `gzip_packed`: when the next value is compressed (possibly
    /// more than once), `body` reads the inflated bytes, which it must consume entirely. Errors inside carry a `gzip_packed.packed_data` frame
    /// and offsets within the inflated bytes.
    public mutating func withUnpackedGzip<R>(
        _ body: (inout BufferReader) throws(TLDecodingError) -> R
    ) throws(TLDecodingError) -> R {
        guard var inner = try unpackingGzip() else { return try body(&self) }
        do {
            let value = try inner.withUnpackedGzip(body)  // nested wrappers, bounded by the depth limit
            try inner.expectEnd()
            return value
        } catch {
            throw error.inside(TLDecodingError.Frame(constructor: "gzip_packed", field: "packed_data"))
        }
    }
}
