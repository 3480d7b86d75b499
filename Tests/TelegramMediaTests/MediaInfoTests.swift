import Foundation
import Testing
import TelegramMedia

/// `MediaInfo` on the files of Fixtures/media (made by its make-media.py, expected values in its MANIFEST.json).
@Suite struct MediaInfoTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/media")

    struct Manifest: Decodable {
        struct Video: Decodable { let duration: Double, width: Int, height: Int, supportsStreaming: Bool }
        struct Image: Decodable { let format: String, width: Int, height: Int }
        let videos: [String: Video]
        let images: [String: Image]
    }

    static func manifest() throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("MANIFEST.json")))
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    @Test func videosFromBytesAndFiles() throws {
        let manifest = try Self.manifest()
        #expect(manifest.videos.count == 3)
        for (name, expected) in manifest.videos {
            let want = VideoInfo(duration: expected.duration, width: expected.width, height: expected.height,
                                 supportsStreaming: expected.supportsStreaming)
            #expect(try MediaInfo.video(in: Self.bytes(name)) == want, "\(name)")
            #expect(try MediaInfo.video(atPath: Self.folder.appendingPathComponent(name).path) == want, "\(name)")
        }
    }

    @Test func imagesFromBytesAndFiles() throws {
        let manifest = try Self.manifest()
        #expect(manifest.images.count == 3)
        for (name, expected) in manifest.images {
            let want = ImageInfo(format: try #require(ImageInfo.Format(rawValue: expected.format)),
                                 width: expected.width, height: expected.height)
            #expect(try MediaInfo.image(in: Self.bytes(name)) == want, "\(name)")
            #expect(try MediaInfo.image(atPath: Self.folder.appendingPathComponent(name).path) == want, "\(name)")
        }
    }

    /// A 3 GB `mdat` (sparse on disk) before the `moov`: the parser seeks past it by its 64-bit size.
    @Test func moovAfterThreeGigabytesIsFoundBySeeking() throws {
        let small = try Self.bytes("moov-at-end.mov")
        // Fixture layout: ftyp (20 bytes), wide (8), mdat with a 64-bit size, moov.
        let mdatAt = 28
        let moov = Array(small[(mdatAt + 16 + 1024)...])
        let mdatSize: UInt64 = 3 << 30
        var head = Array(small[..<mdatAt])
        head += [0, 0, 0, 1] + Array("mdat".utf8) + withUnsafeBytes(of: mdatSize.bigEndian, Array.init)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("media-\(UUID().uuidString).mov").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(head)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64(mdatAt) + mdatSize)
        try handle.write(contentsOf: Data(moov))
        try handle.close()
        let info = try MediaInfo.video(atPath: path)
        #expect(info == VideoInfo(duration: 1234.0 / 600, width: 1080, height: 1920, supportsStreaming: false))
    }

    @Test func malformedVideosAreTypedErrors() throws {
        let good = try Self.bytes("faststart.mp4")
        // Cut inside the moov: its size runs past the end.
        #expect(throws: MediaInfoError.malformed(what: "'moov' box", offset: 32,
                                                reason: "its size \(good.count - 32 - 1024 - 8) runs past its container's end at 100")) {
            try MediaInfo.video(in: Array(good[..<100]))
        }
        #expect(throws: MediaInfoError.missing(what: "'moov' box")) {
            try MediaInfo.video(in: Array(good[..<32]))
        }
        #expect(throws: MediaInfoError.unrecognizedFormat(expected: "an MP4 or QuickTime file (first box 'JFIF')")) {
            try MediaInfo.video(in: [0, 0, 0, 8] + Array("JFIF".utf8))
        }
        #expect(throws: MediaInfoError.truncated(what: "box header", offset: 0)) { try MediaInfo.video(in: [0, 0, 0]) }
        // A box smaller than its own header.
        #expect(throws: MediaInfoError.malformed(what: "'ftyp' box", offset: 0,
                                                reason: "its size 4 is smaller than its 8-byte header")) {
            try MediaInfo.video(in: [0, 0, 0, 4] + Array("ftyp".utf8))
        }
        // Timescale 0 in mvhd (version 0: the timescale is payload bytes 12..<16).
        var zeroScale = good
        let mvhd = try #require(Self.find("mvhd", in: good)) - 4
        zeroScale.replaceSubrange((mvhd + 8 + 12)..<(mvhd + 8 + 16), with: [0, 0, 0, 0])
        #expect(throws: MediaInfoError.malformed(what: "'mvhd' box", offset: Int64(mvhd), reason: "timescale 0")) {
            try MediaInfo.video(in: zeroScale)
        }
        // No video track: the handler renamed.
        var noVideo = good
        let vide = try #require(Self.find("vide", in: good))
        noVideo.replaceSubrange(vide..<(vide + 4), with: Array("text".utf8))
        #expect(throws: MediaInfoError.missing(what: "video track")) { try MediaInfo.video(in: noVideo) }
        // Endless tiny boxes are cut off by the count bound.
        let many = [0, 0, 0, 20] + Array("ftyp".utf8) + Array(repeating: 0, count: 12)
            + Array(repeating: [0, 0, 0, 8] + Array("free".utf8), count: 5000).joined()
        #expect(throws: MediaInfoError.limitExceeded(what: "boxes in the file", limit: 4096)) {
            try MediaInfo.video(in: many)
        }
        do {
            _ = try MediaInfo.video(atPath: "/nonexistent/clip.mp4")
            Issue.record("a missing file parsed")
        } catch {
            guard case .unreadable(let path, _) = error else { throw error }
            #expect(path == "/nonexistent/clip.mp4")
        }
    }

    @Test func malformedImagesAreTypedErrors() throws {
        let jpeg = try Self.bytes("baseline.jpg")
        #expect(throws: MediaInfoError.unrecognizedFormat(expected: "a JPEG or PNG image")) {
            try MediaInfo.image(in: Array("GIF89a".utf8))
        }
        #expect(throws: MediaInfoError.truncated(what: "JPEG marker", offset: 20)) {
            try MediaInfo.image(in: Array(jpeg[..<20]))
        }
        // SOS before any SOF.
        #expect(throws: MediaInfoError.missing(what: "JPEG frame header (SOFn) before the scan")) {
            try MediaInfo.image(in: [0xff, 0xd8, 0xff, 0xda, 0, 2])
        }
        #expect(throws: MediaInfoError.malformed(what: "JPEG marker", offset: 2, reason: "no 0xFF where a marker starts")) {
            try MediaInfo.image(in: [0xff, 0xd8, 0x00, 0xda])
        }
        #expect(throws: MediaInfoError.malformed(what: "JPEG segment", offset: 2, reason: "length 1 is less than 2")) {
            try MediaInfo.image(in: [0xff, 0xd8, 0xff, 0xe0, 0, 1])
        }
        let comments = [0xff, 0xd8] + Array(repeating: [0xff, 0xfe, 0, 2] as [UInt8], count: 5000).joined()
        #expect(throws: MediaInfoError.limitExceeded(what: "JPEG segments before the frame header", limit: 4096)) {
            try MediaInfo.image(in: Array(comments))
        }
        var png = try Self.bytes("rgb.png")
        png.replaceSubrange(16..<20, with: [0, 0, 0, 0])
        #expect(throws: MediaInfoError.malformed(what: "PNG IHDR chunk", offset: 8, reason: "size 0×5 is out of range")) {
            try MediaInfo.image(in: png)
        }
    }

    /// Every prefix of every fixture parses or fails with a typed error (no trap, no hang).
    @Test func everyPrefixOfEveryFixtureEnds() throws {
        let manifest = try Self.manifest()
        for name in manifest.videos.keys.sorted() + manifest.images.keys.sorted() {
            let bytes = try Self.bytes(name)
            for end in 0...bytes.count {
                _ = try? MediaInfo.video(in: Array(bytes[..<end]))
                _ = try? MediaInfo.image(in: Array(bytes[..<end]))
            }
        }
    }

    static func find(_ text: String, in bytes: [UInt8]) -> Int? {
        let needle = Array(text.utf8)
        return (0...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }
}
