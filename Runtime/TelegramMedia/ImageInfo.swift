/// An image's format and size, read from its header: what `documentAttributeImageSize` carries, and what a photo's
/// sizes are checked against.
public struct ImageInfo: Sendable, Equatable, Hashable {
    /// An image format ``MediaInfo`` reads.
    public enum Format: String, Sendable, Equatable, Hashable {
        /// JPEG (ITU T.81 / JFIF).
        case jpeg
        /// PNG (ISO/IEC 15948).
        case png

        /// The format's MIME type.
        public var mimeType: String {
            switch self {
            case .jpeg: "image/jpeg"
            case .png: "image/png"
            }
        }
    }

    /// The image's format.
    public var format: Format
    /// Its width in pixels.
    public var width: Int
    /// Its height in pixels.
    public var height: Int

    /// An image's properties.
    public init(format: Format, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }
}

extension MediaInfo {
    static let jpegSegmentLimit = 4096

    static func image(from source: any ByteSource) throws(MediaInfoError) -> ImageInfo {
        let start = try source.read(8, at: 0)
        if start.starts(with: [0xff, 0xd8]) { return try jpeg(source) }
        if start == [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] { return try png(source) }
        throw .unrecognizedFormat(expected: "a JPEG or PNG image")
    }

    /// The first frame header (SOF0–SOF15 less DHT, JPG and DAC: ITU T.81 §B.2.2): markers after SOI are walked
    /// by their lengths until one is found; scan data or the image's end first is an error.
    static func jpeg(_ source: any ByteSource) throws(MediaInfoError) -> ImageInfo {
        var offset: Int64 = 2
        for _ in 0..<jpegSegmentLimit {
            let at = offset
            guard try source.bytes(1, at: offset, in: "JPEG marker")[0] == 0xff else {
                throw .malformed(what: "JPEG marker", offset: at, reason: "no 0xFF where a marker starts")
            }
            var marker: UInt8 = 0xff
            while marker == 0xff {  // fill bytes (§B.1.1.2); each read moves on, so this ends with the data
                offset += 1
                marker = try source.bytes(1, at: offset, in: "JPEG marker")[0]
            }
            offset += 1
            switch marker {
            case 0x01, 0xd0...0xd7:
                continue  // TEM and RSTn stand alone
            case 0xd9, 0xda:
                throw .missing(what: "JPEG frame header (SOFn) before \(marker == 0xda ? "the scan" : "the image's end")")
            default:
                break
            }
            let length = Int64(bigEndian(try source.bytes(2, at: offset, in: "JPEG segment length"), at: 0,
                                         as: UInt16.self))
            guard length >= 2 else {
                throw .malformed(what: "JPEG segment", offset: at, reason: "length \(length) is less than 2")
            }
            if (0xc0...0xcf).contains(marker), ![0xc4, 0xc8, 0xcc].contains(marker) {
                guard length >= 8 else {
                    throw .malformed(what: "JPEG frame header", offset: at, reason: "length \(length) is less than 8")
                }
                let frame = try source.bytes(5, at: offset + 2, in: "JPEG frame header")
                let height = Int(bigEndian(frame, at: 1, as: UInt16.self))
                let width = Int(bigEndian(frame, at: 3, as: UInt16.self))
                guard width > 0, height > 0 else {
                    throw .malformed(what: "JPEG frame header", offset: at,
                                     reason: "size \(width)×\(height) (a height set later by DNL is not read)")
                }
                return ImageInfo(format: .jpeg, width: width, height: height)
            }
            offset += length
        }
        throw .limitExceeded(what: "JPEG segments before the frame header", limit: jpegSegmentLimit)
    }

    /// PNG's first chunk is IHDR (ISO/IEC 15948 §11.2.2): 13 bytes, width and height first, each 1...2³¹−1.
    static func png(_ source: any ByteSource) throws(MediaInfoError) -> ImageInfo {
        let chunk = try source.bytes(16, at: 8, in: "PNG IHDR chunk")
        guard fourCC(chunk[4..<8]) == "IHDR" else {
            throw .malformed(what: "PNG", offset: 8, reason: "the first chunk is '\(fourCC(chunk[4..<8]))', not IHDR")
        }
        guard bigEndian(chunk, at: 0, as: UInt32.self) == 13 else {
            throw .malformed(what: "PNG IHDR chunk", offset: 8, reason: "length is not 13")
        }
        let width = bigEndian(chunk, at: 8, as: UInt32.self), height = bigEndian(chunk, at: 12, as: UInt32.self)
        guard (1...0x7fff_ffff).contains(width), (1...0x7fff_ffff).contains(height) else {
            throw .malformed(what: "PNG IHDR chunk", offset: 8, reason: "size \(width)×\(height) is out of range")
        }
        return ImageInfo(format: .png, width: Int(width), height: Int(height))
    }
}
