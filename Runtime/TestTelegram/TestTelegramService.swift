// The stateful half of the test Telegram: accounts, login, private chats with per-user message boxes and update
// state (pts/seq/date), channels with their own boxes, uploads and documents, shared by every DC of one cluster. One
// lock guards it all; handlers hold it only while they read or change state, never while they push updates to other
// sessions. Every table is bounded by `TestTelegramService.Limits`, so a client that makes accounts, messages or
// uploads without end costs a fixed amount of memory and gets an `rpc_error` once a bound is hit.
import MTProto
import MTProtoCrypto
import MTProtoServer
import Synchronization
import TLRuntime
import TelegramApi

/// An update for one account: what a handler pushes once it has let go of the state.
typealias Delivery = (user: Int64, update: Api.Updates)

/// The test Telegram's accounts, chats and files, with the handlers that serve them.
///
/// ```swift
/// let service = TestTelegramService()
/// try service.addUser(phone: "9996620001", firstName: "Alice")
/// let server = try await MTProtoTestServer.start(.init(rsaKeys: [key], handlers: service.handlers(), dcIDs: [1, 2]))
/// service.attach(server)   // so new messages reach the recipient's other sessions
/// ```
public final class TestTelegramService: Sendable {
    /// Bounds on what clients can make the service hold.
    public struct Limits: Sendable {
        /// Accounts in all (past it `auth.signUp` and `addUser` fail).
        public var maxAccounts = 10_000
        /// Auth keys logged in, across DCs.
        public var maxAuthorizations = 20_000
        /// Messages kept per account (the oldest are forgotten first).
        public var maxMessagesPerAccount = 10_000
        /// Updates kept per account for `updates.getDifference`; a client further behind gets `differenceTooLong`.
        public var maxUpdateLog = 1_000
        /// Bytes of unfinished uploads per account, and of stored documents in all.
        public var maxUploadBytesPerAccount = 64 << 20
        /// Bytes of stored documents, in all.
        public var maxStoredFileBytes = 512 << 20
        /// Login codes and exported authorizations waiting to be used.
        public var maxPendingCodes = 10_000
        /// Seconds a login code and an exported authorization stay valid.
        public var codeLifetime: Double = 300
        /// Secret chats, their queued messages and encrypted files.
        public var secretChats = SecretChatLimits()
        /// Channels and supergroups in all, and members of each (ChannelServices.swift).
        public var maxChannels = 1_000
        /// Members per channel (a supergroup seeded with `seedSupergroup` counts too).
        public var maxChannelMembers = 10_000
        /// Messages kept per channel (the oldest are forgotten first).
        public var maxChannelMessages = 1_000
        /// Updates kept per channel for `updates.getChannelDifference`; a member further behind gets
        /// `channelDifferenceTooLong`.
        public var maxChannelLog = 1_000
        /// Seconds a user's button press or inline query waits for the bot's answer before it is answered
        /// BOT_RESPONSE_TIMEOUT (BotServices.swift).
        public var botAnswerTimeout: Double = 10
        /// Answered inline queries kept for `messages.sendInlineBotResult` (the oldest are forgotten first).
        public var maxInlineAnswers = 1_000

        /// The defaults.
        public init() {}
    }

    /// The bounds the service was made with.
    public let limits: Limits
    let random: any RandomSource
    /// Whether adding members to a supergroup posts a service message there (`messageActionChatAddUser`), as Telegram
    /// does; off by default, so a channel's pts moves only with sent messages (PeerServices.swift).
    let announcesMembers: Bool
    let state = Mutex(ServiceState())
    /// Each file's parts as they arrived (FileTransferStats.swift).
    let transfers = Mutex(TransferLog())
    /// The CDN DC and its files (CDNServices.swift).
    let cdn = Mutex(CDNState())
    let server = Mutex<WeakServer>(WeakServer())
    /// A test's own handlers (`on(_:_:)`), looked up before the service's on every call.
    let overrides = RPCOverrides()
    /// Button presses and inline queries waiting for their bot, and answered inline queries (BotServices.swift).
    let bots = Mutex(BotQueries())

    /// A service with no accounts.
    /// - Parameters:
    ///   - limits: the bounds on what clients can make the service keep.
    ///   - random: makes access hashes, login-code hashes and file ids.
    ///   - announcesMembers: post `messageActionChatAddUser` in a supergroup when members are added.
    ///   - sharedAccessHashes: give every account the same access hash for a user or channel, instead of one per
    ///     viewer as Telegram does; for tests that hand one account's peers to another to exercise something else.
    public init(limits: Limits = Limits(), random: any RandomSource = SystemRandom(), announcesMembers: Bool = false,
                sharedAccessHashes: Bool = false) {
        self.limits = limits
        self.random = random
        self.announcesMembers = announcesMembers
        state.withLock { $0.sharedHashes = sharedAccessHashes }
    }

    /// Handlers for every service: the basic ones (`TestTelegram.registerBasicServices`) and login, users,
    /// messages, updates and files bound to this service's state.
    public func handlers() -> RPCHandlers {
        var handlers = RPCHandlers(registry: Api.registry)
        TestTelegram.registerBasicServices(into: &handlers)
        registerAuth(into: &handlers)
        registerUsers(into: &handlers)
        registerMessages(into: &handlers)
        registerMedia(into: &handlers)
        registerMessageOperations(into: &handlers)
        registerUpdates(into: &handlers)
        registerFiles(into: &handlers)
        registerEncrypted(into: &handlers)
        registerChannels(into: &handlers)
        registerPeers(into: &handlers)
        registerSignIn(into: &handlers)
        registerCDN(into: &handlers)
        registerChats(into: &handlers)
        registerParticipants(into: &handlers)
        registerBots(into: &handlers)
        registerReactions(into: &handlers)
        handlers.overrides = overrides
        return handlers
    }

    /// Answers `request`'s function with `handler` from the next call on, on every server running this service's
    /// handlers: in place of the test Telegram's own answer, or for a method it does not serve. The handler returns
    /// the function's result type (the compiler checks it) or throws the `rpc_error` to send.
    ///
    /// ```swift
    /// service.on(Api.functions.messages.SendMessage.self) { _, _ throws(RPCError) in
    ///     throw RPCError(code: 420, message: "FLOOD_WAIT_5")
    /// }
    /// service.on(Api.functions.help.GetPromoData.self) { call, _ in
    ///     .promoDataEmpty(.init(expires: Int32(call.now) + 3600))
    /// }
    /// ```
    public func on<Request: TLTypedRequest>(_ request: Request.Type, _ handler: @escaping RPCTypedHandler<Request>) {
        overrides.on(request, handler)
    }

    /// Answers `request`'s function with `handler`, which may wait for something else to happen (another session's
    /// call, say) before it answers, while the server serves the connection's other requests. Past `timeout` the
    /// server answers for it, -503 Timeout unless the timeout names the method's own error, and cancels the
    /// handler's task (as it does when the connection goes first). The handler returns the function's result type.
    ///
    /// ```swift
    /// service.on(Api.functions.messages.GetBotCallbackAnswer.self,
    ///            timeout: AnswerTimeout(seconds: 5, error: RPCError(code: 400, message: "BOT_RESPONSE_TIMEOUT"))) {
    ///     _, request in await callbackAnswers.next(for: request.msgId)
    /// }
    /// ```
    public func on<Request: TLTypedRequest>(_ request: Request.Type, timeout: AnswerTimeout,
                                            _ handler: @escaping RPCLaterTypedHandler<Request>) {
        overrides.on(request, timeout: timeout, handler)
    }

    /// Removes a handler set with `on(_:_:)`: the test Telegram answers `request`'s function as before it.
    public func removeHandler<Request: TLTypedRequest>(for request: Request.Type) {
        overrides.remove(request)
    }

    /// The server whose sessions get this service's updates. Held weakly: the server holds the handlers.
    public func attach(_ server: MTProtoTestServer) { self.server.withLock { $0.value = server } }

    /// The attached server's faults (this service applies `dropEncryptedMessage` and `withholdMessagePush`).
    var faults: FaultPlan? { server.withLock { $0.value }?.faults }

    /// Creates an account, as a test DC's pre-registered user. The home DC is the number's X digit
    /// (`99966XYYYY`) when the cluster has it, else the DC it first signs in on. Returns the user id.
    @discardableResult
    public func addUser(phone: String, firstName: String, lastName: String = "", username: String? = nil) throws(RPCError) -> Int64 {
        guard let number = TestPhone(phone) else { throw RPCError(code: 400, message: "PHONE_NUMBER_INVALID") }
        if let username { try Self.checkUsername(username) }
        let accessHash = random.int64()
        return try state.withLock { state throws(RPCError) in
            if let username, state.usernames[username.lowercased()] != nil {
                throw RPCError(code: 400, message: "USERNAME_OCCUPIED")
            }
            return try state.createAccount(number: number, firstName: firstName, lastName: lastName,
                                           username: username, homeDC: nil, accessHash: accessHash, limits: limits)
        }
    }

    /// The user an auth key of a DC is logged in as.
    public func userID(authKeyID: UInt64, dcID: Int32) -> Int64? {
        state.withLock { $0.authorizations[DCKey(dcID: dcID, authKeyID: authKeyID)] }
    }

    // MARK: Shared helpers

    /// The logged-in user of a call, or 401 AUTH_KEY_UNREGISTERED as Telegram answers a key nobody signed in with.
    func caller(_ call: RPCCall) throws(RPCError) -> Int64 {
        guard let user = userID(authKeyID: call.authKeyID, dcID: call.endpoint.dcID) else {
            throw RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")
        }
        return user
    }

    /// Sends `update` to every session of `userID`'s logged-in keys (and of the temporary keys bound to them), on
    /// every DC, that is subscribed to updates, except the calling session.
    func push(_ update: Api.Updates, to userID: Int64, except call: RPCCall?) {
        guard let server = server.withLock({ $0.value }) else { return }
        let bytes = TestTelegram.serialized(update)
        let keys = state.withLock { $0.accounts[userID]?.keys ?? [] }
        for key in keys {
            guard let context = server.contexts[key.dcID] else { continue }
            for session in context.sessionKeys(authorizedAs: key.authKeyID, subscribedOnly: true) {
                if let call, call.endpoint.dcID == key.dcID, (call.temporaryKeyID ?? call.authKeyID) == session.authKeyID,
                   call.sessionID == session.sessionID { continue }
                server.push(bytes, to: session, dc: key.dcID)
            }
        }
    }

    /// Each delivery pushed to its account's sessions, the calling one excepted.
    func push(_ deliveries: [Delivery], except call: RPCCall?) {
        for delivery in deliveries { push(delivery.update, to: delivery.user, except: call) }
    }

    static func checkUsername(_ username: String) throws(RPCError) {
        let scalars = Array(username.unicodeScalars)
        let allowed = scalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" }
        guard (5...32).contains(scalars.count), allowed, let first = scalars.first, first.properties.isAlphabetic
        else { throw RPCError(code: 400, message: "USERNAME_INVALID") }
    }
}

struct WeakServer {
    weak var value: MTProtoTestServer?
}

/// An auth key of one DC.
struct DCKey: Hashable {
    let dcID: Int32
    let authKeyID: UInt64
}

/// A test number, `99966XYYYY`: its login code is five X digits, and X names its home DC (core.telegram.org/api/auth,
/// "Test accounts").
struct TestPhone: Hashable {
    let digits: String
    let dcDigit: Int32

    init?(_ text: String) {
        let digits = String(text.unicodeScalars.filter { $0 != "+" && $0 != " " && $0 != "-" }.map(Character.init))
        guard digits.count == 10, digits.hasPrefix("99966"), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let x = digits.dropFirst(5).first?.wholeNumberValue
        else { return nil }
        self.digits = digits
        dcDigit = Int32(x)
    }

    var code: String { String(repeating: String(dcDigit), count: 5) }
}

/// What a send stores beside who sent it where and when: the text and its entities, media, the message it answers
/// (an id of the sender's box or channel), a forward's header, and whether it went without a notification.
struct OutgoingContent {
    var text: String
    var media: Api.MessageMedia? = nil
    var entities: [Api.MessageEntity]? = nil
    var replyTo: Int32? = nil
    var fwdFrom: Api.MessageFwdHeader? = nil
    var silent = false
    /// The album it belongs to (`messages.sendMultiMedia`: MediaServices.swift).
    var groupedID: Int64? = nil
    /// A bot's keyboard (BotServices.swift).
    var replyMarkup: Api.ReplyMarkup? = nil
    /// The bot an inline result was sent through.
    var viaBotID: Int64? = nil
}

/// A message in one account's box. A private message exists twice, once in each party's box, under each box's id.
struct StoredMessage {
    let id: Int32
    /// The other party (the account itself for Saved Messages).
    let peer: Int64
    let out: Bool
    let date: Int32
    var text: String
    let media: Api.MessageMedia?
    /// The same message's id in the other party's box.
    let twinID: Int32?
    var entities: [Api.MessageEntity]? = nil
    var editDate: Int32? = nil
    /// The message it answers, in this box.
    var replyTo: Int32? = nil
    var fwdFrom: Api.MessageFwdHeader? = nil
    var silent = false
    var pinned = false
    /// A service message's action (a pin: MessageOperationServices.swift).
    var action: Api.MessageAction? = nil
    /// The album it belongs to.
    var groupedID: Int64? = nil
    /// A bot's keyboard (BotServices.swift).
    var replyMarkup: Api.ReplyMarkup? = nil
    /// The bot an inline result was sent through.
    var viaBotID: Int64? = nil
    /// Who reacted with what, the same in both boxes (ReactionServices.swift).
    var reactions = StoredReactions()
}

extension StoredMessage {
    init(id: Int32, peer: Int64, out: Bool, date: Int32, content: OutgoingContent, twinID: Int32?) {
        self.init(id: id, peer: peer, out: out, date: date, text: content.text, media: content.media, twinID: twinID,
                  entities: content.entities, replyTo: content.replyTo, fwdFrom: content.fwdFrom, silent: content.silent,
                  groupedID: content.groupedID, replyMarkup: content.replyMarkup, viaBotID: content.viaBotID)
    }
}

struct DialogState {
    var topMessage: Int32 = 0
    var topDate: Int32 = 0
    var readInboxMaxID: Int32 = 0
    var readOutboxMaxID: Int32 = 0
}

struct Account {
    let id: Int64
    let phone: TestPhone
    var firstName: String
    var lastName: String
    var username: String?
    let accessHash: Int64
    var homeDC: Int32?
    /// The keys logged in as this account.
    var keys: Set<DCKey> = []
    var pts: Int32 = 1
    var seq: Int32 = 0
    var nextMessageID: Int32 = 1
    var messages: [Int32: StoredMessage] = [:]
    var messageOrder: [Int32] = []
    var dialogs: [Int64: DialogState] = [:]
    /// pts-ordered updates for `updates.getDifference`, each with the pts after it.
    var updateLog: [(pts: Int32, update: Api.Update)] = []
    /// random_ids of recent sends, so a resent `sendMessage` is refused (RANDOM_ID_DUPLICATE), never doubled.
    var recentRandomIDs: Set<Int64> = []
    var randomIDOrder: [Int64] = []
    var uploads: [Int64: Upload] = [:]
    var uploadBytes = 0
    /// Pinned dialogs' peers, in pin order (PeerServices.swift).
    var pinned: [Int64] = []
    /// Messages waiting for their date, by id (MessageOperationServices.swift): ids of their own, counted from 1.
    var scheduled: [Int32: StoredMessage] = [:]
    var nextScheduledID: Int32 = 1
    /// The profile photo (`photos.uploadProfilePhoto`), a photo of `ServiceState.photos`.
    var profilePhoto: Int64?

    func unreadCount(with peer: Int64) -> Int32 {
        let read = dialogs[peer]?.readInboxMaxID ?? 0
        return Int32(messages.values.lazy.filter { $0.peer == peer && !$0.out && $0.id > read }.count)
    }

    var totalUnread: Int32 { dialogs.keys.reduce(0) { $0 &+ unreadCount(with: $1) } }
}

/// A file being uploaded in parts.
struct Upload {
    var parts: [Int32: [UInt8]] = [:]
    var totalParts: Int32?
    let big: Bool
    let dcID: Int32
}

/// A document stored on a DC.
struct StoredDocument {
    let id: Int64
    let accessHash: Int64
    var fileReference: [UInt8]
    let dcID: Int32
    let date: Int32
    let mimeType: String
    let attributes: [Api.DocumentAttribute]
    let bytes: [UInt8]
    /// The thumbnail its sender uploaded beside it (MediaServices.swift).
    var thumbnail: StoredPhotoSize? = nil
    /// Bytes served since the file reference was made (`FaultPlan.expireFileReferenceEvery`).
    var servedSinceReference: Int64 = 0
}

struct PendingCode {
    let phone: TestPhone
    let code: String
    let expires: Double
}

struct ExportedAuthorization {
    let userID: Int64
    let dcID: Int32
    let expires: Double
}

struct ServiceState {
    var accounts: [Int64: Account] = [:]
    var phones: [String: Int64] = [:]
    var usernames: [String: Int64] = [:]
    var authorizations: [DCKey: Int64] = [:]
    var codes: [String: PendingCode] = [:]
    var exports: [[UInt8]: ExportedAuthorization] = [:]
    var documents: [Int64: StoredDocument] = [:]
    /// Photos sent with `messages.sendMedia` or `uploadMedia` (MediaServices.swift); their bytes count in
    /// `documentBytes`.
    var photos: [Int64: StoredPhoto] = [:]
    var documentBytes = 0
    var nextUserID: Int64 = 1_000_001
    var secret = SecretChatsState()
    /// Messages sent since the service started: what `FaultPlan.withholdMessagePush` counts.
    var messagesSent = 0
    var channels: [Int64: Channel] = [:]
    /// Every viewer gets the same access hashes (`TestTelegramService.init(sharedAccessHashes:)`).
    var sharedHashes = false
    /// Channel ids have their own range: users count up from 1,000,001, bounded by `Limits.maxAccounts`.
    var nextChannelID: Int64 = 2_000_000_001
    /// Passwords, bots and QR tokens (SignInServices.swift).
    var signIn = SignInState()
    /// Basic groups and invite links (ChatServices.swift).
    var chats = ChatsState()

    mutating func createAccount(number: TestPhone, firstName: String, lastName: String, username: String?,
                                homeDC: Int32?, accessHash: Int64, limits: TestTelegramService.Limits) throws(RPCError) -> Int64 {
        guard phones[number.digits] == nil else { throw RPCError(code: 400, message: "PHONE_NUMBER_OCCUPIED") }
        guard accounts.count < limits.maxAccounts else { throw RPCError(code: 500, message: "ACCOUNTS_TOO_MANY") }
        let id = nextUserID
        nextUserID += 1
        accounts[id] = Account(id: id, phone: number, firstName: firstName, lastName: lastName, username: username,
                               accessHash: accessHash, homeDC: homeDC)
        phones[number.digits] = id
        if let username { usernames[username.lowercased()] = id }
        return id
    }

    /// Runs `body` on an account in place. The account is out of the table meanwhile, so changing its message box,
    /// update log or uploads does not copy them (a copy-and-write-back would duplicate 10,000 messages per send).
    mutating func modify<T>(_ id: Int64, missing: RPCError,
                            _ body: (inout Account) throws(RPCError) -> T) throws(RPCError) -> T {
        guard var account = accounts.removeValue(forKey: id) else { throw missing }
        defer { accounts[id] = account }
        return try body(&account)
    }

    /// Logs `key` in as `userID`, replacing what it was logged in as.
    mutating func authorize(_ key: DCKey, as userID: Int64, limits: TestTelegramService.Limits) throws(RPCError) {
        if let previous = authorizations[key] { accounts[previous]?.keys.remove(key) }
        guard authorizations.count < limits.maxAuthorizations || authorizations[key] != nil else {
            throw RPCError(code: 500, message: "AUTHORIZATIONS_TOO_MANY")
        }
        authorizations[key] = userID
        accounts[userID]?.keys.insert(key)
    }

    /// Drops expired codes and exports, then refuses a new one past the bound.
    mutating func pruneCodes(now: Double, limit: Int) throws(RPCError) {
        codes = codes.filter { $0.value.expires > now }
        exports = exports.filter { $0.value.expires > now }
        guard codes.count + exports.count < limit else { throw RPCError(code: 420, message: "FLOOD_WAIT_60") }
    }

    /// The user as `viewer` sees it: `self` and the phone only for the user itself, and the access hash that viewer's
    /// (`viewerHash`).
    func user(_ id: Int64, viewer: Int64) -> Api.User {
        guard let account = accounts[id] else { return .userEmpty(.init(id: id)) }
        let me = id == viewer
        let bot = signIn.bots.contains(id)
        return .user(.init(isSelf: me, id: id, accessHash: hash(account.accessHash, viewer: viewer),
                           firstName: account.firstName,
                           lastName: account.lastName.isEmpty ? nil : account.lastName, username: account.username,
                           phone: me && !bot ? account.phone.digits : nil,
                           photo: account.profilePhoto.flatMap { photos[$0] }.map(\.profilePhoto),
                           botInfoVersion: bot ? 1 : nil, botInlinePlaceholder: bot ? "Search…" : nil))
    }

    func users(_ ids: [Int64], viewer: Int64) -> [Api.User] {
        var seen = Set<Int64>()
        return ids.filter { seen.insert($0).inserted }.map { user($0, viewer: viewer) }
    }
}

extension Account {
    /// Stores a message in this box, forgetting the oldest past the bound.
    mutating func store(_ message: StoredMessage, limit: Int) {
        messages[message.id] = message
        messageOrder.append(message.id)
        if messageOrder.count > limit {
            let dropped = messageOrder.removeFirst()
            messages.removeValue(forKey: dropped)
        }
        var dialog = dialogs[message.peer] ?? DialogState()
        dialog.topMessage = message.id
        dialog.topDate = message.date
        if message.out, message.peer == id { dialog.readInboxMaxID = message.id }
        dialogs[message.peer] = dialog
    }

    /// Appends a pts-carrying update made with `pts + 1` (pts_count 1) and returns the new pts.
    @discardableResult
    mutating func log(_ update: Api.Update, limit: Int) -> Int32 {
        pts &+= 1
        updateLog.append((pts, update))
        if updateLog.count > limit { updateLog.removeFirst(updateLog.count - limit) }
        return pts
    }

    /// Logs the update `make` builds with the next pts, takes the next seq, and returns the update with the
    /// `updates` container that carries it to the account's sessions.
    mutating func publish(_ make: (_ pts: Int32) -> Api.Update, users: [Api.User], date: Int32,
                          limit: Int) -> (update: Api.Update, container: Api.Updates) {
        let update = make(pts &+ 1)
        log(update, limit: limit)
        seq &+= 1
        return (update, .updates(.init(updates: [update], users: users, chats: [], date: date, seq: seq)))
    }

    /// Remembers a random_id; false if it was seen (the send is a duplicate).
    mutating func remember(randomID: Int64) -> Bool {
        guard recentRandomIDs.insert(randomID).inserted else { return false }
        randomIDOrder.append(randomID)
        if randomIDOrder.count > 10_000 { recentRandomIDs.remove(randomIDOrder.removeFirst()) }
        return true
    }
}
