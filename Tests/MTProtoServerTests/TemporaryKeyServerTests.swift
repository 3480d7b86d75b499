// The server's side of perfect forward secrecy, in memory against `ServerConnection` with a fixed clock: a temporary
// key made by its exchange, refused everything but bind/config/nearest DC until bound (AUTH_KEY_PERM_EMPTY), then
// running as the permanent key's account; every way a binding can be wrong refused with Telegram's error; one
// temporary key per permanent key; and a temporary key past its expiry forgotten and answered −404.
import MTProto
import MTProtoCrypto
@testable import MTProtoServer
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

@Suite struct TemporaryKeyServerTests {
    static let boolTrue: [UInt8] = [0xb5, 0x75, 0x72, 0x99]

    /// A test Telegram on one DC with Alice, and its context.
    static func service(seed: UInt64) throws -> (TestTelegramService, ServerContext, alice: Int64) {
        let service = TestTelegramService(random: SeededRandom(seed: seed))
        let alice = try service.addUser(phone: "9996620001", firstName: "Alice")
        return (service, try Fixture.context(seed: seed + 1, handlers: service.handlers()), alice)
    }

    /// Logs a pair's key in as Alice.
    static func signIn(_ pair: inout Pair) throws {
        guard case .success(.sentCode(let sent)) = try pair.call(Api.functions.auth.sendCode(
            phoneNumber: "9996620001", apiId: 1, apiHash: "test", settings: .codeSettings(.init())))
        else { throw HarnessFailure(description: "no code") }
        guard case .success(.authorization) = try pair.call(Api.functions.auth.signIn(
            phoneNumber: "9996620001", phoneCodeHash: sent.phoneCodeHash, phoneCode: "22222"))
        else { throw HarnessFailure(description: "not signed in") }
    }

    static func error<T>(_ result: Result<T, RPCError>) -> String? {
        if case .failure(let error) = result { error.message } else { nil }
    }

    /// The id `users.getUsers([inputUserSelf])` answers with.
    static func me(_ pair: inout Pair) throws -> Result<Int64, RPCError> {
        switch try pair.call(Api.functions.users.getUsers(id: [.inputUserSelf])) {
        case .success(let users):
            guard case .user(let user)? = users.first else { throw HarnessFailure(description: "\(users)") }
            return .success(user.id)
        case .failure(let error):
            return .failure(error)
        }
    }

    @Test func aBoundTemporaryKeyRunsAsThePermanentKeysAccount() throws {
        let (service, context, alice) = try Self.service(seed: 80)
        var permanentPair = try Pair(context: context, seed: 81)
        let permanent = try permanentPair.handshake().authKey
        try Self.signIn(&permanentPair)
        #expect(service.userID(authKeyID: permanent.idValue, dcID: 2) == alice)
        #expect(context.keys.entry(id: permanent.idValue)?.isTemporary == false)

        var pair = try Pair(context: context, seed: 82, temporaryKeyLifetime: 3600)
        let temporary = try pair.handshake()
        let temporaryID = temporary.authKey.idValue
        let expiresAt = try #require(temporary.expiresAt)
        #expect(expiresAt == Int32(Fixture.now) + 3600)
        #expect(context.keys.entry(id: temporaryID)?.expiresAt == expiresAt)
        #expect(pair.events.contains(.authKeyCreated(authKeyID: temporaryID, dcID: 2, legacyRSA: false,
                                                     expiresAt: expiresAt)))

        // Unbound, it may ask for the config and the nearest DC, and nothing that needs an account.
        #expect(Self.error(try Self.me(&pair)) == "AUTH_KEY_PERM_EMPTY")
        guard case .success(.nearestDc(let nearest)) = try pair.call(Api.functions.help.getNearestDc()) else {
            throw HarnessFailure(description: "getNearestDc refused")
        }
        #expect(nearest.thisDc == 2)
        #expect(Self.error(try pair.call(Api.functions.messages.getDialogs(
            offsetDate: 0, offsetId: 0, offsetPeer: .inputPeerEmpty, limit: 1, hash: 0))) == "AUTH_KEY_PERM_EMPTY")

        let bound = try pair.request { try $0.bindTemporaryKey(to: permanent, expiresAt: expiresAt) }
        #expect(bound == .success(Self.boolTrue))
        #expect(context.keys.entry(id: temporaryID)?.binding
                == AuthKeyStore.Binding(permanentKeyID: permanent.idValue, expiresAt: expiresAt))
        #expect(context.keys.boundTemporaryKey(of: permanent.idValue) == temporaryID)
        #expect(pair.events.contains(.temporaryKeyBound(temporaryKeyID: temporaryID, permanentKeyID: permanent.idValue)))
        // Now it is Alice, as the permanent key is.
        #expect(try Self.me(&pair) == .success(alice))
        // A login under the temporary key logs the permanent key in: the authorization is the permanent key's.
        #expect(service.userID(authKeyID: temporaryID, dcID: 2) == nil)
        #expect(context.sessionKeys(authorizedAs: permanent.idValue).contains { $0.authKeyID == temporaryID })
    }

    @Test func bindingsAreRefusedAsTelegramRefusesThem() throws {
        let (_, context, _) = try Self.service(seed: 90)
        func key(seed: UInt64, lifetime: Int32? = nil) throws -> AuthKeyExchange.Client.Result {
            var pair = try Pair(context: context, seed: seed, temporaryKeyLifetime: lifetime)
            return try pair.handshake()
        }
        let permanent = try key(seed: 91).authKey, other = try key(seed: 92).authKey
        let temporary = try key(seed: 93, lifetime: 600), second = try key(seed: 94, lifetime: 600)
        let expiresAt = try #require(temporary.expiresAt)
        let messageID: Int64 = 0x6553_f100_0000_0004, sessionID: Int64 = 0x1234
        let random = SeededRandom(seed: 95)
        func binding(_ permanentKey: AuthKey, for temporaryKey: AuthKey = temporary.authKey,
                     expiresAt: Int32 = expiresAt) throws -> TemporaryKeyBinding {
            try TemporaryKeyBinding(permanentKey: permanentKey, temporaryKey: temporaryKey, temporarySessionID: sessionID,
                                    expiresAt: expiresAt, messageID: messageID, random: random)
        }
        /// What the server answers `binding` sent under `key`, as the call's msg_id and session say.
        func bind(_ binding: TemporaryKeyBinding, under key: AuthKey = temporary.authKey, messageID: Int64 = messageID,
                  sessionID: Int64 = sessionID) throws -> Result<[UInt8], RPCError> {
            let body = Api.functions.auth.bindTempAuthKey(
                permAuthKeyId: binding.permanentKeyID, nonce: binding.nonce, expiresAt: binding.expiresAt,
                encryptedMessage: binding.encryptedMessage).1.bytes
            let decoded = try context.handlers.decode(body: body).decoded.get()
            let entry = try #require(context.keys.entry(id: key.idValue))
            return context.answer(decoded, entry: entry, authKeyID: key.idValue, sessionID: sessionID,
                                  messageID: messageID, now: Fixture.now + 1).now
        }
        let good = try binding(permanent)
        var tampered = good.encryptedMessage
        tampered[40] ^= 1
        let unknownKey = try AuthKey(SeededRandom(seed: 96).bytes(256))
        let underOther = try binding(other)
        let refusals: [(String, Result<[UInt8], RPCError>)] = [
            ("a changed encrypted_message", try bind(TemporaryKeyBinding(
                permanentKeyID: good.permanentKeyID, nonce: good.nonce, expiresAt: expiresAt, encryptedMessage: tampered))),
            ("encrypted with another permanent key than it names", try bind(TemporaryKeyBinding(
                permanentKeyID: good.permanentKeyID, nonce: underOther.nonce, expiresAt: expiresAt,
                encryptedMessage: underOther.encryptedMessage))),
            ("another nonce outside than inside", try bind(TemporaryKeyBinding(
                permanentKeyID: good.permanentKeyID, nonce: good.nonce &+ 1, expiresAt: expiresAt,
                encryptedMessage: good.encryptedMessage))),
            ("a permanent key the server does not have", try bind(try binding(unknownKey))),
            ("a temporary key as the permanent one", try bind(try binding(second.authKey))),
            ("sent under another msg_id", try bind(good, messageID: messageID + 4)),
            ("sent in another session", try bind(good, sessionID: sessionID + 1)),
            ("made for another temporary key", try bind(try binding(permanent, for: second.authKey))),
        ]
        for (what, result) in refusals { #expect(Self.error(result) == "ENCRYPTED_MESSAGE_INVALID", "\(what)") }
        #expect(Self.error(try bind(try binding(permanent, expiresAt: Int32(Fixture.now) - 1))) == "EXPIRES_AT_INVALID")
        #expect(Self.error(try bind(try binding(permanent, expiresAt: expiresAt + 10))) == "EXPIRES_AT_INVALID")
        // Sent under a permanent key: there is no temporary key to bind.
        #expect(Self.error(try bind(try binding(permanent, for: other), under: other)) == "TEMP_AUTH_KEY_EMPTY")
        #expect(context.keys.entry(id: temporary.authKey.idValue)?.binding == nil, "nothing refused was stored")

        #expect(try bind(good) == .success(Self.boolTrue))
        #expect(try bind(try binding(permanent)) == .success(Self.boolTrue), "binding again to the same key is fine")
        #expect(Self.error(try bind(underOther)) == "TEMP_AUTH_KEY_ALREADY_BOUND")
        #expect(context.keys.authorizationKey(of: temporary.authKey.idValue, at: Fixture.now) == permanent.idValue)

        // One temporary key per permanent key: binding another takes the binding from the first.
        #expect(try bind(try binding(permanent, for: second.authKey), under: second.authKey) == .success(Self.boolTrue))
        #expect(context.keys.boundTemporaryKey(of: permanent.idValue) == second.authKey.idValue)
        #expect(context.keys.authorizationKey(of: temporary.authKey.idValue, at: Fixture.now) == nil)
        #expect(context.keys.authorizationKey(of: second.authKey.idValue, at: Fixture.now) == permanent.idValue)
        // The first may now bind to another permanent key (it is no longer bound).
        #expect(try bind(underOther) == .success(Self.boolTrue))
    }

    @Test func anExpiredTemporaryKeyIsForgottenAndAnsweredMinus404() throws {
        let (_, context, alice) = try Self.service(seed: 100)
        var permanentPair = try Pair(context: context, seed: 101)
        let permanent = try permanentPair.handshake().authKey
        try Self.signIn(&permanentPair)
        var pair = try Pair(context: context, seed: 102, temporaryKeyLifetime: 60)
        let temporary = try pair.handshake()
        let id = temporary.authKey.idValue
        let expiresAt = try #require(temporary.expiresAt)
        #expect(try pair.request { try $0.bindTemporaryKey(to: permanent, expiresAt: expiresAt) } == .success(Self.boolTrue))
        #expect(try Self.me(&pair) == .success(alice))
        #expect(!context.sessions.keys(authKeyID: id).isEmpty)

        pair.now = Double(expiresAt)
        #expect(throws: HarnessFailure.self) { _ = try Self.me(&pair) }
        #expect(pair.transportErrors == [-404])
        #expect(pair.events.contains(.authKeyExpired(authKeyID: id)))
        #expect(pair.server.closed == .unknownAuthKey(id))
        #expect(context.keys.entry(id: id) == nil && context.sessions.keys(authKeyID: id).isEmpty)
        #expect(context.keys.boundTemporaryKey(of: permanent.idValue) == nil)
        // The permanent key stays, logged in.
        #expect(context.keys.entry(id: permanent.idValue) != nil)
    }
}
