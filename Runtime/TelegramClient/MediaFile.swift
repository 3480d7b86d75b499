// What a media send is made of: the file (a path, bytes, or a stream), its kind with the attributes Telegram's clients
// show it by (core.telegram.org/api/files#sending-files), a caption in markup, and the caller's thumbnail. Nothing
// here decodes an image: a thumbnail is the caller's JPEG, sent as it is.
import TelegramApi
import TelegramFormatting

/// Where a file's bytes come from.
public enum MediaSource: Sendable {
    /// A local file, read part by part (its name the path's last component).
    case path(String)
    /// Bytes held in memory, sent under `name`.
    case bytes([UInt8], name: String)
    /// A stream of chunks of any sizes, sent under `name`; `size` is the total when known (see
    /// ``TelegramClient/TelegramClient/upload(chunks:size:name:options:)``).
    case stream(AsyncThrowingStream<[UInt8], any Error>, size: Int64?, name: String)

    /// The file's name as it is sent.
    public var name: String {
        switch self {
            case .path(let path): String(path.split(separator: "/", omittingEmptySubsequences: true).last ?? "")
            case .bytes(_, let name), .stream(_, _, let name): name
        }
    }
}

/// A photo, video, audio file, voice note or document to send, with its caption and what clients show it by.
///
/// Attributes left nil are read from the file where the SDK can: a video's duration and dimensions from its MP4 or
/// MOV boxes. What is given is sent as given.
public struct MediaFile: Sendable {
    /// What the file is sent as, with the attributes of that kind.
    public enum Kind: Sendable, Equatable {
        /// A photo: Telegram stores it as a photo (JPEG, PNG or WebP) and makes its own sizes.
        case photo
        /// A video (`documentAttributeVideo`).
        case video(VideoAttributes)
        /// Music or another audio file (`documentAttributeAudio`).
        case audio(AudioAttributes)
        /// A voice note (`documentAttributeAudio` with `voice`): Ogg Opus by convention.
        case voice(duration: Int?, waveform: [UInt8]?)
        /// A file of any type, shown as a file.
        case document
    }

    /// A video's attributes (`documentAttributeVideo`); nil ones are read from the file when it can be read.
    public struct VideoAttributes: Sendable, Equatable {
        /// Seconds.
        public var duration: Double?
        /// Pixels.
        public var width: Int?
        /// Pixels.
        public var height: Int?
        /// Whether it can be played while it downloads (its `moov` box before its data); nil reads it from the file.
        public var supportsStreaming: Bool?
        /// A round video message.
        public var round: Bool

        /// Attributes given by the caller; nil ones are read from the file.
        public init(duration: Double? = nil, width: Int? = nil, height: Int? = nil, supportsStreaming: Bool? = nil,
                    round: Bool = false) {
            self.duration = duration
            self.width = width
            self.height = height
            self.supportsStreaming = supportsStreaming
            self.round = round
        }
    }

    /// An audio file's attributes (`documentAttributeAudio`).
    public struct AudioAttributes: Sendable, Equatable {
        /// Seconds (0 when not given: the SDK does not read audio files).
        public var duration: Int?
        /// The track's title.
        public var title: String?
        /// Who performs it.
        public var performer: String?

        /// Attributes as the caller knows them.
        public init(duration: Int? = nil, title: String? = nil, performer: String? = nil) {
            self.duration = duration
            self.title = title
            self.performer = performer
        }
    }

    /// The file.
    public var source: MediaSource
    /// What it is sent as.
    public var kind: Kind
    /// The caption, in the markup it is written in (at most 1,024 characters once read).
    public var caption: Markup?
    /// The MIME type; nil picks one from the kind and the file name's extension.
    public var mimeType: String?
    /// A small JPEG (at most 320 pixels a side, under 200 KB) shown until the file is downloaded; for documents,
    /// videos and audio (a photo's sizes are Telegram's own).
    public var thumbnail: MediaSource?
    /// Hidden under a spoiler until tapped.
    public var spoiler: Bool

    /// A file to send as `kind`.
    public init(_ source: MediaSource, kind: Kind, caption: Markup? = nil, mimeType: String? = nil,
                thumbnail: MediaSource? = nil, spoiler: Bool = false) {
        self.source = source
        self.kind = kind
        self.caption = caption
        self.mimeType = mimeType
        self.thumbnail = thumbnail
        self.spoiler = spoiler
    }

    /// A photo.
    public static func photo(_ source: MediaSource, caption: Markup? = nil, spoiler: Bool = false) -> MediaFile {
        MediaFile(source, kind: .photo, caption: caption, spoiler: spoiler)
    }

    /// A video; attributes left nil are read from the file.
    public static func video(_ source: MediaSource, caption: Markup? = nil,
                             attributes: VideoAttributes = VideoAttributes(), thumbnail: MediaSource? = nil)
        -> MediaFile {
        MediaFile(source, kind: .video(attributes), caption: caption, thumbnail: thumbnail)
    }

    /// An audio file.
    public static func audio(_ source: MediaSource, caption: Markup? = nil,
                             attributes: AudioAttributes = AudioAttributes(), thumbnail: MediaSource? = nil)
        -> MediaFile {
        MediaFile(source, kind: .audio(attributes), caption: caption, thumbnail: thumbnail)
    }

    /// A voice note.
    public static func voice(_ source: MediaSource, caption: Markup? = nil, duration: Int? = nil,
                             waveform: [UInt8]? = nil) -> MediaFile {
        MediaFile(source, kind: .voice(duration: duration, waveform: waveform), caption: caption)
    }

    /// A document.
    public static func document(_ source: MediaSource, caption: Markup? = nil, mimeType: String? = nil,
                                thumbnail: MediaSource? = nil) -> MediaFile {
        MediaFile(source, kind: .document, caption: caption, mimeType: mimeType, thumbnail: thumbnail)
    }

    /// The album group the kind may go in: photos and videos mix, documents go with documents, audio with audio;
    /// a voice note goes in none (core.telegram.org/api/files#albums-grouped-media).
    var albumGroup: String? {
        switch kind {
            case .photo, .video: "photos and videos"
            case .document: "documents"
            case .audio: "audio files"
            case .voice: nil
        }
    }

    /// The MIME type sent: the given one, else by kind and extension.
    var resolvedMimeType: String {
        if let mimeType { return mimeType }
        let name = source.name.lowercased()
        let ext = name.split(separator: ".").count > 1 ? String(name.split(separator: ".").last ?? "") : ""
        switch kind {
            case .photo: return ext == "png" ? "image/png" : "image/jpeg"
            case .voice: return "audio/ogg"
            case .video: return ["mov": "video/quicktime", "webm": "video/webm", "mkv": "video/x-matroska"][ext] ?? "video/mp4"
            case .audio:
                return ["mp3": "audio/mpeg", "m4a": "audio/mp4", "ogg": "audio/ogg", "oga": "audio/ogg",
                        "flac": "audio/flac", "wav": "audio/wav"][ext] ?? "audio/mpeg"
            case .document:
                return ["pdf": "application/pdf", "txt": "text/plain", "zip": "application/zip", "jpg": "image/jpeg",
                        "jpeg": "image/jpeg", "png": "image/png", "mp4": "video/mp4", "json": "application/json"][ext]
                    ?? "application/octet-stream"
        }
    }
}

/// Why a media send was refused before anything was sent.
public enum MediaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An album has 2 to 10 items (``TelegramClient/TelegramClient/maxAlbumItems``); this one has `count`.
    case albumSize(count: Int)
    /// Item `index` cannot be in this album: its kind goes with others (`kind`) than the first item's (`album`).
    case mixedAlbum(index: Int, kind: String, album: String)
    /// A voice note cannot be in an album (item `index`).
    case notGroupable(index: Int)
    /// The caption of item `index` is `length` characters, more than ``TelegramClient/TelegramClient/maxCaptionLength``.
    case captionTooLong(index: Int, length: Int)
    /// Telegram's answer to `messages.uploadMedia` for item `index` was not a photo or a document.
    case unexpectedMedia(index: Int)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
            case .albumSize(let count): "an album has 2 to 10 items, not \(count)"
            case .mixedAlbum(let index, let kind, let album): "item \(index) is one of the \(kind), not of the \(album)"
            case .notGroupable(let index): "item \(index) is a voice note, which cannot be in an album"
            case .captionTooLong(let index, let length):
                "the caption of item \(index) is \(length) characters, more than 1024"
            case .unexpectedMedia(let index): "Telegram stored item \(index) as neither a photo nor a document"
        }
    }
}
