// Downloading a message's media and a peer's profile photo (core.telegram.org/api/files#downloading-files). The
// location is read from the message: a photo's size by its type letter, a document or one of its thumbnails. A
// stripped thumbnail travels inside the message and is rebuilt into a JPEG here, and a cached size's bytes are
// there too: neither asks the network. A file reference that expires mid-way is renewed by fetching the message
// again (core.telegram.org/api/file_reference); the parts go on at their own offsets.
import TLRuntime
import TelegramApi
import TelegramMedia

/// Which size of a message's photo, or which of a document's thumbnails, to download.
///
/// Telegram keeps a photo in several sizes, each named by a type letter (core.telegram.org/api/files#image-thumbnail-types):
/// "s" (100 px), "m" (320), "x" (800), "y" (1280), "w" (2560), and "i" for the stripped thumbnail. For a
/// document, ``largest`` is the file itself and the other cases name its thumbnails.
public enum MediaSize: Sendable, Hashable, CustomStringConvertible {
    /// A photo's largest size; a document itself.
    case largest
    /// A photo's smallest downloadable size; a document's smallest thumbnail.
    case smallest
    /// The size of this type letter ("m", "x"…); "i" is the stripped thumbnail.
    case type(String)
    /// The stripped thumbnail (`photoStrippedSize`: a few hundred bytes inside the message) rebuilt into a JPEG
    /// locally; nothing is downloaded.
    case stripped

    /// The size as a user reads it: `largest`, `smallest`, `type "m"`, `stripped`.
    public var description: String {
        switch self {
            case .largest: "largest"
            case .smallest: "smallest"
            case .type(let type): "type \"\(type)\""
            case .stripped: "stripped"
        }
    }
}

/// Why a media download was refused or could not go on.
public enum MediaDownloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Message `message` of `chat` has no media.
    case noMedia(message: Int32, chat: PeerID)
    /// The message's media (`kind`: a location, a poll…) has no file to download.
    case notDownloadable(message: Int32, chat: PeerID, kind: String)
    /// The photo or document has no size `requested`; `available` lists the type letters it has (for a document,
    /// its thumbnails').
    case sizeNotFound(requested: MediaSize, available: [String])
    /// The stripped thumbnail's bytes are not one Telegram makes.
    case invalidStrippedThumbnail(StrippedThumbnailError)
    /// `peer` has no profile photo (or Telegram did not say which).
    case noProfilePhoto(PeerID)
    /// The file reference expired and the message fetched again was gone.
    case messageGone(message: Int32, chat: PeerID)
    /// The file reference expired and the message fetched again had other media (edited meanwhile).
    case mediaChanged(message: Int32, chat: PeerID)
    /// The file reference kept expiring: the message was fetched again `fetches` times
    /// (``FileTransferOptions/maxReferenceRenewals``).
    case referenceKeptExpiring(message: Int32, chat: PeerID, fetches: Int)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
            case .noMedia(let id, let chat): "message \(id) of \(chat) has no media"
            case .notDownloadable(let id, let chat, let kind): "message \(id) of \(chat) has \(kind), not a file"
            case .sizeNotFound(let requested, let available):
                "no \(requested) size (the media has \(available.isEmpty ? "none" : available.joined(separator: ", ")))"
            case .invalidStrippedThumbnail(let error): "the stripped thumbnail cannot be read: \(error)"
            case .noProfilePhoto(let peer): "\(peer) has no profile photo"
            case .messageGone(let id, let chat): "message \(id) of \(chat) is gone: no fresh file reference"
            case .mediaChanged(let id, let chat): "message \(id) of \(chat) has other media now"
            case .referenceKeptExpiring(let id, let chat, let fetches):
                "the file reference of message \(id) of \(chat) expired again after \(fetches) fetches"
        }
    }
}

extension TelegramClient {
    /// The bytes of `message`'s photo or document in the size `size`, as they arrive (see `FileDownload`).
    ///
    /// When a part is answered `FILE_REFERENCE_EXPIRED`, the message is fetched again
    /// (``messages(_:in:)``) for a fresh reference and the parts go on at their offsets: nothing done is asked again.
    /// A stripped thumbnail is made into a JPEG here and a cached size is in the message: neither asks anything.
    /// - Throws: ``MediaDownloadError`` for a message without such media or size, and
    ///   ``PeerCacheError/unknownPeer(_:)`` for a chat the cache does not know (nothing is sent); while reading,
    ///   what `FileDownload` throws and ``MediaDownloadError/messageGone(message:chat:)``,
    ///   ``MediaDownloadError/mediaChanged(message:chat:)`` or
    ///   ``MediaDownloadError/referenceKeptExpiring(message:chat:fetches:)``.
    public func downloadMedia(of message: ChatMessage, size: MediaSize = .largest,
                              options: FileTransferOptions = FileTransferOptions()) async throws -> FileDownload {
        let chosen = try Self.mediaFile(of: message, size: size)
        _ = try await inputPeer(for: message.chat)  // the refetch needs it: refused now rather than mid-way
        var download = FileDownload(client: self, location: chosen.location, dc: chosen.dc, size: chosen.size,
                                    options: options)
        download.inline = chosen.inline
        if chosen.inline == nil {
            let (id, chat, exact) = (message.id, message.chat, chosen.exact)
            download.renewal = FileReferenceRenewal(
                chosen.location, limit: max(0, options.maxReferenceRenewals),
                exhausted: MediaDownloadError.referenceKeptExpiring(message: id, chat: chat,
                                                                    fetches: max(0, options.maxReferenceRenewals))
            ) { [self] in
                guard let fresh = try await self.message(id, in: chat) else {
                    throw MediaDownloadError.messageGone(message: id, chat: chat)
                }
                let again = try Self.mediaFile(of: fresh, size: exact)
                guard again.fileID == chosen.fileID else { throw MediaDownloadError.mediaChanged(message: id, chat: chat) }
                return again.location
            }
        }
        return download
    }

    /// Downloads `message`'s photo or document in the size `size` into a file at `path` (created or truncated);
    /// returns its size. What ``downloadMedia(of:size:options:)`` does, to a file.
    /// - Throws: what ``downloadMedia(of:size:options:)`` throws, and `FileTransferError.io` for the file.
    @discardableResult
    public func downloadMedia(of message: ChatMessage, size: MediaSize = .largest, to path: String,
                              options: FileTransferOptions = FileTransferOptions()) async throws -> Int64 {
        try await write(downloadMedia(of: message, size: size, options: options), to: path)
    }

    /// The bytes of `peer`'s profile photo as they arrive: its large size (640 px) when `big`, else its small one
    /// (160 px). The photo is the one Telegram names now (`users.getUsers`, `channels.getChannels` or
    /// `messages.getChats`).
    /// - Throws: ``PeerCacheError/unknownPeer(_:)`` (nothing is sent), ``MediaDownloadError/noProfilePhoto(_:)``,
    ///   what `invoke` throws; while reading, what `FileDownload` throws.
    public func downloadProfilePhoto(of peer: PeerID, big: Bool = true,
                                     options: FileTransferOptions = FileTransferOptions()) async throws -> FileDownload {
        let input = try await inputPeer(for: peer)
        var photo: (id: Int64, dc: Int32)?
        switch peer.kind {
            case .user:
                let users = try await invoke(Api.functions.users.getUsers(id: [try await inputUser(for: peer)]))
                if case .user(let user)? = users.first, case .userProfilePhoto(let p)? = user.photo {
                    photo = (p.photoId, p.dcId)
                }
            case .channel:
                let chats = try await invoke(Api.functions.channels.getChannels(id: [try await inputChannel(for: peer)]))
                photo = Self.chatPhoto(chats, id: peer.id)
            case .chat:
                photo = Self.chatPhoto(try await invoke(Api.functions.messages.getChats(id: [peer.id])), id: peer.id)
        }
        guard let photo else { throw MediaDownloadError.noProfilePhoto(peer) }
        return download(.inputPeerPhotoFileLocation(.init(big: big, peer: input, photoId: photo.id)), dc: photo.dc,
                        options: options)
    }

    /// Downloads `peer`'s profile photo into a file at `path` (created or truncated); returns its size.
    /// - Throws: what ``downloadProfilePhoto(of:big:options:)`` throws, and `FileTransferError.io` for the file.
    @discardableResult
    public func downloadProfilePhoto(of peer: PeerID, big: Bool = true, to path: String,
                                     options: FileTransferOptions = FileTransferOptions()) async throws -> Int64 {
        try await write(downloadProfilePhoto(of: peer, big: big, options: options), to: path)
    }

    // MARK: Choosing the file

    /// A file chosen in a message's media: where it is, its size, or its bytes when the message carries them.
    struct ChosenFile: Sendable {
        let location: Api.InputFileLocation
        let dc: Int32
        let size: Int64?
        let inline: [UInt8]?
        /// The photo's or document's id, which a message fetched again must still have.
        let fileID: Int64
        /// The size chosen, by type ("" for a document itself), to choose the same again.
        let exact: MediaSize
    }

    /// The file of `message`'s media in the size `size`.
    static func mediaFile(of message: ChatMessage, size: MediaSize) throws(MediaDownloadError) -> ChosenFile {
        switch message.media {
            case nil:
                throw MediaDownloadError.noMedia(message: message.id, chat: message.chat)
            case .messageMediaPhoto(let media)?:
                guard case .photo(let photo)? = media.photo else {
                    throw MediaDownloadError.notDownloadable(message: message.id, chat: message.chat,
                                                             kind: "an expired photo")
                }
                let chosen = try choose(size, among: photo.sizes)
                return ChosenFile(location: .inputPhotoFileLocation(.init(
                    id: photo.id, accessHash: photo.accessHash, fileReference: photo.fileReference,
                    thumbSize: chosen.type)), dc: photo.dcId, size: chosen.bytes, inline: chosen.inline,
                                  fileID: photo.id, exact: .type(chosen.type))
            case .messageMediaDocument(let media)?:
                guard case .document(let document)? = media.document else {
                    throw MediaDownloadError.notDownloadable(message: message.id, chat: message.chat,
                                                             kind: "an expired document")
                }
                var chosen: PhotoSizeChoice?
                if size != .largest, size != .type("") { chosen = try choose(size, among: document.thumbs ?? []) }
                return ChosenFile(location: .inputDocumentFileLocation(.init(
                    id: document.id, accessHash: document.accessHash, fileReference: document.fileReference,
                    thumbSize: chosen?.type ?? "")), dc: document.dcId, size: chosen.map(\.bytes) ?? document.size,
                                  inline: chosen?.inline, fileID: document.id, exact: .type(chosen?.type ?? ""))
            case let other?:
                throw MediaDownloadError.notDownloadable(message: message.id, chat: message.chat,
                                                         kind: Self.mediaKind(other))
        }
    }

    /// A photo size picked from a photo's or a document's sizes.
    struct PhotoSizeChoice: Sendable {
        let type: String
        /// Its byte count, when the size says.
        let bytes: Int64?
        /// Its bytes when the message carries them (a stripped thumbnail as a JPEG, a cached size).
        let inline: [UInt8]?
    }

    /// Picks `size` among `sizes` by byte count (as Telegram's clients order them); a path size (an SVG outline) and
    /// an empty size are not files.
    static func choose(_ size: MediaSize, among sizes: [Api.PhotoSize]) throws(MediaDownloadError) -> PhotoSizeChoice {
        var files: [(type: String, bytes: Int64, inline: [UInt8]?)] = []
        var stripped: (type: String, bytes: [UInt8])?
        for photoSize in sizes {
            switch photoSize {
                case .photoSize(let s): files.append((s.type, Int64(s.size), nil))
                case .photoSizeProgressive(let s): files.append((s.type, Int64(s.sizes.max() ?? 0), nil))
                case .photoCachedSize(let s): files.append((s.type, Int64(s.bytes.count), s.bytes))
                case .photoStrippedSize(let s): stripped = (s.type, s.bytes)
                case .photoSizeEmpty, .photoPathSize: continue
            }
        }
        let available = files.map(\.type) + (stripped.map { [$0.type] } ?? [])
        let picked: (type: String, bytes: Int64, inline: [UInt8]?)?
        switch size {
            case .largest: picked = files.max { $0.bytes < $1.bytes }
            case .smallest: picked = files.min { $0.bytes < $1.bytes }
            case .type(let type) where type == stripped?.type: return try strippedChoice(stripped, available)
            case .type(let type): picked = files.first { $0.type == type }
            case .stripped: return try strippedChoice(stripped, available)
        }
        guard let picked else { throw MediaDownloadError.sizeNotFound(requested: size, available: available) }
        return PhotoSizeChoice(type: picked.type, bytes: picked.bytes, inline: picked.inline)
    }

    /// The stripped thumbnail rebuilt into a JPEG.
    private static func strippedChoice(_ stripped: (type: String, bytes: [UInt8])?,
                                       _ available: [String]) throws(MediaDownloadError) -> PhotoSizeChoice {
        guard let stripped else { throw MediaDownloadError.sizeNotFound(requested: .stripped, available: available) }
        do {
            let jpeg = try StrippedThumbnail.jpeg(from: stripped.bytes)
            return PhotoSizeChoice(type: stripped.type, bytes: Int64(jpeg.count), inline: jpeg)
        } catch {
            throw MediaDownloadError.invalidStrippedThumbnail(error)
        }
    }

    /// The photo id and DC of chat `id` among `chats`.
    private static func chatPhoto(_ chats: Api.messages.Chats, id: Int64) -> (id: Int64, dc: Int32)? {
        let list: [Api.Chat]
        switch chats {
            case .chats(let c): list = c.chats
            case .chatsSlice(let c): list = c.chats
        }
        for chat in list {
            switch chat {
                case .chat(let c) where c.id == id:
                    if case .chatPhoto(let p) = c.photo { return (p.photoId, p.dcId) }
                case .channel(let c) where c.id == id:
                    if case .chatPhoto(let p) = c.photo { return (p.photoId, p.dcId) }
                default: continue
            }
        }
        return nil
    }

    /// What media without a file is, for an error: "a location", "a poll"…
    private static func mediaKind(_ media: Api.MessageMedia) -> String {
        switch media {
            case .messageMediaGeo, .messageMediaGeoLive, .messageMediaVenue: "a location"
            case .messageMediaContact: "a contact"
            case .messageMediaPoll: "a poll"
            case .messageMediaWebPage: "a web page preview"
            case .messageMediaDice: "a dice"
            case .messageMediaGame: "a game"
            case .messageMediaInvoice: "an invoice"
            case .messageMediaStory: "a story"
            case .messageMediaUnsupported: "media this layer does not know"
            default: "media without a file"
        }
    }
}
