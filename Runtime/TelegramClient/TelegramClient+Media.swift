// Sending media by kind, and albums (core.telegram.org/api/files#sending-files, /api/files#albums-grouped-media).
// Everything that can be checked is checked before the first byte goes: the peer (the cache must know it), the
// album's size (2 to 10) and kinds, the captions, that each local file opens and is not empty. Then each file is
// uploaded (with its thumbnail), and a single send goes with `messages.sendMedia`; an album's items go first through
// `messages.uploadMedia`, which turns each upload into a stored photo or document, because `messages.sendMultiMedia`
// takes only those, and then all at once with one random_id each.
import MTProtoClient
import Synchronization
import TLRuntime
import TelegramApi
import TelegramFormatting
import TelegramMedia

extension TelegramClient {
    /// Most items in one album (MULTI_MEDIA_TOO_LONG past it).
    public static let maxAlbumItems = 10
    /// Most characters of a media caption (MEDIA_CAPTION_TOO_LONG past it).
    public static let maxCaptionLength = 1024

    /// Uploads `media` and sends it to `peer` with its caption, in one message; returns the message as Telegram
    /// stored it.
    ///
    /// - Parameters:
    ///   - media: The file, its kind and caption.
    ///   - peer: Where to send it: a peer the cache knows.
    ///   - options: Silent, reply, schedule.
    ///   - transfer: How the upload runs, with its progress callback; cancelling the task stops the upload and
    ///     sends nothing.
    /// - Throws: ``PeerCacheError/unknownPeer(_:)``, `FormattingError`, ``MediaError``, or `FileTransferError` for a
    ///   file that cannot be read (all before anything is sent); `CancellationError`; what `invoke` throws.
    public func sendMedia(_ media: MediaFile, to peer: PeerID, options: SendOptions = SendOptions(),
                          transfer: FileTransferOptions = FileTransferOptions()) async throws -> ChatMessage {
        let input = try await inputPeer(for: peer)
        let caption = try await self.caption(media, index: 0)
        try Self.checkReadable(media)
        let uploaded = try await uploadedMedia(media, transfer: transfer)
        let randomID = configuration.random.int64()
        let updates = try await invoke(Api.functions.messages.sendMedia(
            silent: options.silent, peer: input,
            replyTo: options.replyTo.map { .inputReplyToMessage(.init(replyToMsgId: $0)) }, media: uploaded,
            message: caption.text, randomId: randomID, entities: caption.entities.isEmpty ? nil : caption.entities,
            scheduleDate: options.scheduleDate))
        guard let sent = Self.messages(in: updates, randomIDs: [randomID]).first ?? nil else {
            throw MessageError.missingFromAnswer(chat: peer)
        }
        return sent
    }

    /// Uploads `items` and sends them to `peer` as one album (one grouped_id), each with its own caption; returns
    /// the album's messages in order.
    ///
    /// Photos and videos mix in an album; documents go only with documents and audio files only with audio files;
    /// voice notes go in none. The progress of `transfer` counts the bytes of every file together.
    /// - Throws: ``MediaError/albumSize(count:)`` unless there are 2 to 10 items, ``MediaError/mixedAlbum(index:kind:album:)``,
    ///   ``MediaError/notGroupable(index:)``, ``MediaError/captionTooLong(index:length:)``,
    ///   ``PeerCacheError/unknownPeer(_:)``, `FormattingError`, `FileTransferError` for a file that cannot be read
    ///   (all before anything is sent); `CancellationError`; ``MessageError/missingFromAnswer(chat:)``; what
    ///   `invoke` throws.
    public func sendAlbum(_ items: [MediaFile], to peer: PeerID, options: SendOptions = SendOptions(),
                          transfer: FileTransferOptions = FileTransferOptions()) async throws -> [ChatMessage] {
        guard (2...Self.maxAlbumItems).contains(items.count) else { throw MediaError.albumSize(count: items.count) }
        for (index, item) in items.enumerated() {
            guard let group = item.albumGroup else { throw MediaError.notGroupable(index: index) }
            if let first = items[0].albumGroup, group != first {
                throw MediaError.mixedAlbum(index: index, kind: group, album: first)
            }
        }
        let input = try await inputPeer(for: peer)
        var captions: [(text: String, entities: [Api.MessageEntity])] = []
        for (index, item) in items.enumerated() { captions.append(try await caption(item, index: index)) }
        for item in items { try Self.checkReadable(item) }

        let progress = AlbumProgress(sizes: items.map(\.source.knownSize), report: transfer.progress)
        var singles: [Api.InputSingleMedia] = []
        var randomIDs: [Int64] = []
        for (index, item) in items.enumerated() {
            var itemTransfer = transfer
            if transfer.progress != nil {
                itemTransfer.progress = { @Sendable [progress] report in progress.update(index, report) }
            }
            let uploaded = try await uploadedMedia(item, transfer: itemTransfer)
            let stored = try await invoke(Api.functions.messages.uploadMedia(peer: input, media: uploaded))
            guard let media = Self.inputMedia(stored, spoiler: item.spoiler) else {
                throw MediaError.unexpectedMedia(index: index)
            }
            let randomID = configuration.random.int64()
            randomIDs.append(randomID)
            singles.append(.inputSingleMedia(.init(media: media, randomId: randomID, message: captions[index].text,
                                                   entities: captions[index].entities.isEmpty ? nil
                                                       : captions[index].entities)))
        }
        try Task.checkCancellation()
        let updates = try await invoke(Api.functions.messages.sendMultiMedia(
            silent: options.silent, peer: input,
            replyTo: options.replyTo.map { .inputReplyToMessage(.init(replyToMsgId: $0)) }, multiMedia: singles,
            scheduleDate: options.scheduleDate))
        var sent: [ChatMessage] = []
        for case let message? in Self.messages(in: updates, randomIDs: randomIDs) { sent.append(message) }
        guard sent.count == items.count else { throw MessageError.missingFromAnswer(chat: peer) }
        return sent
    }

    // MARK: Pieces

    /// An item's caption read from its markup, mentions by id made input mentions, its length checked.
    private func caption(_ media: MediaFile, index: Int) async throws -> (text: String, entities: [Api.MessageEntity]) {
        guard let markup = media.caption else { return ("", []) }
        let formatted = try FormattedText(markup)
        guard formatted.text.count <= Self.maxCaptionLength else {
            throw MediaError.captionTooLong(index: index, length: formatted.text.count)
        }
        let entities = try await Self.inputEntities(formatted.entities) { [self] id in
            try? await inputUser(for: .user(id))
        }
        return (formatted.text, entities)
    }

    /// Opens each local file the item names (and its thumbnail's), so an unreadable or empty one is refused before
    /// any upload starts.
    static func checkReadable(_ media: MediaFile) throws(FileTransferError) {
        for source in [media.source] + (media.thumbnail.map { [$0] } ?? []) {
            switch source {
                case .path(let path):
                    let reader = try FileReader(path: path)
                    defer { reader.close() }
                    if reader.size == 0 { throw FileTransferError.emptyFile }
                case .bytes(let bytes, _):
                    if bytes.isEmpty { throw FileTransferError.emptyFile }
                case .stream:
                    continue
            }
        }
    }

    /// Uploads a source.
    private func upload(_ source: MediaSource, options: FileTransferOptions) async throws -> Api.InputFile {
        switch source {
            case .path(let path): try await upload(path: path, options: options)
            case .bytes(let bytes, let name): try await upload(bytes: bytes, name: name, options: options)
            case .stream(let chunks, let size, let name):
                try await upload(chunks: chunks, size: size, name: name, options: options)
        }
    }

    /// The item uploaded, as the input media its kind is sent as.
    private func uploadedMedia(_ media: MediaFile, transfer: FileTransferOptions) async throws -> Api.InputMedia {
        let attributes = try Self.attributes(media)
        let file = try await upload(media.source, options: transfer)
        // A stream ends early when its task is cancelled: what was read must not go out as the whole file.
        try Task.checkCancellation()
        if case .photo = media.kind {
            return .inputMediaUploadedPhoto(.init(spoiler: media.spoiler, file: file))
        }
        var thumbOptions = transfer
        thumbOptions.progress = nil
        var thumb: Api.InputFile?
        if let source = media.thumbnail { thumb = try await upload(source, options: thumbOptions) }
        return .inputMediaUploadedDocument(.init(spoiler: media.spoiler, file: file, thumb: thumb,
                                                 mimeType: media.resolvedMimeType, attributes: attributes))
    }

    /// The document attributes of an item: its file name and its kind's, given or read from the file.
    static func attributes(_ media: MediaFile) throws -> [Api.DocumentAttribute] {
        var attributes: [Api.DocumentAttribute] = []
        switch media.kind {
            case .photo, .document:
                break
            case .video(let given):
                let video = MediaInference.video(given, source: media.source)
                attributes.append(.documentAttributeVideo(.init(
                    roundMessage: video.round, supportsStreaming: video.supportsStreaming ?? false,
                    duration: video.duration ?? 0, w: Int32(clamping: video.width ?? 0),
                    h: Int32(clamping: video.height ?? 0))))
            case .audio(let given):
                attributes.append(.documentAttributeAudio(.init(duration: Int32(clamping: given.duration ?? 0),
                                                                title: given.title, performer: given.performer)))
            case .voice(let duration, let waveform):
                attributes.append(.documentAttributeAudio(.init(voice: true, duration: Int32(clamping: duration ?? 0),
                                                                waveform: waveform)))
        }
        let name = media.source.name
        if !name.isEmpty { attributes.append(.documentAttributeFilename(.init(fileName: name))) }
        return attributes
    }

    /// What `messages.uploadMedia` answered, as the input media `sendMultiMedia` takes.
    static func inputMedia(_ media: Api.MessageMedia, spoiler: Bool) -> Api.InputMedia? {
        switch media {
            case .messageMediaPhoto(let m):
                guard case .photo(let photo)? = m.photo else { return nil }
                return .inputMediaPhoto(.init(spoiler: spoiler, id: .inputPhoto(.init(
                    id: photo.id, accessHash: photo.accessHash, fileReference: photo.fileReference))))
            case .messageMediaDocument(let m):
                guard case .document(let document)? = m.document else { return nil }
                return .inputMediaDocument(.init(spoiler: spoiler, id: .inputDocument(.init(
                    id: document.id, accessHash: document.accessHash, fileReference: document.fileReference))))
            default:
                return nil
        }
    }
}

extension MediaSource {
    /// The size when it is known before reading.
    var knownSize: Int64? {
        switch self {
            case .path(let path): (try? FileReader(path: path)).map { reader in
                defer { reader.close() }
                return reader.size
            }
            case .bytes(let bytes, _): Int64(bytes.count)
            case .stream(_, let size, _): size
        }
    }
}

/// The progress of an album's uploads, summed over its files.
final class AlbumProgress: Sendable {
    private let done: Mutex<[Int: Int64]> = Mutex([:])
    let total: Int64?
    let report: (@Sendable (TransferProgress) -> Void)?

    init(sizes: [Int64?], report: (@Sendable (TransferProgress) -> Void)?) {
        total = sizes.contains { $0 == nil } ? nil : sizes.reduce(0) { $0 + ($1 ?? 0) }
        self.report = report
    }

    /// Item `index` has reached `progress`: reports the album's sum, under the lock so reports arrive in order.
    func update(_ index: Int, _ progress: TransferProgress) {
        done.withLock { done in
            done[index] = progress.bytesDone
            report?(TransferProgress(bytesDone: done.values.reduce(0, +), totalBytes: total))
        }
    }
}

/// Attributes the caller left out, read from the file where the SDK can.
enum MediaInference {
    /// A video's attributes: the given ones, the rest from its MP4 or MOV boxes.
    /// A file that cannot be read as MP4 or MOV leaves them as given (sent as 0, as Telegram's clients do).
    static func video(_ given: MediaFile.VideoAttributes, source: MediaSource) -> MediaFile.VideoAttributes {
        guard given.duration == nil || given.width == nil || given.height == nil || given.supportsStreaming == nil
        else { return given }
        let info: VideoInfo?
        switch source {
            case .path(let path): info = try? MediaInfo.video(atPath: path)
            case .bytes(let bytes, _): info = try? MediaInfo.video(in: bytes)
            case .stream: info = nil  // read once, by the upload
        }
        guard let info else { return given }
        var video = given
        video.duration = given.duration ?? info.duration
        video.width = given.width ?? info.width
        video.height = given.height ?? info.height
        video.supportsStreaming = given.supportsStreaming ?? info.supportsStreaming
        return video
    }
}
