// Media by kind and albums end to end on the test Telegram: Bob's client uploads and sends a photo, a video and an
// album, and Alice's client sees each as a typed event (a photo's bytes downloaded back identical, a video's
// attributes as sent, an album as one event with its captions' entities at their UTF-16 offsets); progress and
// cancellation; bad input refused with typed errors while the server receives no upload and no send; and the test
// Telegram's own refusals of `sendMultiMedia`, `sendMedia` and `uploadMedia`.
import Foundation
import MTProtoClient
import MTProtoServer
import Synchronization
import TelegramApi
import TelegramClient
import TelegramFormatting
import Testing

extension TypedEventLog {
    /// The first event `match` picks, waiting at most 60 s (a bound against a hang, not a timing).
    func firstWithin60s<T>(_ match: (UpdateEvent) -> T?) async throws -> T {
        for _ in 0..<6_000 {
            if let found = events.lazy.compactMap(match).first { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "no such event among \(events.count)")
    }
}

/// Bytes that stand for a file of `count` bytes; not an image (the test Telegram stores a photo's bytes as they are).
private func fileBytes(_ count: Int, seed: UInt8) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
}

extension EventPair {
    /// A photo of `bytes` Bob uploaded with `messages.uploadMedia` for Alice, as the input media that names it.
    func bobStoresPhoto(_ bytes: [UInt8]) async throws -> Api.InputMedia {
        let file = try await bob.upload(bytes: bytes, name: "p.jpg")
        let stored = try await bob.invoke(Api.functions.messages.uploadMedia(
            peer: toAlice, media: .inputMediaUploadedPhoto(.init(file: file))))
        guard case .messageMediaPhoto(let media) = stored, case .photo(let photo)? = media.photo else {
            throw HarnessFailure(description: "\(stored)")
        }
        return .inputMediaPhoto(.init(id: .inputPhoto(.init(
            id: photo.id, accessHash: photo.accessHash, fileReference: photo.fileReference))))
    }
}

@Suite struct MediaTests {
    /// The calls that would upload or send media.
    static let sendingMethods = ["messages.sendMedia", "messages.sendMultiMedia", "messages.uploadMedia",
                                 "upload.saveFilePart", "upload.saveBigFilePart"]

    @Test func aPhotoArrivesAsAPhotoWhoseDownloadIsTheBytesSent() async throws {
        let pair = try await EventPair.start(seed: 5201)
        let bytes = fileBytes(700 * 1024, seed: 1)  // two parts
        let progress = Mutex<[TransferProgress]>([])
        let sent = try await pair.bob.sendMedia(.photo(.bytes(bytes, name: "cat.jpg"), caption: .html("a <b>cat</b>")),
                                                to: pair.alicePeer,
                                                transfer: FileTransferOptions(progress: { p in
                                                    progress.withLock { $0.append(p) }
                                                }))
        #expect(sent.text == "a cat" && sent.isOutgoing)
        let reports = progress.withLock { $0 }
        #expect(reports.last == TransferProgress(bytesDone: Int64(bytes.count), totalBytes: Int64(bytes.count)))
        #expect(reports.map(\.bytesDone) == reports.map(\.bytesDone).sorted())

        let received = try await pair.log.firstWithin60s { event -> ChatMessage? in
            guard case .newMessage(let new) = event, !new.outgoing, let message = new.chatMessage,
                  message.text == "a cat" else { return nil }
            return message
        }
        guard case .messageMediaPhoto(let media)? = received.media, case .photo(let photo)? = media.photo,
              case .photoSize(let size)? = photo.sizes.last
        else { throw HarnessFailure(description: "\(String(describing: received.media))") }
        #expect(size.size == Int32(bytes.count))
        guard case .messageEntityBold(let bold)? = received.entities.first else {
            throw HarnessFailure(description: "\(received.entities)")
        }
        #expect((bold.offset, bold.length) == (2, 3))
        var downloaded: [UInt8] = []
        for try await chunk in pair.alice.download(.inputPhotoFileLocation(.init(
            id: photo.id, accessHash: photo.accessHash, fileReference: photo.fileReference, thumbSize: size.type)),
                                                   dc: photo.dcId, size: Int64(size.size)) {
            downloaded += chunk
        }
        #expect(downloaded == bytes)
        try await pair.close()
    }

    @Test func aVideoArrivesWithItsAttributesAndThumbnail() async throws {
        let pair = try await EventPair.start(seed: 5202)
        let thumb = fileBytes(2_000, seed: 7)
        let video = MediaFile.video(.bytes(fileBytes(40_000, seed: 2), name: "clip.mp4"), caption: .plain("clip"),
                                    attributes: .init(duration: 12.5, width: 640, height: 360, supportsStreaming: true),
                                    thumbnail: .bytes(thumb, name: "thumb.jpg"))
        _ = try await pair.bob.sendMedia(video, to: pair.alicePeer)
        let received = try await pair.log.firstWithin60s { event -> ChatMessage? in
            guard case .newMessage(let new) = event, !new.outgoing, let message = new.chatMessage,
                  message.text == "clip" else { return nil }
            return message
        }
        guard case .messageMediaDocument(let media)? = received.media, media.video,
              case .document(let document)? = media.document
        else { throw HarnessFailure(description: "\(String(describing: received.media))") }
        #expect(document.size == 40_000 && document.mimeType == "video/mp4")
        let attributes = document.attributes.compactMap { attribute -> Api.DocumentAttribute.Cons_documentAttributeVideo? in
            if case .documentAttributeVideo(let v) = attribute { return v }
            return nil
        }
        #expect(attributes.count == 1)
        #expect(attributes.first.map { ($0.duration, $0.w, $0.h, $0.supportsStreaming) } ?? (0, 0, 0, false)
                == (12.5, 640, 360, true))
        #expect(document.attributes.contains { attribute in
            if case .documentAttributeFilename(let name) = attribute { return name.fileName == "clip.mp4" }
            return false
        })
        guard case .photoSize(let size)? = document.thumbs?.first else {
            throw HarnessFailure(description: "no thumbnail: \(String(describing: document.thumbs))")
        }
        var downloaded: [UInt8] = []
        for try await chunk in pair.alice.download(.inputDocumentFileLocation(.init(
            id: document.id, accessHash: document.accessHash, fileReference: document.fileReference,
            thumbSize: size.type)), dc: document.dcId) {
            downloaded += chunk
        }
        #expect(downloaded == thumb)
        try await pair.close()
    }

    @Test func anAlbumArrivesAsOneEventWithItsCaptionsAtTheirUTF16Offsets() async throws {
        let pair = try await EventPair.start(seed: 5203)
        let items: [MediaFile] = [
            .photo(.bytes(fileBytes(3_000, seed: 3), name: "a.jpg"), caption: .html("🐈 <b>one</b>")),
            .photo(.bytes(fileBytes(4_000, seed: 4), name: "b.png"), caption: .html("👩‍👩‍👧 two <i>2</i>")),
            .video(.bytes(fileBytes(5_000, seed: 5), name: "c.mp4"), caption: .plain("three"),
                   attributes: .init(duration: 3, width: 320, height: 240, supportsStreaming: true)),
        ]
        let sent = try await pair.bob.sendAlbum(items, to: pair.alicePeer)
        #expect(sent.map(\.text) == ["🐈 one", "👩‍👩‍👧 two 2", "three"])
        let grouped = Set(sent.compactMap(\.groupedID))
        #expect(grouped.count == 1 && sent.allSatisfy { $0.groupedID != nil })

        let album = try await pair.log.firstWithin60s { event -> AlbumEvent? in
            guard case .album(let album) = event, !album.outgoing else { return nil }
            return album
        }
        #expect(album.messages.count == 3 && album.groupedID == grouped.first)
        #expect(try await pair.isBob(album.sender))
        let messages = album.chatMessages
        #expect(messages.map(\.text) == ["🐈 one", "👩‍👩‍👧 two 2", "three"])
        // 🐈 is two UTF-16 units, the family eight: the entities start after them.
        guard case .messageEntityBold(let bold)? = messages.first?.entities.first,
              case .messageEntityItalic(let italic)? = messages.dropFirst().first?.entities.first
        else { throw HarnessFailure(description: "\(messages.map(\.entities))") }
        #expect((bold.offset, bold.length) == (3, 3))
        #expect((italic.offset, italic.length) == (13, 1))
        #expect(messages.map { $0.media.map(Self.kind) } == ["photo", "photo", "video"])
        // No message of the album came as a new-message event of its own.
        let singles = await pair.log.events.filter { event in
            if case .newMessage(let new) = event, !new.outgoing { return true }
            return false
        }
        #expect(singles.isEmpty)
        try await pair.close()
    }

    @Test func attributesLeftOutAreReadFromTheFile() async throws {
        let pair = try await EventPair.start(seed: 5207)
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/media")
        _ = try await pair.bob.sendMedia(.video(.path(fixtures.appendingPathComponent("faststart.mp4").path),
                                                caption: .plain("read")), to: pair.alicePeer)
        let video = try await pair.log.firstWithin60s { event -> Api.DocumentAttribute.Cons_documentAttributeVideo? in
            guard case .newMessage(let new) = event, !new.outgoing, let message = new.chatMessage, message.text == "read",
                  case .messageMediaDocument(let media)? = message.media, case .document(let document)? = media.document
            else { return nil }
            for case .documentAttributeVideo(let v) in document.attributes { return v }
            return nil
        }
        #expect((video.w, video.h, video.supportsStreaming) == (640, 360, true))
        #expect(abs(video.duration - 5.005) < 0.001)
        // The test Telegram reads a photo's size from its header, and names the size by its longer side.
        let png = try [UInt8](Data(contentsOf: fixtures.appendingPathComponent("rgb.png")))
        let sent = try await pair.bob.sendMedia(.photo(.bytes(png, name: "rgb.png")), to: pair.alicePeer)
        guard case .messageMediaPhoto(let media)? = sent.media, case .photo(let photo)? = media.photo,
              case .photoSize(let size)? = photo.sizes.last
        else { throw HarnessFailure(description: "\(String(describing: sent.media))") }
        #expect((size.w, size.h, size.type) == (7, 5, "s"))
        try await pair.close()
    }

    @Test func aCancelledUploadSendsNothing() async throws {
        let counter = MethodCounter()
        let pair = try await EventPair.start(seed: 5204, onEvent: counter.record)
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        continuation.yield(fileBytes(1_200 * 1024, seed: 6))  // two parts go; the stream then waits
        let partSaved = AsyncStream<Void>.makeStream()
        let task = Task {
            try await pair.bob.sendMedia(.document(.stream(stream, size: 2 << 20, name: "big.bin")), to: pair.alicePeer,
                                         transfer: FileTransferOptions(progress: { _ in partSaved.continuation.yield() }))
        }
        var iterator = partSaved.stream.makeAsyncIterator()
        _ = await iterator.next()
        task.cancel()
        let outcome = await task.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        continuation.finish()
        #expect(counter.count("upload.saveFilePart") >= 1)
        #expect(counter.count("messages.sendMedia") == 0)
        try await pair.close()
    }

    @Test func badInputIsRefusedBeforeAnythingIsSent() async throws {
        let counter = MethodCounter()
        let pair = try await EventPair.start(seed: 5205, onEvent: counter.record)
        let photo = MediaFile.photo(.bytes(fileBytes(1_000, seed: 8), name: "p.jpg"))
        let stranger = PeerID.user(4_242_424)
        await #expect(throws: PeerCacheError.unknownPeer(stranger)) {
            _ = try await pair.bob.sendMedia(photo, to: stranger)
        }
        await #expect(throws: PeerCacheError.unknownPeer(stranger)) {
            _ = try await pair.bob.sendAlbum([photo, photo], to: stranger)
        }
        await #expect(throws: MediaError.albumSize(count: 11)) {
            _ = try await pair.bob.sendAlbum(Array(repeating: photo, count: 11), to: pair.alicePeer)
        }
        await #expect(throws: MediaError.albumSize(count: 1)) {
            _ = try await pair.bob.sendAlbum([photo], to: pair.alicePeer)
        }
        let missing = NSTemporaryDirectory() + "no-such-file-\(UUID().uuidString).jpg"
        await #expect(throws: FileTransferError.io(path: missing, errno: ENOENT)) {
            _ = try await pair.bob.sendAlbum([photo, .photo(.path(missing))], to: pair.alicePeer)
        }
        await #expect(throws: FileTransferError.io(path: missing, errno: ENOENT)) {
            _ = try await pair.bob.sendMedia(.video(.path(missing)), to: pair.alicePeer)
        }
        await #expect(throws: MediaError.mixedAlbum(index: 1, kind: "documents", album: "photos and videos")) {
            _ = try await pair.bob.sendAlbum([photo, .document(.bytes([1], name: "d.bin"))], to: pair.alicePeer)
        }
        let long = String(repeating: "x", count: 1_025)
        await #expect(throws: MediaError.captionTooLong(index: 1, length: 1_025)) {
            _ = try await pair.bob.sendAlbum([photo, .photo(.bytes([1], name: "q.jpg"), caption: .plain(long))],
                                             to: pair.alicePeer)
        }
        for method in Self.sendingMethods { #expect(counter.count(method) == 0, "\(method)") }
        var aliceHas = 0
        for try await _ in pair.alice.history(of: pair.toBob) { aliceHas += 1 }
        #expect(aliceHas == 0)
        try await pair.close()
    }

    @Test func theTestTelegramRefusesAlbumsAndMediaAsTelegramDoes() async throws {
        let pair = try await EventPair.start(seed: 5206)
        let named = try await pair.bobStoresPhoto(fileBytes(1_000, seed: 9))
        func single(_ media: Api.InputMedia, _ randomID: Int64, _ caption: String = "") -> Api.InputSingleMedia {
            .inputSingleMedia(.init(media: media, randomId: randomID, message: caption))
        }
        let tooMany = (1...11).map { single(named, Int64($0)) }
        #expect(await rpcError {
            _ = try await pair.bob.invoke(Api.functions.messages.sendMultiMedia(peer: pair.toAlice, multiMedia: tooMany))
        }?.message == "MULTI_MEDIA_TOO_LONG")
        #expect(await rpcError {
            _ = try await pair.bob.invoke(Api.functions.messages.sendMultiMedia(
                peer: pair.toAlice, multiMedia: [single(named, 1), single(.inputMediaEmpty, 2)]))
        }?.message == "MEDIA_EMPTY")
        #expect(await rpcError {
            _ = try await pair.bob.invoke(Api.functions.messages.sendMultiMedia(
                peer: pair.toAlice, multiMedia: [single(named, 1), single(named, 2, String(repeating: "x", count: 1_025))]))
        }?.message == "MEDIA_CAPTION_TOO_LONG")
        #expect(await rpcError {
            _ = try await pair.bob.invoke(Api.functions.messages.sendMedia(
                peer: pair.toAlice, media: .inputMediaEmpty, message: "", randomId: 5))
        }?.message == "MEDIA_EMPTY")
        #expect(await rpcError {
            _ = try await pair.bob.invoke(Api.functions.messages.uploadMedia(
                peer: .inputPeerUser(.init(userId: 4_242_424, accessHash: 1)), media: named))
        }?.message == "PEER_ID_INVALID")
        // The same photo twice in one album, each with its random_id: one updateMessageID for each.
        let updates = try await pair.bob.invoke(Api.functions.messages.sendMultiMedia(
            peer: pair.toAlice, multiMedia: [single(named, 71, "a"), single(named, 72, "b")]))
        let ids = updates.list.compactMap { update -> Int64? in
            if case .updateMessageID(let u) = update { return u.randomId }
            return nil
        }
        #expect(ids == [71, 72])
        var aliceHas: [String] = []
        for try await message in pair.alice.history(of: pair.toBob) {
            if case .message(let m) = message { aliceHas.append(m.message) }
        }
        #expect(aliceHas == ["b", "a"])
        try await pair.close()
    }

    static func kind(_ media: Api.MessageMedia) -> String {
        switch media {
            case .messageMediaPhoto: "photo"
            case .messageMediaDocument(let d): d.video ? "video" : d.voice ? "voice" : "document"
            default: "other"
        }
    }
}

extension Api.Updates {
    /// The updates of a container, for tests.
    var list: [Api.Update] {
        switch self {
            case .updates(let u): u.updates
            case .updatesCombined(let u): u.updates
            case .updateShort(let u): [u.update]
            default: []
        }
    }
}
