// Login as on Telegram's test DCs (core.telegram.org/api/auth, "Test accounts"): numbers `99966XYYYY` get the code
// of five X digits, and X is the number's home DC when the cluster has it. `auth.sendCode` answers PHONE_MIGRATE_X
// and `auth.signIn` USER_MIGRATE_X on a DC that is not the account's home; `auth.exportAuthorization` /
// `auth.importAuthorization` log a key of another DC in as the same user (what clients do to download a file that
// lives there); `account.updateUsername` and `auth.logOut` complete the set.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi

extension TestTelegramService {
    func registerAuth(into handlers: inout RPCHandlers) {
        handlers.register("auth.sendCode") { [self] call throws(RPCError) in try sendCode(call) }
        handlers.register("auth.signIn") { [self] call throws(RPCError) in try signIn(call) }
        handlers.register("auth.signUp") { [self] call throws(RPCError) in try signUp(call) }
        handlers.register("auth.logOut") { [self] call throws(RPCError) in
            let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
            try state.withLock { state throws(RPCError) in
                guard let user = state.authorizations.removeValue(forKey: key) else {
                    throw RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")
                }
                state.accounts[user]?.keys.remove(key)
            }
            return TestTelegram.serialized(Api.auth.LoggedOut.loggedOut(.init()))
        }
        handlers.register("auth.exportAuthorization") { [self] call throws(RPCError) in try exportAuthorization(call) }
        handlers.register("auth.importAuthorization") { [self] call throws(RPCError) in try importAuthorization(call) }
        handlers.register("account.updateUsername") { [self] call throws(RPCError) in try updateUsername(call) }
    }

    /// The DCs of the call's cluster, by id.
    private func clusterHas(_ dcID: Int32, _ call: RPCCall) -> Bool { call.dcs.contains { $0.dcID == dcID } }

    /// Where an account lives: its home DC once known, else the number's X when the cluster has it.
    private func home(of phone: TestPhone, account: Account?, _ call: RPCCall) -> Int32? {
        if let home = account?.homeDC { return home }
        return clusterHas(phone.dcDigit, call) ? phone.dcDigit : nil
    }

    func phone(_ call: RPCCall) throws(RPCError) -> TestPhone {
        guard let phone = TestPhone(try call.request.string("phone_number")) else {
            throw RPCError(code: 400, message: "PHONE_NUMBER_INVALID")
        }
        return phone
    }

    private func sendCode(_ call: RPCCall) throws(RPCError) -> [UInt8] {
        let phone = try phone(call)
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
        return TestTelegram.serialized(Api.auth.SentCode.sentCode(.init(
            type: .sentCodeTypeApp(.init(length: 5)), phoneCodeHash: hash, timeout: Int32(limits.codeLifetime))))
    }

    /// Checks the phone/hash/code triple of `auth.signIn` / `auth.signUp`; the code stays valid until it is used.
    private func checkCode(_ call: RPCCall, code: String?, state: inout ServiceState) throws(RPCError) -> TestPhone {
        let phone = try phone(call)
        let hash = try call.request.string("phone_code_hash")
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

    private func signIn(_ call: RPCCall) throws(RPCError) -> [UInt8] {
        let code: String?
        if case .string(let value)? = call.request["phone_code"] { code = value } else { code = nil }
        guard let code else { throw RPCError(code: 400, message: "PHONE_CODE_EMPTY") }
        let user: Api.User? = try state.withLock { state throws(RPCError) in
            let phone = try checkCode(call, code: code, state: &state)
            guard let id = state.phones[phone.digits], var account = state.accounts[id] else {
                return nil  // the code stays for auth.signUp
            }
            let home = home(of: phone, account: account, call) ?? call.endpoint.dcID
            guard home == call.endpoint.dcID else { throw RPCError(code: 303, message: "USER_MIGRATE_\(home)") }
            account.homeDC = home
            state.accounts[id] = account
            state.codes.removeValue(forKey: try call.request.string("phone_code_hash"))
            let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
            if state.signIn.passwords[id] != nil {
                // The code was right; the key waits for auth.checkPassword (core.telegram.org/api/srp).
                state.signIn.awaitingPassword[key] = id
                throw RPCError(code: 401, message: "SESSION_PASSWORD_NEEDED")
            }
            try state.authorize(DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID), as: id, limits: limits)
            return state.user(id, viewer: id)
        }
        guard let user else {
            return TestTelegram.serialized(Api.auth.Authorization.authorizationSignUpRequired(.init()))
        }
        return TestTelegram.serialized(Api.auth.Authorization.authorization(.init(user: user)))
    }

    private func signUp(_ call: RPCCall) throws(RPCError) -> [UInt8] {
        let first = try call.request.string("first_name").trimmingCharacters(in: .whitespaces)
        let last = try call.request.string("last_name").trimmingCharacters(in: .whitespaces)
        guard !first.isEmpty, first.count <= 64 else { throw RPCError(code: 400, message: "FIRSTNAME_INVALID") }
        guard last.count <= 64 else { throw RPCError(code: 400, message: "LASTNAME_INVALID") }
        let accessHash = random.int64()
        let user = try state.withLock { state throws(RPCError) in
            let phone = try checkCode(call, code: nil, state: &state)
            let home = home(of: phone, account: nil, call) ?? call.endpoint.dcID
            guard home == call.endpoint.dcID else { throw RPCError(code: 303, message: "PHONE_MIGRATE_\(home)") }
            let id = try state.createAccount(number: phone, firstName: first, lastName: last, username: nil,
                                             homeDC: home, accessHash: accessHash, limits: limits)
            state.codes.removeValue(forKey: try call.request.string("phone_code_hash"))
            try state.authorize(DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID), as: id, limits: limits)
            return state.user(id, viewer: id)
        }
        return TestTelegram.serialized(Api.auth.Authorization.authorization(.init(user: user)))
    }

    private func exportAuthorization(_ call: RPCCall) throws(RPCError) -> [UInt8] {
        let user = try caller(call)
        let dcID = try call.request.int("dc_id")
        guard clusterHas(dcID, call), dcID != call.endpoint.dcID else { throw RPCError(code: 400, message: "DC_ID_INVALID") }
        let bytes = random.bytes(32)
        try state.withLock { state throws(RPCError) in
            try state.pruneCodes(now: call.now, limit: limits.maxPendingCodes)
            state.exports[bytes] = ExportedAuthorization(userID: user, dcID: dcID, expires: call.now + limits.codeLifetime)
        }
        return TestTelegram.serialized(Api.auth.ExportedAuthorization.exportedAuthorization(.init(id: user, bytes: bytes)))
    }

    private func importAuthorization(_ call: RPCCall) throws(RPCError) -> [UInt8] {
        let id = try call.request.long("id")
        let bytes = try call.request.bytes("bytes")
        let user = try state.withLock { state throws(RPCError) in
            guard let export = state.exports[bytes], export.userID == id, export.dcID == call.endpoint.dcID,
                  export.expires > call.now
            else { throw RPCError(code: 400, message: "AUTH_BYTES_INVALID") }
            state.exports.removeValue(forKey: bytes)
            try state.authorize(DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID), as: id, limits: limits)
            return state.user(id, viewer: id)
        }
        return TestTelegram.serialized(Api.auth.Authorization.authorization(.init(user: user)))
    }

    private func updateUsername(_ call: RPCCall) throws(RPCError) -> [UInt8] {
        let me = try caller(call)
        let username = try call.request.string("username")
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
        return TestTelegram.serialized(user)
    }
}

extension TLRequest {
    /// A required argument of the kind the schema gives it (`TLRequest.argument(_:as:)`); 400
    /// INPUT_REQUEST_INVALID otherwise (the registry decoded the request, so this only fails if a handler asks for a
    /// field its method does not have). `flag(_:)` is TLRuntime's.
    func string(_ name: String) throws(RPCError) -> String { try typed(name) }

    func int(_ name: String) throws(RPCError) -> Int32 { try typed(name) }

    func long(_ name: String) throws(RPCError) -> Int64 { try typed(name) }

    /// Only a `bytes` value: `argument(_:as: [UInt8].self)` also takes an embedded `Object`'s raw bytes.
    func bytes(_ name: String) throws(RPCError) -> [UInt8] {
        guard case .bytes(let value)? = self[name] else { throw missing(name) }
        return value
    }

    func object<T>(_ name: String, as type: T.Type) throws(RPCError) -> T { try typed(name) }

    func objects<T>(_ name: String, as type: T.Type) throws(RPCError) -> [T] { try typed(name) }

    private func typed<T>(_ name: String) throws(RPCError) -> T {
        do {
            return try argument(name, as: T.self)
        } catch {
            throw missing(name)
        }
    }

    private func missing(_ name: String) -> RPCError {
        RPCError(code: 400, message: "INPUT_REQUEST_INVALID: \(self.name).\(name)")
    }
}
