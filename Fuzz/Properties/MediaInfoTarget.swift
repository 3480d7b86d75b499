// TelegramMedia's header parsers on any bytes: both return or throw a typed error (a trap or a hang is a finding);
// what they return is in range; an image's header decides its result, so bytes after it change nothing. The same
// bytes as a stripped thumbnail: a JPEG whose header our parser reads back with the thumbnail's size.
import TelegramMedia

/// Input: any bytes, read as a video and as an image.
public func fuzzMediaInfo(_ data: [UInt8]) throws(Violation) {
    if let jpeg = try? StrippedThumbnail.jpeg(from: data) {
        let size = try? MediaInfo.image(in: jpeg)
        guard size == ImageInfo(format: .jpeg, width: Int(data[2]), height: Int(data[1])) else {
            throw Violation("a stripped thumbnail's JPEG reads as \(String(describing: size))")
        }
    }
    if let video = try? MediaInfo.video(in: data) {
        guard video.width > 0, video.height > 0, video.duration.isFinite, video.duration >= 0 else {
            throw Violation("video out of range: \(video)")
        }
    }
    guard let image = try? MediaInfo.image(in: data) else { return }
    guard image.width > 0, image.height > 0 else { throw Violation("image out of range: \(image)") }
    guard (try? MediaInfo.image(in: data + [0xff, 0xd9, 0, 0, 0, 0])) == image else {
        throw Violation("bytes after the image's header changed its result \(image)")
    }
}
