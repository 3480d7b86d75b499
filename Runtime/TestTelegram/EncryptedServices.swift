// Secret chats as Telegram's servers relay them (core.telegram.org/api/end-to-end): `messages.getDhConfig`, the
// request/accept/discard handshake carried by `updateEncryption`, encrypted messages, service messages and files
// passed to the other party with one qts per account (core.telegram.org/api/updates), `messages.receivedQueue`,
// read receipts and typing. The server never holds a key: it checks g_a and g_b against the DH range rules, stores
// opaque bytes and hands them on. Chats, queued messages and files are bounded (`Limits.secretChats`).
//
// Updates here carry no pts and take no seq: they go out as `updates` with seq 0 (outside the seq sequence), the
// encrypted messages numbered by the recipient's qts. `updates.getDifference` returns queued messages after the
// client's qts, and the latest `updateEncryption` / `updateEncryptedMessagesRead` of each chat dated at or after the
// client's date (so a party that was offline still learns of a request or an acceptance; one that was online may
// see it twice, which a client must take as the same state).
import MTProto
import MTProtoCrypto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    /// Bounds on secret chats (`Limits.secretChats`).
    public struct SecretChatLimits: Sendable {
        /// Chats an account takes part in. A new chat past it makes room by forgetting the account's oldest
        /// discarded chat; with none discarded the request is refused with SECRET_CHATS_TOO_MANY (this server's own
        /// error: Telegram documents none).
        public var maxChatsPerAccount = 1_000
        /// Encrypted messages kept per account until `messages.receivedQueue` acknowledges them, and their bytes.
        /// Past either the oldest are forgotten, and a client whose qts is older gets `differenceTooLong`.
        public var maxQueuedMessages = 1_000
        /// Bytes of encrypted messages queued per account.
        public var maxQueuedBytes = 16 << 20
        /// Longest `data` of one encrypted message (DATA_TOO_LONG).
        public var maxDataBytes = 64 << 10
        /// Encrypted messages in one `updates.getDifference` answer, and their bytes; more come as `differenceSlice`.
        public var maxMessagesPerDifference = 100
        /// Bytes of encrypted messages in one `updates.getDifference` answer.
        public var maxBytesPerDifference = 512 << 10
        /// Stored encrypted files and their bytes, in all (FILE_STORAGE_FULL past either).
        public var maxFiles = 100_000
        /// Bytes of stored encrypted files, in all.
        public var maxFileBytes = 512 << 20

        /// The defaults.
        public init() {}
    }

    /// `messages.getDhConfig` answers at most this many random bytes (Telegram documents RANDOM_LENGTH_INVALID but
    /// not its bound; clients ask for 256).
    static let maxDHRandomLength: Int32 = 1024
    /// The DH config's version: the prime never changes, so a client holding version 1 gets `dhConfigNotModified`.
    static let dhConfigVersion: Int32 = 1
    /// The auth-key exchange's prime and generator, which Telegram also sends for secret chats.
    static let secretChatDH = try? DHParameters(prime: DHPrimeCache.telegramPrime, g: 3)

    func registerEncrypted(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.messages.GetDhConfig.self, dhConfig)
        handlers.on(Api.functions.messages.RequestEncryption.self, requestEncryption)
        handlers.on(Api.functions.messages.AcceptEncryption.self, acceptEncryption)
        handlers.on(Api.functions.messages.DiscardEncryption.self, discardEncryption)
        handlers.on(Api.functions.messages.SendEncrypted.self) { [self] call, request throws(RPCError) in
            try sendEncrypted(call, kind: .message, peer: request.peer, randomID: request.randomId, data: request.data)
        }
        handlers.on(Api.functions.messages.SendEncryptedService.self) { [self] call, request throws(RPCError) in
            try sendEncrypted(call, kind: .service, peer: request.peer, randomID: request.randomId, data: request.data)
        }
        handlers.on(Api.functions.messages.SendEncryptedFile.self) { [self] call, request throws(RPCError) in
            try sendEncrypted(call, kind: .file, peer: request.peer, randomID: request.randomId, data: request.data,
                              file: request.file)
        }
        handlers.on(Api.functions.messages.UploadEncryptedFile.self, uploadEncryptedFile)
        handlers.on(Api.functions.messages.ReadEncryptedHistory.self, readEncryptedHistory)
        handlers.on(Api.functions.messages.SetEncryptedTyping.self, setEncryptedTyping)
        handlers.on(Api.functions.messages.ReceivedQueue.self, receivedQueue)
    }

    // MARK: The handshake

    private func dhConfig(_ call: RPCCall, _ request: Api.functions.messages.GetDhConfig)
        throws(RPCError) -> Api.messages.DhConfig {
        _ = try caller(call)
        let version = request.version
        let length = request.randomLength
        guard (0...Self.maxDHRandomLength).contains(length) else { throw RPCError(code: 400, message: "RANDOM_LENGTH_INVALID") }
        let bytes = random.bytes(Int(length))
        if version == Self.dhConfigVersion {
            return Api.messages.DhConfig.dhConfigNotModified(.init(random: bytes))
        }
        return Api.messages.DhConfig.dhConfig(.init(
            g: 3, p: DHPrimeCache.telegramPrime, version: Self.dhConfigVersion, random: bytes))
    }

    /// g_a and g_b are 256 bytes with 1 < v < p − 1 and 2^(2048−64) < v < p − 2^(2048−64)
    /// (core.telegram.org/api/end-to-end, "Key Generation").
    private static func checkPublicValue(_ value: [UInt8], error name: String) throws(RPCError) {
        guard value.count == 256, let dh = secretChatDH, (try? dh.checkPublicValue(value, name: "g")) != nil else {
            throw RPCError(code: 400, message: name)
        }
    }

    /// Creates a chat waiting for the participant: the requester gets `encryptedChatWaiting`, the participant
    /// `updateEncryption(encryptedChatRequested)` with g_a. Each party has its own access hash.
    private func requestEncryption(_ call: RPCCall, _ request: Api.functions.messages.RequestEncryption)
        throws(RPCError) -> Api.EncryptedChat {
        let me = try caller(call)
        let user = request.userId
        let randomID = request.randomId
        let gA = request.gA
        try Self.checkPublicValue(gA, error: "DH_G_A_INVALID")
        // Chat ids are positive; a few draws make a collision with a live id vanishingly unlikely.
        let candidates = (0..<4).map { _ in Int32(truncatingIfNeeded: random.int64()) & Int32.max }
        let hashes = (admin: random.int64(), participant: random.int64())
        let date = Self.date(call)
        let limit = limits.secretChats.maxChatsPerAccount
        let (answer, deliveries) = try state.withLock { state throws(RPCError) -> (Api.EncryptedChat, [Delivery]) in
            guard let to = state.resolve(user, me: me), to != me else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
            guard let id = candidates.first(where: { $0 > 0 && state.secret.chats[$0] == nil }) else {
                throw RPCError(code: 500, message: "CHAT_ID_GENERATE_FAILED")
            }
            guard state.secret.boxes[me]?.requestIDs.contains(randomID) != true else {
                throw RPCError(code: 400, message: "RANDOM_ID_DUPLICATE")
            }
            try state.secret.makeRoom(for: me, limit: limit)
            try state.secret.makeRoom(for: to, limit: limit)
            _ = state.secret.boxes[me, default: SecretBox()].requestIDs.insert(randomID)
            let chat = SecretChat(id: id, admin: me, participant: to, adminAccessHash: hashes.admin,
                                  participantAccessHash: hashes.participant, date: date, gA: gA)
            state.secret.chats[id] = chat
            state.secret.boxes[me, default: SecretBox()].chats.append(id)
            state.secret.boxes[to, default: SecretBox()].chats.append(id)
            return (chat.api(for: me), state.announce(id, date: date))
        }
        push(deliveries, except: call)
        return answer
    }

    /// The participant accepts with g_b: it gets `encryptedChat` carrying g_a, the requester `updateEncryption`
    /// carrying g_b; both carry the key fingerprint the participant computed (the server cannot check it).
    private func acceptEncryption(_ call: RPCCall, _ request: Api.functions.messages.AcceptEncryption)
        throws(RPCError) -> Api.EncryptedChat {
        let me = try caller(call)
        let date = Self.date(call)
        let (answer, deliveries) = try state.withLock { state throws(RPCError) -> (Api.EncryptedChat, [Delivery]) in
            guard let chat = state.secret.chat(request.peer, me: me), chat.participant == me else {
                throw RPCError(code: 400, message: "CHAT_ID_INVALID")
            }
            switch chat.phase {
            case .discarded: throw RPCError(code: 400, message: "ENCRYPTION_ALREADY_DECLINED")
            case .accepted: throw RPCError(code: 400, message: "ENCRYPTION_ALREADY_ACCEPTED")
            case .requested: break
            }
            // Not in Telegram's published list for this method; the name other reimplementations use.
            try Self.checkPublicValue(request.gB, error: "DH_G_B_INVALID")
            state.secret.chats[chat.id]?.accept(gB: request.gB, keyFingerprint: request.keyFingerprint)
            let deliveries = state.announce(chat.id, date: date)
            return (state.secret.chats[chat.id]?.api(for: me) ?? .encryptedChatEmpty(.init(id: chat.id)), deliveries)
        }
        push(deliveries, except: call)
        return answer
    }

    /// Either party ends the chat, accepted or not: both get `encryptedChatDiscarded`.
    private func discardEncryption(_ call: RPCCall, _ request: Api.functions.messages.DiscardEncryption)
        throws(RPCError) -> Bool {
        let me = try caller(call)
        let chatID = request.chatId
        let deleteHistory = request.deleteHistory
        let date = Self.date(call)
        guard chatID != 0 else { throw RPCError(code: 400, message: "CHAT_ID_EMPTY") }
        let deliveries = try state.withLock { state throws(RPCError) -> [Delivery] in
            guard let chat = state.secret.chats[chatID], chat.accessHash(for: me) != nil else {
                throw RPCError(code: 400, message: "ENCRYPTION_ID_INVALID")
            }
            guard chat.phase != .discarded else { throw RPCError(code: 400, message: "ENCRYPTION_ALREADY_DECLINED") }
            state.secret.chats[chatID]?.phase = .discarded
            state.secret.chats[chatID]?.historyDeleted = deleteHistory
            return state.announce(chatID, date: date)
        }
        push(deliveries, except: call)
        return true
    }

    // MARK: Messages

    enum EncryptedKind {
        case message, service, file
    }

    /// Relays `data` (and a file) to the other party as `updateNewEncryptedMessage` with its next qts; the sender
    /// gets the date. `data` is key_fingerprint (8 bytes), msg_key (16) and whole AES blocks
    /// (core.telegram.org/api/end-to-end, "Sending encrypted messages"); the server looks no further.
    private func sendEncrypted(_ call: RPCCall, kind: EncryptedKind, peer: Api.InputEncryptedChat, randomID: Int64,
                               data: [UInt8], file input: Api.InputEncryptedFile? = nil)
        throws(RPCError) -> Api.messages.SentEncryptedMessage {
        let me = try caller(call)
        let limits = limits.secretChats
        guard data.count <= limits.maxDataBytes else { throw RPCError(code: 400, message: "DATA_TOO_LONG") }
        guard data.count >= 24 + 16, (data.count - 24) % 16 == 0 else { throw RPCError(code: 400, message: "DATA_INVALID") }
        let dropAt = faults?.dropEncryptedMessage
        let fileID = random.int64(), fileHash = random.int64()
        let date = Self.date(call)
        let dcID = call.endpoint.dcID
        let (answer, delivery) = try state.withLock { state throws(RPCError) -> (Api.messages.SentEncryptedMessage, Delivery?) in
            let chat = try state.secret.usableChat(peer, me: me)
            guard state.secret.chats[chat.id]?.randomIDs.contains(randomID) != true else {
                throw RPCError(code: 400, message: "RANDOM_ID_DUPLICATE")
            }
            var file: StoredEncryptedFile?
            if let input {
                file = try state.storeEncryptedFile(input, me: me, dcID: dcID, id: fileID, accessHash: fileHash, date: date,
                                                    limits: limits)
            }
            let answer: Api.messages.SentEncryptedMessage = file.map { .sentEncryptedFile(.init(date: date, file: $0.api)) }
                ?? .sentEncryptedMessage(.init(date: date))
            // The fault: accepted and answered, never delivered; its random_id is not kept, so a resend goes through.
            // Only ordinary messages count: service traffic (layer notices, re-keys) varies with the peers' timing.
            if kind == .message {
                state.secret.relayed += 1
                if state.secret.relayed == dropAt { return (answer, nil) }
            }
            _ = state.secret.chats[chat.id]?.randomIDs.insert(randomID)
            let message: Api.EncryptedMessage = kind == .service
                ? .encryptedMessageService(.init(randomId: randomID, chatId: chat.id, date: date, bytes: data))
                : .encryptedMessage(.init(randomId: randomID, chatId: chat.id, date: date, bytes: data,
                                          file: file?.api ?? .encryptedFileEmpty))
            let delivery = state.secret.enqueue(message, randomID: randomID, size: data.count, for: chat.other, date: date,
                                                limits: limits)
            return (answer, delivery)
        }
        if let delivery { push(delivery.update, to: delivery.user, except: call) }
        return answer
    }

    /// Stores an uploaded encrypted file for a chat without sending it.
    private func uploadEncryptedFile(_ call: RPCCall, _ request: Api.functions.messages.UploadEncryptedFile)
        throws(RPCError) -> Api.EncryptedFile {
        let me = try caller(call)
        let peer = request.peer
        let input = request.file
        let fileID = random.int64(), fileHash = random.int64()
        let date = Self.date(call)
        let limits = limits.secretChats
        let file = try state.withLock { state throws(RPCError) -> StoredEncryptedFile in
            _ = try state.secret.usableChat(peer, me: me)
            return try state.storeEncryptedFile(input, me: me, dcID: call.endpoint.dcID, id: fileID, accessHash: fileHash,
                                                date: date, limits: limits)
        }
        return file.api
    }

    /// The other party learns how far its messages were read (`updateEncryptedMessagesRead`), once per advance.
    private func readEncryptedHistory(_ call: RPCCall, _ request: Api.functions.messages.ReadEncryptedHistory)
        throws(RPCError) -> Bool {
        let me = try caller(call)
        let peer = request.peer
        let maxDate = request.maxDate
        let date = Self.date(call)
        guard maxDate <= date else { throw RPCError(code: 400, message: "MAX_DATE_INVALID") }
        let delivery = try state.withLock { state throws(RPCError) -> Delivery? in
            let chat = try state.secret.usableChat(peer, me: me)
            guard maxDate > state.secret.chats[chat.id]?.readMaxDate[me] ?? 0 else { return nil }
            state.secret.chats[chat.id]?.readMaxDate[me] = maxDate
            let update = Api.Update.updateEncryptedMessagesRead(.init(chatId: chat.id, maxDate: maxDate, date: date))
            return state.secret.deliver(update, to: chat.other, users: [], date: date,
                                        logAs: SecretEventKey(chat: chat.id, read: true))
        }
        if let delivery { push(delivery.update, to: delivery.user, except: call) }
        return true
    }

    /// `updateEncryptedChatTyping` to the other party while typing; not kept for `getDifference`.
    private func setEncryptedTyping(_ call: RPCCall, _ request: Api.functions.messages.SetEncryptedTyping)
        throws(RPCError) -> Bool {
        let me = try caller(call)
        let peer = request.peer
        let typing = request.typing
        let date = Self.date(call)
        let delivery = try state.withLock { state throws(RPCError) -> Delivery? in
            let chat = try state.secret.usableChat(peer, me: me)
            guard typing else { return nil }
            return state.secret.deliver(.updateEncryptedChatTyping(.init(chatId: chat.id)), to: chat.other, users: [],
                                        date: date, logAs: nil)
        }
        if let delivery { push(delivery.update, to: delivery.user, except: call) }
        return true
    }

    /// Acknowledges the queued messages up to `max_qts`: the server forgets them and answers their random_ids.
    private func receivedQueue(_ call: RPCCall, _ request: Api.functions.messages.ReceivedQueue)
        throws(RPCError) -> [Int64] {
        let me = try caller(call)
        let maxQts = request.maxQts
        let randomIDs = try state.withLock { state throws(RPCError) -> [Int64] in
            guard maxQts >= 0, maxQts <= state.secret.boxes[me]?.qts ?? 0 else {
                throw RPCError(code: 400, message: "MAX_QTS_INVALID")
            }
            return state.secret.boxes[me]?.acknowledge(upTo: maxQts) ?? []
        }
        return randomIDs
    }
}

/// The last `limit` values inserted, to refuse a repeated random_id.
struct RecentSet<Value: Hashable> {
    let limit: Int
    private var values: Set<Value> = []
    private var order: [Value] = []

    init(limit: Int) { self.limit = limit }

    func contains(_ value: Value) -> Bool { values.contains(value) }

    /// Inserts `value`; false if it was there. Past `limit` the oldest is forgotten.
    mutating func insert(_ value: Value) -> Bool {
        guard values.insert(value).inserted else { return false }
        order.append(value)
        if order.count > limit { values.remove(order.removeFirst()) }
        return true
    }
}

/// A secret chat between its requester (`admin`) and `participant`, as the server sees it: no key, only the public
/// values and the fingerprint the participant announced.
struct SecretChat {
    enum Phase {
        case requested, accepted, discarded
    }

    let id: Int32
    let admin: Int64
    let participant: Int64
    let adminAccessHash: Int64
    let participantAccessHash: Int64
    let date: Int32
    let gA: [UInt8]
    var gB: [UInt8] = []
    var keyFingerprint: Int64 = 0
    var phase = Phase.requested
    var historyDeleted = false
    /// random_ids relayed here, so a send repeated over a reconnect is refused, never delivered twice.
    var randomIDs = RecentSet<Int64>(limit: 1_000)
    /// How far each party has read, by `max_date`.
    var readMaxDate: [Int64: Int32] = [:]

    init(id: Int32, admin: Int64, participant: Int64, adminAccessHash: Int64, participantAccessHash: Int64, date: Int32,
         gA: [UInt8]) {
        self.id = id
        self.admin = admin
        self.participant = participant
        self.adminAccessHash = adminAccessHash
        self.participantAccessHash = participantAccessHash
        self.date = date
        self.gA = gA
    }

    /// `user`'s access hash, nil if it takes no part.
    func accessHash(for user: Int64) -> Int64? {
        user == admin ? adminAccessHash : user == participant ? participantAccessHash : nil
    }

    mutating func accept(gB: [UInt8], keyFingerprint: Int64) {
        self.gB = gB
        self.keyFingerprint = keyFingerprint
        phase = .accepted
    }

    /// The chat as `viewer` sees it: waiting or requested before acceptance, then the other party's public value.
    func api(for viewer: Int64) -> Api.EncryptedChat {
        let hash = accessHash(for: viewer) ?? 0
        switch phase {
        case .requested where viewer == admin:
            return .encryptedChatWaiting(.init(id: id, accessHash: hash, date: date, adminId: admin,
                                               participantId: participant))
        case .requested:
            return .encryptedChatRequested(.init(id: id, accessHash: hash, date: date, adminId: admin,
                                                 participantId: participant, gA: gA))
        case .accepted:
            return .encryptedChat(.init(id: id, accessHash: hash, date: date, adminId: admin, participantId: participant,
                                        gAOrB: viewer == admin ? gB : gA, keyFingerprint: keyFingerprint))
        case .discarded:
            return .encryptedChatDiscarded(.init(historyDeleted: historyDeleted, id: id))
        }
    }
}

/// Which dated update of a chat an account keeps for `getDifference`: its state or its read receipt.
struct SecretEventKey: Hashable {
    let chat: Int32
    let read: Bool
}

/// An encrypted message waiting in an account's queue.
struct QueuedEncrypted {
    let qts: Int32
    let randomID: Int64
    let message: Api.EncryptedMessage
    let size: Int
}

/// One account's side of secret chats: its qts, the queue `getDifference` reads, its chats and dated updates.
struct SecretBox {
    var qts: Int32 = 0
    var queue: [QueuedEncrypted] = []
    var queueBytes = 0
    /// The newest qts forgotten by the bound before it was acknowledged: a client behind it missed messages.
    var lostUpTo: Int32 = 0
    /// The chats this account takes part in, oldest first.
    var chats: [Int32] = []
    /// The latest `updateEncryption` and `updateEncryptedMessagesRead` of each chat, numbered in the order logged.
    var events: [SecretEventKey: (order: Int, date: Int32, update: Api.Update)] = [:]
    var nextEvent = 0
    /// random_ids of this account's `requestEncryption` calls.
    var requestIDs = RecentSet<Int32>(limit: 1_000)
    /// Other updates numbered by this qts (bots' `updateChannelParticipant`: ParticipantServices.swift), the latest
    /// 100, with the users they name.
    var qtsUpdates: [(qts: Int32, update: Api.Update, users: [Int64])] = []

    mutating func forget(chat id: Int32) {
        chats.removeAll { $0 == id }
        events = events.filter { $0.key.chat != id }
    }

    /// Keeps `update` as the latest of its kind for its chat.
    mutating func note(_ update: Api.Update, as key: SecretEventKey, date: Int32) {
        nextEvent += 1
        events[key] = (nextEvent, date, update)
    }

    /// Queues a message with the next qts, forgetting the oldest past the bounds (never the new one); returns the qts.
    mutating func enqueue(_ message: Api.EncryptedMessage, randomID: Int64, size: Int,
                          limits: TestTelegramService.SecretChatLimits) -> Int32 {
        qts &+= 1
        queue.append(QueuedEncrypted(qts: qts, randomID: randomID, message: message, size: size))
        queueBytes += size
        while queue.count > 1, queue.count > limits.maxQueuedMessages || queueBytes > limits.maxQueuedBytes {
            let old = queue.removeFirst()
            queueBytes -= old.size
            lostUpTo = old.qts
        }
        return qts
    }

    /// Forgets the queued messages up to `maxQts`; returns their random_ids.
    mutating func acknowledge(upTo maxQts: Int32) -> [Int64] {
        let count = queue.prefix { $0.qts <= maxQts }.count
        let acknowledged = queue.prefix(count)
        queueBytes -= acknowledged.reduce(0) { $0 + $1.size }
        let ids = acknowledged.map(\.randomID)
        queue.removeFirst(count)
        return ids
    }
}

/// A stored encrypted file: opaque bytes on the DC they were uploaded to.
struct StoredEncryptedFile {
    let id: Int64
    let accessHash: Int64
    let dcID: Int32
    let keyFingerprint: Int32
    let date: Int32
    let bytes: [UInt8]

    var api: Api.EncryptedFile {
        .encryptedFile(.init(id: id, accessHash: accessHash, size: Int64(bytes.count), dcId: dcID,
                             keyFingerprint: keyFingerprint))
    }
}

/// Every secret chat, queue and encrypted file of the service.
struct SecretChatsState {
    var chats: [Int32: SecretChat] = [:]
    var boxes: [Int64: SecretBox] = [:]
    var files: [Int64: StoredEncryptedFile] = [:]
    var fileBytes = 0
    /// `messages.sendEncrypted` calls relayed since the service started: what `FaultPlan.dropEncryptedMessage` counts.
    var relayed = 0

    /// The chat an input names, when `me` takes part in it and gave its own access hash.
    func chat(_ peer: Api.InputEncryptedChat, me: Int64) -> SecretChat? {
        guard case .inputEncryptedChat(let input) = peer, let chat = chats[input.chatId],
              let hash = chat.accessHash(for: me), hash == input.accessHash
        else { return nil }
        return chat
    }

    /// An accepted chat `me` takes part in: its id and the other party. CHAT_ID_INVALID for a chat that is
    /// unknown, someone else's or not accepted yet; ENCRYPTION_DECLINED once discarded.
    func usableChat(_ peer: Api.InputEncryptedChat, me: Int64) throws(RPCError) -> (id: Int32, other: Int64) {
        guard let chat = chat(peer, me: me) else { throw RPCError(code: 400, message: "CHAT_ID_INVALID") }
        switch chat.phase {
        case .accepted: return (chat.id, chat.admin == me ? chat.participant : chat.admin)
        case .discarded: throw RPCError(code: 400, message: "ENCRYPTION_DECLINED")
        case .requested: throw RPCError(code: 400, message: "CHAT_ID_INVALID")
        }
    }

    func qts(of user: Int64) -> Int32 { boxes[user]?.qts ?? 0 }

    /// The update `make` builds with `user`'s next qts, kept for `getDifference` (the latest 100).
    mutating func logQts(for user: Int64, users: [Int64], _ make: (Int32) -> Api.Update) -> Api.Update {
        var box = boxes[user, default: SecretBox()]
        box.qts &+= 1
        let update = make(box.qts)
        box.qtsUpdates.append((box.qts, update, users))
        if box.qtsUpdates.count > 100 { box.qtsUpdates.removeFirst(box.qtsUpdates.count - 100) }
        boxes[user] = box
        return update
    }

    /// Makes room for one more chat of `user` at the bound by forgetting its oldest discarded chat.
    mutating func makeRoom(for user: Int64, limit: Int) throws(RPCError) {
        let ids = boxes[user]?.chats ?? []
        guard ids.count >= limit else { return }
        guard let oldest = ids.first(where: { chats[$0]?.phase == .discarded }) else {
            throw RPCError(code: 400, message: "SECRET_CHATS_TOO_MANY")
        }
        guard let chat = chats.removeValue(forKey: oldest) else { return }
        for party in [chat.admin, chat.participant] { boxes[party]?.forget(chat: oldest) }
    }

    /// The `updates` (seq 0) carrying `update` to `user`, kept for `getDifference` under `logAs` if given.
    mutating func deliver(_ update: Api.Update, to user: Int64, users: [Api.User], date: Int32,
                          logAs key: SecretEventKey?) -> Delivery {
        if let key { boxes[user, default: SecretBox()].note(update, as: key, date: date) }
        return (user, .updates(.init(updates: [update], users: users, chats: [], date: date, seq: 0)))
    }

    /// Queues an encrypted message for `user` with its next qts, forgetting the oldest past the bounds, and
    /// returns the `updateNewEncryptedMessage` to push.
    mutating func enqueue(_ message: Api.EncryptedMessage, randomID: Int64, size: Int, for user: Int64, date: Int32,
                          limits: TestTelegramService.SecretChatLimits) -> Delivery {
        let qts = boxes[user, default: SecretBox()].enqueue(message, randomID: randomID, size: size, limits: limits)
        return deliver(.updateNewEncryptedMessage(.init(message: message, qts: qts)), to: user, users: [], date: date,
                       logAs: nil)
    }

    /// What `updates.getDifference` adds for secret chats: queued messages after `qts` (a slice past the
    /// per-answer bounds, with the qts reached), and the dated updates from `date` on.
    func difference(for user: Int64, qts: Int32, since date: Int32,
                    limits: TestTelegramService.SecretChatLimits) -> SecretDifference {
        guard let box = boxes[user] else { return SecretDifference(qts: 0) }
        var result = SecretDifference(qts: box.qts)
        guard qts >= box.lostUpTo else {
            result.tooLong = true
            return result
        }
        var bytes = 0
        for entry in box.queue where entry.qts > qts {
            if !result.messages.isEmpty,
               result.messages.count >= limits.maxMessagesPerDifference || bytes + entry.size > limits.maxBytesPerDifference {
                result.isFinal = false
                break
            }
            result.messages.append(entry.message)
            bytes += entry.size
            result.qts = entry.qts
        }
        if result.isFinal { result.qts = box.qts }
        for entry in box.qtsUpdates where entry.qts > qts && entry.qts <= result.qts {
            result.updates.append(entry.update)
            result.users += entry.users
        }
        for (key, event) in box.events.sorted(by: { $0.value.order < $1.value.order }) where event.date >= date {
            result.updates.append(event.update)
            if let chat = chats[key.chat] { result.users += [chat.admin, chat.participant] }
        }
        return result
    }
}

/// The secret-chat part of an `updates.getDifference` answer.
struct SecretDifference {
    var messages: [Api.EncryptedMessage] = []
    var updates: [Api.Update] = []
    var users: [Int64] = []
    /// The qts the answer brings the client to.
    var qts: Int32
    /// False when more messages wait (the answer is a `differenceSlice`).
    var isFinal = true
    /// The client's qts is older than messages already forgotten.
    var tooLong = false

    var isEmpty: Bool { messages.isEmpty && updates.isEmpty }
}

extension ServiceState {
    /// `updateEncryption` with the chat's state to both parties, each as it sees the chat (and kept for
    /// `getDifference`).
    mutating func announce(_ id: Int32, date: Int32) -> [Delivery] {
        guard let chat = secret.chats[id] else { return [] }
        return [chat.participant, chat.admin].map { user in
            secret.deliver(.updateEncryption(.init(chat: chat.api(for: user), date: date)), to: user,
                           users: users([chat.admin, chat.participant], viewer: user), date: date,
                           logAs: SecretEventKey(chat: id, read: false))
        }
    }

    /// The encrypted file an input names: a finished upload of `me` on `dcID` (consumed), or one already stored.
    mutating func storeEncryptedFile(_ input: Api.InputEncryptedFile, me: Int64, dcID: Int32, id: Int64,
                                     accessHash: Int64, date: Int32,
                                     limits: TestTelegramService.SecretChatLimits) throws(RPCError) -> StoredEncryptedFile {
        let fileID: Int64, parts: Int32, md5: String?, big: Bool, fingerprint: Int32
        switch input {
        case .inputEncryptedFileEmpty:
            throw RPCError(code: 400, message: "FILE_EMTPY")  // sic: Telegram's spelling
        case .inputEncryptedFile(let existing):
            return try secret.file(existing.id, accessHash: existing.accessHash)
        case .inputEncryptedFileUploaded(let file):
            // An empty checksum skips the check (core.telegram.org/constructor/inputEncryptedFileUploaded).
            (fileID, parts, md5, big, fingerprint) = (file.id, file.parts, file.md5Checksum.isEmpty ? nil : file.md5Checksum,
                                                      false, file.keyFingerprint)
        case .inputEncryptedFileBigUploaded(let file):
            (fileID, parts, md5, big, fingerprint) = (file.id, file.parts, nil, true, file.keyFingerprint)
        }
        guard let account = accounts[me] else { throw RPCError(code: 400, message: "FILE_PARTS_INVALID") }
        let bytes = try account.assembleUpload(fileID, parts: parts, big: big, md5: md5, dcID: dcID)
        guard secret.files.count < limits.maxFiles, secret.fileBytes + bytes.count <= limits.maxFileBytes else {
            throw RPCError(code: 400, message: "FILE_STORAGE_FULL")
        }
        accounts[me]?.dropUpload(fileID)
        let file = StoredEncryptedFile(id: id, accessHash: accessHash, dcID: dcID, keyFingerprint: fingerprint, date: date,
                                       bytes: bytes)
        secret.files[id] = file
        secret.fileBytes += bytes.count
        return file
    }
}

extension SecretChatsState {
    /// A stored encrypted file, by id and access hash.
    func file(_ id: Int64, accessHash: Int64) throws(RPCError) -> StoredEncryptedFile {
        guard let file = files[id], file.accessHash == accessHash else { throw RPCError(code: 400, message: "FILE_ID_INVALID") }
        return file
    }
}
