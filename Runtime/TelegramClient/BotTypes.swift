// The typed side of bots (core.telegram.org/api/bots/buttons, core.telegram.org/api/bots/inline): keyboards built
// from typed buttons and checked against Telegram's bounds before anything is sent, inline results a bot answers
// with, the answers a user gets, and the errors a caller can act on.
import MTProto
import TelegramApi
import TelegramFormatting

/// A button of an inline keyboard: the keyboard under a bot's message.
public struct InlineButton: Sendable, Hashable {
    /// What pressing it does.
    public enum Action: Sendable, Hashable {
        /// Sends `data` to the bot as a callback query (1–64 bytes); the bot answers with a notification or alert.
        case callback([UInt8])
        /// Opens the URL (http, https or tg).
        case url(String)
        /// Starts an inline query to the bot with `query`: in the same chat, or in one the user picks.
        case switchInline(query: String, samePeer: Bool)
    }

    /// The button's label.
    public var text: String
    /// What pressing it does.
    public var action: Action

    /// A button with a label and an action.
    public init(_ text: String, action: Action) {
        self.text = text
        self.action = action
    }

    /// A button that sends `data` to the bot.
    public static func callback(_ text: String, data: [UInt8]) -> InlineButton { .init(text, action: .callback(data)) }

    /// A button that sends `data`'s UTF-8 bytes to the bot.
    public static func callback(_ text: String, data: String) -> InlineButton {
        .init(text, action: .callback(Array(data.utf8)))
    }

    /// A button that opens `url`.
    public static func url(_ text: String, _ url: String) -> InlineButton { .init(text, action: .url(url)) }

    /// A button that starts an inline query to the bot, in the same chat when `samePeer`.
    public static func switchInline(_ text: String, query: String = "", samePeer: Bool = false) -> InlineButton {
        .init(text, action: .switchInline(query: query, samePeer: samePeer))
    }

    /// The callback data, for a callback button.
    public var data: [UInt8]? {
        if case .callback(let data) = action { return data }
        return nil
    }
}

/// A button of a reply keyboard: the keyboard that takes the place of the user's.
public struct KeyboardButton: Sendable, Hashable {
    /// What pressing it sends.
    public enum Action: Sendable, Hashable {
        /// The button's text, as a message.
        case text
        /// The user's phone number, as a contact (after the user agrees).
        case requestContact
        /// The user's location (after the user agrees).
        case requestLocation
    }

    /// The button's label (and the message a text button sends).
    public var text: String
    /// What pressing it sends.
    public var action: Action

    /// A button with a label and an action.
    public init(_ text: String, action: Action = .text) {
        self.text = text
        self.action = action
    }

    /// A button that sends its text.
    public static func text(_ text: String) -> KeyboardButton { .init(text) }
    /// A button that shares the user's phone number.
    public static func requestContact(_ text: String) -> KeyboardButton { .init(text, action: .requestContact) }
    /// A button that shares the user's location.
    public static func requestLocation(_ text: String) -> KeyboardButton { .init(text, action: .requestLocation) }
}

/// A keyboard a bot attaches to a message: rows of buttons under the message, or in place of the user's keyboard.
///
/// Only a bot's keyboards reach the other side: Telegram drops a user's.
public enum ReplyMarkup: Sendable, Hashable {
    /// Buttons under the message.
    case inline([[InlineButton]])
    /// Buttons in place of the user's keyboard: fitted to their labels when `resize`, hidden after one press when
    /// `singleUse`, with `placeholder` in the input field.
    case keyboard([[KeyboardButton]], resize: Bool = false, singleUse: Bool = false, placeholder: String? = nil)
    /// Removes a reply keyboard sent before.
    case removeKeyboard
    /// Opens a reply to this message in the user's app.
    case forceReply(placeholder: String? = nil)

    /// Telegram's bounds on a keyboard: callback data of at most 64 bytes (core.telegram.org/bots/api,
    /// InlineKeyboardButton); 8 inline buttons a row and 100 in all, 12 keyboard buttons a row and 300 in all, past
    /// which Telegram answers REPLY_MARKUP_TOO_LONG.
    public enum Limits {
        /// Bytes of a callback button's data.
        public static let callbackDataBytes = 64
        /// Buttons in a row of an inline keyboard.
        public static let inlineButtonsPerRow = 8
        /// Buttons of an inline keyboard in all.
        public static let inlineButtons = 100
        /// Buttons in a row of a reply keyboard.
        public static let keyboardButtonsPerRow = 12
        /// Buttons of a reply keyboard in all.
        public static let keyboardButtons = 300
    }

    /// The keyboard as Telegram takes it, after checking it against ``Limits``.
    /// - Throws: `ReplyMarkupError` naming the first row and button that breaks a bound.
    public func api() throws(ReplyMarkupError) -> Api.ReplyMarkup {
        switch self {
            case .inline(let rows):
                try Self.checkCounts(rows.map(\.count), perRow: Limits.inlineButtonsPerRow, total: Limits.inlineButtons)
                var out: [Api.KeyboardInlineButtonRow] = []
                for (r, row) in rows.enumerated() {
                    var buttons: [Api.KeyboardInlineButton] = []
                    for (c, button) in row.enumerated() {
                        guard !button.text.isEmpty else { throw .emptyText(row: r, column: c) }
                        let type: Api.InlineButtonType
                        switch button.action {
                            case .callback(let data):
                                guard !data.isEmpty else { throw .emptyCallbackData(row: r, column: c) }
                                guard data.count <= Limits.callbackDataBytes else {
                                    throw .callbackDataTooLong(row: r, column: c, bytes: data.count)
                                }
                                type = .inlineButtonTypeCallback(.init(data: data))
                            case .url(let url):
                                guard Self.isOpenable(url) else { throw .invalidURL(row: r, column: c, url) }
                                type = .inlineButtonTypeUrl(.init(url: url))
                            case .switchInline(let query, let samePeer):
                                type = .inlineButtonTypeSwitchInline(.init(samePeer: samePeer, query: query))
                        }
                        buttons.append(.keyboardInlineButton(.init(text: button.text, type: type)))
                    }
                    out.append(.keyboardInlineButtonRow(.init(buttons: buttons)))
                }
                return .replyInlineMarkup(.init(rows: out))
            case .keyboard(let rows, let resize, let singleUse, let placeholder):
                try Self.checkCounts(rows.map(\.count), perRow: Limits.keyboardButtonsPerRow, total: Limits.keyboardButtons)
                var out: [Api.KeyboardButtonRow] = []
                for (r, row) in rows.enumerated() {
                    var buttons: [Api.KeyboardButton] = []
                    for (c, button) in row.enumerated() {
                        guard !button.text.isEmpty else { throw .emptyText(row: r, column: c) }
                        let type: Api.ButtonType = switch button.action {
                            case .text: .buttonTypeDefault
                            case .requestContact: .buttonTypeRequestPhone
                            case .requestLocation: .buttonTypeRequestGeoLocation
                        }
                        buttons.append(.keyboardButton(.init(text: button.text, type: type)))
                    }
                    out.append(.keyboardButtonRow(.init(buttons: buttons)))
                }
                return .replyKeyboardMarkup(.init(resize: resize, singleUse: singleUse, rows: out, placeholder: placeholder))
            case .removeKeyboard:
                return .replyKeyboardHide(.init())
            case .forceReply(let placeholder):
                return .replyKeyboardForceReply(.init(placeholder: placeholder))
        }
    }

    /// The keyboard a message carries, with the buttons this type knows (others, such as games or web apps, are left
    /// out of their rows).
    public init(_ markup: Api.ReplyMarkup) {
        switch markup {
            case .replyInlineMarkup(let m):
                self = .inline(m.rows.map { row in
                    guard case .keyboardInlineButtonRow(let r) = row else { return [] }
                    return r.buttons.compactMap { button -> InlineButton? in
                        guard case .keyboardInlineButton(let b) = button else { return nil }
                        switch b.type {
                            case .inlineButtonTypeCallback(let t): return .callback(b.text, data: t.data)
                            case .inlineButtonTypeUrl(let t): return .url(b.text, t.url)
                            case .inlineButtonTypeSwitchInline(let t):
                                return .switchInline(b.text, query: t.query, samePeer: t.samePeer)
                            default: return nil
                        }
                    }
                })
            case .replyKeyboardMarkup(let m):
                self = .keyboard(m.rows.map { row in
                    guard case .keyboardButtonRow(let r) = row else { return [] }
                    return r.buttons.compactMap { button -> KeyboardButton? in
                        guard case .keyboardButton(let b) = button else { return nil }
                        switch b.type {
                            case .buttonTypeDefault: return .text(b.text)
                            case .buttonTypeRequestPhone: return .requestContact(b.text)
                            case .buttonTypeRequestGeoLocation: return .requestLocation(b.text)
                            default: return nil
                        }
                    }
                }, resize: m.resize, singleUse: m.singleUse, placeholder: m.placeholder)
            case .replyKeyboardHide:
                self = .removeKeyboard
            case .replyKeyboardForceReply(let m):
                self = .forceReply(placeholder: m.placeholder)
        }
    }

    private static func checkCounts(_ rows: [Int], perRow: Int, total: Int) throws(ReplyMarkupError) {
        guard !rows.isEmpty, rows.allSatisfy({ $0 > 0 }) else { throw .emptyKeyboard }
        if let row = rows.firstIndex(where: { $0 > perRow }) {
            throw .tooManyButtonsInRow(row: row, count: rows[row], limit: perRow)
        }
        let count = rows.reduce(0, +)
        guard count <= total else { throw .tooManyButtons(count: count, limit: total) }
    }

    /// A URL Telegram opens from a button or an answer: http, https or tg, with something after the scheme.
    static func isOpenable(_ url: String) -> Bool {
        let lower = url.lowercased()
        return url.utf8.count <= 2048 && ["http://", "https://", "tg://"].contains { lower.hasPrefix($0) && lower.count > $0.count }
    }
}

/// A keyboard that breaks one of Telegram's bounds (``ReplyMarkup/Limits``); rows and columns count from 0. Nothing
/// was sent.
public enum ReplyMarkupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No rows, or a row without buttons.
    case emptyKeyboard
    /// A row with more buttons than Telegram shows in one.
    case tooManyButtonsInRow(row: Int, count: Int, limit: Int)
    /// More buttons than Telegram takes in one keyboard.
    case tooManyButtons(count: Int, limit: Int)
    /// A callback button's data over 64 bytes (Telegram answers BUTTON_DATA_INVALID).
    case callbackDataTooLong(row: Int, column: Int, bytes: Int)
    /// A callback button without data.
    case emptyCallbackData(row: Int, column: Int)
    /// A button without a label.
    case emptyText(row: Int, column: Int)
    /// A URL button whose URL is not http, https or tg.
    case invalidURL(row: Int, column: Int, String)

    /// What is wrong, in a sentence.
    public var description: String {
        switch self {
            case .emptyKeyboard: "a keyboard needs at least one row, and every row a button"
            case .tooManyButtonsInRow(let row, let count, let limit): "row \(row) has \(count) buttons; at most \(limit)"
            case .tooManyButtons(let count, let limit): "the keyboard has \(count) buttons; at most \(limit)"
            case .callbackDataTooLong(let row, let column, let bytes):
                "button \(column) of row \(row) has \(bytes) bytes of callback data; at most \(ReplyMarkup.Limits.callbackDataBytes)"
            case .emptyCallbackData(let row, let column): "button \(column) of row \(row) has no callback data"
            case .emptyText(let row, let column): "button \(column) of row \(row) has no text"
            case .invalidURL(let row, let column, let url): "button \(column) of row \(row): not an http, https or tg URL: \(url)"
        }
    }
}

/// An inline query a user typed to this bot (`@bot query` in a chat's input field): answer it with
/// `TelegramClient.answer(_:results:cacheTime:personal:nextOffset:gallery:)`.
public struct InlineQueryEvent: Sendable {
    /// The query's id, for the answer.
    public let queryID: Int64
    /// Who typed it.
    public let sender: EventPeer
    /// What they typed after the bot's username (at most 256 characters).
    public let query: String
    /// The offset of the page asked: empty for the first, else the `nextOffset` the bot answered the last with.
    public let offset: String
    /// The kind of chat it was typed in, when Telegram says.
    public let peerType: Api.InlineQueryPeerType?
    /// The user's location, for bots that ask for it.
    public let geo: Api.GeoPoint?
}

/// One result a bot answers an inline query with: what the user sees in the list, and the message sent when the
/// user picks it.
public struct InlineResult: Sendable {
    /// What kind of result, and its file.
    public enum Kind: Sendable {
        /// A text result.
        case article(url: String?)
        /// A photo at a URL (a JPEG), with a thumbnail URL.
        case photo(url: String, thumbnailURL: String)
        /// A file at a URL.
        case webDocument(url: String, mimeType: String)
        /// A document already on Telegram (uploaded before, as `messages.sendMedia` does).
        case document(Api.InputDocument)
    }

    /// The result's id among the answer's, 1–64 bytes.
    public var id: String
    /// What kind it is.
    public var kind: Kind
    /// Its title in the list.
    public var title: String?
    /// The line under the title.
    public var description: String?
    /// The message's text (a photo's or document's caption).
    public var message: Markup
    /// The keyboard the sent message carries.
    public var replyMarkup: ReplyMarkup?

    /// A result with every field given.
    public init(id: String, kind: Kind, title: String?, description: String?, message: Markup, replyMarkup: ReplyMarkup?) {
        self.id = id
        self.kind = kind
        self.title = title
        self.description = description
        self.message = message
        self.replyMarkup = replyMarkup
    }

    /// A text result: `title` and `description` in the list, `message` sent.
    public static func article(id: String, title: String, description: String? = nil, message: Markup,
                               url: String? = nil, replyMarkup: ReplyMarkup? = nil) -> InlineResult {
        .init(id: id, kind: .article(url: url), title: title, description: description, message: message,
              replyMarkup: replyMarkup)
    }

    /// A photo at `url` (a JPEG), `thumbnailURL` in the list (the photo itself when nil), sent with `caption`.
    public static func photo(id: String, url: String, thumbnailURL: String? = nil, title: String? = nil,
                             caption: Markup = .plain(""), replyMarkup: ReplyMarkup? = nil) -> InlineResult {
        .init(id: id, kind: .photo(url: url, thumbnailURL: thumbnailURL ?? url), title: title, description: nil,
              message: caption, replyMarkup: replyMarkup)
    }

    /// A document already on Telegram, sent with `caption`.
    public static func document(id: String, _ document: Api.InputDocument, title: String, description: String? = nil,
                                caption: Markup = .plain(""), replyMarkup: ReplyMarkup? = nil) -> InlineResult {
        .init(id: id, kind: .document(document), title: title, description: description, message: caption,
              replyMarkup: replyMarkup)
    }

    /// A file at `url` of type `mimeType` (a PDF or ZIP, as the Bot API allows), sent with `caption`.
    public static func document(id: String, url: String, mimeType: String, title: String, description: String? = nil,
                                caption: Markup = .plain(""), replyMarkup: ReplyMarkup? = nil) -> InlineResult {
        .init(id: id, kind: .webDocument(url: url, mimeType: mimeType), title: title, description: description,
              message: caption, replyMarkup: replyMarkup)
    }

    /// The result as `messages.setInlineBotResults` takes it.
    func api() throws -> Api.InputBotInlineResult {
        let text = try FormattedText(message)
        let markup = try replyMarkup?.api()
        let entities = text.entities.isEmpty ? nil : text.entities
        let send: Api.InputBotInlineMessage
        if case .article = kind {
            send = .inputBotInlineMessageText(.init(message: text.text, entities: entities, replyMarkup: markup))
        } else {
            send = .inputBotInlineMessageMediaAuto(.init(message: text.text, entities: entities, replyMarkup: markup))
        }
        func web(_ url: String, _ mime: String) -> Api.InputWebDocument {
            .inputWebDocument(.init(url: url, size: 0, mimeType: mime, attributes: []))
        }
        switch kind {
            case .article(let url):
                return .inputBotInlineResult(.init(id: id, type: "article", title: title, description: description,
                                                   url: url, sendMessage: send))
            case .photo(let url, let thumbnail):
                return .inputBotInlineResult(.init(id: id, type: "photo", title: title, description: description,
                                                   thumb: web(thumbnail, "image/jpeg"), content: web(url, "image/jpeg"),
                                                   sendMessage: send))
            case .webDocument(let url, let mimeType):
                return .inputBotInlineResult(.init(id: id, type: "file", title: title, description: description,
                                                   content: web(url, mimeType), sendMessage: send))
            case .document(let document):
                return .inputBotInlineResultDocument(.init(id: id, type: "file", title: title, description: description,
                                                           document: document, sendMessage: send))
        }
    }
}

/// What a bot answered a button press with.
public struct CallbackAnswer: Sendable, Hashable {
    /// The notification's (or alert's) text; nil when the bot showed none.
    public let text: String?
    /// Shown as an alert the user dismisses, rather than a passing notification.
    public let isAlert: Bool
    /// A URL to open.
    public let url: String?
    /// Seconds the answer may be shown again for the same press without asking the bot.
    public let cacheTime: Int32

    init(_ answer: Api.messages.BotCallbackAnswer) {
        switch answer {
            case .botCallbackAnswer(let a):
                text = a.message
                isAlert = a.alert
                url = a.url
                cacheTime = a.cacheTime
        }
    }
}

/// A bot's answer to this account's inline query.
public struct InlineResults: Sendable {
    /// One result of the answer.
    public struct Item: Sendable {
        /// Its id, to send it with `TelegramClient.sendInlineResult(_:of:to:silent:)`.
        public let id: String
        /// "article", "photo", "file"…
        public let type: String
        /// Its title in the list.
        public let title: String?
        /// The line under the title.
        public let description: String?
        /// The text of the message it sends.
        public let text: String
        /// Its file's URL, for a result at a URL.
        public let url: String?
        /// The result as Telegram sent it.
        public let raw: Api.BotInlineResult

        init(_ result: Api.BotInlineResult) {
            raw = result
            let message: Api.BotInlineMessage
            switch result {
                case .botInlineResult(let r):
                    (id, type, title, description, message) = (r.id, r.type, r.title, r.description, r.sendMessage)
                    switch r.content {
                        case .webDocument(let d)?: url = d.url
                        case .webDocumentNoProxy(let d)?: url = d.url
                        case nil: url = r.url
                    }
                case .botInlineMediaResult(let r):
                    (id, type, title, description, message, url) = (r.id, r.type, r.title, r.description, r.sendMessage, nil)
            }
            switch message {
                case .botInlineMessageText(let m): text = m.message
                case .botInlineMessageMediaAuto(let m): text = m.message
                case .botInlineMessageMediaWebPage(let m): text = m.message
                default: text = ""
            }
        }
    }

    /// The query's id, to send a result.
    public let queryID: Int64
    /// The bot that answered.
    public let bot: PeerID
    /// The results, in the bot's order.
    public let items: [Item]
    /// The offset to ask the next page with; nil when there is none.
    public let nextOffset: String?
    /// Seconds the answer may be reused for the same query.
    public let cacheTime: Int32
    /// The results are meant as a grid of pictures.
    public let isGallery: Bool
}

/// Why a bot call failed, for what a caller can act on. Other server errors come as `MTProtoClientError.rpc`.
public enum BotError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The keyboard breaks one of Telegram's bounds (nothing was sent).
    case markup(ReplyMarkupError)
    /// The bot did not answer in time (BOT_RESPONSE_TIMEOUT).
    case botDidNotAnswer
    /// The query was answered already, or is too old to answer (QUERY_ID_INVALID).
    case queryExpired
    /// The message has no button at that place, or none with that data (BUTTON_DATA_INVALID).
    case noSuchButton
    /// The button does not send a callback query; its action is here to act on (open the URL, start the query).
    case notACallbackButton(InlineButton)
    /// An answer's text over 200 characters, or a URL that is not http, https or tg (nothing was sent).
    case invalidAnswer(String)
    /// Over 50 results, a result id that is empty, over 64 bytes or given twice, or a next offset over 64 bytes
    /// (nothing was sent).
    case invalidResults(String)
    /// The peer is not a bot (BOT_INVALID).
    case notABot

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
            case .markup(let error): "malformed keyboard: \(error)"
            case .botDidNotAnswer: "the bot did not answer in time (BOT_RESPONSE_TIMEOUT)"
            case .queryExpired: "the query was answered already or is too old (QUERY_ID_INVALID)"
            case .noSuchButton: "no such button on the message (BUTTON_DATA_INVALID)"
            case .notACallbackButton(let button): "the button \"\(button.text)\" sends no callback query"
            case .invalidAnswer(let why): why
            case .invalidResults(let why): why
            case .notABot: "the peer is not a bot (BOT_INVALID)"
        }
    }

    /// The bot error a server's error means, if it is one of those above.
    init?(_ error: RPCError) {
        switch error.name {
            case "BOT_RESPONSE_TIMEOUT": self = .botDidNotAnswer
            case "QUERY_ID_INVALID": self = .queryExpired
            case "BUTTON_DATA_INVALID": self = .noSuchButton
            case "BOT_INVALID": self = .notABot
            default: return nil
        }
    }
}

extension ChatMessage {
    /// The keyboard the message carries, when a bot sent one.
    public var replyMarkup: ReplyMarkup? {
        guard case .message(let m) = message, let markup = m.replyMarkup else { return nil }
        return ReplyMarkup(markup)
    }
}
