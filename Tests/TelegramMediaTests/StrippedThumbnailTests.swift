import Foundation
import Testing
import TelegramMedia

/// `StrippedThumbnail.jpeg(from:)` against Telethon's `stripped_photo_to_jpg` (Fixtures/media/stripped-vectors.json,
/// made by make-stripped-vectors.py).
@Suite struct StrippedThumbnailTests {
    struct Vectors: Decodable {
        struct Vector: Decodable { let stripped: String, jpeg: String }
        let telethon: String
        let vectors: [Vector]
    }

    static func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
            out.append(UInt8(text[index..<next], radix: 16) ?? 0)
            index = next
        }
        return out
    }

    @Test func matchesTelethonByteForByte() throws {
        let url = MediaInfoTests.folder.appendingPathComponent("stripped-vectors.json")
        let file = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
        #expect(file.vectors.count == 20)
        for vector in file.vectors {
            let stripped = Self.hex(vector.stripped)
            let jpeg = try StrippedThumbnail.jpeg(from: stripped)
            #expect(jpeg == Self.hex(vector.jpeg), "\(vector.stripped.prefix(12))")
            // Our own header parser reads the size back out of it.
            #expect(try MediaInfo.image(in: jpeg) == ImageInfo(format: .jpeg, width: Int(stripped[2]),
                                                               height: Int(stripped[1])))
        }
    }

    /// Where Telethon hands malformed input back unchanged, ours says what is wrong.
    @Test func malformedInputIsATypedError() {
        #expect(throws: StrippedThumbnailError.tooShort(count: 2)) { try StrippedThumbnail.jpeg(from: [1, 40]) }
        #expect(throws: StrippedThumbnailError.unknownVersion(2)) { try StrippedThumbnail.jpeg(from: [2, 40, 40]) }
        #expect(throws: StrippedThumbnailError.emptySize(width: 0, height: 40)) {
            try StrippedThumbnail.jpeg(from: [1, 40, 0])
        }
        let huge = [1, 40, 40] + [UInt8](repeating: 0, count: StrippedThumbnail.maximumSize)
        #expect(throws: StrippedThumbnailError.tooLong(count: huge.count, limit: StrippedThumbnail.maximumSize)) {
            try StrippedThumbnail.jpeg(from: huge)
        }
    }
}
