// Signing in with `TelegramClient` against the test Telegram on loopback: a code sign-in that signs up a new number
// (with a wrong code and a resend on the way), a cloud password across USER_MIGRATE, wrong passwords up to
// FLOOD_WAIT, a reused srp_id, setting/changing/removing a password, bots, log-out, and a hostile server whose
// password parameters the client refuses before anything derived from the password is sent.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import NIOCore
import Synchronization
import TLRuntime
import TelegramApi
import TelegramClient
import TestTelegram
import Testing

/// A value shared with escaping closures.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}

/// Prompts that answer from fixed lists, recording what they were asked.
final class ScriptedPrompts: Sendable {
    let codes: Mutex<[CodeAnswer]>
    let passwords: Mutex<[String]>
    let signUp: SignUpDetails?
    let asked = Mutex<[String]>([])

    init(codes: [CodeAnswer], passwords: [String] = [], signUp: SignUpDetails? = nil) {
        self.codes = Mutex(codes)
        self.passwords = Mutex(passwords)
        self.signUp = signUp
    }

    var prompts: SignInPrompts {
        SignInPrompts(
            code: { sent, previous in
                self.asked.withLock { $0.append("code \(Self.kind(sent.type)) \(caseName(previous))") }
                guard let next = self.codes.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
                    throw HarnessFailure(description: "no more codes")
                }
                return next
            },
            password: { hint, previous in
                self.asked.withLock { $0.append("password \(hint ?? "-") \(caseName(previous))") }
                guard let next = self.passwords.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
                    throw HarnessFailure(description: "no more passwords")
                }
                return next
            },
            signUp: { _ in
                self.asked.withLock { $0.append("sign-up") }
                return self.signUp
            })
    }

    static func kind(_ type: Api.auth.SentCodeType) -> String {
        switch type {
            case .sentCodeTypeApp: "app"
            case .sentCodeTypeSms: "sms"
            default: "other"
        }
    }
}

private func rpcName(_ error: any Error) -> String? {
    if case MTProtoClientError.rpc(let rpc) = error { return rpc.message }
    return nil
}

/// The `rpc_error` message `body` failed with; nil if it succeeded or failed otherwise.
private func rpcError<T>(_ body: () async throws -> T) async -> String? {
    do {
        _ = try await body()
        return nil
    } catch {
        return rpcName(error)
    }
}

/// A `SignInError` case by name, as the prompts record it.
private func caseName(_ error: SignInError?) -> String {
    switch error {
        case nil: "-"
        case .codeInvalid?: "codeInvalid"
        case .passwordInvalid?: "passwordInvalid"
        case let other?: "\(other)"
    }
}

@Suite(.serialized) struct SignInTests {
    @Test func aNewNumberSignsUpAfterAWrongCodeAndAResend() async throws {
        let telegram = try await LocalTelegram.start(seed: 401)
        let client = try telegram.client()
        let script = ScriptedPrompts(codes: [.code("11111"), .resend, .code("22222")],
                                     signUp: SignUpDetails(firstName: "Carol", lastName: "New"))
        let user = try await client.signIn(phone: "9996620077", prompts: script.prompts)
        guard case .user(let me) = user else { throw HarnessFailure(description: "\(user)") }
        #expect(me.firstName == "Carol" && me.lastName == "New" && me.phone == "9996620077" && me.isSelf)
        #expect(script.asked.withLock { $0 } == ["code app -", "code app codeInvalid", "code sms -", "sign-up"])
        // Signed in: a call needing an account works.
        let users = try await client.invoke(Api.functions.users.getUsers(id: [.inputUserSelf]))
        #expect(users.count == 1)
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func declinedSignUpAndWrongCodesAreTypedErrors() async throws {
        let telegram = try await LocalTelegram.start(seed: 402)
        let client = try telegram.client()
        await #expect(throws: SignInError.signUpRequired) {
            try await client.signIn(phone: "9996620078", prompts: ScriptedPrompts(codes: [.code("22222")]).prompts)
        }
        let wrong = ScriptedPrompts(codes: [.code("1"), .code("2"), .code("3")])
        await #expect(throws: SignInError.codeInvalid) {
            try await client.signIn(phone: "9996620001", prompts: wrong.prompts)
        }
        await #expect(throws: SignInError.phoneNumberInvalid) { try await client.sendCode(to: "12345") }
        // A cancelled code is gone.
        guard case .code(let sent) = try await client.sendCode(to: "9996620001") else { throw HarnessFailure(description: "code") }
        try await client.cancelCode(sent)
        await #expect(throws: SignInError.codeExpired) { try await client.signIn(code: "22222", for: sent) }
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func aPasswordSignInFollowsUserMigrate() async throws {
        let telegram = try await LocalTelegram.start(seed: 403)
        try telegram.service.setPassword(phone: "9996610002", password: "hunter2", hint: "the usual")
        let client = try telegram.client()  // knows DC 2 only; Bob lives on DC 1
        let script = ScriptedPrompts(codes: [.code("11111")], passwords: ["hunter3", "hunter2"])
        let user = try await client.signIn(phone: "9996610002", prompts: script.prompts)
        guard case .user(let me) = user else { throw HarnessFailure(description: "\(user)") }
        #expect(me.firstName == "Bob")
        #expect(await client.homeDC == 1)
        #expect(script.asked.withLock { $0 } == ["code app -", "password the usual -", "password the usual passwordInvalid"])
        guard case .nearestDc(let nearest) = try await client.invoke(Api.functions.help.getNearestDc()) else { return }
        #expect(nearest.thisDc == 1)

        // The code sent through DC 1, entered on a device still on DC 2 (its first call): auth.signIn answers
        // USER_MIGRATE_1, the client moves, and the password finishes the sign-in there.
        let other = try telegram.client()
        guard case .code(let sent) = try await client.sendCode(to: "9996610002") else { throw HarnessFailure(description: "code") }
        guard case .passwordNeeded(let hint) = try await other.signIn(code: "11111", for: sent) else {
            throw HarnessFailure(description: "no password asked")
        }
        #expect(hint == "the usual")
        #expect(await other.homeDC == 1)
        guard case .user(let again) = try await other.checkPassword("hunter2") else { throw HarnessFailure(description: "user") }
        #expect(again.firstName == "Bob")
        await other.close()
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func wrongPasswordsEndInFloodWaitAndAChallengeIsUsedOnce() async throws {
        let telegram = try await LocalTelegram.start(seed: 404)
        try telegram.service.setPassword(phone: "9996620001", password: "right")
        let client = try telegram.client()
        guard case .code(let sent) = try await client.sendCode(to: "9996620001") else { throw HarnessFailure(description: "code") }
        guard case .passwordNeeded(let hint) = try await client.signIn(code: "22222", for: sent) else {
            throw HarnessFailure(description: "no password asked")
        }
        #expect(hint == nil)
        // One challenge, answered wrong then right: the right answer finds its srp_id used.
        let state = try await client.invoke(Api.functions.account.getPassword())
        let wrong = try await TelegramClient.passwordCheck(for: state, password: "wrong")
        let right = try await TelegramClient.passwordCheck(for: state, password: "right")
        #expect(await rpcError { try await client.invoke(Api.functions.auth.checkPassword(password: wrong)) }
                == "PASSWORD_HASH_INVALID")
        #expect(await rpcError { try await client.invoke(Api.functions.auth.checkPassword(password: right)) }
                == "SRP_ID_INVALID")
        // An srp_id never handed out.
        guard case .inputCheckPasswordSRP(let made) = right else { throw HarnessFailure(description: "\(right)") }
        let forged = Api.InputCheckPasswordSRP.inputCheckPasswordSRP(.init(srpId: made.srpId &+ 1, A: made.A, M1: made.M1))
        #expect(await rpcError { try await client.invoke(Api.functions.auth.checkPassword(password: forged)) }
                == "SRP_ID_INVALID")
        // Four more wrong passwords (five in all), then FLOOD_WAIT even for the right one.
        for _ in 0..<4 {
            await #expect(throws: SignInError.passwordInvalid) { try await client.checkPassword("wrong") }
        }
        do {
            _ = try await client.checkPassword("right")
            Issue.record("signed in despite the flood wait")
        } catch let error as SignInError {
            guard case .floodWait(let seconds) = error else { throw error }
            #expect(seconds > 60 && seconds <= 600)
        }
        await client.close()
        try await telegram.server.shutdown()
    }

    /// Draws `a` like the system source, noting whether each draw ran on the given event loop.
    struct LoopWatchingRandom: RandomSource {
        let loop: any EventLoop
        let drawsOnLoop = Shared<[Bool]>([])

        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            let onLoop = loop.inEventLoop
            drawsOnLoop.withLock { $0.append(onLoop) }
            SystemRandom().fill(buffer)
        }
    }

    /// The proof is made after the 100,000 PBKDF2 iterations, on the same thread, and draws `a` there: a caller
    /// running on the client's event loop (its task executor) must find every draw made off that loop.
    @Test func thePasswordWorkRunsOffTheClientsEventLoop() async throws {
        let telegram = try await LocalTelegram.start(seed: 406)
        try telegram.service.setPassword(phone: "9996620001", password: "right")
        let client = try telegram.client()
        guard case .code(let sent) = try await client.sendCode(to: "9996620001") else { throw HarnessFailure(description: "code") }
        guard case .passwordNeeded = try await client.signIn(code: "22222", for: sent) else {
            throw HarnessFailure(description: "no password asked")
        }
        let state = try await client.invoke(Api.functions.account.getPassword())
        let random = LoopWatchingRandom(loop: client.taskExecutor.eventLoop)
        let (callerOnLoop, check) = try await withTaskExecutorPreference(client.taskExecutor) {
            let onLoop = client.taskExecutor.eventLoop.inEventLoop
            return (onLoop, try await TelegramClient.passwordCheck(for: state, password: "right", random: random))
        }
        #expect(callerOnLoop)  // otherwise the check below would pass whatever passwordCheck did
        let draws = random.drawsOnLoop.withLock { $0 }
        #expect(!draws.isEmpty && !draws.contains(true))
        guard case .authorization = try await client.invoke(Api.functions.auth.checkPassword(password: check)) else {
            throw HarnessFailure(description: "not signed in")
        }
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func aPasswordIsSetChangedAndRemoved() async throws {
        let telegram = try await LocalTelegram.start(seed: 405)
        let alice = try telegram.client()
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        try await alice.setPassword("first", hint: "one")
        guard case .password(let set) = try await alice.invoke(Api.functions.account.getPassword()) else { return }
        #expect(set.hasPassword && set.hint == "one")
        // Changing needs the current one.
        await #expect(throws: SignInError.passwordNeeded(hint: "one")) { try await alice.setPassword("second") }
        await #expect(throws: SignInError.passwordInvalid) { try await alice.setPassword("second", current: "nope") }
        try await alice.setPassword("second", current: "first", hint: "two")

        // Another device signs in with the new password only.
        let other = try telegram.client()
        let script = ScriptedPrompts(codes: [.code("22222")], passwords: ["first", "second"])
        _ = try await other.signIn(phone: "9996620001", prompts: script.prompts)
        #expect(script.asked.withLock { $0 } == ["code app -", "password two -", "password two passwordInvalid"])

        try await other.setPassword(nil, current: "second")
        guard case .password(let removed) = try await alice.invoke(Api.functions.account.getPassword()) else { return }
        #expect(!removed.hasPassword && removed.hint == nil)
        let third = try telegram.client()
        _ = try await LocalTelegram.signIn(third, phone: "9996620001")  // no password asked
        for client in [alice, other, third] { await client.close() }
        try await telegram.server.shutdown()
    }

    @Test func aBotSignsInWithItsTokenAndIsRefusedUserMethods() async throws {
        let telegram = try await LocalTelegram.start(seed: 406)
        let token = "123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
        try telegram.service.addBot(token: token, firstName: "Helper", username: "helper_bot")
        let client = try telegram.client()
        await #expect(throws: SignInError.botTokenInvalid) { try await client.signIn(botToken: "123456:wrongwrongwrong") }
        await #expect(throws: SignInError.botTokenInvalid) { try await client.signIn(botToken: "not a token") }
        let user = try await client.signIn(botToken: token)
        guard case .user(let bot) = user else { throw HarnessFailure(description: "\(user)") }
        #expect(bot.bot && bot.username == "helper_bot" && bot.phone == nil)
        do {
            _ = try await client.invoke(Api.functions.account.getPassword())
            Issue.record("a bot read a password")
        } catch {
            #expect(rpcName(error) == "BOT_METHOD_INVALID")
        }
        do {
            _ = try await client.invoke(Api.functions.messages.getDialogs(offsetDate: 0, offsetId: 0,
                                                                         offsetPeer: .inputPeerEmpty, limit: 10, hash: 0))
            Issue.record("a bot listed dialogs")
        } catch {
            #expect(rpcName(error) == "BOT_METHOD_INVALID")
        }
        // Methods bots may call still work.
        _ = try await client.invoke(Api.functions.users.getUsers(id: [.inputUserSelf]))
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func logOutEndsTheAuthorization() async throws {
        let telegram = try await LocalTelegram.start(seed: 407)
        let client = try telegram.client()
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        try await client.logOut()
        do {
            _ = try await client.invoke(Api.functions.messages.getDialogs(offsetDate: 0, offsetId: 0,
                                                                         offsetPeer: .inputPeerEmpty, limit: 10, hash: 0))
            Issue.record("still signed in")
        } catch {
            #expect(rpcName(error) == "AUTH_KEY_UNREGISTERED")
        }
        await client.close()
        try await telegram.server.shutdown()
    }
}

/// QR-code login against the test Telegram: the exporter waits for the push, follows loginTokenMigrateTo to the
/// account's DC, renews an expired token, and goes on with the password; the accepting side's errors are typed.
@Suite(.serialized) struct QRLoginTests {
    @Test func aQRLoginMovesToTheAccountsDC() async throws {
        let telegram = try await LocalTelegram.start(seed: 421)
        let bob = try telegram.client()
        _ = try await LocalTelegram.signIn(bob, phone: "9996610002")  // Bob lives on DC 1
        let newDevice = try telegram.client()  // starts on DC 2
        let shown = Shared<[String]>([])
        let user = try await newDevice.signInWithQRCode(show: { token in
            shown.withLock { $0.append(token.url) }
            // The scanner reads the URL, not the bytes.
            guard let scanned = LoginToken(url: token.url) else { throw HarnessFailure(description: token.url) }
            #expect(scanned.token == token.token)
            try await bob.acceptLoginToken(scanned)
        }, password: { _, _ in throw HarnessFailure(description: "no password set") })
        guard case .user(let me) = user else { throw HarnessFailure(description: "\(user)") }
        #expect(me.firstName == "Bob")
        #expect(await newDevice.homeDC == 1)
        let urls = shown.withLock { $0 }
        #expect(urls.count == 1 && urls[0].hasPrefix("tg://login?token="))
        #expect(urls.first.map { !$0.dropFirst("tg://login?token=".count).contains("=") } == true)  // unpadded
        // Signed in on DC 1: a call needing an account works there.
        guard case .nearestDc(let nearest) = try await newDevice.invoke(Api.functions.help.getNearestDc()) else { return }
        #expect(nearest.thisDc == 1)
        _ = try await newDevice.invoke(Api.functions.messages.getDialogs(
            offsetDate: 0, offsetId: 0, offsetPeer: .inputPeerEmpty, limit: 10, hash: 0))
        for client in [bob, newDevice] { await client.close() }
        try await telegram.server.shutdown()
    }

    @Test func anExpiredTokenIsRenewedAndAPasswordFinishesTheLogin() async throws {
        let offset = Shared<Double>(0)
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 + offset.withLock { $0 } }
        let telegram = try await LocalTelegram.start(seed: 422, clock: clock)
        try telegram.service.setPassword(phone: "9996620001", password: "qr-pass", hint: "qr")
        let alice = try telegram.client(clock: clock)
        _ = try await alice.signIn(phone: "9996620001", prompts: ScriptedPrompts(codes: [.code("22222")],
                                                                                  passwords: ["qr-pass"]).prompts)
        let newDevice = try telegram.client(clock: clock)
        let shown = Shared<[LoginToken]>([])
        let asked = Shared<[String]>([])
        let user = try await newDevice.signInWithQRCode(show: { token in
            let count = shown.withLock { $0.append(token); return $0.count }
            if count == 1 {
                // Nobody scans the first one in time.
                offset.withLock { $0 += TestTelegramService.loginTokenLifetime + 1 }
                await #expect(throws: SignInError.loginTokenInvalid) { try await alice.acceptLoginToken(token) }
            } else {
                try await alice.acceptLoginToken(token)
                await #expect(throws: SignInError.loginTokenInvalid) { try await alice.acceptLoginToken(token) }
            }
        }, password: { hint, previous in
            asked.withLock { $0.append("\(hint ?? "-") \(caseName(previous))") }
            return asked.withLock { $0.count } == 1 ? "wrong" : "qr-pass"
        })
        guard case .user(let me) = user else { throw HarnessFailure(description: "\(user)") }
        #expect(me.firstName == "Alice")
        let tokens = shown.withLock { $0 }
        #expect(tokens.count == 2 && tokens[0].token != tokens[1].token && tokens[1].expires > tokens[0].expires)
        #expect(asked.withLock { $0 } == ["qr -", "qr passwordInvalid"])
        await #expect(throws: SignInError.loginTokenInvalid) {
            try await alice.acceptLoginToken(LoginToken(token: [1, 2, 3], expires: 0))
        }
        for client in [alice, newDevice] { await client.close() }
        try await telegram.server.shutdown()
    }

    @Test func loginTokenURLs() {
        let token = LoginToken(token: [0xfb, 0xff, 0xfe, 0x00, 0x01], expires: 5)
        #expect(token.url == "tg://login?token=-__-AAE")
        #expect(LoginToken(url: token.url)?.token == token.token)
        #expect(LoginToken(url: "https://example.com") == nil)
        #expect(LoginToken(url: "tg://login?token=") == nil)
        #expect(LoginToken(url: "tg://login?token=!!!") == nil)
    }
}

/// A server that answers `account.getPassword` with hostile parameters and counts `auth.checkPassword` calls.
@Suite struct HostilePasswordServerTests {
    enum Hostility: String, CaseIterable {
        case primeNotSafe, primeWrongSize, badGenerator, gBOutOfRange
    }

    @Test(arguments: Hostility.allCases)
    func theClientRefusesBeforeSendingAnything(_ hostility: Hostility) async throws {
        let checks = Shared(0)
        var handlers = TestTelegram.handlers()
        let random = SeededRandom(seed: 9)
        var p = DHPrimeCache.telegramPrime, g: Int32 = 3
        var gB = random.bytes(256)
        gB[0] = 0x42  // in range for the good prime
        switch hostility {
            case .primeNotSafe:
                p[255] ^= 2  // odd, 2048 bits, composite
                g = 4  // no residue condition, so the primality test is what refuses it
            case .primeWrongSize: p = Array(p.dropFirst())
            case .badGenerator: g = 2  // Telegram's prime is 3 mod 8: 2 does not generate the order-q subgroup
            case .gBOutOfRange: gB = [UInt8](repeating: 0, count: 255) + [1]
        }
        let algo = Api.PasswordKdfAlgo.passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
            .init(salt1: random.bytes(40), salt2: random.bytes(16), g: g, p: p))
        let answer = Api.account.Password.password(.init(
            currentAlgo: algo, srpB: gB, srpId: 77, hint: "hostile", newAlgo: algo,
            newSecureAlgo: .securePasswordKdfAlgoUnknown, secureRandom: random.bytes(32)))
        handlers.register("account.getPassword") { _ in TestTelegram.serialized(answer) }
        for method in ["auth.checkPassword", "account.updatePasswordSettings"] {
            handlers.register(method) { _ throws(RPCError) in
                checks.withLock { $0 += 1 }
                throw RPCError(code: 400, message: "PASSWORD_HASH_INVALID")
            }
        }
        let server = try await MTProtoTestServer.start(.init(rsaKeys: [try Fixture.rsaKey()], handlers: handlers,
                                                             dcIDs: [2], random: SeededRandom(seed: 10)))
        let client = TelegramClient(configuration: .init(
            app: .init(apiID: 1, apiHash: "test"), dcs: [2: DCAddress(host: "127.0.0.1", port: server.ports[2] ?? 0)],
            homeDC: 2, serverKeys: [try Fixture.rsaKey().publicKey], followsUpdates: false))
        do {
            _ = try await client.checkPassword("secret")
            Issue.record("the client accepted \(hostility)")
        } catch let error as SignInError {
            guard case .unsafePasswordParameters(let reason) = error else { throw error }
            switch (hostility, reason) {
                case (.primeNotSafe, .dhPrimeNotSafe), (.primeWrongSize, .dhPrimeWrongSize(bits: 2037)),
                     (.badGenerator, .dhGeneratorCondition(g: 2)), (.gBOutOfRange, .dhValueOutOfRange): break
                default: Issue.record("\(hostility) refused as \(reason)")
            }
        }
        // Setting a password over hostile parameters is refused the same way.
        await #expect(throws: SignInError.self) { try await client.setPassword("new", current: "secret") }
        #expect(checks.withLock { $0 } == 0)
        await client.close()
        try await server.shutdown()
    }
}
