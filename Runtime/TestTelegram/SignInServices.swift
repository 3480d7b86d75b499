// The rest of signing in: cloud passwords (core.telegram.org/api/srp), codes resent and cancelled
// (core.telegram.org/api/auth), and bots signing in with a token (core.telegram.org/api/bots).
// - A password is kept as its SRP verifier v = g^x, never as text. `account.getPassword` answers with a fresh b,
//   srp_B = k·v + g^b and a single-use srp_id; `auth.checkPassword` / `account.updatePasswordSettings` take that
//   srp_id once (SRP_ID_INVALID after) and check M1 (PASSWORD_HASH_INVALID); five failures within ten minutes give
//   FLOOD_WAIT_X until the oldest of them is ten minutes old.
// - `auth.signIn` of an account with a password answers SESSION_PASSWORD_NEEDED and leaves the key waiting for
//   `auth.checkPassword`.
// - A bot is an account made with a token `ID:SECRET`; `auth.importBotAuthorization` signs a key in as it
//   (ACCESS_TOKEN_INVALID otherwise), and the user-only methods answer it BOT_METHOD_INVALID.
import MTProto
import MTProtoCrypto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

/// A cloud password as the server keeps it.
struct StoredPassword {
    let salt1: [UInt8]
    let salt2: [UInt8]
    let g: Int32
    let p: [UInt8]
    let verifier: [UInt8]
    let hint: String?

    var algo: Api.PasswordKdfAlgo {
        .passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(.init(salt1: salt1, salt2: salt2, g: g, p: p))
    }
}

/// A challenge handed out by `account.getPassword`.
struct PendingSRP {
    let user: Int64
    let b: [UInt8]
    let gB: [UInt8]
    let expires: Double
}

/// Sign-in state beyond codes: passwords, challenges, keys waiting for a password, failures, bots.
struct SignInState {
    var passwords: [Int64: StoredPassword] = [:]
    var challenges: [Int64: PendingSRP] = [:]
    /// Keys whose code was right for an account with a password, waiting for `auth.checkPassword`.
    var awaitingPassword: [DCKey: Int64] = [:]
    /// Times of recent wrong passwords, by account.
    var failures: [Int64: [Double]] = [:]
    /// Bot accounts by token, and the set of bot ids.
    var botTokens: [String: Int64] = [:]
    var bots: Set<Int64> = []
    /// QR login tokens (QRLoginServices.swift).
    var loginTokens: [[UInt8]: LoginTokenEntry] = [:]
}

extension TestTelegramService {
    /// Wrong passwords allowed in `passwordFailureWindow` seconds before FLOOD_WAIT.
    static let passwordFailureLimit = 5
    static let passwordFailureWindow: Double = 600
    /// Seconds an srp_id stays valid.
    static let challengeLifetime: Double = 300
    /// Registers the password, resend/cancel and bot handlers (and the QR login's).
    func registerSignIn(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.account.GetPassword.self) { [self] call, _ throws(RPCError) in
            try refuseBots(call)
            return try getPassword(call)
        }
        handlers.on(Api.functions.auth.CheckPassword.self) { [self] call, request throws(RPCError) in
            try checkPassword(call, password: request.password)
        }
        handlers.on(Api.functions.account.UpdatePasswordSettings.self) { [self] call, request throws(RPCError) in
            try refuseBots(call)
            return try updatePasswordSettings(call, request)
        }
        handlers.on(Api.functions.auth.ResendCode.self) { [self] call, request throws(RPCError) in
            try resendCode(call, phone: try phone(request.phoneNumber), hash: request.phoneCodeHash)
        }
        handlers.on(Api.functions.auth.CancelCode.self) { [self] call, request throws(RPCError) in
            let phone = try phone(request.phoneNumber)
            let hash = request.phoneCodeHash
            try state.withLock { state throws(RPCError) in
                guard let pending = state.codes[hash], pending.phone == phone else {
                    throw RPCError(code: 400, message: "PHONE_CODE_EXPIRED")
                }
                state.codes.removeValue(forKey: hash)
            }
            return true
        }
        handlers.on(Api.functions.auth.ImportBotAuthorization.self) { [self] call, request throws(RPCError) in
            try importBot(call, token: request.botAuthToken)
        }
        registerQRLogin(into: &handlers)
    }

    /// BOT_METHOD_INVALID when the call's key is signed in as a bot: for the methods only people may call.
    func refuseBots(_ call: RPCCall) throws(RPCError) {
        let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
        let isBot = state.withLock { state in state.authorizations[key].map { state.signIn.bots.contains($0) } ?? false }
        if isBot { throw RPCError(code: 400, message: "BOT_METHOD_INVALID") }
    }

    /// Gives an account a cloud password (as if set in an app): a fresh salt, the verifier, the hint.
    public func setPassword(phone: String, password: String, hint: String? = nil) throws(RPCError) {
        guard let number = TestPhone(phone) else { throw RPCError(code: 400, message: "PHONE_NUMBER_INVALID") }
        let stored: StoredPassword
        do {
            let salt1 = random.bytes(40), salt2 = random.bytes(16)
            let parameters = try SRPParameters(salt1: salt1, salt2: salt2, g: 3, p: DHPrimeCache.telegramPrime)
            let x = try SRP.passwordHash(password, salt1: salt1, salt2: salt2)
            stored = StoredPassword(salt1: salt1, salt2: salt2, g: 3, p: parameters.p,
                                    verifier: try SRP.verifier(passwordHash: x, parameters: parameters), hint: hint)
        } catch {
            throw RPCError(code: 500, message: "SRP_FAILED")
        }
        try state.withLock { state throws(RPCError) in
            guard let id = state.phones[number.digits] else { throw RPCError(code: 400, message: "PHONE_NUMBER_UNOCCUPIED") }
            state.signIn.passwords[id] = stored
        }
    }

    /// Creates a bot account signed in to with `token` (`ID:SECRET`, the form BotFather gives). Returns its id.
    @discardableResult
    public func addBot(token: String, firstName: String, username: String) throws(RPCError) -> Int64 {
        try Self.checkUsername(username)
        guard Self.botTokenIsWellFormed(token) else { throw RPCError(code: 400, message: "ACCESS_TOKEN_INVALID") }
        let accessHash = random.int64()
        return try state.withLock { state throws(RPCError) in
            guard state.usernames[username.lowercased()] == nil else { throw RPCError(code: 400, message: "USERNAME_OCCUPIED") }
            guard state.signIn.botTokens[token] == nil else { throw RPCError(code: 400, message: "ACCESS_TOKEN_INVALID") }
            // Bots have no phone; the account table wants one, so each gets a number of the reserved `999660YYYY`
            // range (DC digit 0: no DC, so no code is ever sent to it, see `sendCode`'s home lookup).
            let serial = String(state.signIn.bots.count)
            guard let number = TestPhone("999660" + String(repeating: "0", count: max(0, 4 - serial.count)) + serial) else { throw RPCError(code: 500, message: "BOTS_TOO_MANY") }
            let id = try state.createAccount(number: number, firstName: firstName, lastName: "", username: username,
                                             homeDC: nil, accessHash: accessHash, limits: limits)
            state.signIn.bots.insert(id)
            state.signIn.botTokens[token] = id
            return id
        }
    }

    static func botTokenIsWellFormed(_ token: String) -> Bool {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let id = parts.first, !id.isEmpty, id.allSatisfy({ $0.isASCII && $0.isNumber }),
              let secret = parts.last, (10...64).contains(secret.count),
              secret.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else { return false }
        return true
    }

    /// The account a key acts for here: logged in, or waiting for its password.
    private func passwordOwner(_ call: RPCCall, state: ServiceState) -> Int64? {
        let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
        return state.authorizations[key] ?? state.signIn.awaitingPassword[key]
    }

    private func getPassword(_ call: RPCCall) throws(RPCError) -> Api.account.Password {
        let b = random.bytes(256), srpID = random.int64()
        let newSalt1 = random.bytes(8), newSalt2 = random.bytes(16), secureSalt = random.bytes(8)
        let secureRandom = random.bytes(32)
        let (user, stored) = try state.withLock { state throws(RPCError) in
            guard let user = passwordOwner(call, state: state) else { throw RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED") }
            return (user, state.signIn.passwords[user])
        }
        let newAlgo = Api.PasswordKdfAlgo.passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
            .init(salt1: newSalt1, salt2: newSalt2, g: 3, p: DHPrimeCache.telegramPrime))
        let secureAlgo = Api.SecurePasswordKdfAlgo.securePasswordKdfAlgoPBKDF2HMACSHA512iter100000(.init(salt: secureSalt))
        guard let stored else {
            return Api.account.Password.password(.init(
                newAlgo: newAlgo, newSecureAlgo: secureAlgo, secureRandom: secureRandom))
        }
        let gB: [UInt8]
        do {
            let parameters = try SRPParameters(salt1: stored.salt1, salt2: stored.salt2, g: Int(stored.g), p: stored.p)
            gB = try SRP.serverPublic(verifier: stored.verifier, b: b, parameters: parameters)
        } catch {
            throw RPCError(code: 500, message: "SRP_FAILED")
        }
        try state.withLock { state throws(RPCError) in
            state.signIn.challenges = state.signIn.challenges.filter { $0.value.expires > call.now }
            guard state.signIn.challenges.count < limits.maxPendingCodes else {
                throw RPCError(code: 420, message: "FLOOD_WAIT_60")
            }
            state.signIn.challenges[srpID] = PendingSRP(user: user, b: b, gB: gB, expires: call.now + Self.challengeLifetime)
        }
        return Api.account.Password.password(.init(
            currentAlgo: stored.algo, srpB: gB, srpId: srpID, hint: stored.hint, newAlgo: newAlgo,
            newSecureAlgo: secureAlgo, secureRandom: secureRandom))
    }

    /// Checks an `InputCheckPasswordSRP` for `user`'s password: the srp_id is used up either way; wrong answers
    /// count towards FLOOD_WAIT. An account without a password takes only `inputCheckPasswordEmpty`.
    private func verifyPassword(_ input: Api.InputCheckPasswordSRP, user: Int64, now: Double,
                                state: inout ServiceState) throws(RPCError) {
        let recent = (state.signIn.failures[user] ?? []).filter { $0 > now - Self.passwordFailureWindow }
        state.signIn.failures[user] = recent
        if recent.count >= Self.passwordFailureLimit, let oldest = recent.first {
            let wait = Int((oldest + Self.passwordFailureWindow - now).rounded(.up))
            throw RPCError(code: 420, message: "FLOOD_WAIT_\(max(1, wait))")
        }
        guard let stored = state.signIn.passwords[user] else {
            guard case .inputCheckPasswordEmpty = input else { throw RPCError(code: 400, message: "PASSWORD_HASH_INVALID") }
            return
        }
        guard case .inputCheckPasswordSRP(let check) = input else {
            throw RPCError(code: 400, message: "PASSWORD_HASH_INVALID")
        }
        guard let challenge = state.signIn.challenges.removeValue(forKey: check.srpId), challenge.user == user,
              challenge.expires > now
        else { throw RPCError(code: 400, message: "SRP_ID_INVALID") }
        var verified = false
        do {
            let parameters = try SRPParameters(salt1: stored.salt1, salt2: stored.salt2, g: Int(stored.g), p: stored.p)
            verified = try SRP.serverVerifies(SRPProof(a: check.A, m1: check.M1), verifier: stored.verifier,
                                              b: challenge.b, gB: challenge.gB, parameters: parameters)
        } catch {
            verified = false  // an A out of range is a wrong answer
        }
        guard verified else {
            state.signIn.failures[user, default: []].append(now)
            throw RPCError(code: 400, message: "PASSWORD_HASH_INVALID")
        }
        state.signIn.failures[user] = nil
    }

    private func checkPassword(_ call: RPCCall, password input: Api.InputCheckPasswordSRP)
        throws(RPCError) -> Api.auth.Authorization {
        let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
        let user = try state.withLock { state throws(RPCError) in
            guard let user = state.signIn.awaitingPassword[key] else {
                throw RPCError(code: 400, message: "PASSWORD_HASH_INVALID")
            }
            try verifyPassword(input, user: user, now: call.now, state: &state)
            state.signIn.awaitingPassword.removeValue(forKey: key)
            if state.accounts[user]?.homeDC == nil { state.accounts[user]?.homeDC = call.endpoint.dcID }
            try state.authorize(key, as: user, limits: limits)
            return state.user(user, viewer: user)
        }
        return Api.auth.Authorization.authorization(.init(user: user))
    }

    private func updatePasswordSettings(_ call: RPCCall, _ request: Api.functions.account.UpdatePasswordSettings)
        throws(RPCError) -> Bool {
        let me = try caller(call)
        let input = request.password
        let settings = request.newSettings
        guard case .passwordInputSettings(let new) = settings else { throw RPCError(code: 400, message: "NEW_SETTINGS_INVALID") }
        var replacement: StoredPassword?
        switch new.newAlgo {
            case nil, .passwordKdfAlgoUnknown?:
                // Removal: no algorithm and an empty hash (core.telegram.org/api/srp#setting-a-new-2fa-password).
                guard (new.newPasswordHash ?? []).isEmpty else { throw RPCError(code: 400, message: "NEW_SETTINGS_INVALID") }
            case .passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(let algo)?:
                guard let hash = new.newPasswordHash, (1...256).contains(hash.count), hash.contains(where: { $0 != 0 }),
                      algo.salt1.count >= 8 + 32, algo.p == DHPrimeCache.telegramPrime, algo.g == 3
                else { throw RPCError(code: 400, message: "NEW_SETTINGS_INVALID") }
                replacement = StoredPassword(salt1: algo.salt1, salt2: algo.salt2, g: algo.g, p: algo.p, verifier: hash,
                                             hint: new.hint.flatMap { $0.isEmpty ? nil : $0 })
        }
        try state.withLock { state throws(RPCError) in
            try verifyPassword(input, user: me, now: call.now, state: &state)
            state.signIn.passwords[me] = replacement
        }
        return true
    }

    private func resendCode(_ call: RPCCall, phone: TestPhone, hash: String) throws(RPCError) -> Api.auth.SentCode {
        try state.withLock { state throws(RPCError) in
            guard let pending = state.codes[hash], pending.phone == phone, pending.expires > call.now else {
                throw RPCError(code: 400, message: "PHONE_CODE_EXPIRED")
            }
            state.codes[hash] = PendingCode(phone: phone, code: pending.code, expires: call.now + limits.codeLifetime)
        }
        return Api.auth.SentCode.sentCode(.init(
            type: .sentCodeTypeSms(.init(length: 5)), phoneCodeHash: hash, timeout: Int32(limits.codeLifetime)))
    }

    private func importBot(_ call: RPCCall, token: String) throws(RPCError) -> Api.auth.Authorization {
        let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
        let user = try state.withLock { state throws(RPCError) in
            guard Self.botTokenIsWellFormed(token), let id = state.signIn.botTokens[token] else {
                throw RPCError(code: 400, message: "ACCESS_TOKEN_INVALID")
            }
            let home = state.accounts[id]?.homeDC ?? call.endpoint.dcID
            guard home == call.endpoint.dcID else { throw RPCError(code: 303, message: "USER_MIGRATE_\(home)") }
            state.accounts[id]?.homeDC = home
            try state.authorize(key, as: id, limits: limits)
            return state.user(id, viewer: id)
        }
        return Api.auth.Authorization.authorization(.init(user: user))
    }
}
