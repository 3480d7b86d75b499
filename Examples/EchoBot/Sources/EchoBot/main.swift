// A bot that answers every private message with "echo: " and its text, following the account's typed events.
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

let client = TelegramClient(configuration: .init(
    app: .init(apiID: 12345, apiHash: "0123456789abcdef0123456789abcdef"),
    dcs: [2: DCAddress(host: String(arguments[0][..<colon]), port: port)],
    serverKeys: [try RSAPublicKey(pem: String(contentsOfFile: arguments[1], encoding: .utf8))],
    store: MemorySessionStore()))
_ = try await client.signIn(botToken: arguments[2])  // the bot's own user, not needed here
print("ready")      // a line for whoever waits for the bot to listen

var answered = 0
for await event in client.events {
    // Incoming text in a private chat; the event carries the chat, addressable with the hash the bot was given.
    guard case .newMessage(let new) = event, !new.outgoing, new.chat.id.kind == .user,
          case .message(let message) = new.message, !message.message.isEmpty, let chat = new.chat.input else { continue }
    _ = try await client.sendMessage(to: chat, formatted: .plain("echo: \(message.message)"))
    answered += 1
    print("answered \(new.chat.id): \(message.message)")
    if answered >= limit { break }
}
await client.close()
