// Bots the way Telegram runs them (core.telegram.org/api/bots/buttons, core.telegram.org/api/bots/inline): a user's
// press of an inline button (`messages.getBotCallbackAnswer`) goes to the bot as `updateBotCallbackQuery` and the
// user's call waits for the bot's `messages.setBotCallbackAnswer`; an inline query (`messages.getInlineBotResults`)
// goes to the bot as `updateBotInlineQuery` and waits for `messages.setInlineBotResults`; past the bound either
// call is answered BOT_RESPONSE_TIMEOUT. Answered results are kept (bounded) so `messages.sendInlineBotResult` can
// send one. Reply markup a bot sends is checked as Telegram checks it and kept on the message.
import MTProto
import MTProtoServer
import Synchronization
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    func registerBots(into handlers: inout RPCHandlers) {
        let timeout = AnswerTimeout(seconds: limits.botAnswerTimeout, error: Self.botTimeout)
        handlers.on(Api.functions.messages.GetBotCallbackAnswer.self, timeout: timeout) { [self] call, request
            async throws(RPCError) in try await pressButton(call, request)
        }
        handlers.on(Api.functions.messages.SetBotCallbackAnswer.self, answerCallback)
        handlers.on(Api.functions.messages.GetInlineBotResults.self, timeout: timeout) { [self] call, request
            async throws(RPCError) in try await inlineQuery(call, request)
        }
        handlers.on(Api.functions.messages.SetInlineBotResults.self, answerInline)
        handlers.on(Api.functions.messages.SendInlineBotResult.self, sendInlineResult)
    }

    /// What a user's waiting call gets when the bot does not answer in time
    /// (core.telegram.org/method/messages.getBotCallbackAnswer).
    static let botTimeout = RPCError(code: 400, message: "BOT_RESPONSE_TIMEOUT")
    static let queryInvalid = RPCError(code: 400, message: "QUERY_ID_INVALID")

    // MARK: Callback queries

    /// `messages.getBotCallbackAnswer`: the message must be the bot's, in the presser's private chat with it, with a
    /// callback button carrying `data` (BUTTON_DATA_INVALID otherwise). The bot gets `updateBotCallbackQuery` with
    /// the message under its own id; the call answers with what the bot sets.
    private func pressButton(_ call: RPCCall, _ request: Api.functions.messages.GetBotCallbackAnswer)
        async throws(RPCError) -> Api.messages.BotCallbackAnswer {
        let me = try caller(call)
        let peer = request.peer, messageID = request.msgId, data = request.data ?? nil
        let queryID = random.int64()
        let date = Self.date(call)
        let slot = AnswerSlot<Api.messages.BotCallbackAnswer>()
        let delivery = try state.withLock { state throws(RPCError) -> Delivery in
            guard let bot = state.resolve(peer, me: me), bot != me else { throw RPCError(code: 400, message: "PEER_ID_INVALID") }
            guard let message = state.accounts[me]?.messages[messageID], message.peer == bot, !message.out,
                  let twin = message.twinID else { throw RPCError(code: 400, message: "MESSAGE_ID_INVALID") }
            guard let data, message.replyMarkup?.hasCallback(data) == true else {
                throw RPCError(code: 400, message: "BUTTON_DATA_INVALID")
            }
            // One chat instance per pair of accounts, the same whichever asks.
            let instance = Int64(bitPattern: UInt64(truncatingIfNeeded: min(me, bot) &* 31 &+ max(me, bot)))
            return (bot, .updates(.init(
                updates: [.updateBotCallbackQuery(.init(queryId: queryID, userId: me, peer: .peerUser(.init(userId: me)),
                                                        msgId: twin, chatInstance: instance, data: data))],
                users: state.users([me], viewer: bot), chats: [], date: date, seq: 0)))
        }
        bots.withLock { $0.callbacks[queryID] = PendingQuery(bot: delivery.user, slot: slot) }
        defer { _ = bots.withLock { $0.callbacks.removeValue(forKey: queryID) } }
        push([delivery], except: nil)
        guard let answer = await slot.wait() else { throw Self.botTimeout }
        return answer
    }

    /// `messages.setBotCallbackAnswer`, from the bot a query went to while the presser still waits
    /// (QUERY_ID_INVALID otherwise, and for a second answer). An alert's or notification's text is at most 200
    /// characters (MESSAGE_TOO_LONG), a URL one Telegram would open (URL_INVALID).
    private func answerCallback(_ call: RPCCall, _ request: Api.functions.messages.SetBotCallbackAnswer)
        throws(RPCError) -> Bool {
        let me = try caller(call)
        if let text = request.message, text.count > 200 { throw RPCError(code: 400, message: "MESSAGE_TOO_LONG") }
        if let url = request.url, !Self.isOpenableURL(url) { throw RPCError(code: 400, message: "URL_INVALID") }
        let answer = Api.messages.BotCallbackAnswer.botCallbackAnswer(.init(
            alert: request.alert, hasUrl: request.url != nil, message: request.message, url: request.url,
            cacheTime: max(0, request.cacheTime)))
        let pending = bots.withLock { $0.callbacks.take(request.queryId, bot: me) }
        guard let pending, pending.slot.fulfil(answer) else { throw Self.queryInvalid }
        return true
    }

    /// A URL an answer may open: http, https or tg.
    static func isOpenableURL(_ url: String) -> Bool {
        let lower = url.lowercased()
        return url.utf8.count <= 2048 && ["http://", "https://", "tg://"].contains { lower.hasPrefix($0) && lower.count > $0.count }
    }

    // MARK: Inline queries

    /// `messages.getInlineBotResults`: `bot` must be a bot (BOT_INVALID); the query is cut to 256 characters, the
    /// Bot API's bound (core.telegram.org/bots/api#inlinequery). The bot gets `updateBotInlineQuery` naming the kind of
    /// chat asked from; the call answers with the results the bot sets, kept for `sendInlineBotResult`.
    private func inlineQuery(_ call: RPCCall, _ request: Api.functions.messages.GetInlineBotResults)
        async throws(RPCError) -> Api.messages.BotResults {
        let me = try caller(call)
        let input = request.bot, peer = request.peer
        let query = String(request.query.prefix(256)), offset = request.offset
        let queryID = random.int64()
        let date = Self.date(call)
        let slot = AnswerSlot<InlineAnswer>()
        let (delivery, botUser) = try state.withLock { state throws(RPCError) -> (Delivery, Api.User) in
            guard let bot = state.resolve(input, me: me), state.signIn.bots.contains(bot) else {
                throw RPCError(code: 400, message: "BOT_INVALID")
            }
            let peerType = try state.inlinePeerType(peer, me: me, bot: bot)
            return ((bot, .updates(.init(
                updates: [.updateBotInlineQuery(.init(queryId: queryID, userId: me, query: query, peerType: peerType,
                                                      offset: offset))],
                users: state.users([me], viewer: bot), chats: [], date: date, seq: 0))),
                    state.user(bot, viewer: me))
        }
        bots.withLock { $0.inline[queryID] = PendingQuery(bot: delivery.user, slot: slot) }
        defer { _ = bots.withLock { $0.inline.removeValue(forKey: queryID) } }
        push([delivery], except: nil)
        guard let answer = await slot.wait() else { throw Self.botTimeout }
        let keep = limits.maxInlineAnswers
        bots.withLock { $0.keep(queryID, AnsweredInline(user: me, bot: delivery.user, answer: answer), limit: keep) }
        return .botResults(.init(gallery: answer.gallery, queryId: queryID, nextOffset: answer.nextOffset,
                                 results: answer.results.map(\.api), cacheTime: answer.cacheTime, users: [botUser]))
    }

    /// `messages.setInlineBotResults`, from the bot a query went to while the user waits (QUERY_ID_INVALID
    /// otherwise): at most 50 results (RESULTS_TOO_MUCH), ids of 1–64 bytes (RESULT_ID_INVALID), each once
    /// (RESULT_ID_DUPLICATE), a next offset of at most 64 bytes (NEXT_OFFSET_INVALID), articles with a title
    /// (ARTICLE_TITLE_EMPTY), reply markup as `sendMessage` checks it.
    private func answerInline(_ call: RPCCall, _ request: Api.functions.messages.SetInlineBotResults)
        throws(RPCError) -> Bool {
        let me = try caller(call)
        guard request.results.count <= 50 else { throw RPCError(code: 400, message: "RESULTS_TOO_MUCH") }
        if let next = request.nextOffset, next.utf8.count > 64 { throw RPCError(code: 400, message: "NEXT_OFFSET_INVALID") }
        var seen = Set<String>()
        var results: [InlineResult] = []
        for input in request.results {
            let result = try state.withLock { state throws(RPCError) in try InlineResult(input, documents: state.documents) }
            guard (1...64).contains(result.id.utf8.count) else { throw RPCError(code: 400, message: "RESULT_ID_INVALID") }
            guard seen.insert(result.id).inserted else { throw RPCError(code: 400, message: "RESULT_ID_DUPLICATE") }
            results.append(result)
        }
        let answer = InlineAnswer(results: results, cacheTime: max(0, request.cacheTime), personal: request.`private`,
                                  gallery: request.gallery, nextOffset: request.nextOffset)
        let pending = bots.withLock { $0.inline.take(request.queryId, bot: me) }
        guard let pending, pending.slot.fulfil(answer) else { throw Self.queryInvalid }
        return true
    }

    /// `messages.sendInlineBotResult`: one result of a query this account asked (QUERY_ID_INVALID otherwise,
    /// RESULT_ID_INVALID for an id not among its results) sent as the caller's message, `via_bot_id` the bot, with
    /// the result's text, its stored document, and its reply markup.
    private func sendInlineResult(_ call: RPCCall, _ request: Api.functions.messages.SendInlineBotResult)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        guard request.queryId != 0 else { throw RPCError(code: 400, message: "QUERY_ID_EMPTY") }
        guard let answered = bots.withLock({ $0.answered[request.queryId] }), answered.user == me else {
            throw Self.queryInvalid
        }
        guard let result = answered.answer.results.first(where: { $0.id == request.id }) else {
            throw RPCError(code: 400, message: "RESULT_ID_INVALID")
        }
        var content = OutgoingContent(text: result.message.text, entities: result.message.entities,
                                      replyTo: Self.replyID(request.replyTo), silent: request.silent)
        content.media = result.document.map { .messageMediaDocument(.init(document: $0)) }
        content.replyMarkup = result.message.replyMarkup
        content.viaBotID = request.hideVia ? nil : answered.bot
        guard !content.text.isEmpty || content.media != nil else { throw RPCError(code: 400, message: "MESSAGE_EMPTY") }
        return try send(call, peer: request.peer, randomID: request.randomId, content: content)
    }

    // MARK: Reply markup

    /// The reply markup a send carries, as Telegram keeps it: only a bot's (Telegram drops a user's), checked as
    /// Telegram checks it.
    func keptMarkup(_ markup: Api.ReplyMarkup?, from sender: Int64) throws(RPCError) -> Api.ReplyMarkup? {
        guard let markup, state.withLock({ $0.signIn.bots.contains(sender) }) else { return nil }
        try Self.check(markup)
        return markup
    }

    /// Telegram's bounds on a keyboard (core.telegram.org/bots/api#inlinekeyboardbutton, #keyboardbutton):
    /// callback data of 1–64 bytes (BUTTON_DATA_INVALID), a text on every button (BUTTON_TEXT_INVALID), URLs it
    /// would open (BUTTON_URL_INVALID), and at most `ReplyMarkupLimits`' buttons a row and in all
    /// (REPLY_MARKUP_TOO_LONG).
    static func check(_ markup: Api.ReplyMarkup) throws(RPCError) {
        let tooLong = RPCError(code: 400, message: "REPLY_MARKUP_TOO_LONG")
        switch markup {
        case .replyInlineMarkup(let inline):
            let buttons = inline.rows.flatMap(\.buttonList)
            guard buttons.count <= ReplyMarkupLimits.inlineButtons,
                  inline.rows.allSatisfy({ $0.buttonList.count <= ReplyMarkupLimits.inlineButtonsPerRow }) else { throw tooLong }
            for case .keyboardInlineButton(let button) in buttons {
                guard !button.text.isEmpty else { throw RPCError(code: 400, message: "BUTTON_TEXT_INVALID") }
                switch button.type {
                case .inlineButtonTypeCallback(let callback):
                    guard (1...ReplyMarkupLimits.callbackDataBytes).contains(callback.data.count) else {
                        throw RPCError(code: 400, message: "BUTTON_DATA_INVALID")
                    }
                case .inlineButtonTypeUrl(let url):
                    guard isOpenableURL(url.url) else { throw RPCError(code: 400, message: "BUTTON_URL_INVALID") }
                default: continue
                }
            }
        case .replyKeyboardMarkup(let keyboard):
            let buttons = keyboard.rows.flatMap(\.buttonList)
            guard buttons.count <= ReplyMarkupLimits.keyboardButtons,
                  keyboard.rows.allSatisfy({ $0.buttonList.count <= ReplyMarkupLimits.keyboardButtonsPerRow }) else { throw tooLong }
            for case .keyboardButton(let button) in buttons where button.text.isEmpty {
                throw RPCError(code: 400, message: "BUTTON_TEXT_INVALID")
            }
        case .replyKeyboardHide, .replyKeyboardForceReply:
            return
        }
    }
}

/// The bounds Telegram puts on a keyboard: callback data of at most 64 bytes (core.telegram.org/bots/api,
/// InlineKeyboardButton), 8 inline buttons a row and 100 in all, 12 keyboard buttons a row and 300 in all (past
/// which Telegram answers REPLY_MARKUP_TOO_LONG).
enum ReplyMarkupLimits {
    static let callbackDataBytes = 64
    static let inlineButtonsPerRow = 8
    static let inlineButtons = 100
    static let keyboardButtonsPerRow = 12
    static let keyboardButtons = 300
}

extension Api.KeyboardInlineButtonRow {
    var buttonList: [Api.KeyboardInlineButton] {
        switch self { case .keyboardInlineButtonRow(let row): row.buttons }
    }
}

extension Api.KeyboardButtonRow {
    var buttonList: [Api.KeyboardButton] {
        switch self { case .keyboardButtonRow(let row): row.buttons }
    }
}

extension Api.ReplyMarkup {
    /// Whether an inline keyboard has a callback button carrying `data`.
    func hasCallback(_ data: [UInt8]) -> Bool {
        guard case .replyInlineMarkup(let inline) = self else { return false }
        return inline.rows.flatMap(\.buttonList).contains { button in
            guard case .keyboardInlineButton(let b) = button, case .inlineButtonTypeCallback(let c) = b.type else { return false }
            return c.data == data
        }
    }
}

extension ServiceState {
    /// The kind of chat an inline query comes from, as the bot is told (core.telegram.org/api/bots/inline).
    func inlinePeerType(_ peer: Api.InputPeer, me: Int64, bot: Int64) throws(RPCError) -> Api.InlineQueryPeerType {
        if case .inputPeerChannel(let input) = peer {
            let id = try channelID(id: input.channelId, accessHash: input.accessHash, viewer: me)
            return channels[id]?.broadcast == true ? .inlineQueryPeerTypeBroadcast : .inlineQueryPeerTypeMegagroup
        }
        if case .inputPeerChat = peer { return .inlineQueryPeerTypeChat }
        if case .inputPeerEmpty = peer { return .inlineQueryPeerTypePM }
        guard let other = resolve(peer, me: me) else { throw RPCError(code: 400, message: "PEER_ID_INVALID") }
        if other == bot { return .inlineQueryPeerTypeSameBotPM }
        return signIn.bots.contains(other) ? .inlineQueryPeerTypeBotPM : .inlineQueryPeerTypePM
    }
}

// MARK: State

/// One answer a waiting call gets from another session: filled once, or given up when the call's task is cancelled.
final class AnswerSlot<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiter: CheckedContinuation<Value?, Never>?
        var closed = false
    }
    private let state = Mutex(State())

    /// The value, once it is given; nil when the waiting task is cancelled first.
    func wait() async -> Value? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let now = state.withLock { state -> Value?? in
                    if let value = state.value { return .some(value) }
                    if state.closed { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            close()
        }
    }

    /// Gives the value; false when one was given already or the wait was given up.
    func fulfil(_ value: Value) -> Bool {
        let (given, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Value?, Never>?) in
            guard !state.closed, state.value == nil else { return (false, nil) }
            state.value = value
            state.closed = true
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(returning: value)
        return given
    }

    private func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Value?, Never>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.value == nil ? state.waiter : nil
        }
        waiter?.resume(returning: nil)
    }
}

/// A query waiting for the answer of the bot it went to.
struct PendingQuery<Answer: Sendable> {
    let bot: Int64
    let slot: AnswerSlot<Answer>
}

extension Dictionary where Key == Int64 {
    /// Removes and returns query `id` if it went to `bot`; another bot's query stays where it is.
    mutating func take<Answer>(_ id: Int64, bot: Int64) -> Value? where Value == PendingQuery<Answer> {
        guard let pending = self[id], pending.bot == bot else { return nil }
        removeValue(forKey: id)
        return pending
    }
}

/// What a bot answered to an inline query.
struct InlineAnswer: Sendable {
    let results: [InlineResult]
    let cacheTime: Int32
    let personal: Bool
    let gallery: Bool
    let nextOffset: String?
}

/// An answered query, kept for `sendInlineBotResult` by the user who asked it.
struct AnsweredInline: Sendable {
    let user: Int64
    let bot: Int64
    let answer: InlineAnswer
}

/// The message an inline result sends.
struct InlineMessage: Sendable {
    let text: String
    let entities: [Api.MessageEntity]?
    let replyMarkup: Api.ReplyMarkup?
    let api: Api.BotInlineMessage

    init(_ input: Api.InputBotInlineMessage) throws(RPCError) {
        let markup: Api.ReplyMarkup?
        switch input {
        case .inputBotInlineMessageText(let m):
            (text, entities, markup) = (m.message, m.entities, m.replyMarkup)
            api = .botInlineMessageText(.init(noWebpage: m.noWebpage, message: m.message, entities: m.entities,
                                              replyMarkup: m.replyMarkup))
            guard !text.isEmpty else { throw RPCError(code: 400, message: "MESSAGE_EMPTY") }
        case .inputBotInlineMessageMediaAuto(let m):
            (text, entities, markup) = (m.message, m.entities, m.replyMarkup)
            api = .botInlineMessageMediaAuto(.init(message: m.message, entities: m.entities, replyMarkup: m.replyMarkup))
        default:
            throw RPCError(code: 400, message: "SEND_MESSAGE_TYPE_INVALID")
        }
        if let markup { try TestTelegramService.check(markup) }
        replyMarkup = markup
        if let entities { _ = try TestTelegramService.entities(entities, text: text) }
    }
}

/// One result as the bot set it, in the form users get it.
struct InlineResult: Sendable {
    let id: String
    let message: InlineMessage
    /// A stored document the result sends (`inputBotInlineResultDocument`).
    let document: Api.Document?
    let api: Api.BotInlineResult

    init(_ input: Api.InputBotInlineResult, documents: [Int64: StoredDocument]) throws(RPCError) {
        switch input {
        case .inputBotInlineResult(let r):
            if r.type == "article", (r.title ?? "").isEmpty { throw RPCError(code: 400, message: "ARTICLE_TITLE_EMPTY") }
            id = r.id
            message = try InlineMessage(r.sendMessage)
            document = nil
            api = .botInlineResult(.init(id: r.id, type: r.type, title: r.title, description: r.description, url: r.url,
                                         thumb: r.thumb.map(Self.web), content: r.content.map(Self.web),
                                         sendMessage: message.api))
        case .inputBotInlineResultDocument(let r):
            guard case .inputDocument(let input) = r.document, let stored = documents[input.id],
                  stored.accessHash == input.accessHash else { throw RPCError(code: 400, message: "DOCUMENT_INVALID") }
            id = r.id
            message = try InlineMessage(r.sendMessage)
            document = stored.api
            api = .botInlineMediaResult(.init(id: r.id, type: r.type, document: stored.api, title: r.title,
                                              description: r.description, sendMessage: message.api))
        case .inputBotInlineResultPhoto:
            // The test Telegram keeps no photos: a photo result names its file by URL (`inputBotInlineResult`).
            throw RPCError(code: 400, message: "PHOTO_INVALID")
        case .inputBotInlineResultGame:
            throw RPCError(code: 400, message: "RESULT_TYPE_INVALID")
        }
    }

    /// A web file as users get it: not proxied through Telegram's servers here.
    static func web(_ input: Api.InputWebDocument) -> Api.WebDocument {
        switch input {
        case .inputWebDocument(let d):
            .webDocumentNoProxy(.init(url: d.url, size: d.size, mimeType: d.mimeType, attributes: d.attributes))
        }
    }
}

/// Queries waiting for their bot, and answered inline queries kept for `sendInlineBotResult`.
struct BotQueries {
    var callbacks: [Int64: PendingQuery<Api.messages.BotCallbackAnswer>] = [:]
    var inline: [Int64: PendingQuery<InlineAnswer>] = [:]
    var answered: [Int64: AnsweredInline] = [:]
    var answeredOrder: [Int64] = []

    mutating func keep(_ queryID: Int64, _ answered: AnsweredInline, limit: Int) {
        if self.answered.updateValue(answered, forKey: queryID) == nil { answeredOrder.append(queryID) }
        while answeredOrder.count > max(0, limit) { self.answered.removeValue(forKey: answeredOrder.removeFirst()) }
    }
}
