// Greeter's tests against the test Telegram, started in process for each test.
import Greeter
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import TelegramApi
import TelegramApiServer
import TelegramClient
import TelegramSession
import Testing
import TestTelegram

/// A test Telegram with two accounts, on a free loopback port.
struct LocalTelegram {
    let service = TestTelegramService()
    let server: MTProtoTestServer
    let key: RSAPrivateKey

    init() async throws {
        key = try RSAPrivateKey(pem: testKeyPEM)
        _ = try service.addUser(phone: "9996620001", firstName: "Alice", username: "alice_test")
        _ = try service.addUser(phone: "9996620002", firstName: "Bob", username: "bob_test")
        server = try await MTProtoTestServer.start(.init(rsaKeys: [key], handlers: service.handlers()))
        service.attach(server)     // so a message reaches the other account's sessions
    }

    /// A client of this server, signed in as `phone` (test numbers 99966XYYYY: the code is five X digits).
    /// With `floodWaitThreshold` 0 every FLOOD_WAIT reaches the caller (by default the client waits out short ones).
    func client(phone: String, floodWaitThreshold: Int = 60) async throws -> TelegramClient {
        let client = TelegramClient(configuration: .init(
            app: .init(apiID: 12345, apiHash: "0123456789abcdef0123456789abcdef"),
            dcs: [2: DCAddress(host: "127.0.0.1", port: server.port)],
            serverKeys: [key.publicKey], store: MemorySessionStore(), floodWaitThreshold: floodWaitThreshold))
        try await signIn(client, phone: phone, code: "22222")
        return client
    }

    /// The sign-in: `auth.sendCode`, then `auth.signIn` with the code.
    func signIn(_ client: TelegramClient, phone: String, code: String) async throws {
        let sent = try await client.invoke(Api.functions.auth.sendCode(
            phoneNumber: phone, apiId: 12345, apiHash: "0123456789abcdef0123456789abcdef",
            settings: .codeSettings(.init())))
        guard case .sentCode(let sentCode) = sent else { Issue.record("auth.sendCode: \(sent)"); return }
        _ = try await client.invoke(Api.functions.auth.signIn(
            phoneNumber: phone, phoneCodeHash: sentCode.phoneCodeHash, phoneCode: code))
    }
}

@Test func bobReadsAlicesGreeting() async throws {
    let telegram = try await LocalTelegram()
    let alice = try await telegram.client(phone: "9996620001")
    let bob = try await telegram.client(phone: "9996620002")

    try await greet("bob_test", with: alice)

    // Bob's newest message with Alice is the greeting.
    guard case .resolvedPeer(let resolved) = try await bob.invoke(
            Api.functions.contacts.resolveUsername(username: "alice_test")),
          case .user(let user)? = resolved.users.first, let hash = user.accessHash else {
        Issue.record("alice_test did not resolve")
        return
    }
    let history = try await bob.invoke(Api.functions.messages.getHistory(
        peer: .inputPeerUser(.init(userId: user.id, accessHash: hash)),
        offsetId: 0, offsetDate: 0, addOffset: 0, limit: 1, maxId: 0, minId: 0, hash: 0))
    let messages: [Api.Message] = switch history {
        case .messages(let page): page.messages
        case .messagesSlice(let page): page.messages
        default: []
    }
    guard case .message(let newest)? = messages.first else {
        Issue.record("unexpected history: \(history)")
        return
    }
    #expect(newest.message == "Hello, @bob_test!")
    #expect(!newest.out)

    await alice.close()
    await bob.close()
    try await telegram.server.shutdown()
}

@Test func greetingNobodyFails() async throws {
    let telegram = try await LocalTelegram()
    let alice = try await telegram.client(phone: "9996620001")
    await #expect(throws: GreeterError.noSuchUser("nobody_test")) { try await greet("nobody_test", with: alice) }
    await alice.close()
    try await telegram.server.shutdown()
}

/// A test answers one method its own way: the send is refused with a flood wait, and the caller sees it.
@Test func aFloodWaitReachesTheCaller() async throws {
    let telegram = try await LocalTelegram()
    let alice = try await telegram.client(phone: "9996620001", floodWaitThreshold: 0)
    // Typed: the handler gets messages.sendMessage's arguments and must return its result type (Api.Updates).
    telegram.service.on(Api.functions.messages.SendMessage.self) { _, request throws(RPCError) in
        guard request.message.hasPrefix("Hello") else { throw RPCError(code: 400, message: "MESSAGE_EMPTY") }
        throw RPCError(code: 420, message: "FLOOD_WAIT_5")
    }
    await #expect {
        try await greet("bob_test", with: alice)
    } throws: { error in
        guard case MTProtoClientError.rpc(let rpc) = error, case .floodWait(seconds: 5) = rpc.kind else { return false }
        return true
    }
    // Without the override the test Telegram sends it again.
    telegram.service.removeHandler(for: Api.functions.messages.SendMessage.self)
    try await greet("bob_test", with: alice)
    await alice.close()
    try await telegram.server.shutdown()
}

/// A test returns a result of its choosing: the username resolves to a peer but carries no user with it, which the
/// greeter must treat as no such user.
@Test func aResolvedPeerWithoutItsUserIsNoSuchUser() async throws {
    let telegram = try await LocalTelegram()
    let alice = try await telegram.client(phone: "9996620001")
    telegram.service.on(Api.functions.contacts.ResolveUsername.self) { _, _ in
        .resolvedPeer(.init(peer: .peerUser(.init(userId: 4242)), chats: [], users: []))
    }
    await #expect(throws: GreeterError.noSuchUser("ghost_test")) { try await greet("ghost_test", with: alice) }
    await alice.close()
    try await telegram.server.shutdown()
}

/// A 2048-bit RSA key made with `openssl genpkey` for these tests only: the test server's key, whose public half
/// the clients trust.
let testKeyPEM = """
-----BEGIN PRIVATE KEY-----
MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQDHIPC3TwnohZb1
ikJ4Rw14fueTBcImDfpHXWTc52s/N/SXJ34H2VPuPmAZ/Njl7umByGgngDcmXDJh
hZOyokAy733Y2o2d4XrJLbVrSLjdyikwcso94hkB9ZXkgV7bE9mQfe4mT06O7IBD
A0sBtLDEqYazO4NpR62dXC0cBm/TMrfluZkSXAWyNSD3rgvfcDPyKqnU0VCb+DEI
xE3yXJqxasKOUqoiqms+ac7Z0UwKzyPZ41x7Twj6YgdP+YWGJ34R9cqVcRbWP2vO
U1WcXKOq5TGLGdxs5sH9U9CKajXqeH0/JeRSqein7X4FUqNriCfarfAL03lzlpyA
XAuOBnszAgMBAAECggEALpbs6x6hhVc4NjPGkIijRLWAbfwzbB7qF2dpEWxNwelQ
H0t8p8533i6W4o2vm8CVvqlKgS9099MrcHjF0U438hLpoWKlLrLSPR6mKzdFFZNW
psC8w9TSIAy7KM8CCATxauaj4S++BB+edM9g7cG+eAzn+KhseyXrn30xCrUQ1dtG
b6CAuyvfsAaHgUFRHp6lbte8gFgJgKnkaUZxKbas7UHlHD/btxRtum9H8M+i22TZ
XhENNz6Neu5seIabgqEkZxudrBc07RAAmYcUgcZEcB2GJxJf2M6GyLCJqYaTByNV
mOO/5uv/SifKwo1BldtdS6GjzK44ihK7+QD5RXOFPQKBgQD2dqEUIHu3ctSSHFtK
V3WrpK8hV/M+2e8sKKdTbE02VyH6twIsZziuwa6089eFxkgr2arebU0r901e6FxE
8JHK5raieYpdhHFYyIPBn3FQFSzf5fHKUqBEqw+tP5DYxXoFbuE9cgoVBtGU4E7O
aBrxGRMDC+QWAtj6tGnuPGZc/wKBgQDO1W6C/zSttsVuer4xhGBXLSpndFXeyqsl
w0HtPWVSPTy2RmgXPV/XiUK6mVvfz643JyOgbyDyUNMjWd0+08xCmHW2eeYW1bEp
1AWe6MNjLAnOF3HmQd7q7GsdrF0F/7tl/MXC7EeJmVxoH+XFBGmYxoPFM2Pk5GTg
zSg2K9r9zQKBgBUfq8Se2BusAt4XAhgIEPTKI5x2/kknwqEFRvoWcTO0Ghxz7QLD
Qg9wWDn4IEO979eaS1PPCGs5Qe9dePMLr2M1jPe19Q742AIlBW3l7X9QoUz7V1Lg
7A2Wn7xYk2CQ5Fls3G84w/ZzZCkfZIG6WHzLil6beUwNqG0sY1vg32EfAoGAY2UB
tIX7xLcebZciqx0YRwx3YjvvwB7Y3E7W8bEdbcXr1RRElVZzJlrZ7F4iXo2pBOwU
HNcKmCfrLwPSZIzXjfFCMCyoO7T5bEZtZQ4qRxA0rgtqOuLQw0hVuW7JTUa1wa8V
QjTVs/Q1Cfy6KFGUhUxwqmWlzatMJxOwDUhJ9skCgYA68LssnSWj9WEpmw036W6g
UCN1zlbxHIh99gJH+a/CVLNZeQWhqRdnsyKl6/mvUeYhyRjTE4hEYxSdQTtiJgBv
eSUhjfoTSMcQ2FzBvADorUkvRfPtP9Ny7+oa9u8ieP7o2NWKWmNOD9Cq+s+rcOhI
bvBNx5M1qRET6btIEPVS2A==
-----END PRIVATE KEY-----
"""
