/// Reads what Telegram's media attributes need from a file's headers: a video's duration, size and streamability
/// (MP4 and QuickTime), an image's format and size (JPEG and PNG).
///
/// The parsers are bounded: they read headers only (a few dozen reads of at most 96 bytes, seeking past the rest,
/// so a `moov` box at the end of a 2 GB file costs a seek), check every size against its container, cap the boxes
/// and segments they walk, and report malformed data as a ``MediaInfoError`` naming what and where.
///
/// ```swift
/// let video = try MediaInfo.video(atPath: "clip.mp4")
/// print(video.duration, video.width, video.height, video.supportsStreaming)
/// ```
public enum MediaInfo {
    /// The properties of the MP4 or QuickTime video in `bytes`.
    public static func video(in bytes: [UInt8]) throws(MediaInfoError) -> VideoInfo {
        try video(from: BufferSource(buffer: bytes))
    }

    /// The properties of the MP4 or QuickTime video at `path`, reading its box headers only.
    public static func video(atPath path: String) throws(MediaInfoError) -> VideoInfo {
        try video(from: FileSource(path: path))
    }

    /// The format and size of the JPEG or PNG image in `bytes`.
    public static func image(in bytes: [UInt8]) throws(MediaInfoError) -> ImageInfo {
        try image(from: BufferSource(buffer: bytes))
    }

    /// The format and size of the JPEG or PNG image at `path`, reading its header only.
    public static func image(atPath path: String) throws(MediaInfoError) -> ImageInfo {
        try image(from: FileSource(path: path))
    }
}
