// QR-code login (core.telegram.org/api/qr-login): a signed-out key exports a token (shown as a QR code), a signed-in
// app accepts it, the exporter is pushed `updateLoginToken` and exports again to get `loginTokenSuccess`, or
// `loginTokenMigrateTo` with a new token to import on the account's home DC. Tokens live `loginTokenLifetime`
// seconds; an account with a cloud password answers SESSION_PASSWORD_NEEDED at the export (or import), and the
// key then waits for `auth.checkPassword` as after a code.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

/// A login token handed out by `auth.exportLoginToken` (to show) or with `loginTokenMigrateTo` (to import).
struct LoginTokenEntry {
    enum Kind {
        /// Shown by `exporter` as a QR code; `acceptedBy` once a signed-in app scanned it.
        case export(exporter: DCKey, acceptedBy: Int64?)
        /// To be imported on `dc` as `user`.
        case `import`(user: Int64, dc: Int32)
    }

    var kind: Kind
    let expires: Double
}

extension TestTelegramService {
    /// Seconds a login token is valid (Telegram's are about 30).
    public static let loginTokenLifetime: Double = 30

    func registerQRLogin(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.auth.ExportLoginToken.self, exportLoginToken)
        handlers.on(Api.functions.auth.ImportLoginToken.self, importLoginToken)
        handlers.on(Api.functions.auth.AcceptLoginToken.self) { [self] call, request throws(RPCError) in
            try refuseBots(call)
            return try acceptLoginToken(call, token: request.token)
        }
    }

    private func exportLoginToken(_ call: RPCCall, _ request: Api.functions.auth.ExportLoginToken)
        throws(RPCError) -> Api.auth.LoginToken {
        let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
        let fresh = random.bytes(32)
        let answer: Api.auth.LoginToken = try state.withLock { state throws(RPCError) in
            state.signIn.loginTokens = state.signIn.loginTokens.filter { $0.value.expires > call.now }
            let accepted = state.signIn.loginTokens.first { _, entry in
                if case .export(let exporter, _?) = entry.kind { return exporter == key }
                return false
            }
            if let (token, entry) = accepted, case .export(_, let user?) = entry.kind {
                state.signIn.loginTokens.removeValue(forKey: token)
                let home = state.accounts[user]?.homeDC ?? call.endpoint.dcID
                if home != call.endpoint.dcID {
                    state.signIn.loginTokens[fresh] = LoginTokenEntry(kind: .import(user: user, dc: home),
                                                                      expires: call.now + Self.loginTokenLifetime)
                    return .loginTokenMigrateTo(.init(dcId: home, token: fresh))
                }
                return .loginTokenSuccess(.init(authorization: try signInByToken(user, key: key, state: &state)))
            }
            // A new token replaces this key's earlier, unaccepted ones.
            state.signIn.loginTokens = state.signIn.loginTokens.filter { _, entry in
                if case .export(let exporter, nil) = entry.kind { return exporter != key }
                return true
            }
            guard state.signIn.loginTokens.count + state.codes.count < limits.maxPendingCodes else {
                throw RPCError(code: 420, message: "FLOOD_WAIT_30")
            }
            state.signIn.loginTokens[fresh] = LoginTokenEntry(kind: .export(exporter: key, acceptedBy: nil),
                                                              expires: call.now + Self.loginTokenLifetime)
            return .loginToken(.init(expires: Int32(clamping: Int64(call.now + Self.loginTokenLifetime)), token: fresh))
        }
        return answer
    }

    /// Logs `key` in as `user`, or leaves it waiting for the password.
    private func signInByToken(_ user: Int64, key: DCKey, state: inout ServiceState)
        throws(RPCError) -> Api.auth.Authorization {
        if state.signIn.passwords[user] != nil {
            state.signIn.awaitingPassword[key] = user
            throw RPCError(code: 401, message: "SESSION_PASSWORD_NEEDED")
        }
        if state.accounts[user]?.homeDC == nil { state.accounts[user]?.homeDC = key.dcID }
        try state.authorize(key, as: user, limits: limits)
        return .authorization(.init(user: state.user(user, viewer: user)))
    }

    private func importLoginToken(_ call: RPCCall, _ request: Api.functions.auth.ImportLoginToken)
        throws(RPCError) -> Api.auth.LoginToken {
        let token = request.token
        let key = DCKey(dcID: call.endpoint.dcID, authKeyID: call.authKeyID)
        let authorization = try state.withLock { state throws(RPCError) in
            guard let entry = state.signIn.loginTokens[token], case .import(let user, let dc) = entry.kind else {
                throw RPCError(code: 400, message: "AUTH_TOKEN_INVALID")
            }
            guard entry.expires > call.now else { throw RPCError(code: 400, message: "AUTH_TOKEN_EXPIRED") }
            guard dc == call.endpoint.dcID else { throw RPCError(code: 400, message: "AUTH_TOKEN_INVALID") }
            state.signIn.loginTokens.removeValue(forKey: token)
            return try signInByToken(user, key: key, state: &state)
        }
        return Api.auth.LoginToken.loginTokenSuccess(.init(authorization: authorization))
    }

    private func acceptLoginToken(_ call: RPCCall, token: [UInt8]) throws(RPCError) -> Api.Authorization {
        let me = try caller(call)
        let hash = random.int64()
        let exporter = try state.withLock { state throws(RPCError) in
            guard var entry = state.signIn.loginTokens[token], case .export(let exporter, let accepted) = entry.kind else {
                throw RPCError(code: 400, message: "AUTH_TOKEN_INVALID")
            }
            guard entry.expires > call.now else { throw RPCError(code: 400, message: "AUTH_TOKEN_EXPIRED") }
            guard accepted == nil else { throw RPCError(code: 400, message: "AUTH_TOKEN_ALREADY_ACCEPTED") }
            entry.kind = .export(exporter: exporter, acceptedBy: me)
            state.signIn.loginTokens[token] = entry
            return exporter
        }
        push(.updateShort(.init(update: .updateLoginToken, date: Int32(clamping: Int64(call.now)))), toKey: exporter)
        let now = Int32(clamping: Int64(call.now))
        return Api.Authorization.authorization(.init(
            hash: hash, deviceModel: "QR login", platform: "", systemVersion: "", apiId: 0, appName: "", appVersion: "",
            dateCreated: now, dateActive: now, ip: "127.0.0.1", country: "", region: ""))
    }

    /// Sends `update` to every session of one key subscribed to updates (a key that is not logged in has no
    /// account to push to).
    func push(_ update: Api.Updates, toKey key: DCKey) {
        server.withLock { $0.value }?.push(TestTelegram.serialized(update), toAuthKey: key.authKeyID, dc: key.dcID,
                                            subscribedOnly: true)
    }
}
