// QR-code login (core.telegram.org/api/qr-login), both sides. The signed-out side exports a token, shows it as
// `tg://login?token=BASE64URL`, and waits for `updateLoginToken` (or the token's expiry, then exports a fresh one);
// the next export answers `loginTokenSuccess`, or `loginTokenMigrateTo` and the token is imported on the account's
// home DC, which becomes this client's. SESSION_PASSWORD_NEEDED goes on with the cloud password. The signed-in side
// accepts a scanned token with `auth.acceptLoginToken`.
import Foundation
import MTProto
import Synchronization
import TLRuntime
import TelegramApi

/// A login token to show as a QR code.
public struct LoginToken: Sendable, Equatable {
    /// The token's bytes.
    public let token: [UInt8]
    /// When it stops being valid, Unix seconds (a new one is exported then).
    public let expires: Int32

    /// `tg://login?token=` and the token in base64url without padding: what the QR code holds.
    public var url: String { "tg://login?token=" + Self.base64URL(token) }

    /// A token as exported.
    public init(token: [UInt8], expires: Int32) {
        self.token = token
        self.expires = expires
    }

    /// The token of a `tg://login?token=…` URL (as a scanner reads it), or nil if the text is not one.
    public init?(url: String, expires: Int32 = 0) {
        let prefix = "tg://login?token="
        guard url.hasPrefix(prefix) else { return nil }
        var text = String(url.dropFirst(prefix.count)).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text), !data.isEmpty else { return nil }
        self.init(token: Array(data), expires: expires)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Counts the `updateLoginToken`s a client received, so a QR login waiting for one wakes up.
final class LoginTokenSignal: Sendable {
    private let count = Mutex(0)

    var current: Int { count.withLock { $0 } }

    func signal() { count.withLock { $0 += 1 } }

    /// Whether `updates` carries `updateLoginToken`.
    static func carriesLoginToken(_ updates: Api.Updates) -> Bool {
        switch updates {
            case .updateShort(let short): if case .updateLoginToken = short.update { return true }
            case .updates(let list): return list.updates.contains { if case .updateLoginToken = $0 { true } else { false } }
            default: break
        }
        return false
    }
}

extension TelegramClient {
    /// How often a QR login waiting for `updateLoginToken` looks for it.
    static let loginTokenPoll: Duration = .milliseconds(50)

    /// Signs in by QR code: `show` is called with each token to display (a new one replaces the last when it
    /// expires), until a signed-in app accepts it. `password` is asked when the account has a cloud password, as
    /// in `signIn(phone:prompts:)`. Cancel the calling task to stop waiting.
    public nonisolated func signInWithQRCode(exceptIDs: [Int64] = [],
                                             show: @escaping @Sendable (LoginToken) async throws -> Void,
                                             password: @escaping @Sendable (String?, SignInError?) async throws -> String,
                                             passwordAttempts: Int = 3) async throws -> Api.User {
        let app = configuration.app
        var seen = loginTokenSignal.current
        func export() async throws -> Api.auth.LoginToken? {
            do {
                return try await signInErrors {
                    try await invoke(Api.functions.auth.exportLoginToken(apiId: app.apiID, apiHash: app.apiHash,
                                                                         exceptIds: exceptIDs))
                }
            } catch SignInError.passwordNeeded {
                return nil
            }
        }
        var answer = try await export()
        while let current = answer {
            switch current {
                case .loginToken(let exported):
                    try await show(LoginToken(token: exported.token, expires: exported.expires))
                    // Until the token is accepted (the push) or expires; then export again.
                    let deadline = Double(exported.expires)
                    while loginTokenSignal.current == seen, configuration.clock() < deadline {
                        try await Task.sleep(for: Self.loginTokenPoll)
                    }
                    seen = loginTokenSignal.current
                    answer = try await export()
                case .loginTokenMigrateTo(let migrate):
                    try await setHome(migrate.dcId)
                    do {
                        answer = try await signInErrors {
                            try await invoke(Api.functions.auth.importLoginToken(token: migrate.token))
                        }
                    } catch SignInError.passwordNeeded {
                        answer = nil
                    }
                case .loginTokenSuccess(let success):
                    guard case .authorization(let authorization) = success.authorization else {
                        throw SignInError.signUpRequired
                    }
                    return authorization.user
            }
        }
        // SESSION_PASSWORD_NEEDED: the token was accepted; the password finishes the sign-in.
        let state = try await signInErrors { try await invoke(Api.functions.account.getPassword()) }
        var hint: String?
        if case .password(let info) = state { hint = info.hint }
        return try await finishWithPassword(hint: hint, ask: password, attempts: passwordAttempts)
    }

    /// Accepts a login token another device shows (`auth.acceptLoginToken`), signing it in as this account.
    /// Throws ``SignInError/loginTokenInvalid`` for an unknown, expired or already accepted token.
    @discardableResult
    public nonisolated func acceptLoginToken(_ token: LoginToken) async throws -> Api.Authorization {
        try await signInErrors { try await invoke(Api.functions.auth.acceptLoginToken(token: token.token)) }
    }
}
