// Login as on Telegram's test DCs (core.telegram.org/api/auth, "Test accounts"): numbers `99966XYYYY` get the code
// of five X digits, and X is the number's home DC when the cluster has it. `auth.sendCode` answers PHONE_MIGRATE_X
// and `auth.signIn` USER_MIGRATE_X on a DC that is not the account's home; `auth.exportAuthorization` /
// `auth.importAuthorization` log a key of another DC in as the same user (what clients do to download a file that
// lives there); `account.updateUsername` and `auth.logOut` complete the set.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    func registerAuth(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.auth.SendCode.self) { [self] call, request throws(RPCError) in
            try sendCode(call, phone: try personPhone(request.phoneNumber))
        }
        handlers.on(Api.functions.auth.SignIn.self, signIn)
        handlers.on(Api.functions.auth.SignUp.self, signUp)
        handlers.on(Api.functions.auth.LogOut.self) { [self] call, _ throws(RPCError) in
            let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
            try state.withLock { state throws(RPCError) in
                guard let user = state.authorizations.removeValue(forKey: key) else {
                    throw RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")
                }
                state.accounts[user]?.keys.remove(key)
            }
            return .loggedOut(.init())
        }
        handlers.on(Api.functions.auth.ExportAuthorization.self) { [self] call, request throws(RPCError) in
            try exportAuthorization(call, dcID: request.dcId)
        }
        handlers.on(Api.functions.auth.ImportAuthorization.self) { [self] call, request throws(RPCError) in
            try importAuthorization(call, id: request.id, bytes: request.bytes)
        }
        handlers.on(Api.functions.account.UpdateUsername.self) { [self] call, request throws(RPCError) in
            try updateUsername(call, username: request.username)
        }
    }

    /// The DCs of the call's cluster, by id.
    private func clusterHas(_ dcID: Int32, _ call: RPCCall) -> Bool { call.dcs.contains { $0.dcID == dcID } }

    /// Where an account lives: its home DC once known, else the number's X when the cluster has it.
    private func home(of phone: TestPhone, account: Account?, _ call: RPCCall) -> Int32? {
        if let home = account?.homeDC { return home }
        return clusterHas(phone.dcDigit, call) ? phone.dcDigit : nil
    }

    func phone(_ number: String) throws(RPCError) -> TestPhone {
        guard let phone = TestPhone(number) else { throw RPCError(code: 400, message: "PHONE_NUMBER_INVALID") }
        return phone
    }

    /// A number a person signs in or up with: a bot's placeholder number is no phone, so no code is sent to it and
    /// nobody signs in with it.
    func personPhone(_ number: String) throws(RPCError) -> TestPhone {
        let phone = try phone(number)
        let isBot = state.withLock { state in state.phones[phone.digits].map { state.signIn.bots.contains($0) } ?? false }
        if isBot || phone.dcDigit == 0 { throw RPCError(code: 400, message: "PHONE_NUMBER_INVALID") }
        return phone
    }

    private func sendCode(_ call: RPCCall, phone: TestPhone) throws(RPCError) -> Api.auth.SentCode {
        let hashBytes = random.bytes(9)
        let hash = Hex.encode(hashBytes)
        try state.withLock { state throws(RPCError) in
            let account = state.phones[phone.digits].flatMap { state.accounts[$0] }
            if let home = home(of: phone, account: account, call), home != call.endpoint.dcID {
                throw RPCError(code: 303, message: "PHONE_MIGRATE_\(home)")
            }
            try state.pruneCodes(now: call.now, limit: limits.maxPendingCodes)
            state.codes[hash] = PendingCode(phone: phone, code: phone.code, expires: call.now + limits.codeLifetime)
        }
        return .sentCode(.init(type: .sentCodeTypeApp(.init(length: 5)), phoneCodeHash: hash,
                               timeout: Int32(limits.codeLifetime)))
    }

    /// Checks the phone/hash/code triple of `auth.signIn` / `auth.signUp`; the code stays valid until it is used.
    private func checkCode(_ call: RPCCall, phone: TestPhone, hash: String, code: String?,
                           state: inout ServiceState) throws(RPCError) -> TestPhone {
        guard !hash.isEmpty else { throw RPCError(code: 400, message: "PHONE_CODE_HASH_EMPTY") }
        guard let pending = state.codes[hash], pending.phone == phone else {
            throw RPCError(code: 400, message: "PHONE_CODE_EXPIRED")
        }
        guard pending.expires > call.now else {
            state.codes.removeValue(forKey: hash)
            throw RPCError(code: 400, message: "PHONE_CODE_EXPIRED")
        }
        if let code {
            guard !code.isEmpty else { throw RPCError(code: 400, message: "PHONE_CODE_EMPTY") }
            guard code == pending.code else { throw RPCError(code: 400, message: "PHONE_CODE_INVALID") }
        }
        return phone
    }

    private func signIn(_ call: RPCCall, _ request: Api.functions.auth.SignIn)
        throws(RPCError) -> Api.auth.Authorization {
        let number = try personPhone(request.phoneNumber)
        guard let code = request.phoneCode else { throw RPCError(code: 400, message: "PHONE_CODE_EMPTY") }
        let user: Api.User? = try state.withLock { state throws(RPCError) in
            let phone = try checkCode(call, phone: number, hash: request.phoneCodeHash, code: code, state: &state)
            guard let id = state.phones[phone.digits], var account = state.accounts[id] else {
                return nil  // the code stays for auth.signUp
            }
            let home = home(of: phone, account: account, call) ?? call.endpoint.dcID
            guard home == call.endpoint.dcID else { throw RPCError(code: 303, message: "USER_MIGRATE_\(home)") }
            account.homeDC = home
            state.accounts[id] = account
            state.codes.removeValue(forKey: request.phoneCodeHash)
            let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
            if state.signIn.passwords[id] != nil {
                // The code was right; the key waits for auth.checkPassword (core.telegram.org/api/srp).
                state.signIn.awaitingPassword[key] = id
                throw RPCError(code: 401, message: "SESSION_PASSWORD_NEEDED")
            }
            try state.authorize(DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID), as: id, limits: limits)
            return state.user(id, viewer: id)
        }
        guard let user else { return .authorizationSignUpRequired(.init()) }
        return .authorization(.init(user: user))
    }

    private func signUp(_ call: RPCCall, _ request: Api.functions.auth.SignUp)
        throws(RPCError) -> Api.auth.Authorization {
        let number = try personPhone(request.phoneNumber)
        let first = request.firstName.trimmingCharacters(in: .whitespaces)
        let last = request.lastName.trimmingCharacters(in: .whitespaces)
        guard !first.isEmpty, first.count <= 64 else { throw RPCError(code: 400, message: "FIRSTNAME_INVALID") }
        guard last.count <= 64 else { throw RPCError(code: 400, message: "LASTNAME_INVALID") }
        let accessHash = random.int64()
        let user = try state.withLock { state throws(RPCError) in
            let phone = try checkCode(call, phone: number, hash: request.phoneCodeHash, code: nil, state: &state)
            let home = home(of: phone, account: nil, call) ?? call.endpoint.dcID
            guard home == call.endpoint.dcID else { throw RPCError(code: 303, message: "PHONE_MIGRATE_\(home)") }
            let id = try state.createAccount(number: phone, firstName: first, lastName: last, username: nil,
                                             homeDC: home, accessHash: accessHash, limits: limits)
            state.codes.removeValue(forKey: request.phoneCodeHash)
            try state.authorize(DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID), as: id, limits: limits)
            return state.user(id, viewer: id)
        }
        return .authorization(.init(user: user))
    }

    private func exportAuthorization(_ call: RPCCall, dcID: Int32) throws(RPCError) -> Api.auth.ExportedAuthorization {
        let user = try caller(call)
        guard clusterHas(dcID, call), dcID != call.endpoint.dcID else { throw RPCError(code: 400, message: "DC_ID_INVALID") }
        let bytes = random.bytes(32)
        try state.withLock { state throws(RPCError) in
            try state.pruneCodes(now: call.now, limit: limits.maxPendingCodes)
            state.exports[bytes] = ExportedAuthorization(userID: user, dcID: dcID, expires: call.now + limits.codeLifetime)
        }
        return .exportedAuthorization(.init(id: user, bytes: bytes))
    }

    private func importAuthorization(_ call: RPCCall, id: Int64, bytes: [UInt8])
        throws(RPCError) -> Api.auth.Authorization {
        let user = try state.withLock { state throws(RPCError) in
            guard let export = state.exports[bytes], export.userID == id, export.dcID == call.endpoint.dcID,
                  export.expires > call.now
            else { throw RPCError(code: 400, message: "AUTH_BYTES_INVALID") }
            state.exports.removeValue(forKey: bytes)
            try state.authorize(DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID), as: id, limits: limits)
            return state.user(id, viewer: id)
        }
        return .authorization(.init(user: user))
    }

    private func updateUsername(_ call: RPCCall, username: String) throws(RPCError) -> Api.User {
        let me = try caller(call)
        if !username.isEmpty { try Self.checkUsername(username) }
        let user = try state.withLock { state throws(RPCError) in
            guard var account = state.accounts[me] else { throw RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED") }
            let wanted = username.isEmpty ? nil : username
            guard wanted != account.username else { throw RPCError(code: 400, message: "USERNAME_NOT_MODIFIED") }
            if let wanted, let owner = state.usernames[wanted.lowercased()], owner != me {
                throw RPCError(code: 400, message: "USERNAME_OCCUPIED")
            }
            if let old = account.username { state.usernames.removeValue(forKey: old.lowercased()) }
            if let wanted { state.usernames[wanted.lowercased()] = me }
            account.username = wanted
            state.accounts[me] = account
            return state.user(me, viewer: me)
        }
        return user
    }
}
