// Downloading a message's media end to end on the test Telegram: a photo in its largest size byte for byte, a small
// size, its stripped thumbnail made a JPEG with no part asked; a document and its thumbnail; a profile photo big and
// small; to a file and as a stream. Bad input is refused with typed errors and no `upload.getFile`. File references
// that expire mid-way (the test Telegram's `expireFileReferenceEvery` fault) are renewed by fetching the message
// again, as many times as the server renewed them and no more, the parts going on at their offsets.
import Foundation
import MTProto
import MTProtoServer
import Synchronization
import TLRuntime
import TelegramApi
import TelegramClient
import TestTelegram
import Testing

@Suite struct MediaDownloadTests {
    /// A JPEG's start that `MediaInfo` reads as `width`×`height` (a baseline frame header), then filler to `count`
    /// bytes: the test Telegram types a photo's size by its longer side and keeps the bytes as they are.
    static func jpeg(width: UInt16, height: UInt16, count: Int, seed: UInt8) -> [UInt8] {
        var bytes: [UInt8] = [0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xff),
                              UInt8(width >> 8), UInt8(width & 0xff), 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03,
                              0x11, 0x01]
        bytes += (bytes.count..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
        return bytes
    }

    /// A stripped thumbnail and the JPEG Telethon's `stripped_photo_to_jpg` makes of it
    /// (Fixtures/media/stripped-vectors.json).
    static func strippedVector() throws -> (stripped: [UInt8], jpeg: [UInt8]) {
        struct Vectors: Decodable {
            struct Vector: Decodable { let stripped: String, jpeg: String }
            let vectors: [Vector]
        }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/media/stripped-vectors.json")
        let vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url)).vectors
        guard let vector = vectors.last, let stripped = Hex.decode(vector.stripped), let jpeg = Hex.decode(vector.jpeg)
        else { throw HarnessFailure(description: "no stripped vectors") }
        return (stripped, jpeg)
    }

    /// Alice and Bob signed in, with every call counted; Alice's peer for Bob and Bob's for Alice.
    struct Chat {
        let telegram: LocalTelegram
        let alice: TelegramClient
        let bob: TelegramClient
        let aliceID: Int64
        let bobForAlice: PeerID
        let aliceForBob: PeerID
        let calls: MethodCounter

        static func start(seed: UInt64, faults: FaultPlan = FaultPlan()) async throws -> Chat {
            let calls = MethodCounter()
            let telegram = try await LocalTelegram.start(seed: seed, faults: faults, limits: FileTransferTests.bigLimits,
                                                         onEvent: calls.record)
            let alice = try telegram.client(followsUpdates: false), bob = try telegram.client(followsUpdates: false)
            guard case .user(let aliceUser) = try await LocalTelegram.signIn(alice, phone: "9996620001") else {
                throw HarnessFailure(description: "no Alice")
            }
            _ = try await LocalTelegram.signIn(bob, phone: "9996610002")
            return Chat(telegram: telegram, alice: alice, bob: bob, aliceID: aliceUser.id,
                        bobForAlice: try await alice.resolve(username: "bob_test"),
                        aliceForBob: try await bob.resolve(username: "alice_test"), calls: calls)
        }

        /// Alice sends `data` as a document to Bob, or to `chat`: her message and its document.
        func aliceSendsDocument(_ data: [UInt8], to chat: PeerID? = nil) async throws
            -> (ChatMessage, Api.Document.Cons_document) {
            let sent = try await alice.sendMedia(.document(.bytes(data, name: "d.bin")), to: chat ?? bobForAlice)
            guard case .messageMediaDocument(let media)? = sent.media, case .document(let document)? = media.document
            else { throw HarnessFailure(description: "no document") }
            return (sent, document)
        }

        func close() async throws {
            await alice.close()
            await bob.close()
            try await telegram.server.shutdown()
        }
    }

    static func bytes(of download: FileDownload) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in download { bytes += chunk }
        return bytes
    }

    static func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "media-download-\(UUID().uuidString)-\(name)"
    }

    static func photoID(_ message: ChatMessage) throws -> Int64 {
        guard case .messageMediaPhoto(let media)? = message.media, case .photo(let photo)? = media.photo else {
            throw HarnessFailure(description: "no photo: \(String(describing: message.media))")
        }
        return photo.id
    }

    @Test func aPhotoDownloadsInItsLargestAndSmallSizesAndItsStrippedThumbnail() async throws {
        let chat = try await Chat.start(seed: 5301)
        let full = Self.jpeg(width: 1280, height: 960, count: 700 * 1024, seed: 1)  // two parts
        let small = Self.jpeg(width: 320, height: 240, count: 3_000, seed: 2)
        let (stripped, strippedJPEG) = try Self.strippedVector()
        let sent = try await chat.alice.sendMedia(.photo(.bytes(full, name: "cat.jpg")), to: chat.bobForAlice)
        let photo = try Self.photoID(sent)
        #expect(chat.telegram.service.addSize(toPhoto: photo, type: "m", bytes: small))
        #expect(chat.telegram.service.addSize(toPhoto: photo, type: "i", bytes: stripped))
        // Bob's copy of the message, as he sees it now: the full size "y", the small "m" and the stripped "i".
        var bobs: ChatMessage?
        for try await message in chat.bob.history(of: try await chat.bob.inputPeer(for: chat.aliceForBob)) {
            bobs = ChatMessage(message)
        }
        guard let message = bobs else { throw HarnessFailure(description: "Bob has no message") }

        let path = Self.temporaryPath("cat.jpg")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let progress = Mutex<[TransferProgress]>([])
        let written = try await chat.bob.downloadMedia(of: message, to: path, options: FileTransferOptions(progress: { p in
            progress.withLock { $0.append(p) }
        }))
        #expect(written == Int64(full.count))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == full)
        #expect(progress.withLock { $0.last } == TransferProgress(bytesDone: Int64(full.count),
                                                                 totalBytes: Int64(full.count)))
        #expect(try await Self.bytes(of: chat.bob.downloadMedia(of: message, size: .smallest)) == small)
        #expect(try await Self.bytes(of: chat.bob.downloadMedia(of: message, size: .type("m"))) == small)
        #expect(try await Self.bytes(of: chat.bob.downloadMedia(of: message, size: .type("y"))) == full)
        let parts = chat.calls.count("upload.getFile")
        #expect(try await Self.bytes(of: chat.bob.downloadMedia(of: message, size: .stripped)) == strippedJPEG)
        #expect(try await Self.bytes(of: chat.bob.downloadMedia(of: message, size: .type("i"))) == strippedJPEG)
        #expect(chat.calls.count("upload.getFile") == parts)  // made here, not downloaded
        #expect(chat.telegram.service.downloadStats(photo: photo)?.bytes == Int64(2 * full.count + 2 * small.count))
        try await chat.close()
    }

    @Test func aDocumentAndItsThumbnailDownload() async throws {
        let chat = try await Chat.start(seed: 5302)
        let file = Self.jpeg(width: 1, height: 1, count: 1_300_000, seed: 3)
        let thumb = Self.jpeg(width: 90, height: 60, count: 1_500, seed: 4)
        let sent = try await chat.alice.sendMedia(.document(.bytes(file, name: "report.bin"),
                                                            thumbnail: .bytes(thumb, name: "t.jpg")),
                                                  to: chat.bobForAlice)
        let path = Self.temporaryPath("report.bin")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try await chat.alice.downloadMedia(of: sent, to: path) == Int64(file.count))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == file)
        #expect(try await Self.bytes(of: chat.alice.downloadMedia(of: sent)) == file)
        #expect(try await Self.bytes(of: chat.alice.downloadMedia(of: sent, size: .smallest)) == thumb)
        #expect(try await Self.bytes(of: chat.alice.downloadMedia(of: sent, size: .type("s"))) == thumb)
        await #expect(throws: MediaDownloadError.sizeNotFound(requested: .stripped, available: ["s"])) {
            _ = try await chat.alice.downloadMedia(of: sent, size: .stripped)
        }
        try await chat.close()
    }

    @Test func aProfilePhotoDownloadsBigAndSmall() async throws {
        let chat = try await Chat.start(seed: 5303)
        let big = Self.jpeg(width: 640, height: 640, count: 90_000, seed: 5)
        let small = Self.jpeg(width: 160, height: 160, count: 4_000, seed: 6)
        let uploaded = try await chat.bob.upload(bytes: big, name: "me.jpg")
        guard case .photo(let answer) = try await chat.bob.invoke(Api.functions.photos.uploadProfilePhoto(file: uploaded)),
              case .photo(let photo) = answer.photo
        else { throw HarnessFailure(description: "no profile photo") }
        #expect(chat.telegram.service.addSize(toPhoto: photo.id, type: "a", bytes: small))

        let path = Self.temporaryPath("bob.jpg")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try await chat.alice.downloadProfilePhoto(of: chat.bobForAlice, to: path) == Int64(big.count))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == big)
        #expect(try await Self.bytes(of: chat.alice.downloadProfilePhoto(of: chat.bobForAlice, big: false)) == small)
        await #expect(throws: MediaDownloadError.noProfilePhoto(chat.aliceForBob)) {
            _ = try await chat.bob.downloadProfilePhoto(of: chat.aliceForBob)
        }
        try await chat.close()
    }

    @Test func badInputIsRefusedWithTypedErrorsAndNoPartAsked() async throws {
        let chat = try await Chat.start(seed: 5304)
        let text = try await chat.alice.sendMessage(to: chat.bobForAlice, formatted: .plain("no media here"))
        await #expect(throws: MediaDownloadError.noMedia(message: text.id, chat: chat.bobForAlice)) {
            _ = try await chat.alice.downloadMedia(of: text)
        }
        let photo = try await chat.alice.sendMedia(.photo(.bytes(Self.jpeg(width: 800, height: 600, count: 5_000,
                                                                          seed: 7), name: "p.jpg")),
                                                   to: chat.bobForAlice)
        await #expect(throws: MediaDownloadError.sizeNotFound(requested: .type("w"), available: ["x"])) {
            _ = try await chat.alice.downloadMedia(of: photo, size: .type("w"))
        }
        await #expect(throws: MediaDownloadError.sizeNotFound(requested: .stripped, available: ["x"])) {
            _ = try await chat.alice.downloadMedia(of: photo, size: .stripped)
        }
        let stranger = PeerID.user(4_242_424)
        await #expect(throws: PeerCacheError.unknownPeer(stranger)) {
            _ = try await chat.alice.downloadProfilePhoto(of: stranger)
        }
        // The same photo in a chat the cache does not know: its reference could not be renewed, so it is refused.
        guard let elsewhere = ChatMessage(.message(.init(id: 9, peerId: .peerUser(.init(userId: stranger.id)), date: 0,
                                                         message: "", media: photo.media)))
        else { throw HarnessFailure(description: "no message") }
        await #expect(throws: PeerCacheError.unknownPeer(stranger)) {
            _ = try await chat.alice.downloadMedia(of: elsewhere)
        }
        let missingFolder = NSTemporaryDirectory() + "no-such-folder-\(UUID().uuidString)/p.jpg"
        await #expect(throws: FileTransferError.self) {
            _ = try await chat.alice.downloadMedia(of: photo, to: missingFolder)
        }
        #expect(chat.calls.count("upload.getFile") == 0)
        try await chat.close()
    }

    /// The must-show: 50 MB whose reference the server renews after every 20 MiB it serves, so twice mid-way.
    @Test func aFiftyMegabyteDownloadWhoseReferenceExpiresTwiceFinishesByteIdentical() async throws {
        let chat = try await Chat.start(seed: 5305)
        let data = SeededRandom(seed: 53).bytes(50 << 20)
        let (sent, document) = try await chat.aliceSendsDocument(data)
        chat.telegram.server.faults.expireFileReferenceEvery = 20 << 20
        let path = Self.temporaryPath("big.bin")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let written = try await chat.alice.downloadMedia(of: sent, to: path)
        #expect(written == Int64(data.count))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == data)
        // The server's log: the message fetched again exactly twice, and every byte served once (no part restarted).
        #expect(chat.telegram.service.messageFetches(user: chat.aliceID, id: sent.id) == 2)
        #expect(chat.telegram.service.downloadStats(document: document.id)?.bytes == Int64(data.count))
        #expect(chat.calls.count("upload.getFile", error: "FILE_REFERENCE_EXPIRED") >= 2)
        try await chat.close()
    }

    @Test func aChannelPostsReferenceIsRenewedThroughChannelsGetMessages() async throws {
        let chat = try await Chat.start(seed: 5307)
        let channel = try await chat.alice.createChannel(title: "files")
        let data = SeededRandom(seed: 55).bytes(2 << 20)
        let (sent, _) = try await chat.aliceSendsDocument(data, to: channel)
        chat.telegram.server.faults.expireFileReferenceEvery = 1 << 20
        let download = try await chat.alice.downloadMedia(of: sent, options: FileTransferOptions(partsInFlight: 1))
        #expect(try await Self.bytes(of: download) == data)
        // One renewal after the first MiB; the one after the second comes with the end, when no part is left.
        #expect(chat.telegram.service.messageFetches(channel: channel.id, id: sent.id) == 1)
        #expect(chat.telegram.service.messageFetches(user: chat.aliceID, id: sent.id) == 0)
        try await chat.close()
    }

    @Test func renewalsAreBoundedAndAGoneMessageIsTyped() async throws {
        let chat = try await Chat.start(seed: 5306)
        let data = SeededRandom(seed: 54).bytes(3 << 20)
        let (sent, document) = try await chat.aliceSendsDocument(data)
        // Renewed after every part: one renewal allowed, so the third part's expiry is one too many.
        chat.telegram.server.faults.expireFileReferenceEvery = 512 << 10
        await #expect(throws: MediaDownloadError.referenceKeptExpiring(message: sent.id, chat: chat.bobForAlice,
                                                                       fetches: 1)) {
            _ = try await Self.bytes(of: chat.alice.downloadMedia(
                of: sent, options: FileTransferOptions(partsInFlight: 1, maxReferenceRenewals: 1)))
        }
        #expect(chat.telegram.service.messageFetches(user: chat.aliceID, id: sent.id) == 1)
        chat.telegram.server.faults.expireFileReferenceEvery = nil
        #expect(chat.telegram.service.expireFileReference(document: document.id) != nil)
        try await chat.alice.deleteMessages([sent.id], in: chat.bobForAlice)
        await #expect(throws: MediaDownloadError.messageGone(message: sent.id, chat: chat.bobForAlice)) {
            _ = try await Self.bytes(of: chat.alice.downloadMedia(of: sent))
        }
        try await chat.close()
    }

    @Test func theExpireReferenceFaultParses() throws {
        #expect(try FaultPlan(parsing: "expire-reference=1048576").expireFileReferenceEvery == 1 << 20)
        #expect(throws: FaultPlan.SpecError.self) { try FaultPlan(parsing: "expire-reference=0") }
        #expect(throws: FaultPlan.SpecError.self) { try FaultPlan(parsing: "expire-reference=x") }
    }
}
