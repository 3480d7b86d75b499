// Answers every private message with "echo: " and its text, following the account's updates.
//
//   EchoBot HOST:PORT KEY.pem PHONE CODE [LIMIT]
//
// It signs in as a user account, as the local test Telegram allows; stops after LIMIT answers (default: never).
import Foundation
import MTProtoClient
import MTProtoCrypto
import TelegramApi
import TelegramClient

let apiID: Int32 = 12345
let apiHash = "0123456789abcdef0123456789abcdef"

/// The sign-in: `auth.sendCode`, then `auth.signIn` with the code the account received.
func signIn(_ client: TelegramClient, phone: String, code: String) async throws {
    let sent = try await client.invoke(Api.functions.auth.sendCode(
        phoneNumber: phone, apiId: apiID, apiHash: apiHash, settings: .codeSettings(.init())))
    guard case .sentCode(let sentCode) = sent else { print("unexpected auth.sendCode answer: \(sent)"); exit(1) }
    _ = try await client.invoke(Api.functions.auth.signIn(
        phoneNumber: phone, phoneCodeHash: sentCode.phoneCodeHash, phoneCode: code))
}

let arguments = CommandLine.arguments.dropFirst().map { $0 }
guard arguments.count >= 4, let colon = arguments[0].lastIndex(of: ":"),
      let port = Int(arguments[0][arguments[0].index(after: colon)...]) else {
    print("usage: EchoBot HOST:PORT KEY.pem PHONE CODE [LIMIT]")
    exit(2)
}
let limit = arguments.count > 4 ? Int(arguments[4]) ?? .max : .max

let client = TelegramClient(configuration: .init(
    app: .init(apiID: apiID, apiHash: apiHash),
    dcs: [2: DCAddress(host: String(arguments[0][..<colon]), port: port)],
    serverKeys: [try RSAPublicKey(pem: String(contentsOfFile: arguments[1], encoding: .utf8))],
    store: MemorySessionStore()))
try await signIn(client, phone: arguments[2], code: arguments[3])
print("ready")      // a line for whoever waits for the bot to listen

var answered = 0
for await updates in client.updates {
    guard case .updates(let batch) = updates else { continue }
    for case .updateNewMessage(let new) in batch.updates {
        // Incoming, from a user (a private chat), with text.
        guard case .message(let message) = new.message, !message.out, !message.message.isEmpty,
              case .peerUser(let from) = message.peerId else { continue }
        // The sender's access hash comes with the update, in its users.
        let sender = batch.users.lazy.compactMap { user -> Api.InputPeer? in
            guard case .user(let u) = user, u.id == from.userId, let hash = u.accessHash else { return nil }
            return .inputPeerUser(.init(userId: u.id, accessHash: hash))
        }.first
        guard let sender else { continue }
        _ = try await client.invoke(Api.functions.messages.sendMessage(
            peer: sender, message: "echo: \(message.message)", randomId: Int64.random(in: 1...Int64.max)))
        answered += 1
        print("answered \(from.userId): \(message.message)")
        if answered >= limit {
            await client.close()
            exit(0)
        }
    }
}
