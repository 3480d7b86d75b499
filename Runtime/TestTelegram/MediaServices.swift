// Media as Telegram keeps it (core.telegram.org/api/files, /api/files#albums-grouped-media): an uploaded file becomes
// a photo or a document on the DC it was uploaded to, with an id, an access hash and a file reference, through
// `messages.sendMedia` or first through `messages.uploadMedia` (which an album's items need: `sendMultiMedia` takes
// only media already stored). A photo keeps the uploaded bytes as its largest size, so its download is byte for byte
// what was sent (this server does not resize images), beside the small and stripped sizes a test gives it; a
// document keeps its attributes and the thumbnail its sender uploaded. `photos.uploadProfilePhoto` makes a photo
// the caller's profile photo. `sendMultiMedia` sends 1 to 10 items as one album: one grouped_id, each item's caption
// and entities, an `updateMessageID` for each random_id, all in one `updates` for each party (in a channel, for each
// member).
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer
import TelegramMedia

/// A photo stored on a DC.
struct StoredPhoto {
    let id: Int64
    let accessHash: Int64
    var fileReference: [UInt8]
    let dcID: Int32
    let date: Int32
    /// The uploaded image, kept whole as the photo's largest size.
    let full: StoredPhotoSize
    /// Smaller sizes given with `TestTelegramService.addSize(toPhoto:type:bytes:)`, at most `maxSmallSizes`; type
    /// "i" is a stripped size, whose bytes travel inside the photo (core.telegram.org/api/files#stripped-thumbnails).
    var smallSizes: [StoredPhotoSize] = []
    /// Bytes served since the file reference was made (`FaultPlan.expireFileReferenceEvery`).
    var servedSinceReference: Int64 = 0

    static let maxSmallSizes = 4

    /// The size `upload.getFile` serves for `type`: the full one for its type or "", a small one by its type (a
    /// stripped size is never served: it has no file).
    func size(_ type: String) -> StoredPhotoSize? {
        if type.isEmpty || type == full.type { return full }
        return smallSizes.first { $0.type == type && $0.type != StoredPhotoSize.stripped }
    }
}

/// One size of a photo, or a document's thumbnail: its type letter (core.telegram.org/api/files#image-thumbnail-types),
/// dimensions when known (0 otherwise) and bytes.
struct StoredPhotoSize {
    let type: String
    let width: Int32
    let height: Int32
    let bytes: [UInt8]

    /// The type letter of a stripped size.
    static let stripped = "i"

    var api: Api.PhotoSize {
        type == Self.stripped ? .photoStrippedSize(.init(type: type, bytes: bytes))
            : .photoSize(.init(type: type, w: width, h: height, size: Int32(clamping: bytes.count)))
    }

    /// The type letter Telegram gives a size whose longer side is `side` pixels: s 100, m 320, x 800, y 1280, w 2560.
    static func type(longerSide side: Int32) -> String {
        switch side {
            case ...100: "s"
            case ...320: "m"
            case ...800: "x"
            case ...1280: "y"
            default: "w"
        }
    }
}

extension StoredPhoto {
    /// The photo as a user's profile photo, with its stripped size when it has one.
    var profilePhoto: Api.UserProfilePhoto {
        .userProfilePhoto(.init(photoId: id, strippedThumb: smallSizes.first { $0.type == StoredPhotoSize.stripped }?.bytes,
                                dcId: dcID))
    }

    var api: Api.Photo {
        .photo(.init(id: id, accessHash: accessHash, fileReference: fileReference, date: date,
                     sizes: smallSizes.map(\.api) + [full.api], dcId: dcID))
    }
}

extension TestTelegramService {
    /// Most items of one album (MULTI_MEDIA_TOO_LONG past it) and characters of a caption (MEDIA_CAPTION_TOO_LONG).
    static let maxAlbumItems = 10
    static let maxCaptionLength = 1024

    func registerMedia(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.messages.SendMedia.self) { [self] call, request throws(RPCError) in
            let text = request.message
            guard text.count <= Self.maxCaptionLength else { throw RPCError(code: 400, message: "MEDIA_CAPTION_TOO_LONG") }
            let entities = try Self.entities(request.entities, text: text)
            try checkPeer(call, request.peer)
            let media = try storeMedia(request.media, call)
            var content = OutgoingContent(text: text, media: media, entities: entities,
                                          replyTo: Self.replyID(request.replyTo), silent: request.silent)
            content.replyMarkup = try keptMarkup(request.replyMarkup, from: try caller(call))
            return try send(call, peer: request.peer, randomID: request.randomId, content: content,
                            scheduleDate: request.scheduleDate)
        }
        handlers.on(Api.functions.messages.UploadMedia.self) { [self] call, request throws(RPCError) in
            try checkPeer(call, request.peer)
            return try storeMedia(request.media, call)
        }
        handlers.on(Api.functions.messages.SendMultiMedia.self) { [self] call, request throws(RPCError) in
            try sendAlbum(call, request)
        }
        handlers.on(Api.functions.photos.UploadProfilePhoto.self) { [self] call, request throws(RPCError) in
            try uploadProfilePhoto(call, request)
        }
    }

    /// Refuses a peer the caller cannot name, before any upload is turned into media.
    private func checkPeer(_ call: RPCCall, _ peer: Api.InputPeer) throws(RPCError) {
        let me = try caller(call)
        if case .inputPeerChannel = peer { return }  // the channel's own checks come with the send
        let known = state.withLock { $0.resolve(peer, me: me) != nil }
        guard known else { throw RPCError(code: 400, message: "PEER_ID_INVALID") }
    }

    /// `messages.sendMultiMedia` (core.telegram.org/method/messages.sendMultiMedia): every item media already stored
    /// (`inputMediaPhoto` or `inputMediaDocument`, as `uploadMedia` answers), each with its own random_id, caption
    /// and entities; the album's messages share one new grouped_id.
    private func sendAlbum(_ call: RPCCall, _ request: Api.functions.messages.SendMultiMedia)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let items = request.multiMedia
        guard !items.isEmpty else { throw RPCError(code: 400, message: "MEDIA_EMPTY") }
        guard items.count <= Self.maxAlbumItems else { throw RPCError(code: 400, message: "MULTI_MEDIA_TOO_LONG") }
        try checkPeer(call, request.peer)
        let groupedID = random.int64()
        let replyTo = Self.replyID(request.replyTo)
        var contents: [(randomID: Int64, content: OutgoingContent)] = []
        for case .inputSingleMedia(let item) in items {
            guard item.randomId != 0 else { throw RPCError(code: 400, message: "RANDOM_ID_EMPTY") }
            guard item.message.count <= Self.maxCaptionLength else {
                throw RPCError(code: 400, message: "MEDIA_CAPTION_TOO_LONG")
            }
            let entities = try Self.entities(item.entities, text: item.message)
            switch item.media {
                case .inputMediaPhoto, .inputMediaDocument: break
                case .inputMediaEmpty: throw RPCError(code: 400, message: "MEDIA_EMPTY")
                default: throw RPCError(code: 400, message: "MEDIA_INVALID")  // uploaded files go through uploadMedia
            }
            let media = try storeMedia(item.media, call)
            contents.append((item.randomId, OutgoingContent(text: item.message, media: media, entities: entities,
                                                            replyTo: replyTo, silent: request.silent,
                                                            groupedID: groupedID)))
        }
        if case .inputPeerChannel(let channel) = request.peer {
            // Posted one by one, but each member gets the album in one container, as Telegram sends it (clients
            // group an album by what arrives together); the sender's answer carries every post.
            var updates: [Api.Update] = [], users: [Api.User] = [], chats: [Api.Chat] = []
            var byMember: [Int64: (updates: [Api.Update], users: [Api.User], chats: [Api.Chat])] = [:]
            var order: [Int64] = []
            let date = Self.date(call)
            func pushCollected() {
                push(order.compactMap { member in
                    byMember[member].map { (member, Api.Updates.updates(.init(updates: $0.updates, users: $0.users,
                                                                               chats: $0.chats, date: date, seq: 0))) }
                }, except: call)
            }
            for item in contents {
                let answer: Api.Updates, deliveries: [Delivery]
                do {
                    (answer, deliveries) = try postToChannel(call, me: me, channel: channel.channelId,
                                                             accessHash: channel.accessHash, randomID: item.randomID,
                                                             content: item.content)
                } catch {
                    pushCollected()  // the posts made before the refusal stand, and reach the members
                    throw error
                }
                for (member, delivered) in deliveries {
                    guard case .updates(let sent) = delivered else { continue }
                    if byMember[member] == nil { order.append(member) }
                    byMember[member, default: ([], [], [])].updates += sent.updates
                    byMember[member]?.users = sent.users
                    byMember[member]?.chats = sent.chats
                }
                guard case .updates(let sent) = answer else { continue }
                updates += sent.updates
                (users, chats) = (sent.users, sent.chats)
            }
            pushCollected()
            let ids = updates.filter { if case .updateMessageID = $0 { true } else { false } }
            return .updates(.init(updates: ids + updates.filter { if case .updateMessageID = $0 { false } else { true } },
                                  users: users, chats: chats, date: date, seq: 0))
        }
        return try sendPrivate(call, me: me, peer: request.peer, items: contents)
    }

    /// `photos.uploadProfilePhoto` (core.telegram.org/method/photos.uploadProfilePhoto): the uploaded image becomes
    /// the caller's profile photo, served by `upload.getFile` at `inputPeerPhotoFileLocation`. Videos, fallback
    /// photos and bots' photos are not kept.
    private func uploadProfilePhoto(_ call: RPCCall, _ request: Api.functions.photos.UploadProfilePhoto)
        throws(RPCError) -> Api.photos.Photo {
        let me = try caller(call)
        guard request.bot == nil, request.video == nil, !request.fallback else {
            throw RPCError(code: 400, message: "PHOTO_INVALID")
        }
        guard let file = request.file else { throw RPCError(code: 400, message: "PHOTO_FILE_MISSING") }
        let photo = try storePhoto(file, call)
        return state.withLock { state in
            state.accounts[me]?.profilePhoto = photo.id
            return .photo(.init(photo: photo.api, users: [state.user(me, viewer: me)]))
        }
    }

    /// The message media an input media stands for: an upload made into a new photo or document, or one already
    /// stored named by id, access hash and file reference.
    func storeMedia(_ media: Api.InputMedia, _ call: RPCCall) throws(RPCError) -> Api.MessageMedia {
        switch media {
            case .inputMediaEmpty:
                throw RPCError(code: 400, message: "MEDIA_EMPTY")
            case .inputMediaUploadedPhoto(let uploaded):
                return .messageMediaPhoto(.init(spoiler: uploaded.spoiler, photo: try storePhoto(uploaded.file, call).api,
                                                ttlSeconds: uploaded.ttlSeconds))
            case .inputMediaUploadedDocument(let uploaded):
                return Self.documentMedia(try storeDocument(from: media, call), attributes: uploaded.attributes,
                                          spoiler: uploaded.spoiler, forceFile: uploaded.forceFile,
                                          ttlSeconds: uploaded.ttlSeconds)
            case .inputMediaPhoto(let input):
                guard case .inputPhoto(let named) = input.id else { throw RPCError(code: 400, message: "MEDIA_EMPTY") }
                let photo = try state.withLock { state throws(RPCError) in
                    try Self.current(state.photos, id: named.id, accessHash: named.accessHash,
                                     fileReference: named.fileReference, unknown: "MEDIA_INVALID")
                }
                return .messageMediaPhoto(.init(spoiler: input.spoiler, photo: photo.api, ttlSeconds: input.ttlSeconds))
            case .inputMediaDocument(let input):
                guard case .inputDocument(let named) = input.id else { throw RPCError(code: 400, message: "MEDIA_EMPTY") }
                let document = try state.withLock { state throws(RPCError) in
                    try Self.current(state.documents, id: named.id, accessHash: named.accessHash,
                                     fileReference: named.fileReference, unknown: "MEDIA_INVALID")
                }
                return Self.documentMedia(document.api, attributes: document.attributes, spoiler: input.spoiler,
                                          forceFile: false, ttlSeconds: input.ttlSeconds)
            default:
                throw RPCError(code: 400, message: "MEDIA_INVALID")
        }
    }

    /// A document's message media, flagged the way Telegram flags it from the attributes: a video (unless sent as
    /// a file), a round video, a voice note.
    static func documentMedia(_ document: Api.Document, attributes: [Api.DocumentAttribute], spoiler: Bool,
                              forceFile: Bool, ttlSeconds: Int32?) -> Api.MessageMedia {
        var video = false, round = false, voice = false
        for attribute in attributes {
            switch attribute {
                case .documentAttributeVideo(let v): (video, round) = (!forceFile, v.roundMessage)
                case .documentAttributeAudio(let a): voice = a.voice
                default: continue
            }
        }
        return .messageMediaDocument(.init(spoiler: spoiler, video: video, round: round, voice: voice,
                                           document: document, ttlSeconds: ttlSeconds))
    }

    /// Turns an uploaded file into a photo on this DC (its parts are consumed).
    private func storePhoto(_ file: Api.InputFile, _ call: RPCCall) throws(RPCError) -> StoredPhoto {
        let me = try caller(call)
        let id = random.int64(), accessHash = random.int64()
        let reference = random.bytes(16)
        let limits = limits
        return try state.withLock { state throws(RPCError) -> StoredPhoto in
            guard let account = state.accounts[me] else { throw RPCError(code: 400, message: "FILE_PARTS_INVALID") }
            let bytes = try account.assembleUpload(file, dcID: call.endpoint.dcID)
            guard state.documentBytes + bytes.count <= limits.maxStoredFileBytes else {
                throw RPCError(code: 400, message: "FILE_STORAGE_FULL")
            }
            state.accounts[me]?.dropUpload(file.id)
            let size = Self.imageSize(bytes)
            let photo = StoredPhoto(id: id, accessHash: accessHash, fileReference: reference, dcID: call.endpoint.dcID,
                                    date: Self.date(call),
                                    full: StoredPhotoSize(type: StoredPhotoSize.type(longerSide: max(size.width, size.height)),
                                                          width: size.width, height: size.height, bytes: bytes))
            state.photos[id] = photo
            state.documentBytes += bytes.count
            return photo
        }
    }

    /// A document's thumbnail from its uploaded file (its parts are consumed); size type "m" unless its dimensions
    /// say otherwise.
    func storeThumbnail(_ file: Api.InputFile, me: Int64, dcID: Int32, in state: inout ServiceState)
        throws(RPCError) -> StoredPhotoSize {
        guard let account = state.accounts[me] else { throw RPCError(code: 400, message: "FILE_PARTS_INVALID") }
        let bytes = try account.assembleUpload(file, dcID: dcID)
        state.accounts[me]?.dropUpload(file.id)
        let size = Self.imageSize(bytes)
        let side = max(size.width, size.height)
        return StoredPhotoSize(type: side == 0 ? "m" : StoredPhotoSize.type(longerSide: side), width: size.width,
                               height: size.height, bytes: bytes)
    }

    /// An image's width and height from its header; zeros when it cannot be read (the server does not refuse an
    /// image it cannot measure).
    static func imageSize(_ bytes: [UInt8]) -> (width: Int32, height: Int32) {
        guard let image = try? MediaInfo.image(in: bytes) else { return (0, 0) }
        return (Int32(clamping: image.width), Int32(clamping: image.height))
    }

    /// A stored photo or document named by id and access hash, or 400 `unknown`.
    static func stored<File: StoredFile>(_ files: [Int64: File], id: Int64, accessHash: Int64,
                                         unknown: String) throws(RPCError) -> File {
        guard let file = files[id], file.accessHash == accessHash else { throw RPCError(code: 400, message: unknown) }
        return file
    }

    /// `stored` with its current file reference: FILE_REFERENCE_EXPIRED for an old one
    /// (core.telegram.org/api/file_reference).
    static func current<File: StoredFile>(_ files: [Int64: File], id: Int64, accessHash: Int64,
                                          fileReference: [UInt8], unknown: String) throws(RPCError) -> File {
        let file = try stored(files, id: id, accessHash: accessHash, unknown: unknown)
        guard file.fileReference == fileReference else { throw RPCError(code: 400, message: "FILE_REFERENCE_EXPIRED") }
        return file
    }

    /// The bytes `upload.getFile` serves for a photo's size `type` ("" names the largest).
    func photoFile(_ input: Api.InputFileLocation.Cons_inputPhotoFileLocation, in state: ServiceState)
        throws(RPCError) -> (bytes: [UInt8], dcID: Int32, date: Int32, referenceValid: Bool) {
        let photo = try Self.stored(state.photos, id: input.id, accessHash: input.accessHash, unknown: "FILE_ID_INVALID")
        guard let size = photo.size(input.thumbSize) else { throw RPCError(code: 400, message: "LOCATION_INVALID") }
        return (size.bytes, photo.dcID, photo.date, photo.fileReference == input.fileReference)
    }

    /// The bytes `upload.getFile` serves for a user's profile photo: its largest size for `big`, else its smallest
    /// downloadable one. The user must be one the caller can name, and `photo_id` its current photo.
    func profilePhotoFile(_ input: Api.InputFileLocation.Cons_inputPeerPhotoFileLocation, me: Int64,
                          in state: ServiceState) throws(RPCError) -> (bytes: [UInt8], dcID: Int32, date: Int32) {
        guard let user = state.resolve(input.peer, me: me) else { throw RPCError(code: 400, message: "PEER_ID_INVALID") }
        guard let id = state.accounts[user]?.profilePhoto, id == input.photoId, let photo = state.photos[id] else {
            throw RPCError(code: 400, message: "LOCATION_INVALID")
        }
        let downloadable = photo.smallSizes.filter { $0.type != StoredPhotoSize.stripped }
        let size = input.big ? photo.full : (downloadable + [photo.full]).min { $0.bytes.count < $1.bytes.count } ?? photo.full
        return (size.bytes, photo.dcID, photo.date)
    }

    /// Gives photo `id` a smaller size beside its full one, as Telegram makes when it stores a photo: type "s" or
    /// "m" (a JPEG, measured from its header) is downloadable, "i" is a stripped size (the bytes of
    /// `photoStrippedSize`, which travel inside the photo). A type the photo has already is replaced. False when the
    /// photo is unknown, the type is its full size's, it has `StoredPhoto.maxSmallSizes` already, or the bytes do not
    /// fit the storage bound.
    @discardableResult
    public func addSize(toPhoto id: Int64, type: String, bytes: [UInt8]) -> Bool {
        let size = Self.imageSize(bytes)
        let limits = limits
        return state.withLock { state in
            guard var photo = state.photos[id], !type.isEmpty, type != photo.full.type, !bytes.isEmpty,
                  state.documentBytes + bytes.count <= limits.maxStoredFileBytes else { return false }
            if let old = photo.smallSizes.firstIndex(where: { $0.type == type }) {
                state.documentBytes -= photo.smallSizes.remove(at: old).bytes.count
            }
            guard photo.smallSizes.count < StoredPhoto.maxSmallSizes else { return false }
            photo.smallSizes.append(StoredPhotoSize(type: type, width: size.width, height: size.height, bytes: bytes))
            state.documentBytes += bytes.count
            state.photos[id] = photo
            return true
        }
    }
}

/// What `TestTelegramService.current` checks of a stored photo or document, and what its downloads renew.
protocol StoredFile {
    var accessHash: Int64 { get }
    var fileReference: [UInt8] { get set }
    var servedSinceReference: Int64 { get set }
}

extension StoredFile {
    /// Counts `bytes` served with the current reference; once `every` bytes were, `fresh` replaces it.
    mutating func served(_ bytes: Int, every: Int64, fresh: [UInt8]) {
        servedSinceReference += Int64(bytes)
        guard servedSinceReference >= every else { return }
        servedSinceReference = 0
        fileReference = fresh
    }
}

extension StoredPhoto: StoredFile {}
extension StoredDocument: StoredFile {}

extension ServiceState {
    /// A message's media with its photo or document as stored now (its current file reference and sizes), as
    /// `messages.getMessages` and `messages.getHistory` answer it: a client fetches a message again for a fresh
    /// reference.
    func current(_ media: Api.MessageMedia?) -> Api.MessageMedia? {
        switch media {
            case .messageMediaPhoto(let m)?:
                guard case .photo(let photo)? = m.photo, let stored = photos[photo.id] else { return media }
                return .messageMediaPhoto(.init(spoiler: m.spoiler, photo: stored.api, ttlSeconds: m.ttlSeconds))
            case .messageMediaDocument(let m)?:
                guard case .document(let document)? = m.document, let stored = documents[document.id] else {
                    return media
                }
                return .messageMediaDocument(.init(spoiler: m.spoiler, video: m.video, round: m.round, voice: m.voice,
                                                   document: stored.api, ttlSeconds: m.ttlSeconds))
            default:
                return media
        }
    }
}

extension Api.InputFile {
    /// The client's id for the upload.
    var id: Int64 {
        switch self {
            case .inputFile(let file): file.id
            case .inputFileBig(let file): file.id
            case .inputFileStoryDocument: 0
        }
    }
}

extension Account {
    /// The bytes of a finished upload named by an `InputFile`.
    func assembleUpload(_ file: Api.InputFile, dcID: Int32) throws(RPCError) -> [UInt8] {
        switch file {
            case .inputFile(let small):
                return try assembleUpload(small.id, parts: small.parts, big: false, md5: small.md5Checksum, dcID: dcID)
            case .inputFileBig(let big):
                return try assembleUpload(big.id, parts: big.parts, big: true, md5: nil, dcID: dcID)
            default:
                throw RPCError(code: 400, message: "MEDIA_INVALID")
        }
    }
}
