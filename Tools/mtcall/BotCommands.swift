// `mtcall press PEER MESSAGE_ID (--data TEXT | --button ROW,COLUMN)`, `inline BOT QUERY [--send ID --to PEER]` and
// `bot`: the SDK's bot calls from the command line. `press` presses an inline button of a bot's message and prints the
// bot's answer; `inline` prints a bot's inline results one JSON line each (and with --send sends one); `bot` runs a
// small bot on a session signed in with --bot-token: it answers each private text with the text and an inline
// keyboard, each button press with a notification naming the data, and each inline query with two articles, one JSON
// line per thing it did.
import ArgumentParser
import Foundation
import Logging
import TLJSON
import TelegramApi
import TelegramClient
import TelegramFormatting

/// The bot commands' flags.
struct BotOptions: ParsableArguments {
    @Option(name: .customLong("data"), help: "press: the callback data of the button, as text.")
    var data: String?

    @Option(name: .customLong("button"), help: "press: the button at ROW,COLUMN (from 0) of the message's inline keyboard.")
    var button: String?

    @Option(name: .customLong("send"), help: "inline: send the result with this id (to --to, default the bot's chat).")
    var send: String?

    @Flag(name: .customLong("alert"), help: "bot: answer button presses with an alert instead of a notification.")
    var alert = false
}

extension MTCall {
    /// `press PEER MESSAGE_ID (--data TEXT | --button ROW,COLUMN)`: prints {"message", "alert", "url", "cache_time"}.
    func runPress(logger: Logger) async throws {
        let usage = "usage: mtcall press PEER MESSAGE_ID (--data TEXT | --button ROW,COLUMN)"
        guard more.count == 1, (bots.data == nil) != (bots.button == nil) else { throw ValidationError(usage) }
        let id = try Self.messageID(more[0], usage: usage)
        var position: (Int, Int)?
        if let button = bots.button {
            let parts = button.split(separator: ",").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ $0 >= 0 }) else { throw ValidationError(usage) }
            position = (parts[0], parts[1])
        }
        let reference = try PeerReference(params), data = bots.data
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let chat = try await reference.peerID(client)
            let answer: CallbackAnswer
            if let position {
                guard let message = try await client.message(id, in: chat) else {
                    throw ValidationError("press: \(chat) has no message \(id)")
                }
                answer = try await client.pressButton(row: position.0, column: position.1, of: message)
            } else {
                answer = try await client.pressButton(data: Array((data ?? "").utf8), of: id, in: chat)
            }
            Self.printLine(.object([("message", answer.text.map(JSONValue.string) ?? .null), ("alert", .bool(answer.isAlert)),
                                    ("url", answer.url.map(JSONValue.string) ?? .null),
                                    ("cache_time", .number(String(answer.cacheTime)))]), output)
        }
    }

    /// `inline BOT QUERY [--send ID] [--to PEER]`: one line a result, {"id", "type", "title", "text", "url"}; with
    /// --send, the sent message's `Updates` last.
    func runInline(logger: Logger) async throws {
        let usage = "usage: mtcall inline BOT QUERY [--send RESULT_ID [--to PEER]]"
        guard more.count == 1 else { throw ValidationError(usage) }
        let bot = try PeerReference(params), query = more[0], send = bots.send
        let destination = try files.to.map { text throws(ValidationError) in try PeerReference(text) }
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let botID = try await bot.peerID(client)
            let chat = try await destination?.peerID(client)
            let results = try await client.inlineQuery(query, bot: botID, in: chat)
            for item in results.items {
                Self.printLine(.object([("id", .string(item.id)), ("type", .string(item.type)),
                                        ("title", item.title.map(JSONValue.string) ?? .null), ("text", .string(item.text)),
                                        ("url", item.url.map(JSONValue.string) ?? .null)]), output)
            }
            if let send {
                let sent = try await client.sendInlineResult(send, of: results, to: chat ?? botID)
                Self.printLine(TLJSONWriter.json(sent), output)
            }
        }
    }

    /// `bot`: answers what reaches the bot for --timeout seconds (with --follow, until interrupted).
    func runBot(logger: Logger) async throws {
        guard params == "{}", more.isEmpty else { throw ValidationError("usage: mtcall bot [--alert] [--follow]") }
        let seconds = follow ? nil : timeout, output = output, alert = bots.alert
        try await followingUpdates(logger: logger) { client, _ in
            try await client.connect()
            Self.printLine(.object([("event", .string("ready"))]), output)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in client.events {
                        guard let line = try await Self.serve(event, client, alert: alert) else { continue }
                        Self.printLine(line, output)
                    }
                }
                if let seconds { group.addTask { try await Task.sleep(for: .seconds(seconds)) } }
                _ = try await group.next()
                group.cancelAll()
            }
        }
    }

    /// What the bot does with one event, and the line that says so; nil for events it leaves alone.
    static func serve(_ event: UpdateEvent, _ client: TelegramClient, alert: Bool) async throws -> JSONValue? {
        switch event {
            case .newMessage(let new):
                guard !new.outgoing, new.chat.id.kind == .user, let message = new.chatMessage, !message.text.isEmpty
                else { return nil }
                // The data names the message, well inside the 64 bytes a button's data may have.
                let keyboard = ReplyMarkup.inline([[.callback("press", data: "pressed \(message.id)")],
                                                   [.url("about bots", "https://core.telegram.org/bots")]])
                _ = try await client.sendMessage(to: new.chat.id, formatted: .plain("echo: \(message.text)"),
                                                 options: SendOptions(replyMarkup: keyboard))
                return .object([("event", .string("answeredMessage")), ("chat", .string(new.chat.id.description)),
                                ("text", .string(message.text))])
            case .callbackQuery(let query):
                let data = String(decoding: query.data ?? [], as: UTF8.self)
                try await client.answer(query, text: "you pressed: \(data)", alert: alert)
                return .object([("event", .string("answeredCallback")), ("sender", .string(query.sender.id.description)),
                                ("data", .string(data))])
            case .inlineQuery(let query):
                let text = query.query.isEmpty ? "(nothing typed)" : query.query
                let results: [InlineResult] = [
                    .article(id: "echo", title: "echo \(text)", message: .plain(text)),
                    .article(id: "upper", title: "upper case", description: text.uppercased(),
                             message: .plain(text.uppercased()),
                             replyMarkup: .inline([[.callback("press", data: "inline")]])),
                ]
                try await client.answer(query, results: results, cacheTime: 0, personal: true)
                return .object([("event", .string("answeredInline")), ("sender", .string(query.sender.id.description)),
                                ("query", .string(query.query))])
            default:
                return nil
        }
    }
}
