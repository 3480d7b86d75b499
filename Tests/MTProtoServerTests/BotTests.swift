// Bots end to end on the test Telegram: our bot (signed in with its token) and our user (Alice), both TelegramClients.
// The user's press and inline query wait for the bot's answer as on Telegram; keyboards round-trip through the
// server typed; malformed keyboards and answers are refused before anything is sent.
import Foundation
import MTProto
import MTProtoClient
import TelegramApi
import TelegramClient
import TelegramFormatting
import TestTelegram
import Testing

/// A test Telegram with a bot and Alice signed in, each knowing the other (Alice wrote to the bot first).
struct BotPair {
    let telegram: LocalTelegram
    let bot: TelegramClient
    let alice: TelegramClient
    let botLog: TypedEventLog
    let aliceLog: TypedEventLog
    /// The bot for Alice, and Alice for the bot.
    let botPeer: PeerID
    let alicePeer: PeerID

    static let token = "4242:bot-test-secret"

    static func start(seed: UInt64, answerTimeout: Double = 60) async throws -> BotPair {
        var limits = TestTelegramService.Limits()
        limits.botAnswerTimeout = answerTimeout
        let telegram = try await LocalTelegram.start(seed: seed, limits: limits)
        try telegram.service.addBot(token: token, firstName: "Helper", username: "helper_bot")
        let bot = try telegram.client(), alice = try telegram.client()
        let botLog = TypedEventLog(bot), aliceLog = TypedEventLog(alice)
        _ = try await bot.signIn(botToken: token)
        try await LocalTelegram.followingUpdates(bot)
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        let botPeer = try await alice.resolve(username: "helper_bot")
        _ = try await alice.sendMessage(to: botPeer, formatted: .plain("/start"))
        let alicePeer = try await botLog.first { event -> PeerID? in
            guard case .newMessage(let new) = event, !new.outgoing else { return nil }
            return new.chat.id
        }
        return BotPair(telegram: telegram, bot: bot, alice: alice, botLog: botLog, aliceLog: aliceLog,
                       botPeer: botPeer, alicePeer: alicePeer)
    }

    /// The bot sends `text` with `keyboard`; returns the message as Alice got it.
    func botSends(_ text: String, _ keyboard: ReplyMarkup) async throws -> ChatMessage {
        let sent = try await bot.sendMessage(to: alicePeer, formatted: .plain(text), options: SendOptions(replyMarkup: keyboard))
        #expect(sent.replyMarkup == keyboard)
        return try await aliceLog.first { event -> ChatMessage? in
            guard case .newMessage(let new) = event, let message = new.chatMessage, message.text == text else { return nil }
            return message
        }
    }

    func close() async throws {
        await bot.close()
        await alice.close()
        try await telegram.server.shutdown()
    }
}

@Suite struct BotTests {
    static let keyboard = ReplyMarkup.inline([
        [.callback("yes", data: "y"), .callback("no", data: [0x6e, 0x00, 0xff])],
        [.url("docs", "https://core.telegram.org/bots"), .switchInline("share", query: "cats")],
    ])

    /// Alice presses a button of the bot's message; the bot gets the press and answers; Alice's waiting call
    /// returns the bot's answer. The keyboard reaches her as the bot built it.
    @Test func userPressesAndTheBotAnswers() async throws {
        let pair = try await BotPair.start(seed: 531)
        let message = try await pair.botSends("choose", Self.keyboard)
        #expect(message.replyMarkup == Self.keyboard)

        async let pressed = pair.alice.pressButton(row: 0, column: 1, of: message)
        let query = try await pair.botLog.first { event -> CallbackQueryEvent? in
            guard case .callbackQuery(let q) = event else { return nil }
            return q
        }
        #expect(query.data == [0x6e, 0x00, 0xff])
        #expect(query.sender.id == .user(try #require(pair.telegram.service.user(phone: "9996620001"))))
        await #expect(throws: BotError.invalidAnswer("an answer's text is at most 200 characters")) {
            try await pair.bot.answer(query, text: String(repeating: "a", count: 201))
        }
        try await pair.bot.answer(query, text: "you said no", alert: true, cacheTime: 5)
        let answer = try await pressed
        #expect(answer.text == "you said no" && answer.isAlert && answer.url == nil && answer.cacheTime == 5)

        // Answered once: a second answer is refused, as Telegram refuses it.
        await #expect(throws: BotError.queryExpired) { try await pair.bot.answer(query, text: "again") }
        // A URL button sends nothing: its action is the caller's.
        await #expect(throws: BotError.notACallbackButton(.url("docs", "https://core.telegram.org/bots"))) {
            _ = try await pair.alice.pressButton(row: 1, column: 0, of: message)
        }
        await #expect(throws: BotError.noSuchButton) { _ = try await pair.alice.pressButton(row: 2, column: 0, of: message) }
        // Data no button of the message carries: BUTTON_DATA_INVALID from the server.
        await #expect(throws: BotError.noSuchButton) {
            _ = try await pair.alice.pressButton(data: Array("maybe".utf8), of: message.id, in: pair.botPeer)
        }
        try await pair.close()
    }

    /// A bot that does not answer: the user's call is answered BOT_RESPONSE_TIMEOUT, and the bot's late answer
    /// QUERY_ID_INVALID.
    @Test func aBotThatDoesNotAnswerTimesOut() async throws {
        let pair = try await BotPair.start(seed: 532, answerTimeout: 1)
        let message = try await pair.botSends("press and wait", Self.keyboard)
        await #expect(throws: BotError.botDidNotAnswer) {
            _ = try await pair.alice.pressButton(row: 0, column: 0, of: message)
        }
        let query = try await pair.botLog.first { event -> CallbackQueryEvent? in
            guard case .callbackQuery(let q) = event else { return nil }
            return q
        }
        await #expect(throws: BotError.queryExpired) { try await pair.bot.answer(query, text: "too late") }
        try await pair.close()
    }

    /// Alice asks the bot inline; the bot gets the query and answers with an article, a photo and a document; Alice
    /// gets them with the cache time and next offset, sends the article to Bob, and Bob's message is Alice's via the
    /// bot with the article's keyboard.
    @Test func inlineQueryAnsweredAndSent() async throws {
        let pair = try await BotPair.start(seed: 533)
        let bob = try pair.telegram.client()
        let bobLog = TypedEventLog(bob)
        _ = try await LocalTelegram.signIn(bob, phone: "9996610002")
        let bobPeer = try await pair.alice.resolve(username: "bob_test")

        async let asked = pair.alice.inlineQuery("cats", bot: pair.botPeer, in: bobPeer)
        let query = try await pair.botLog.first { event -> InlineQueryEvent? in
            guard case .inlineQuery(let q) = event else { return nil }
            return q
        }
        #expect(query.query == "cats" && query.offset == "")
        guard case .inlineQueryPeerTypePM? = query.peerType else { throw HarnessFailure(description: "\(String(describing: query.peerType))") }
        let keyboard = ReplyMarkup.inline([[.callback("more", data: "more cats")]])
        try await pair.bot.answer(query, results: [
            .article(id: "a1", title: "Cats", description: "all about cats", message: .html("<b>cats</b>"),
                     replyMarkup: keyboard),
            .photo(id: "p1", url: "https://example.com/cat.jpg", caption: .plain("a cat")),
            .document(id: "d1", url: "https://example.com/cats.pdf", mimeType: "application/pdf", title: "Cats (PDF)"),
        ], cacheTime: 5, personal: true, nextOffset: "3")
        let results = try await asked
        #expect(results.items.map(\.id) == ["a1", "p1", "d1"])
        #expect(results.items.map(\.type) == ["article", "photo", "file"])
        #expect(results.items.map(\.text) == ["cats", "a cat", ""])
        #expect(results.items[1].url == "https://example.com/cat.jpg")
        #expect(results.nextOffset == "3" && results.cacheTime == 5 && results.bot == pair.botPeer)

        _ = try await pair.alice.sendInlineResult("a1", of: results, to: bobPeer)
        let received = try await bobLog.first { event -> Api.Message? in
            guard case .newMessage(let new) = event, !new.outgoing else { return nil }
            return new.message
        }
        guard case .message(let m) = received else { throw HarnessFailure(description: "\(received)") }
        #expect(m.message == "cats" && m.viaBotId == pair.botPeer.id)
        #expect(ChatMessage(received)?.replyMarkup == keyboard)
        await #expect(throws: (any Error).self) { _ = try await pair.alice.sendInlineResult("zz", of: results, to: bobPeer) }
        await bob.close()
        try await pair.close()
    }

    /// Keyboards past Telegram's bounds, and answers Telegram would refuse, fail with typed errors before anything
    /// is sent.
    @Test func malformedKeyboardsAreRefusedBeforeSending() async throws {
        let row9 = (0..<9).map { InlineButton.callback("b\($0)", data: "\($0)") }
        #expect(throws: ReplyMarkupError.tooManyButtonsInRow(row: 0, count: 9, limit: 8)) { try ReplyMarkup.inline([row9]).api() }
        let many = (0..<13).map { r in (0..<8).map { InlineButton.callback("b", data: "\(r).\($0)") } }
        #expect(throws: ReplyMarkupError.tooManyButtons(count: 104, limit: 100)) { try ReplyMarkup.inline(many).api() }
        let long = String(repeating: "x", count: 65)
        #expect(throws: ReplyMarkupError.callbackDataTooLong(row: 1, column: 0, bytes: 65)) {
            try ReplyMarkup.inline([[.callback("ok", data: "ok")], [.callback("long", data: long)]]).api()
        }
        #expect(throws: ReplyMarkupError.emptyCallbackData(row: 0, column: 0)) { try ReplyMarkup.inline([[.callback("e", data: "")]]).api() }
        #expect(throws: ReplyMarkupError.emptyText(row: 0, column: 0)) { try ReplyMarkup.keyboard([[.text("")]]).api() }
        #expect(throws: ReplyMarkupError.invalidURL(row: 0, column: 0, "ftp://x")) { try ReplyMarkup.inline([[.url("u", "ftp://x")]]).api() }
        #expect(throws: ReplyMarkupError.emptyKeyboard) { try ReplyMarkup.inline([]).api() }
        let wide = (0..<13).map { KeyboardButton.text("k\($0)") }
        #expect(throws: ReplyMarkupError.tooManyButtonsInRow(row: 0, count: 13, limit: 12)) { try ReplyMarkup.keyboard([wide]).api() }
        let keyboard = ReplyMarkup.keyboard([[.requestContact("phone"), .requestLocation("where")], [.text("hi")]],
                                            resize: true, singleUse: true, placeholder: "pick")
        #expect(ReplyMarkup(try keyboard.api()) == keyboard)

        let pair = try await BotPair.start(seed: 534)
        await #expect(throws: BotError.markup(.callbackDataTooLong(row: 0, column: 0, bytes: 65))) {
            _ = try await pair.bot.sendMessage(to: pair.alicePeer, formatted: .plain("never sent"),
                                               options: SendOptions(replyMarkup: .inline([[.callback("long", data: long)]])))
        }
        let sent = try await pair.botSends("with a reply keyboard", keyboard)
        #expect(sent.replyMarkup == keyboard)
        for try await message in pair.alice.history(of: try await pair.alice.inputPeer(for: pair.botPeer)) {
            #expect(message.text != "never sent")
        }
        try await pair.close()
    }

    /// The server refuses what Telegram refuses, for clients that skip the checks: a bot's long callback data
    /// (BUTTON_DATA_INVALID), 51 inline results (RESULTS_TOO_MUCH), an unknown query (QUERY_ID_INVALID), an inline
    /// query to a user (BOT_INVALID); and it drops the keyboard a user sends.
    @Test func theServerAnswersAsTelegram() async throws {
        let pair = try await BotPair.start(seed: 535)
        let long = Api.ReplyMarkup.replyInlineMarkup(.init(rows: [.keyboardInlineButtonRow(.init(buttons: [
            .keyboardInlineButton(.init(text: "x", type: .inlineButtonTypeCallback(.init(data: Array(repeating: 1, count: 65))))),
        ]))]))
        let refused = await rpcError {
            _ = try await pair.bot.invoke(Api.functions.messages.sendMessage(
                peer: try await pair.bot.inputPeer(for: pair.alicePeer), message: "x", randomId: 7, replyMarkup: long))
        }
        #expect(refused?.name == "BUTTON_DATA_INVALID")
        let article = Api.InputBotInlineResult.inputBotInlineResult(.init(
            id: "r", type: "article", title: "t", sendMessage: .inputBotInlineMessageText(.init(message: "m"))))
        let tooMany = await rpcError {
            _ = try await pair.bot.invoke(Api.functions.messages.setInlineBotResults(
                queryId: 9, results: Array(repeating: article, count: 51), cacheTime: 0))
        }
        #expect(tooMany?.name == "RESULTS_TOO_MUCH")
        let unknown = await rpcError {
            _ = try await pair.bot.invoke(Api.functions.messages.setInlineBotResults(queryId: 9, results: [article], cacheTime: 0))
        }
        #expect(unknown?.name == "QUERY_ID_INVALID")
        let bobPeer = try await pair.alice.resolve(username: "bob_test")
        await #expect(throws: BotError.notABot) { _ = try await pair.alice.inlineQuery("x", bot: bobPeer) }

        _ = try await pair.alice.sendMessage(to: pair.botPeer, formatted: .plain("a user's keyboard"),
                                             options: SendOptions(replyMarkup: .inline([[.callback("a", data: "a")]])))
        let got = try await pair.botLog.first { event -> ChatMessage? in
            guard case .newMessage(let new) = event, let m = new.chatMessage, m.text == "a user's keyboard" else { return nil }
            return m
        }
        #expect(got.replyMarkup == nil)
        try await pair.close()
    }
}
