// `TelegramClient`'s uploads and downloads against the test Telegram on loopback: 100 MB up and down byte-identical
// through FILE_MIGRATE with 4+ parts in flight seen by the server over media connections, again under faults
// (dropped frames, a reset on upload.getFile, FLOOD_WAIT_1 on parts); small files with their MD5, streams of
// unknown size, progress, cancellation, FILE_REFERENCE_EXPIRED as a typed error, and the server's part rules.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Synchronization
import Testing

@Suite struct FileTransferTests {
    /// The document of the message `messages.sendMedia` answered with.
    static func document(in sent: Api.Updates) throws -> Api.Document.Cons_document {
        guard case .updates(let updates) = sent, case .updateNewMessage(let new)? = updates.updates.last,
              case .message(let message) = new.message, case .messageMediaDocument(let media)? = message.media,
              case .document(let document)? = media.document
        else { throw HarnessFailure(description: "\(sent)") }
        return document
    }

    /// Limits that hold two 100 MB files.
    static var bigLimits: TestTelegramService.Limits {
        var limits = TestTelegramService.Limits()
        limits.maxUploadBytesPerAccount = 160 << 20
        limits.maxStoredFileBytes = 400 << 20
        return limits
    }

    /// Alice (home DC 2) and Bob (home DC 1), signed in.
    struct Pair {
        let telegram: LocalTelegram
        let alice: TelegramClient
        let bob: TelegramClient
        let aliceID: Int64
        let bob_: Api.InputPeer

        /// `events`, when given, gets each error the server answered (`METHOD MESSAGE`) and `closed` for each
        /// connection it closed.
        static func start(seed: UInt64, faults: FaultPlan = FaultPlan(),
                          limits: TestTelegramService.Limits = FileTransferTests.bigLimits,
                          events: MethodLog? = nil) async throws -> Pair {
            let telegram = try await LocalTelegram.start(seed: seed, faults: faults, limits: limits) { report in
                switch report.kind {
                    case .event(.handled(let method, _, let error?)): events?.add("\(method) \(error.message)")
                    case .closed: events?.add("closed")
                    default: break
                }
            }
            let alice = try telegram.client(followsUpdates: false), bob = try telegram.client(followsUpdates: false)
            guard case .user(let aliceUser) = try await LocalTelegram.signIn(alice, phone: "9996620001"),
                  case .user = try await LocalTelegram.signIn(bob, phone: "9996610002")
            else { throw HarnessFailure(description: "no users") }
            // Bob as Alice sees him: access hashes are per viewer, as on Telegram.
            let bobForAlice = try await alice.inputPeer(for: try await alice.resolve(username: "bob_test"))
            return Pair(telegram: telegram, alice: alice, bob: bob, aliceID: aliceUser.id, bob_: bobForAlice)
        }

        /// Alice sends `file` to Bob as a document; its location and document.
        func share(_ file: Api.InputFile) async throws -> (Api.InputFileLocation, Api.Document.Cons_document) {
            try await FileTransferTests.send(file, from: alice, to: bob_, randomID: Int64.random(in: 1...Int64.max))
        }

        func close() async throws {
            await alice.close()
            await bob.close()
            try await telegram.server.shutdown()
        }
    }

    /// `client` sends `file` to `peer` as a document; its location and document.
    static func send(_ file: Api.InputFile, from client: TelegramClient, to peer: Api.InputPeer, randomID: Int64)
        async throws -> (Api.InputFileLocation, Api.Document.Cons_document)
    {
        let document = try Self.document(in: try await client.invoke(Api.functions.messages.sendMedia(
            peer: peer, media: .uploadedDocument(file), message: "", randomId: randomID)))
        return (.inputDocumentFileLocation(.init(id: document.id, accessHash: document.accessHash,
                                                 fileReference: document.fileReference, thumbSize: "")), document)
    }

    static func fileID(_ file: Api.InputFile) -> Int64 {
        switch file {
            case .inputFile(let small): small.id
            case .inputFileBig(let big): big.id
            default: 0
        }
    }

    /// 100 MB from Alice's DC 2 to Bob, whose home is DC 1: the download starts on DC 1 and follows FILE_MIGRATE_2.
    /// Both ways the server sees 4+ parts in flight, carried by the media connections' sessions, and the bytes
    /// match (SHA-256). Under `faults`, the same with what they break.
    static func hundredMegabytes(seed: UInt64, faults: FaultPlan, floodWaits: Bool = false,
                                 partTimeout: Duration = .seconds(30)) async throws {
        let events = MethodLog()
        let pair = try await Pair.start(seed: seed, faults: faults, events: events)
        let data = SeededRandom(seed: seed).bytes(100 << 20)
        let options = FileTransferOptions(partsInFlight: 6, mediaConnections: 3, partTimeout: partTimeout)
        let server = pair.telegram.server
        // Parts in flight are shown by a barrier, not by timing: each way, the first parts are held until 4 wait
        // together (a client with fewer in flight never opens it, and its parts time out), then every part passes.
        let service = pair.telegram.service
        let uploadGate = Gate(), downloadGate = Gate()
        service.on(Api.functions.upload.SaveBigFilePart.self, timeout: AnswerTimeout(seconds: 120)) {
            call, request async throws(RPCError) in
            _ = await uploadGate.wait()
            return try service.saveBigFilePart(call, request)
        }
        service.on(Api.functions.upload.GetFile.self, timeout: AnswerTimeout(seconds: 120)) {
            call, request async throws(RPCError) in
            _ = await downloadGate.wait()
            return try service.getFileAnswer(call, request)
        }
        let openers = [uploadGate, downloadGate].map { gate in
            Task {
                await gate.arrivals(4)
                gate.fire("4 parts waited together")
            }
        }
        defer { for opener in openers { opener.cancel() } }
        /// Every part of `method` answered FLOOD_WAIT_1 until a third of a second after the first was (waited for
        /// at most 60 s).
        func floodFor(_ method: String) -> Task<Void, any Error>? {
            guard floodWaits else { return nil }
            server.faults.errors[method] = RPCError(code: 420, message: "FLOOD_WAIT_1")
            return Task {
                let deadline = ContinuousClock.now + .seconds(60)
                while !events.methods.contains("\(method) FLOOD_WAIT_1"), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                try await Task.sleep(for: .milliseconds(300))
                server.faults.errors[method] = nil
            }
        }
        let uploadFlood = floodFor("upload.saveBigFilePart")
        let file = try await pair.alice.upload(bytes: data, name: "big.bin", options: options)
        try await uploadFlood?.value
        guard case .inputFileBig(let big) = file else { throw HarnessFailure(description: "\(file)") }
        #expect(big.parts == 200, "512 KiB parts")
        let uploaded = try #require(pair.telegram.service.uploadStats(user: pair.aliceID, fileID: big.id))
        #expect(uploadGate.fired, "4 upload parts were held at once")
        #expect(uploaded.maxPartsInFlight >= 4, "\(uploaded)")
        #expect(uploaded.sessions.count == 3, "the parts went over the three media connections: \(uploaded.sessions)")
        let (location, document) = try await pair.share(file)
        #expect(document.dcId == 2 && document.size == Int64(data.count))

        // A name of this run's own: another checkout's tests on the same machine use the same seeds.
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("files-\(seed)-\(UUID().uuidString).bin").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let downloadFlood = floodFor("upload.getFile")
        let written = try await pair.bob.download(location, to: path, size: document.size, options: options)
        try await downloadFlood?.value
        #expect(written == Int64(data.count))
        let downloaded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Hash.sha256(downloaded) == Hash.sha256(data))
        let served = try #require(pair.telegram.service.downloadStats(document: document.id))
        #expect(downloadGate.fired, "4 download parts were held at once")
        #expect(served.maxPartsInFlight >= 4, "\(served)")
        #expect(served.sessions.count == 3, "\(served.sessions)")
        if !floodWaits { #expect(uploaded.parts == 200 && served.parts == 200, "each part asked once, none past the end") }
        let lanes = await pair.bob.mediaConnectionLanes
        #expect(lanes.filter { $0.dc == 2 }.map(\.lane) == [0, 1, 2], "media connections to DC 2")
        if floodWaits {
            // The faults happened: both methods were answered FLOOD_WAIT_1, and connections were closed.
            let seen = Set(events.methods)
            #expect(seen.contains("upload.saveBigFilePart FLOOD_WAIT_1") && seen.contains("upload.getFile FLOOD_WAIT_1"))
            #expect(seen.contains("closed"))
        }
        try await pair.close()
    }

    @Test func aHundredMegabytesUpAndDownThroughFileMigrate() async throws {
        try await Self.hundredMegabytes(seed: 401, faults: FaultPlan())
    }

    /// 1 % of the server's frames dropped, the first upload.getFile on each DC closing its connection, and every
    /// part answered FLOOD_WAIT_1 at the start of the upload and of the download.
    @Test func aHundredMegabytesUnderFaults() async throws {
        var faults = FaultPlan()
        faults.dropOutgoing = 0.01
        faults.closeOnceOn = ["upload.getFile"]
        // A dropped answer is only noticed when its part times out.
        try await Self.hundredMegabytes(seed: 402, faults: faults, floodWaits: true, partTimeout: .seconds(10))
    }

    @Test func smallFilesCarryTheirMD5AndStreamsOfUnknownSizeArrive() async throws {
        let pair = try await Pair.start(seed: 403)
        // 300 KB from memory with 64 KiB parts: a small file, its MD5 checked by the server when it is sent.
        let small = SeededRandom(seed: 1).bytes(300_000)
        let file = try await pair.alice.upload(bytes: small, name: "small.bin",
                                               options: FileTransferOptions(partSize: 64 << 10))
        guard case .inputFile(let input) = file else { throw HarnessFailure(description: "\(file)") }
        #expect(input.parts == 5 && input.md5Checksum == Hex.encode(Hash.md5(small)))
        let (location, _) = try await pair.share(file)
        var back: [UInt8] = []
        for try await chunk in pair.bob.download(location) { back += chunk }
        #expect(back == small)

        // A stream of odd-sized chunks and no size: 12 MB is a big file sent with file_total_parts -1 until the last.
        let streamed = SeededRandom(seed: 2).bytes(12_000_000 + 123)
        let chunks = AsyncStream<[UInt8]> { continuation in
            var offset = 0, step = 1
            while offset < streamed.count {
                let end = min(streamed.count, offset + 77_777 * step)
                continuation.yield(Array(streamed[offset..<end]))
                offset = end
                step = step % 7 + 1
            }
            continuation.finish()
        }
        let progress = ProgressLog()
        let bigFile = try await pair.alice.upload(chunks: chunks, name: "stream.bin",
                                                  options: FileTransferOptions(progress: { progress.add($0) }))
        guard case .inputFileBig(let big) = bigFile else { throw HarnessFailure(description: "\(bigFile)") }
        #expect(big.parts == Int32((streamed.count + (512 << 10) - 1) / (512 << 10)))
        let reports = progress.reports
        #expect(reports.map(\.bytesDone) == reports.map(\.bytesDone).sorted() && reports.last?.bytesDone == Int64(streamed.count))
        let (bigLocation, document) = try await pair.share(bigFile)
        let downloadProgress = ProgressLog()
        var received: [UInt8] = []
        for try await chunk in pair.bob.download(bigLocation, dc: document.dcId, size: document.size,
                                                 options: FileTransferOptions(progress: { downloadProgress.add($0) })) {
            received += chunk
        }
        #expect(Hash.sha256(received) == Hash.sha256(streamed))
        #expect(downloadProgress.reports.last == TransferProgress(bytesDone: Int64(streamed.count), totalBytes: document.size))
        try await pair.close()
    }

    /// A session reopened from its store uploads to the home DC the store kept (Bob's moved to DC 1 by
    /// PHONE_MIGRATE_1), not to the DC its configuration starts on: the parts and the message that sends them meet
    /// on one DC, where before they did not (FILE_PARTS_INVALID, or a 401 for the parts).
    @Test func aReopenedSessionUploadsToTheHomeItsStoreKept() async throws {
        let telegram = try await LocalTelegram.start(seed: 409)
        let store = MemorySessionStore()
        let first = try telegram.client(store: store)
        _ = try await LocalTelegram.signIn(first, phone: "9996610002")
        #expect(await first.homeDC == 1)
        await first.close()

        let reopened = try telegram.client(store: store)      // configured with DC 2 as home, as `first` was
        let file = try await reopened.upload(bytes: SeededRandom(seed: 5).bytes(10_000), name: "a.bin")
        let (_, document) = try await Self.send(file, from: reopened, to: .inputPeerSelf, randomID: 409)
        #expect(document.dcId == 1 && document.size == 10_000)
        await reopened.close()
        try await telegram.server.shutdown()
    }

    @Test func anExpiredFileReferenceIsATypedError() async throws {
        let pair = try await Pair.start(seed: 404)
        let file = try await pair.alice.upload(bytes: SeededRandom(seed: 3).bytes(2_000_000), name: "a.bin")
        let (location, document) = try await pair.share(file)
        #expect(pair.telegram.service.expireFileReference(document: document.id) != nil)
        await #expect(throws: FileTransferError.fileReferenceExpired) {
            for try await _ in pair.bob.download(location) {}
        }
        try await pair.close()
    }

    /// The time limit bounds a cancellation that waits for the held answers instead of stopping the parts.
    @Test(.timeLimit(.minutes(2))) func cancellingADownloadStopsEveryPart() async throws {
        let pair = try await Pair.start(seed: 405)
        let data = SeededRandom(seed: 4).bytes(8 << 20)
        let (location, document) = try await pair.share(try await pair.alice.upload(bytes: data, name: "c.bin"))
        let bob = pair.bob
        // Once through, so Bob's connections to DC 2 and his authorization there exist.
        var first = 0
        for try await chunk in bob.download(location, dc: 2, size: document.size) { first += chunk.count }
        #expect(first == data.count)
        let before = pair.telegram.service.downloadStats(document: document.id)?.parts ?? 0
        // Every answer held for an hour: the parts stay in flight until cancelled, and a cancellation that waited
        // for them (or for the parts to time out and be asked again) never ends or asks more than 4.
        pair.telegram.server.faults.delayOutgoing = 1
        pair.telegram.server.faults.delaySeconds = 3600
        let download = Task {
            var count = 0
            for try await chunk in bob.download(location, dc: 2, size: document.size) { count += chunk.count }
            return count
        }
        func asked() -> Int { (pair.telegram.service.downloadStats(document: document.id)?.parts ?? 0) - before }
        // The barrier: the server has the whole window of parts (however slow the machine is).
        for _ in 0..<3_000 where asked() < 4 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(asked() == 4, "the window of 4 parts was out")
        download.cancel()
        await #expect(throws: CancellationError.self) { _ = try await download.value }
        #expect(asked() == 4, "the window of 4 parts was out, and nothing more")
        pair.telegram.server.faults.delayOutgoing = 0
        try await pair.close()
    }

    /// Whole 1 MiB parts, Telegram's largest `limit` (core.telegram.org/api/files): each answer is a frame of more
    /// than 1 MiB, inside the transport's bound on both ends. The file ends in a short part; the bytes match.
    @Test func oneMebibyteDownloadPartsArrive() async throws {
        let pair = try await Pair.start(seed: 410)
        let data = SeededRandom(seed: 410).bytes((5 << 20) + 12_345)
        let file = try await pair.alice.upload(bytes: data, name: "mib.bin")
        let (location, document) = try await pair.share(file)
        var parts: [Int] = []
        var received: [UInt8] = []
        for try await chunk in pair.bob.download(location, dc: document.dcId, size: document.size,
                                                 options: FileTransferOptions(partSize: 1 << 20)) {
            parts.append(chunk.count)
            received += chunk
        }
        #expect(parts == [Int](repeating: 1 << 20, count: 5) + [12_345])
        #expect(received == data)
        // One request at the largest limit, from a 1 MiB boundary (Alice: her home is the file's DC).
        guard case .file(let whole) = try await pair.alice.invoke(Api.functions.upload.getFile(
            location: location, offset: 1 << 20, limit: 1 << 20)) else { throw HarnessFailure(description: "") }
        #expect(whole.bytes == Array(data[(1 << 20)..<(2 << 20)]))
        try await pair.close()
    }

    /// The server's rules, as Telegram answers them.
    @Test func partRulesAreEnforcedWithTelegramsErrors() async throws {
        let pair = try await Pair.start(seed: 406)
        let alice = pair.alice
        func refused(_ message: String, _ call: () async throws -> Void) async {
            await #expect {
                try await call()
            } throws: { error in
                guard case MTProtoClientError.rpc(let rpc) = error else { return false }
                return rpc.message == message
            }
        }
        await refused("FILE_PARTS_INVALID") {
            _ = try await alice.invoke(Api.functions.upload.saveBigFilePart(fileId: 1, filePart: 0, fileTotalParts: 0,
                                                                            bytes: [1]))
        }
        await refused("FILE_PART_SIZE_INVALID") {
            _ = try await alice.invoke(Api.functions.upload.saveBigFilePart(fileId: 2, filePart: 0, fileTotalParts: 30,
                                                                            bytes: [UInt8](repeating: 1, count: 1000)))
        }
        let file = try await alice.upload(bytes: SeededRandom(seed: 5).bytes(3 << 20), name: "r.bin")
        let (location, _) = try await pair.share(file)
        for (offset, limit, precise, error) in [(0, 1000, false, "LIMIT_INVALID"), (0, 3 << 18, false, "LIMIT_INVALID"),
                                                (0, (1 << 20) + 4096, false, "LIMIT_INVALID"),
                                                (0, (1 << 20) + 1024, true, "LIMIT_INVALID"),
                                                (0, 0, false, "LIMIT_INVALID"),
                                                (-4096, 4096, false, "OFFSET_INVALID"),
                                                (4096, 1 << 20, false, "OFFSET_INVALID"),
                                                (1 << 19, 1 << 20, false, "OFFSET_INVALID"),
                                                (1024, 4096, false, "OFFSET_INVALID")] as [(Int64, Int32, Bool, String)] {
            await refused(error) {
                _ = try await alice.invoke(Api.functions.upload.getFile(precise: precise, location: location,
                                                                        offset: offset, limit: limit))
            }
        }
        // precise: 1 KiB alignment, any limit within one 1 MiB block.
        guard case .file(let chunk) = try await alice.invoke(Api.functions.upload.getFile(
            precise: true, location: location, offset: 1024, limit: 3072)) else { throw HarnessFailure(description: "") }
        #expect(chunk.bytes.count == 3072)
        // A part size that does not divide 512 KiB is refused by the client before anything is sent.
        await #expect(throws: FileTransferError.invalidPartSize(3000)) {
            _ = try await alice.upload(bytes: [1, 2, 3], name: "x", options: FileTransferOptions(partSize: 3000))
        }
        try await pair.close()
    }
}

/// Progress reports, in the order they came.
final class ProgressLog: Sendable {
    private let log = Mutex<[TransferProgress]>([])

    func add(_ progress: TransferProgress) { log.withLock { $0.append(progress) } }

    var reports: [TransferProgress] { log.withLock { $0 } }
}
