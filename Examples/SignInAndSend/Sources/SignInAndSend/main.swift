// Signs in, sends TEXT to @USERNAME, and waits up to WAIT seconds for the first message back from that user.
//
//   SignInAndSend HOST:PORT KEY.pem PHONE CODE USERNAME TEXT [WAIT]
//
// KEY.pem is the server's RSA public key (mtserver prints it in its ready line). On Telegram itself use
// `TelegramClient.Configuration.production(app:store:)` instead of the address and key, your own api_id and
// api_hash, and prompts that ask the user for the code and the cloud password.
import Foundation
import MTProtoClient
import MTProtoCrypto
import TelegramApi
import TelegramClient
import TelegramFormatting
import TelegramSession

struct ExampleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

let arguments = CommandLine.arguments.dropFirst().map { $0 }
guard arguments.count >= 6, let colon = arguments[0].lastIndex(of: ":"),
      let port = Int(arguments[0][arguments[0].index(after: colon)...]) else {
    print("usage: SignInAndSend HOST:PORT KEY.pem PHONE CODE USERNAME TEXT [WAIT]")
    exit(2)
}
let (keyPath, phone, code, username, text) = (arguments[1], arguments[2], arguments[3], arguments[4], arguments[5])
let wait = arguments.count > 6 ? Double(arguments[6]) ?? 0 : 0

let client = TelegramClient(configuration: .init(
    app: .init(apiID: 12345, apiHash: "0123456789abcdef0123456789abcdef"),
    dcs: [2: DCAddress(host: String(arguments[0][..<colon]), port: port)],
    serverKeys: [try RSAPublicKey(pem: String(contentsOfFile: keyPath, encoding: .utf8))],
    store: MemorySessionStore()))

// The code comes from the command line here; an app asks for it (and for the password when the account has one).
let me = try await client.signIn(phone: phone, prompts: SignInPrompts(
    code: { _, previous in
        if let previous { throw previous }
        return .code(code)
    },
    password: { _, _ in throw ExampleError("this example signs in to accounts without a cloud password") }))
print("signed in as \(me)")

// Find the user (the peer cache keeps its access hash), then send.
let peer = try await client.resolve(username: username)
_ = try await client.sendMessage(to: try await client.inputPeer(for: peer), formatted: .plain(text))
print("sent to @\(username): \(text)")

// Wait for the first message from that user, at most `wait` seconds.
if wait > 0 {
    let reply = Task { () -> String? in
        for await event in client.events {   // buffered since the client was made
            if case .newMessage(let new) = event, !new.outgoing, new.chat.id == peer,
               case .message(let message) = new.message {
                return message.message
            }
        }
        return nil
    }
    let timer = Task { try await Task.sleep(for: .seconds(wait)); reply.cancel() }
    let answer = await reply.value
    timer.cancel()
    guard let answer else { print("no reply within \(wait) s"); await client.close(); exit(1) }
    print("reply from @\(username): \(answer)")
}
await client.close()
