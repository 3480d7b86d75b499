// Secret chats over a TelegramClient: runs the sans-IO SecretChatEngine against the API (getDhConfig,
// requestEncryption, acceptEncryption, sendEncrypted*, discardEncryption, encrypted file upload and download), feeds
// it the updates the application passes in, sends its envelopes in order, and saves its state in the session store
// after every change (it holds chat keys, so it goes where auth keys go).
import Foundation
import MTProtoClient
import MTProtoCrypto
import SecretChats
import TelegramApi
import TelegramSession
import TLRuntime

/// Secret chats over a ``TelegramClient/TelegramClient``: runs a `SecretChatEngine` against the API and saves every chat in the
/// session store after each change.
///
/// Pass it every update the client yields (`handle(_:)`) and read ``events``. Calls on one
/// manager are serialized by the actor; envelopes go out in the order the engine made them.
public actor SecretChatManager {
    /// How a manager runs its chats.
    public struct Options: Sendable {
        /// The engine's settings: the highest layer offered, re-key thresholds, history bounds.
        public var engine: SecretChatConfiguration
        /// Accept incoming requests without asking (the `requested` event still fires).
        public var autoAccept: Bool
        /// Where the state is saved; nil keeps it in memory only.
        public var store: (any SessionStore)?
        /// Where key-exchange exponents, padding and random ids come from (tests inject a seeded source).
        public var random: any RandomSource
        /// Parts of uploaded encrypted files (upload.saveFilePart's rules: a divisor of 512 KiB).
        public var partSize: Int

        /// Options with the defaults: no auto-accept, state in memory, 128 KiB file parts.
        public init(engine: SecretChatConfiguration = .init(), autoAccept: Bool = false,
                    store: (any SessionStore)? = nil, random: any RandomSource = SystemRandom(),
                    partSize: Int = 128 * 1024) {
            self.engine = engine
            self.autoAccept = autoAccept
            self.store = store
            self.random = random
            self.partSize = partSize
        }
    }

    /// The client the manager calls the API through.
    public let client: TelegramClient
    private let options: Options
    private var engine: SecretChatEngine
    /// Sends go out one batch at a time, in the order the engine produced them (sequence numbers depend on it).
    private var sendChain: Task<(any Error)?, Never>?
    private let eventsSink: AsyncStream<SecretChatEvent>.Continuation
    /// Events of every chat, in order.
    public nonisolated let events: AsyncStream<SecretChatEvent>

    /// Creates a manager, restoring the chats saved in `options.store`.
    public init(client: TelegramClient, options: Options = .init()) async throws {
        self.client = client
        self.options = options
        let snapshot = try await options.store?.load().secretChats ?? StoredSecretChats()
        engine = SecretChatEngine(configuration: options.engine, random: options.random, chats: snapshot.chats,
                                  dhConfig: snapshot.dhConfig)
        (events, eventsSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(10_000))
    }

    /// The chat's state (layer, sequence numbers, key fingerprint and visualization).
    public func chat(_ id: Int32) -> SecretChatState? { engine.chats[id] }

    /// The ids of every chat the manager holds, ascending.
    public var chatIDs: [Int32] { engine.chats.keys.sorted() }

    // MARK: Starting and ending chats

    /// Asks a user for a secret chat; returns its id. `ready` follows when the user accepts.
    public func requestChat(with user: Api.InputUser, maxLayer: SecretLayer? = nil) async throws -> Int32 {
        let random = try await refreshDH()
        let share = try engine.makeRequest(serverRandom: random)
        let answer = try await client.invoke(Api.functions.messages.requestEncryption(
            userId: user, randomId: Int32(truncatingIfNeeded: options.random.int64()), gA: share.publicValue))
        guard case .encryptedChatWaiting(let waiting) = answer else {
            throw SecretChatError.invalidState("requestEncryption answered \(answer), not encryptedChatWaiting")
        }
        try engine.requestSent(chatID: waiting.id, accessHash: waiting.accessHash, peerUserID: waiting.participantId,
                               share: share, maxLayer: maxLayer)
        try await save()
        return waiting.id
    }

    /// Accepts a requested chat.
    public func accept(chatID: Int32, maxLayer: SecretLayer? = nil) async throws {
        let random = try await refreshDH()
        let (gB, fingerprint) = try engine.accept(chatID: chatID, serverRandom: random, maxLayer: maxLayer)
        _ = try await client.invoke(Api.functions.messages.acceptEncryption(
            peer: try inputChat(chatID), gB: gB, keyFingerprint: fingerprint))
        try await perform(engine.accepted(chatID: chatID, now: now()))
    }

    /// Ends a chat on the server and forgets its keys.
    public func discard(chatID: Int32, deleteHistory: Bool = false) async throws {
        let out = engine.handleDiscarded(chatID: chatID)
        try await perform(out)
        do {
            _ = try await client.invoke(Api.functions.messages.discardEncryption(deleteHistory: deleteHistory, chatId: chatID))
        } catch MTProtoClientError.rpc(let error) where error.message == "ENCRYPTION_ALREADY_DECLINED" {
            // Already gone on the server.
        }
    }

    // MARK: Messages

    /// Sends text; returns the message's random_id.
    @discardableResult
    public func send(chatID: Int32, text: String, ttl: Int32 = 0) async throws -> Int64 {
        let (randomID, out) = try engine.send(chatID: chatID, content: SecretContent(text: text, ttl: ttl), now: now())
        try await perform(out)
        return randomID
    }

    /// Sends a service action (TTL, read, delete, screenshot, flush).
    public func send(chatID: Int32, action: SecretServiceAction) async throws {
        try await perform(engine.send(chatID: chatID, action: action, now: now()))
    }

    /// Sends a message the application built in the chat's layer namespace.
    public func send(chatID: Int32, payload: SecretPayload) async throws {
        try await perform(engine.send(chatID: chatID, payload: payload, now: now()))
    }

    /// Encrypts a file with a fresh key and IV, uploads it, and sends it with a caption.
    @discardableResult
    public func sendFile(chatID: Int32, bytes: [UInt8], fileName: String, mimeType: String,
                         caption: String = "") async throws -> Int64 {
        let fileKey = SecretFileKey.random(options.random)
        let encrypted = try fileKey.encrypt(bytes, random: options.random)
        let fileID = options.random.int64()
        let partSize = options.partSize
        let parts = max(1, (encrypted.count + partSize - 1) / partSize)
        // upload.saveBigFilePart above 10 MB (core.telegram.org/api/files#uploading-files).
        let big = encrypted.count > 10 * 1024 * 1024
        for part in 0..<parts {
            let chunk = Array(encrypted[(part * partSize)..<min(encrypted.count, (part + 1) * partSize)])
            let ok = big
                ? try await client.invoke(Api.functions.upload.saveBigFilePart(
                    fileId: fileID, filePart: Int32(part), fileTotalParts: Int32(parts), bytes: chunk))
                : try await client.invoke(Api.functions.upload.saveFilePart(fileId: fileID, filePart: Int32(part), bytes: chunk))
            guard ok else { throw SecretChatError.file("the server refused part \(part)") }
        }
        let md5 = big ? nil : Hex.encode(Hash.md5(encrypted))
        let document = SecretDocumentInfo(key: fileKey.key, iv: fileKey.iv, size: Int64(bytes.count), mimeType: mimeType,
                                          fileName: fileName)
        let (randomID, out) = try engine.send(
            chatID: chatID, content: SecretContent(text: caption, document: document),
            attachment: .uploaded(fileID: fileID, parts: Int32(parts), md5: md5, keyFingerprint: fileKey.fingerprint),
            now: now())
        try await perform(out)
        return randomID
    }

    /// Downloads and decrypts the document of a received message.
    public func download(_ message: SecretIncoming) async throws -> [UInt8] {
        guard let file = message.file, let document = message.payload.document else {
            throw SecretChatError.file("the message has no document")
        }
        let limit = 512 * 1024
        var encrypted: [UInt8] = []
        while encrypted.count < file.size {
            let answer = try await client.invoke(Api.functions.upload.getFile(
                location: .inputEncryptedFileLocation(.init(id: file.id, accessHash: file.accessHash)),
                offset: Int64(encrypted.count), limit: Int32(limit)), onDC: file.dcID)
            guard case .file(let part) = answer, !part.bytes.isEmpty else { break }
            encrypted += part.bytes
            if part.bytes.count < limit { break }
        }
        let key = try SecretFileKey(key: document.key, iv: document.iv)
        return try key.decrypt(encrypted, size: Int(document.size), fingerprint: file.keyFingerprint)
    }

    /// Tells the peer (through the server) that everything up to `maxDate` was read.
    public func markRead(chatID: Int32, maxDate: Int32) async throws {
        _ = try await client.invoke(Api.functions.messages.readEncryptedHistory(peer: try inputChat(chatID), maxDate: maxDate))
    }

    /// Shows or clears "typing" on the peer's side.
    public func setTyping(chatID: Int32, _ typing: Bool) async throws {
        _ = try await client.invoke(Api.functions.messages.setEncryptedTyping(peer: try inputChat(chatID), typing: typing))
    }

    /// Re-keys now (it also happens by itself every 100 messages or a week).
    public func rekey(chatID: Int32) async throws {
        if engine.dhConfig == nil { _ = try await refreshDH() }
        try await perform(engine.rekey(chatID: chatID, now: now()))
    }

    /// Raises or lowers our layer for a chat and notifies the peer.
    public func setMaxLayer(chatID: Int32, _ layer: SecretLayer) async throws {
        try await perform(engine.setMaxLayer(chatID: chatID, layer))
    }

    // MARK: Updates

    /// Feeds the secret-chat updates among `updates` to the engine; others are ignored.
    public func handle(_ updates: Api.Updates) async throws {
        let list: [Api.Update]
        switch updates {
        case .updates(let u): list = u.updates
        case .updatesCombined(let u): list = u.updates
        case .updateShort(let u): list = [u.update]
        default: list = []
        }
        for update in list { try await handle(update) }
    }

    /// Feeds one update to the engine: `updateEncryption`, `updateNewEncryptedMessage` and
    /// `updateEncryptedMessagesRead` are acted on, other updates are ignored. Throws what the API call or the
    /// store throws; a message that fails the engine's checks is reported as an event, not thrown.
    public func handle(_ update: Api.Update) async throws {
        switch update {
        case .updateEncryption(let u):
            switch u.chat {
            case .encryptedChatRequested(let c):
                try await perform(engine.handleRequested(chatID: c.id, accessHash: c.accessHash, peerUserID: c.adminId,
                                                         gA: c.gA))
                if options.autoAccept { try await accept(chatID: c.id) }
            case .encryptedChat(let c):
                if engine.chats[c.id]?.phase == .waiting {
                    if engine.dhConfig == nil { _ = try await refreshDH() }
                    try await perform(engine.handleAccepted(chatID: c.id, accessHash: c.accessHash, gB: c.gAOrB,
                                                            keyFingerprint: c.keyFingerprint, now: now()))
                }
            case .encryptedChatDiscarded(let c):
                try await perform(engine.handleDiscarded(chatID: c.id))
            default:
                break
            }
        case .updateNewEncryptedMessage(let u):
            try await handle(u.message)
        default:
            break
        }
    }

    /// One encrypted message, as `updateNewEncryptedMessage` or `updates.getDifference`'s `new_encrypted_messages`
    /// carry it (after a gap in qts, pass those here in order).
    public func handle(_ message: Api.EncryptedMessage) async throws {
        switch message {
        case .encryptedMessage(let m):
            try await perform(engine.handleMessage(chatID: m.chatId, data: m.bytes, date: m.date, file: Self.reference(m.file),
                                                   now: now()))
        case .encryptedMessageService(let m):
            try await perform(engine.handleMessage(chatID: m.chatId, data: m.bytes, date: m.date, now: now()))
        }
    }

    /// Starts re-keys that are due by age; call now and then (e.g. hourly).
    public func tick() async throws {
        try await perform(engine.tick(now: now()))
    }

    // MARK: Internals

    private func now() -> Double { Date().timeIntervalSince1970 }

    /// messages.getDhConfig with our version; returns the fresh random to mix into the exponent.
    private func refreshDH() async throws -> [UInt8] {
        let answer = try await client.invoke(Api.functions.messages.getDhConfig(
            version: engine.dhConfig?.version ?? 0, randomLength: 256))
        switch answer {
        case .dhConfig(let c):
            try engine.setDHConfig(SecretDHConfig(prime: c.p, g: c.g, version: c.version))
            return c.random
        case .dhConfigNotModified(let c):
            guard engine.dhConfig != nil else { throw SecretChatError.invalidState("dhConfigNotModified without a config") }
            return c.random
        }
    }

    /// Saves the state, publishes events, and queues the envelopes behind any batch still being sent.
    private func perform(_ outputs: [SecretChatOutput]) async throws {
        try await save()
        var outgoing: [SecretOutgoing] = []
        var aborted: [Int32] = []
        for output in outputs {
            switch output {
            case .send(let message): outgoing.append(message)
            case .event(let event):
                eventsSink.yield(event)
                if case .aborted(let id, _) = event { aborted.append(id) }
            }
        }
        let previous = sendChain
        let batch = Task { [weak self] () -> (any Error)? in
            _ = await previous?.value  // the earlier batch's failure is its caller's
            guard let self else { return nil }
            for message in outgoing {
                do { try await self.deliver(message) } catch { return error }
            }
            return nil
        }
        sendChain = batch
        if let error = await batch.value { throw error }
        for id in aborted {
            _ = try? await client.invoke(Api.functions.messages.discardEncryption(deleteHistory: false, chatId: id))
        }
    }

    private func inputChat(_ chatID: Int32) throws(SecretChatError) -> Api.InputEncryptedChat {
        guard let chat = engine.chats[chatID] else { throw .unknownChat(chatID) }
        return .inputEncryptedChat(.init(chatId: chatID, accessHash: chat.accessHash))
    }

    private static func reference(_ file: Api.EncryptedFile) -> SecretFileReference? {
        guard case .encryptedFile(let f) = file else { return nil }
        return SecretFileReference(id: f.id, accessHash: f.accessHash, size: f.size, dcID: f.dcId,
                                   keyFingerprint: f.keyFingerprint)
    }

    private func deliver(_ message: SecretOutgoing) async throws {
        let peer = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: message.chatID, accessHash: message.accessHash))
        if let attachment = message.attachment {
            let file: Api.InputEncryptedFile
            switch attachment {
            case .uploaded(let id, let parts, let md5?, let fingerprint):
                file = .inputEncryptedFileUploaded(.init(id: id, parts: parts, md5Checksum: md5, keyFingerprint: fingerprint))
            case .uploaded(let id, let parts, nil, let fingerprint):
                file = .inputEncryptedFileBigUploaded(.init(id: id, parts: parts, keyFingerprint: fingerprint))
            case .existing(let id, let accessHash):
                file = .inputEncryptedFile(.init(id: id, accessHash: accessHash))
            }
            let sent = try await client.invoke(Api.functions.messages.sendEncryptedFile(
                peer: peer, randomId: message.randomID, data: message.data, file: file))
            if case .sentEncryptedFile(let s) = sent, let file = Self.reference(s.file), let seq = message.outSeqNo {
                engine.fileSent(chatID: message.chatID, outSeqNo: seq, file: file)
                try await save()
            }
        } else if message.isService {
            _ = try await client.invoke(Api.functions.messages.sendEncryptedService(
                peer: peer, randomId: message.randomID, data: message.data))
        } else {
            _ = try await client.invoke(Api.functions.messages.sendEncrypted(
                peer: peer, randomId: message.randomID, data: message.data))
        }
    }

    private func save() async throws {
        guard let store = options.store else { return }
        let chats = StoredSecretChats(chats: engine.chats.keys.sorted().compactMap { engine.chats[$0] }, dhConfig: engine.dhConfig)
        try await store.save([.secretChats(chats)])
    }
}
