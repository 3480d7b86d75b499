// gzip_packed: zlib round trips, the zip-bomb bound, corrupt input, and transparent unwrapping in readers.
import Testing
@testable import TLRuntime

@Suite struct GZipTests {
    @Test(arguments: [0, 1, 100, 70_000, 1 << 20])
    func roundTrip(_ n: Int) throws {
        var rng = SeededGenerator(state: UInt64(n))
        // Half random, half repetitive: exercises both stored-ish and well-compressed blocks.
        let data = (0..<n).map { i in i % 2 == 0 ? UInt8.random(in: 0...255, using: &rng) : UInt8(i % 7) }
        let packed = GZip.pack(data)
        #expect(Array(packed.prefix(3)) == [0x1f, 0x8b, 0x08])  // gzip magic, deflate
        #expect(try GZip.unpack(packed, maxSize: n) == data)
    }

    /// The cheap look sessions take before deflating a large body: random bytes collide as often as chance says
    /// (1/256), a repeated random kilobyte more, text and zeros far more.
    @Test func byteCollisionRateTellsRandomFromCompressible() {
        var rng = SeededGenerator(state: 9)
        let random = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let kilobyte = Array(random.prefix(1024))
        let text = Array(String(repeating: "messages.getHistory peer:InputPeer offset_id:int ", count: 90).utf8.prefix(4096))
        let rate = { (bytes: [UInt8]) in bytes.withUnsafeBytes { GZip.byteCollisionRate($0) } * 256 }
        #expect((0.95...1.05).contains(rate(random)))
        #expect(rate(kilobyte + kilobyte + kilobyte + kilobyte) > 1.1)
        #expect(rate(text) > 10)
        #expect(rate([UInt8](repeating: 0, count: 4096)) == 256)
        #expect(rate([7]) == 0 && rate([1, 2]) == 0 && rate([3, 3]) == 256)
    }

    @Test func storedFallbackIsValidGzip() throws {
        let data = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 * 13) }
        let stored = data.withUnsafeBytes { GZip.storedGzip($0) }
        #expect(try GZip.unpack(stored) == data)
        let empty = [UInt8]().withUnsafeBytes { GZip.storedGzip($0) }
        #expect(try GZip.unpack(empty) == [])
    }

    @Test func zipBombIsBounded() {
        let bomb = GZip.pack([UInt8](repeating: 0, count: 64 << 20))
        #expect(bomb.count < 100_000)
        #expect(throws: TLDecodingError(.unpackedTooLarge(limit: GZip.defaultMaxSize), offset: 0)) {
            try GZip.unpack(bomb)
        }
    }

    @Test func limitIsInclusive() throws {
        let data = [UInt8](repeating: 7, count: 10_000)
        let packed = GZip.pack(data)
        #expect(try GZip.unpack(packed, maxSize: 10_000) == data)
        #expect(throws: TLDecodingError(.unpackedTooLarge(limit: 9_999), offset: 0)) {
            try GZip.unpack(packed, maxSize: 9_999)
        }
        #expect(throws: TLDecodingError(.unpackedTooLarge(limit: 0), offset: 0)) { try GZip.unpack(packed, maxSize: 0) }
    }

    @Test func corruptAndTruncatedDataAreTypedErrors() {
        let packed = GZip.pack(Array("hello hello hello hello".utf8))
        #expect(throws: TLDecodingError.self) { try GZip.unpack(Array(packed.prefix(packed.count / 2))) }
        do {
            _ = try GZip.unpack(Array(packed.prefix(packed.count / 2)))
        } catch {
            #expect(error.reason == .decompression("unexpected end of compressed data"))
        }
        do {
            _ = try GZip.unpack([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff])
            Issue.record("garbage inflated")
        } catch {
            guard case .decompression = error.reason else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        #expect(throws: TLDecodingError.self) { try GZip.unpack([]) }
        #expect(throws: TLDecodingError.self) { try GZip.unpack([1, 2, 3, 4, 5, 6, 7, 8]) }
    }

    @Test func packedObjectWireFormat() throws {
        let inner = encode(TestApi.User.userEmpty(id: 5))
        let wrapped = GZip.packedObject(inner)
        var reader = BufferReader(bytes: wrapped)
        #expect(try reader.readUInt32() == 0x3072_cfa1)
        #expect(try GZip.unpack(try reader.readTLBytes()) == inner)
        try reader.expectEnd()
    }

    @Test func registryUnwrapsGzipTransparently() throws {
        let inner = encode(TestApi.User.user(.init(id: 9, phone: "+1", photo: .photoEmpty)))
        let parsed = try TestApi.registry.parse(bytes: GZip.packedObject(inner))
        #expect(encode(parsed) == inner)
    }

    @Test func responseUnwrapsGzipTransparently() throws {
        let values: [Int64] = Array(0..<500)
        let buffer = Buffer()
        buffer.appendVector(values, boxed: true)
        let response = DeserializeFunctionResponse<[Int64]>.vector(of: Int64.self)
        #expect(try response.parse(bytes: GZip.packedObject(buffer.bytes)) == values)
    }

    @Test func unpackingGzipReturnsNilForOtherIDs() throws {
        var reader = BufferReader(bytes: encode(Int32(5)))
        #expect(try reader.unpackingGzip() == nil)
        #expect(reader.offset == 0)
    }

    @Test func readerBoundAppliesAndErrorsPointAtTheWrapper() {
        let bomb = GZip.packedObject([UInt8](repeating: 0, count: 1 << 20))
        var reader = BufferReader(bytes: encode(Int32(0)) + bomb)
        reader.maxUnpackedSize = 4096
        _ = try? reader.readInt32()
        #expect(throws: TLDecodingError(.unpackedTooLarge(limit: 4096), offset: 4)) {
            try reader.withUnpackedGzip { (r) throws(TLDecodingError) in r.readRemaining() }
        }
    }

    @Test func errorsInsideCarryAGzipFrame() {
        let inner = Array(encode(TestApi.User.userEmpty(id: 5)).prefix(6))
        #expect(throws: TLDecodingError(.truncated(needed: 8, available: 2), offset: 4,
                                        path: [.init(constructor: "gzip_packed", field: "packed_data"),
                                               .init(constructor: "userEmpty", field: "id")])) {
            try TestApi.registry.parse(bytes: GZip.packedObject(inner))
        }
        let withTrailing = encode(TestApi.User.userEmpty(id: 5)) + [0, 0, 0, 0]
        #expect(throws: TLDecodingError(.trailingBytes(4), offset: 12,
                                        path: [.init(constructor: "gzip_packed", field: "packed_data")])) {
            try TestApi.registry.parse(bytes: GZip.packedObject(withTrailing))
        }
    }

    @Test func nestedGzipCountsTowardDepth() {
        var wire = encode(TestApi.User.userEmpty(id: 1))
        for _ in 0..<10 { wire = GZip.packedObject(wire) }
        var reader = BufferReader(bytes: wire)
        reader.maxDepth = 5
        #expect(throws: TLDecodingError.self) { try TestApi.registry.parse(&reader) }
        var deepEnough = BufferReader(bytes: wire)
        deepEnough.maxDepth = 11
        #expect(throws: Never.self) { try TestApi.registry.parse(&deepEnough) }
    }
}
