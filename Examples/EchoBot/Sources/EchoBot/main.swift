// A bot that answers every private message with "echo: " and its text, following the account's typed events. Its
// answers carry an inline keyboard: "again" echoes the text once more as a notification, "shout" as an alert. In
// inline mode (`@echo_bot some text` in any chat) it offers the text as it is and in capitals.
//
//   EchoBot HOST:PORT KEY.pem BOT_TOKEN [LIMIT]
//
// It signs in with its token (`auth.importBotAuthorization`; a local mtserver makes one with `--bot ID:SECRET`) and
// stops after LIMIT answers (default: never).
import Foundation
import MTProtoClient
import MTProtoCrypto
import TelegramApi
import TelegramClient
import TelegramFormatting
import TelegramSession

let arguments = CommandLine.arguments.dropFirst().map { $0 }
guard arguments.count >= 3, let colon = arguments[0].lastIndex(of: ":"),
      let port = Int(arguments[0][arguments[0].index(after: colon)...]) else {
    print("usage: EchoBot HOST:PORT KEY.pem BOT_TOKEN [LIMIT]")
    exit(2)
}
let limit = arguments.count > 3 ? Int(arguments[3]) ?? .max : .max
// The last 1,000 texts answered, by message id, for the buttons under the answers.
var texts: [Int32: String] = [:]

let client = TelegramClient(configuration: .init(
    app: .init(apiID: 12345, apiHash: "0123456789abcdef0123456789abcdef"),
    dcs: [2: DCAddress(host: String(arguments[0][..<colon]), port: port)],
    serverKeys: [try RSAPublicKey(pem: String(contentsOfFile: arguments[1], encoding: .utf8))],
    store: MemorySessionStore()))
_ = try await client.signIn(botToken: arguments[2])  // the bot's own user, not needed here
print("ready")      // a line for whoever waits for the bot to listen

var answered = 0
for await event in client.events {
    switch event {
        case .newMessage(let new):
            // Incoming text in a private chat; the event carries the chat, which the peer cache can address.
            guard !new.outgoing, new.chat.id.kind == .user, let message = new.chatMessage, !message.text.isEmpty
            else { continue }
            // A button's data is at most 64 bytes: the buttons carry the message's id, not its text.
            let keyboard = ReplyMarkup.inline([[.callback("again", data: "again:\(message.id)"),
                                                .callback("shout", data: "shout:\(message.id)")]])
            _ = try await client.sendMessage(to: new.chat.id, formatted: .plain("echo: \(message.text)"),
                                             options: SendOptions(replyMarkup: keyboard))
            texts[message.id] = message.text
            if texts.count > 1_000, let oldest = texts.keys.min() { texts[oldest] = nil }
            answered += 1
            print("answered \(new.chat.id): \(message.text)")
        case .callbackQuery(let press):
            let data = String(decoding: press.data ?? [], as: UTF8.self).split(separator: ":")
            guard data.count == 2, let id = Int32(data[1]), let text = texts[id] else {
                try await client.answer(press, text: "that message is gone")
                continue
            }
            let shout = data[0] == "shout"
            try await client.answer(press, text: shout ? text.uppercased() : text, alert: shout)
        case .inlineQuery(let query):
            let text = query.query.isEmpty ? "echo" : query.query
            try await client.answer(query, results: [
                .article(id: "as-is", title: text, description: "send it as it is", message: .plain(text)),
                .article(id: "loud", title: text.uppercased(), description: "send it in capitals",
                         message: .plain(text.uppercased())),
            ], cacheTime: 0)
        default:
            continue
    }
    if answered >= limit { break }
}
await client.close()
