// Signs in, sends TEXT to @USERNAME, and waits up to WAIT seconds for the first message back from that user.
//
//   SignInAndSend HOST:PORT KEY.pem PHONE CODE USERNAME TEXT [WAIT]
//
// KEY.pem is the server's RSA public key (mtserver prints it in its ready line). On Telegram itself use
// `TelegramClient.Configuration.production(app:store:)` instead of the address and key, your own api_id and
// api_hash, and a code the user types in.
import Foundation
import MTProtoClient
import MTProtoCrypto
import TelegramApi
import TelegramClient

let apiID: Int32 = 12345
let apiHash = "0123456789abcdef0123456789abcdef"

/// The sign-in: `auth.sendCode`, then `auth.signIn` with the code the user received.
func signIn(_ client: TelegramClient, phone: String, code: String) async throws {
    let sent = try await client.invoke(Api.functions.auth.sendCode(
        phoneNumber: phone, apiId: apiID, apiHash: apiHash, settings: .codeSettings(.init())))
    guard case .sentCode(let sentCode) = sent else { throw ExampleError("unexpected auth.sendCode answer: \(sent)") }
    _ = try await client.invoke(Api.functions.auth.signIn(
        phoneNumber: phone, phoneCodeHash: sentCode.phoneCodeHash, phoneCode: code))
}

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
let host = String(arguments[0][..<colon])
let (keyPath, phone, code, username, text) = (arguments[1], arguments[2], arguments[3], arguments[4], arguments[5])
let wait = arguments.count > 6 ? Double(arguments[6]) ?? 0 : 0

let client = TelegramClient(configuration: .init(
    app: .init(apiID: apiID, apiHash: apiHash),
    dcs: [2: DCAddress(host: host, port: port)],
    serverKeys: [try RSAPublicKey(pem: String(contentsOfFile: keyPath, encoding: .utf8))],
    store: MemorySessionStore()))

try await signIn(client, phone: phone, code: code)

// Find the user, then send.
guard case .resolvedPeer(let resolved) = try await client.invoke(
        Api.functions.contacts.resolveUsername(username: username)),
      case .peerUser(let peer) = resolved.peer,
      case .user(let user)? = resolved.users.first(where: { if case .user(let u) = $0 { u.id == peer.userId } else { false } }),
      let accessHash = user.accessHash else { throw ExampleError("no user @\(username)") }
_ = try await client.invoke(Api.functions.messages.sendMessage(
    peer: .inputPeerUser(.init(userId: user.id, accessHash: accessHash)), message: text,
    randomId: Int64.random(in: 1...Int64.max)))
print("sent to @\(username): \(text)")

// Wait for the first message from that user, at most `wait` seconds.
if wait > 0 {
    let reply = Task { () -> String? in
        for await updates in client.updates {
            guard case .updates(let batch) = updates else { continue }
            for case .updateNewMessage(let new) in batch.updates {
                if case .message(let message) = new.message, !message.out,
                   case .peerUser(let from) = message.peerId, from.userId == user.id {
                    return message.message
                }
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
