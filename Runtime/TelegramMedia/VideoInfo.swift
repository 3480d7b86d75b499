/// What Telegram's `documentAttributeVideo` carries about a video, read from its MP4 or QuickTime boxes.
public struct VideoInfo: Sendable, Equatable, Hashable {
    /// The movie's duration in seconds (`mvhd`'s duration over its timescale).
    public var duration: Double
    /// The video track's displayed width in pixels (its `tkhd`, else its sample entry; swapped for a track
    /// turned by 90° or 270°).
    public var width: Int
    /// The video track's displayed height in pixels.
    public var height: Int
    /// Whether the movie box comes before the media data, so a player can start before the whole file arrives.
    public var supportsStreaming: Bool

    /// A video's properties.
    public init(duration: Double, width: Int, height: Int, supportsStreaming: Bool) {
        self.duration = duration
        self.width = width
        self.height = height
        self.supportsStreaming = supportsStreaming
    }
}

/// One ISO base media file format box (ISO/IEC 14496-12 §4.2): `offset` is its header's first byte, `payload` the
/// first byte after its header, `end` the byte after its last.
struct Box {
    let type: String
    let offset: Int64
    let payload: Int64
    let end: Int64
}

/// The ISO BMFF box walk (MP4, QuickTime MOV, 3GP): only the boxes on the way to the duration and the video
/// track's size are read, each header with one small read, so a `moov` at the end of a large file costs a seek.
struct BoxReader {
    let source: any ByteSource
    /// Boxes read in any one container before giving up (a real `moov` has a few dozen).
    static let boxLimit = 4096
    static let trackLimit = 256

    /// The children of the byte range `start..<end`, in order; `visit` returns false to stop.
    func forEachBox(from start: Int64, to end: Int64, in container: String,
                    _ visit: (Box) throws(MediaInfoError) -> Bool) throws(MediaInfoError) {
        var offset = start
        var seen = 0
        while offset < end {
            seen += 1
            guard seen <= Self.boxLimit else { throw .limitExceeded(what: "boxes in \(container)", limit: Self.boxLimit) }
            let box = try header(at: offset, containerEnd: end)
            guard try visit(box) else { return }
            offset = box.end
        }
    }

    /// The box header at `offset`: a 32-bit size (1: a 64-bit size follows; 0: to the container's end) and a type.
    func header(at offset: Int64, containerEnd: Int64) throws(MediaInfoError) -> Box {
        guard containerEnd - offset >= 8 else { throw .truncated(what: "box header", offset: offset) }
        let head = try source.bytes(8, at: offset, in: "box header")
        let size32 = bigEndian(head, at: 0, as: UInt32.self)
        let type = fourCC(head[4..<8])
        var headerSize: Int64 = 8
        let end: Int64
        switch size32 {
        case 0:
            end = containerEnd
        case 1:
            guard containerEnd - offset >= 16 else { throw .truncated(what: "'\(type)' box's 64-bit size", offset: offset) }
            let large = bigEndian(try source.bytes(8, at: offset + 8, in: "'\(type)' box's 64-bit size"), at: 0,
                                  as: UInt64.self)
            headerSize = 16
            guard large <= UInt64(containerEnd - offset) else {
                throw .malformed(what: "'\(type)' box", offset: offset,
                                 reason: "its size \(large) runs past its container's end at \(containerEnd)")
            }
            end = offset + Int64(large)
        default:
            guard Int64(size32) <= containerEnd - offset else {
                throw .malformed(what: "'\(type)' box", offset: offset,
                                 reason: "its size \(size32) runs past its container's end at \(containerEnd)")
            }
            end = offset + Int64(size32)
        }
        if type == "uuid" { headerSize += 16 }  // an extended type follows the size
        guard end - offset >= headerSize else {
            throw .malformed(what: "'\(type)' box", offset: offset,
                             reason: "its size \(end - offset) is smaller than its \(headerSize)-byte header")
        }
        return Box(type: type, offset: offset, payload: offset + headerSize, end: end)
    }

    /// The first child of `box` of type `type`, if any.
    func child(_ type: String, of box: Box) throws(MediaInfoError) -> Box? {
        var found: Box?
        try forEachBox(from: box.payload, to: box.end, in: "'\(box.type)' box") { (child: Box) throws(MediaInfoError) in
            if child.type == type { found = child }
            return found == nil
        }
        return found
    }

    /// Up to `length` bytes of `box`'s payload from its start (`need` of them required).
    func payload(of box: Box, length: Int, need: Int) throws(MediaInfoError) -> [UInt8] {
        let available = Int(clamping: box.end - box.payload)
        guard available >= need else { throw .truncated(what: "'\(box.type)' box", offset: box.offset) }
        return try source.bytes(min(length, available), at: box.payload, in: "'\(box.type)' box")
    }
}

func fourCC(_ bytes: ArraySlice<UInt8>) -> String {
    String(bytes.map { (0x20...0x7e).contains($0) ? Character(UnicodeScalar($0)) : "?" })
}

extension MediaInfo {
    static func video(from source: any ByteSource) throws(MediaInfoError) -> VideoInfo {
        let reader = BoxReader(source: source)
        var movie: Box?
        var firstMediaData: Int64?
        var first = true
        try reader.forEachBox(from: 0, to: source.count, in: "the file") { (box: Box) throws(MediaInfoError) in
            // The first box names the format: `ftyp` in MP4, and old QuickTime files may start with any atom.
            if first, !["ftyp", "moov", "mdat", "wide", "free", "skip", "pnot"].contains(box.type) {
                throw .unrecognizedFormat(expected: "an MP4 or QuickTime file (first box '\(box.type)')")
            }
            first = false
            if box.type == "moov", movie == nil { movie = box }
            if box.type == "mdat", firstMediaData == nil { firstMediaData = box.offset }
            return movie == nil || firstMediaData == nil
        }
        guard let movie else { throw .missing(what: "'moov' box") }
        guard let header = try reader.child("mvhd", of: movie) else { throw .missing(what: "'mvhd' box in 'moov'") }
        let duration = try movieDuration(header, reader)
        var tracks = 0
        var video: (width: Int, height: Int)?
        try reader.forEachBox(from: movie.payload, to: movie.end, in: "'moov' box") { (box: Box) throws(MediaInfoError) in
            guard box.type == "trak" else { return true }
            tracks += 1
            guard tracks <= BoxReader.trackLimit else {
                throw .limitExceeded(what: "tracks", limit: BoxReader.trackLimit)
            }
            video = try videoSize(of: box, reader)
            return video == nil
        }
        guard let video else { throw .missing(what: "video track") }
        let streaming = firstMediaData.map { movie.offset < $0 } ?? true
        return VideoInfo(duration: duration, width: video.width, height: video.height, supportsStreaming: streaming)
    }

    /// `mvhd` (ISO/IEC 14496-12 §8.2.2): version, flags, two dates, timescale, duration; 32-bit fields in version 0,
    /// 64-bit dates and duration in version 1.
    static func movieDuration(_ box: Box, _ reader: BoxReader) throws(MediaInfoError) -> Double {
        let head = try reader.payload(of: box, length: 32, need: 1)
        let timescale: UInt32, duration: UInt64
        switch head[0] {
        case 0:
            guard head.count >= 20 else { throw .truncated(what: "'mvhd' box", offset: box.offset) }
            timescale = bigEndian(head, at: 12)
            let short: UInt32 = bigEndian(head, at: 16)
            duration = short == .max ? 0 : UInt64(short)  // all ones: unknown
        case 1:
            guard head.count >= 32 else { throw .truncated(what: "'mvhd' box", offset: box.offset) }
            timescale = bigEndian(head, at: 20)
            let long: UInt64 = bigEndian(head, at: 24)
            duration = long == .max ? 0 : long
        case let version:
            throw .malformed(what: "'mvhd' box", offset: box.offset, reason: "unknown version \(version)")
        }
        guard timescale > 0 else { throw .malformed(what: "'mvhd' box", offset: box.offset, reason: "timescale 0") }
        return Double(duration) / Double(timescale)
    }

    /// The displayed size of `track` if it is a video track (`mdia/hdlr` handler `vide`), else nil.
    static func videoSize(of track: Box, _ reader: BoxReader) throws(MediaInfoError) -> (width: Int, height: Int)? {
        guard let media = try reader.child("mdia", of: track), let handler = try reader.child("hdlr", of: media)
        else { return nil }
        // hdlr: version and flags, pre_defined, then the handler type.
        let hdlr = try reader.payload(of: handler, length: 12, need: 12)
        guard fourCC(hdlr[8..<12]) == "vide" else { return nil }
        var size: (width: Int, height: Int)?
        if let header = try reader.child("tkhd", of: track) { size = try trackHeaderSize(header, reader) }
        if size == nil { size = try sampleEntrySize(media, reader) }
        guard let size else { throw .missing(what: "video track dimensions (tkhd and sample entry give 0)") }
        return size
    }

    /// `tkhd` (§8.3.2): after the dates, IDs and duration (32 or 64-bit by version), 16 bytes of layer, group and
    /// volume, a 3×3 matrix, then width and height in 16.16 fixed point. Nil when either is 0.
    static func trackHeaderSize(_ box: Box, _ reader: BoxReader) throws(MediaInfoError) -> (width: Int, height: Int)? {
        let head = try reader.payload(of: box, length: 96, need: 1)
        let matrixAt: Int
        switch head[0] {
        case 0: matrixAt = 4 + 20 + 16
        case 1: matrixAt = 4 + 32 + 16
        case let version:
            throw .malformed(what: "'tkhd' box", offset: box.offset, reason: "unknown version \(version)")
        }
        guard head.count >= matrixAt + 44 else { throw .truncated(what: "'tkhd' box", offset: box.offset) }
        let width = Int(bigEndian(head, at: matrixAt + 36, as: UInt32.self) >> 16)
        let height = Int(bigEndian(head, at: matrixAt + 40, as: UInt32.self) >> 16)
        guard width > 0, height > 0 else { return nil }
        // A turn by 90° or 270° has a = d = 0 in the matrix {a b u; c d v; x y w} (16.16 values).
        let a = bigEndian(head, at: matrixAt, as: UInt32.self), d = bigEndian(head, at: matrixAt + 16, as: UInt32.self)
        let b = bigEndian(head, at: matrixAt + 4, as: UInt32.self)
        return a == 0 && d == 0 && b != 0 ? (height, width) : (width, height)
    }

    /// The first sample entry of `mdia/minf/stbl/stsd` (§8.5.2): a visual entry has 6 reserved bytes, a data
    /// reference index and 16 bytes before its 16-bit width and height.
    static func sampleEntrySize(_ media: Box, _ reader: BoxReader) throws(MediaInfoError) -> (width: Int, height: Int)? {
        guard let info = try reader.child("minf", of: media), let table = try reader.child("stbl", of: info),
              let descriptions = try reader.child("stsd", of: table) else { return nil }
        let head = try reader.payload(of: descriptions, length: 8, need: 8)
        guard bigEndian(head, at: 4, as: UInt32.self) > 0 else { return nil }
        let entry = try reader.header(at: descriptions.payload + 8, containerEnd: descriptions.end)
        let body = try reader.payload(of: entry, length: 28, need: 28)
        let width = Int(bigEndian(body, at: 24, as: UInt16.self)), height = Int(bigEndian(body, at: 26, as: UInt16.self))
        return width > 0 && height > 0 ? (width, height) : nil
    }
}
