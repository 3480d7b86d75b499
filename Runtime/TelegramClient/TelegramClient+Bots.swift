// Bots and the users who talk to them (core.telegram.org/api/bots/buttons, core.telegram.org/api/bots/inline): a bot
// answers a button press (`messages.setBotCallbackAnswer`) and an inline query (`messages.setInlineBotResults`); a
// user presses a button (`messages.getBotCallbackAnswer`, which waits for the bot), asks a bot inline
// (`messages.getInlineBotResults`) and sends a result (`messages.sendInlineBotResult`). What cannot be right (a
// keyboard past Telegram's bounds, 51 results, a 201-character alert) is refused before anything is sent; the
// server's refusals a caller acts on come as `BotError`.
import MTProto
import MTProtoClient
import TLRuntime
import TelegramApi
import TelegramFormatting

extension TelegramClient {
    // MARK: Bots

    /// Answers a button press: a notification with `text` (an alert the user dismisses when `alert`), or a URL to
    /// open (a game's, or a `t.me/bot?start=` link), or nothing but stopping the button's progress indicator.
    /// - Parameters:
    ///   - query: The press, from `events`.
    ///   - text: At most 200 characters.
    ///   - alert: Show `text` as an alert the user dismisses rather than a notification that fades.
    ///   - url: A URL for the user's app to open instead of a notification.
    ///   - cacheTime: Seconds the user's app may show this answer again without asking.
    /// - Throws: `BotError.invalidAnswer` for a long text or a URL that is not http, https or tg (nothing sent);
    ///   `BotError.queryExpired` when the press was answered already or the user stopped waiting; or the server's
    ///   error.
    public func answer(_ query: CallbackQueryEvent, text: String? = nil, alert: Bool = false, url: String? = nil,
                       cacheTime: Int32 = 0) async throws {
        if let text, text.count > 200 { throw BotError.invalidAnswer("an answer's text is at most 200 characters") }
        if let url, !ReplyMarkup.isOpenable(url) { throw BotError.invalidAnswer("not an http, https or tg URL: \(url)") }
        _ = try await botCall(Api.functions.messages.setBotCallbackAnswer(
            alert: alert, queryId: query.queryID, message: text, url: url, cacheTime: cacheTime))
    }

    /// Answers an inline query with `results`, in order.
    /// - Parameters:
    ///   - query: The query, from `events`.
    ///   - results: At most 50, their ids 1–64 bytes and each once.
    ///   - cacheTime: Seconds Telegram may answer the same query with these results without asking again.
    ///   - personal: The results are for this user only (not cached for others).
    ///   - nextOffset: The offset the user's app asks the next page with (at most 64 bytes); nil when this is the last.
    ///   - gallery: Show the results as a grid of pictures.
    /// - Throws: `BotError.invalidResults` or `BotError.markup` for results Telegram would refuse, `FormattingError`
    ///   for malformed markup (nothing sent); `BotError.queryExpired` when the user stopped waiting; or the server's
    ///   error.
    public func answer(_ query: InlineQueryEvent, results: [InlineResult], cacheTime: Int32 = 300,
                       personal: Bool = false, nextOffset: String? = nil, gallery: Bool = false) async throws {
        guard results.count <= 50 else { throw BotError.invalidResults("\(results.count) results; at most 50") }
        if let nextOffset, nextOffset.utf8.count > 64 {
            throw BotError.invalidResults("a next offset is at most 64 bytes")
        }
        var seen = Set<String>()
        var inputs: [Api.InputBotInlineResult] = []
        for result in results {
            guard (1...64).contains(result.id.utf8.count) else {
                throw BotError.invalidResults("a result id is 1 to 64 bytes: \(result.id)")
            }
            guard seen.insert(result.id).inserted else { throw BotError.invalidResults("result id twice: \(result.id)") }
            do {
                inputs.append(try result.api())
            } catch let error as ReplyMarkupError {
                throw BotError.markup(error)
            }
        }
        _ = try await botCall(Api.functions.messages.setInlineBotResults(
            gallery: gallery, private: personal, queryId: query.queryID, results: inputs, cacheTime: cacheTime,
            nextOffset: nextOffset))
    }

    // MARK: Users of bots

    /// Presses the callback button carrying `data` on a bot's message and waits for the bot's answer.
    /// - Parameters:
    ///   - data: The button's data.
    ///   - messageID: The message, in `chat` as this account sees it.
    ///   - chat: The chat with the bot.
    /// - Throws: `BotError.noSuchButton` when the message has no button with that data, `BotError.botDidNotAnswer`
    ///   when the bot does not answer in time, `PeerCacheError` for a chat the cache cannot name, or the server's
    ///   error.
    public func pressButton(data: [UInt8], of messageID: Int32, in chat: PeerID) async throws -> CallbackAnswer {
        let peer = try await inputPeer(for: chat)
        return CallbackAnswer(try await botCall(Api.functions.messages.getBotCallbackAnswer(
            peer: peer, msgId: messageID, data: data)))
    }

    /// Presses the inline button at `row` and `column` (from 0) of a bot's message and waits for the bot's answer.
    /// - Throws: `BotError.noSuchButton` when the message has no inline button there, `BotError.notACallbackButton`
    ///   with the button for a URL or switch-inline button (nothing sent: its action is the caller's to take), or
    ///   what ``pressButton(data:of:in:)`` throws.
    public func pressButton(row: Int, column: Int, of message: ChatMessage) async throws -> CallbackAnswer {
        guard case .inline(let rows)? = message.replyMarkup, rows.indices.contains(row),
              rows[row].indices.contains(column) else { throw BotError.noSuchButton }
        let button = rows[row][column]
        guard let data = button.data else { throw BotError.notACallbackButton(button) }
        return try await pressButton(data: data, of: message.id, in: message.chat)
    }

    /// Asks `bot` for inline results, as typing `@bot query` in a chat does, and waits for its answer.
    /// - Parameters:
    ///   - query: What the user typed after the bot's username.
    ///   - bot: The bot.
    ///   - chat: The chat it is typed in (the bot is told its kind); nil for the chat with the bot itself.
    ///   - offset: The page: empty for the first, else the last answer's `nextOffset`.
    /// - Throws: `BotError.notABot`, `BotError.botDidNotAnswer`, `PeerCacheError`, or the server's error.
    public func inlineQuery(_ query: String, bot: PeerID, in chat: PeerID? = nil,
                            offset: String = "") async throws -> InlineResults {
        let user = try await inputUser(for: bot)
        let peer = try await inputPeer(for: chat ?? bot)
        let answer = try await botCall(Api.functions.messages.getInlineBotResults(
            bot: user, peer: peer, query: query, offset: offset))
        switch answer {
            case .botResults(let r):
                return InlineResults(queryID: r.queryId, bot: bot, items: r.results.map(InlineResults.Item.init),
                                     nextOffset: r.nextOffset, cacheTime: r.cacheTime, isGallery: r.gallery)
        }
    }

    /// Sends the result `id` of an inline answer to `chat`, as this account's message "via" the bot.
    /// - Returns: The `Updates` `messages.sendInlineBotResult` answers with.
    /// - Throws: `BotError.queryExpired` for an answer Telegram no longer keeps, `PeerCacheError`, or the server's
    ///   error (RESULT_ID_INVALID for an id not among the results).
    public func sendInlineResult(_ id: String, of results: InlineResults, to chat: PeerID,
                                 silent: Bool = false) async throws -> Api.Updates {
        let peer = try await inputPeer(for: chat)
        return try await botCall(Api.functions.messages.sendInlineBotResult(
            silent: silent, peer: peer, randomId: configuration.random.int64(), queryId: results.queryID, id: id))
    }

    /// Runs `call`, its errors a caller acts on made `BotError`.
    nonisolated func botCall<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>))
        async throws -> T {
        do {
            return try await invoke(call)
        } catch MTProtoClientError.rpc(let error) {
            if let mapped = BotError(error) { throw mapped }
            throw MTProtoClientError.rpc(error)
        }
    }
}
