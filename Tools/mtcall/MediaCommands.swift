// `mtcall send-file PEER PATH [--caption TEXT] [--album PATH…]`: a photo, video, audio file, voice note or document
// sent through `TelegramClient.sendMedia`, or with --album an album of PATH and the others through `sendAlbum`, with
// the upload's progress on standard error. Each file's kind comes from its extension unless --as names it; each
// message sent prints as one tl-json line. `mtcall download-media PEER MESSAGE_ID [--out PATH] [--size SIZE]`: the
// message's photo or document through `TelegramClient.downloadMedia`, its progress on standard error, then one JSON
// line {"path", "size", "sha256"}.
import ArgumentParser
import Foundation
import Logging
import TLRuntime
import TLJSON
import TelegramClient
import TelegramFormatting

/// The flags of `send-file`.
struct MediaOptions: ParsableArguments {
    @Option(help: "send-file: the caption (of the first file of an album), with --html or --markdown its formatting.")
    var caption: String?

    @Option(help: "send-file: another file of the album (repeat it; 2 to 10 files in all).")
    var album: [String] = []

    @Option(name: .customLong("as"),
            help: "send-file: send every file as photo, video, audio, voice or document (default: by extension).")
    var kind: String?

    @Option(help: "send-file: a video's or an audio file's duration in seconds (default: a video's is read from it).")
    var duration: Double?

    @Option(help: "send-file: a video's width in pixels (default: read from it).")
    var width: Int?

    @Option(help: "send-file: a video's height in pixels (default: read from it).")
    var height: Int?

    @Option(name: .customLong("size"),
            help: "download-media: largest (default), smallest, stripped (the thumbnail inside the message, as a JPEG), or a size's type letter (s, m, x…; a document's thumbnails).")
    var mediaSize: String = "largest"
}

extension MTCall {
    static let sendFileUsage = "usage: mtcall send-file PEER PATH [--caption TEXT [--html | --markdown]] [--album PATH]... [--as KIND]"

    /// `send-file PEER PATH`.
    func runSendFile(logger: Logger) async throws {
        guard more.count == 1 else { throw ValidationError(Self.sendFileUsage) }
        guard !(html && markdown) else { throw ValidationError("send-file: --html and --markdown exclude each other") }
        let paths = [more[0]] + media.album
        let kinds = try paths.map { path throws(ValidationError) in try mediaKind(for: path) }
        let reference = try PeerReference(params)
        let caption = media.caption.map { text -> Markup in html ? .html(text) : markdown ? .markdown(text) : .plain(text) }
        let files = paths.enumerated().map { index, path in
            MediaFile(.path(path), kind: kinds[index], caption: index == 0 ? caption : nil)
        }
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await reference.peerID(client)
            let progress = ProgressPrinter(verb: "uploaded")
            let transfer = FileTransferOptions(partsInFlight: self.files.partsInFlight,
                                               mediaConnections: self.files.mediaConnections,
                                               partSize: self.files.partSize, progress: { progress.show($0) })
            let sent: [ChatMessage]
            if files.count == 1 {
                sent = [try await client.sendMedia(files[0], to: peer, transfer: transfer)]
            } else {
                sent = try await client.sendAlbum(files, to: peer, transfer: transfer)
            }
            progress.finish()
            for message in sent { Self.printLine(TLJSONWriter.json(message.message), output) }
        }
    }

    static let downloadMediaUsage = "usage: mtcall download-media PEER MESSAGE_ID [--out PATH] [--size SIZE]"

    /// `download-media PEER MESSAGE_ID`: without --out, the file is written in the current directory under the
    /// document's name, or `photo-ID.jpg`.
    func runDownloadMedia(logger: Logger) async throws {
        guard more.count == 1 else { throw ValidationError(Self.downloadMediaUsage) }
        let id = try Self.messageID(more[0], usage: Self.downloadMediaUsage)
        let size: MediaSize = switch media.mediaSize {
            case "largest": .largest
            case "smallest": .smallest
            case "stripped": .stripped
            case let type: .type(type)
        }
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await reference.peerID(client)
            guard let message = try await client.message(id, in: peer) else {
                throw MessageError.notFound(ids: [id], chat: peer)
            }
            let out = files.out ?? Self.defaultName(of: message)
            let progress = ProgressPrinter(verb: "downloaded")
            let written = try await client.downloadMedia(
                of: message, size: size, to: out,
                options: FileTransferOptions(partsInFlight: files.partsInFlight, mediaConnections: files.mediaConnections,
                                             partSize: files.partSize, progress: { progress.show($0) }))
            progress.finish()
            print("{\"path\": \"\(out)\", \"size\": \(written), "
                  + "\"sha256\": \"\(Hex.encode(try Self.sha256(path: out)))\"}")
        }
    }

    /// A document's file name (its last path component only), else `photo-ID.jpg` / `document-ID`.
    private static func defaultName(of message: ChatMessage) -> String {
        if case .messageMediaDocument(let media)? = message.media, case .document(let document)? = media.document {
            for case .documentAttributeFilename(let name) in document.attributes {
                let last = String(name.fileName.split(separator: "/").last ?? "")
                if !last.isEmpty, last != ".", last != ".." { return last }
            }
            return "document-\(message.id)"
        }
        return "photo-\(message.id).jpg"
    }

    /// The kind `path` is sent as: --as, or its extension's.
    private func mediaKind(for path: String) throws(ValidationError) -> MediaFile.Kind {
        let ext = (path as NSString).pathExtension.lowercased()
        let byExtension: String = switch ext {
            case "jpg", "jpeg", "png", "webp": "photo"
            case "mp4", "mov", "m4v": "video"
            case "mp3", "m4a", "flac", "wav": "audio"
            case "ogg", "oga", "opus": "voice"
            default: "document"
        }
        let name = media.kind ?? byExtension
        switch name {
            case "photo": return .photo
            case "video":
                return .video(.init(duration: media.duration, width: media.width, height: media.height))
            case "audio": return .audio(.init(duration: media.duration.map { Int($0.rounded()) }))
            case "voice": return .voice(duration: media.duration.map { Int($0.rounded()) }, waveform: nil)
            case "document": return .document
            default: throw ValidationError("--as must be photo, video, audio, voice or document")
        }
    }
}
