// The sign-in errors a caller acts on, as cases instead of `rpc_error` strings (core.telegram.org/api/auth,
// /api/srp, /api/bots, /api/qr-login; the error names are the methods' documented ones).
import MTProto
import MTProtoClient
import MTProtoCrypto

/// Why a sign-in step failed.
public enum SignInError: Error, Sendable, Equatable, CustomStringConvertible {
    /// PHONE_NUMBER_INVALID: not a phone number Telegram accepts.
    case phoneNumberInvalid
    /// PHONE_NUMBER_BANNED.
    case phoneNumberBanned
    /// PHONE_NUMBER_UNOCCUPIED: no account has the number (sign up instead).
    case phoneNumberUnoccupied
    /// PHONE_CODE_INVALID: the code is wrong.
    case codeInvalid
    /// PHONE_CODE_EXPIRED: the code (or its phone_code_hash) is no longer valid; ask for a new one.
    case codeExpired
    /// PHONE_CODE_EMPTY / PHONE_CODE_HASH_EMPTY.
    case codeEmpty
    /// SESSION_PASSWORD_NEEDED, when no password was offered: the account has a cloud password.
    case passwordNeeded(hint: String?)
    /// PASSWORD_HASH_INVALID: the password is wrong.
    case passwordInvalid
    /// SRP_ID_INVALID: the password challenge was used or expired; ask `account.getPassword` again.
    case passwordChallengeInvalid
    /// The account has no cloud password, yet one was to be checked.
    case noPassword
    /// The server's password parameters failed a check the spec asks for (p not a safe 2048-bit prime, bad g, g_b
    /// out of range, u = 0); nothing derived from the password was sent.
    case unsafePasswordParameters(CryptoError)
    /// A password algorithm this client does not know (only
    /// passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow exists today).
    case unsupportedPasswordAlgorithm
    /// The number is new and no sign-up details were given.
    case signUpRequired
    /// FIRSTNAME_INVALID / LASTNAME_INVALID.
    case nameInvalid
    /// ACCESS_TOKEN_INVALID / ACCESS_TOKEN_EXPIRED: a bad bot token.
    case botTokenInvalid
    /// AUTH_TOKEN_INVALID / AUTH_TOKEN_EXPIRED / AUTH_TOKEN_ALREADY_ACCEPTED: a QR login token that cannot be used.
    case loginTokenInvalid
    /// FLOOD_WAIT_X (longer than the client's threshold): retry after this many seconds.
    case floodWait(seconds: Int)
    /// Any other `rpc_error`.
    case rpc(RPCError)

    /// The case for an `rpc_error`.
    public init(_ error: RPCError) {
        switch error.name {
            case "PHONE_NUMBER_INVALID": self = .phoneNumberInvalid
            case "PHONE_NUMBER_BANNED": self = .phoneNumberBanned
            case "PHONE_NUMBER_UNOCCUPIED": self = .phoneNumberUnoccupied
            case "PHONE_CODE_INVALID": self = .codeInvalid
            case "PHONE_CODE_EXPIRED": self = .codeExpired
            case "PHONE_CODE_EMPTY", "PHONE_CODE_HASH_EMPTY": self = .codeEmpty
            case "SESSION_PASSWORD_NEEDED": self = .passwordNeeded(hint: nil)
            case "PASSWORD_HASH_INVALID": self = .passwordInvalid
            case "SRP_ID_INVALID": self = .passwordChallengeInvalid
            case "FIRSTNAME_INVALID", "LASTNAME_INVALID": self = .nameInvalid
            case "ACCESS_TOKEN_INVALID", "ACCESS_TOKEN_EXPIRED": self = .botTokenInvalid
            case "AUTH_TOKEN_INVALID", "AUTH_TOKEN_EXPIRED", "AUTH_TOKEN_ALREADY_ACCEPTED", "AUTH_TOKEN_EXCEPTION":
                self = .loginTokenInvalid
            default:
                if case .floodWait(let seconds) = error.kind { self = .floodWait(seconds: seconds) } else { self = .rpc(error) }
        }
    }

    /// A thrown error as a `SignInError` when it is an `rpc_error` (or already one); nil otherwise.
    static func from(_ error: any Error) -> SignInError? {
        if let error = error as? SignInError { return error }
        if case MTProtoClientError.rpc(let rpc) = error { return SignInError(rpc) }
        return nil
    }

    /// What went wrong, as a sentence for a log or a prompt.
    public var description: String {
        switch self {
            case .phoneNumberInvalid: "the phone number is invalid"
            case .phoneNumberBanned: "the phone number is banned"
            case .phoneNumberUnoccupied: "no account has this phone number"
            case .codeInvalid: "the code is wrong"
            case .codeExpired: "the code expired"
            case .codeEmpty: "no code was given"
            case .passwordNeeded(let hint): "the account has a cloud password" + (hint.map { " (hint: \($0))" } ?? "")
            case .passwordInvalid: "the password is wrong"
            case .passwordChallengeInvalid: "the password challenge was used or expired"
            case .noPassword: "the account has no cloud password"
            case .unsafePasswordParameters(let error): "the server's password parameters are unsafe: \(error)"
            case .unsupportedPasswordAlgorithm: "the server's password algorithm is not supported"
            case .signUpRequired: "the number is new: sign-up details are needed"
            case .nameInvalid: "the first or last name is invalid"
            case .botTokenInvalid: "the bot token is invalid"
            case .loginTokenInvalid: "the login token is invalid or expired"
            case .floodWait(let seconds): "too many attempts: wait \(seconds) s"
            case .rpc(let error): "\(error)"
        }
    }
}

/// Runs `body`, throwing an `rpc_error` as its `SignInError`; other errors pass through.
func signInErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw SignInError.from(error) ?? error
    }
}
