// Signing in as Telegram's apps do (core.telegram.org/api/auth): the phone number, the code (resent on request),
// the cloud password when the account has one (core.telegram.org/api/srp), and sign-up when the number is new; or a
// bot token (core.telegram.org/api/bots). Each step is a method a UI calls itself, and `signIn(phone:prompts:)`
// runs them all, asking through `SignInPrompts`. PHONE_MIGRATE / USER_MIGRATE are followed by `invoke` underneath;
// a successful sign-in restarts the update sequence as any `auth.authorization` result does.
import MTProto
import MTProtoClient
import TLRuntime
import TelegramApi

/// A login code on its way: where it was sent, and what `resendCode` would send next.
public struct SentCode: Sendable {
    /// The number it was sent for, as given.
    public let phoneNumber: String
    /// The server's handle of this code (`phone_code_hash`).
    public let phoneCodeHash: String
    /// How the code was sent (app, SMS, call…); its `length` says how many digits to ask for.
    public let type: Api.auth.SentCodeType
    /// How `auth.resendCode` would send it, if it can.
    public let nextType: Api.auth.CodeType?
    /// Seconds before a UI may offer `resendCode`, if the server says.
    public let timeout: Int?

    /// A code as `sendCode(to:)` returned it (or as an app kept it, to finish the sign-in after a restart).
    public init(phoneNumber: String, phoneCodeHash: String, type: Api.auth.SentCodeType, nextType: Api.auth.CodeType? = nil,
                timeout: Int? = nil) {
        self.phoneNumber = phoneNumber
        self.phoneCodeHash = phoneCodeHash
        self.type = type
        self.nextType = nextType
        self.timeout = timeout
    }
}

/// What the code prompt answers.
public enum CodeAnswer: Sendable, Equatable {
    /// The code the user typed.
    case code(String)
    /// Send the code again (`auth.resendCode`), by `SentCode.nextType`.
    case resend
}

/// A new account's name, for sign-up.
public struct SignUpDetails: Sendable, Equatable {
    /// Required, 1…64 characters.
    public var firstName: String
    /// May be empty.
    public var lastName: String

    /// A name for `auth.signUp`.
    public init(firstName: String, lastName: String = "") {
        self.firstName = firstName
        self.lastName = lastName
    }
}

/// How `TelegramClient.signIn(phone:prompts:)` asks its user. Each closure may throw to stop the sign-in.
public struct SignInPrompts: Sendable {
    /// Asks the code sent as `sent` says; `previous` is why the last answer failed (`.codeInvalid`), if it did.
    public var code: @Sendable (_ sent: SentCode, _ previous: SignInError?) async throws -> CodeAnswer
    /// Asks the cloud password; `hint` is the account's, `previous` why the last one failed.
    public var password: @Sendable (_ hint: String?, _ previous: SignInError?) async throws -> String
    /// Asks a new account's name, showing `terms` when given; nil declines to sign up (``SignInError/signUpRequired``).
    public var signUp: @Sendable (_ terms: Api.help.TermsOfService?) async throws -> SignUpDetails?
    /// Wrong codes and wrong passwords allowed before the last error is thrown.
    public var attempts: Int

    /// Prompts from closures.
    public init(code: @escaping @Sendable (SentCode, SignInError?) async throws -> CodeAnswer,
                password: @escaping @Sendable (String?, SignInError?) async throws -> String,
                signUp: @escaping @Sendable (Api.help.TermsOfService?) async throws -> SignUpDetails? = { _ in nil },
                attempts: Int = 3) {
        self.code = code
        self.password = password
        self.signUp = signUp
        self.attempts = attempts
    }
}

/// Where a sign-in stands after a step.
public enum SignInStep: Sendable {
    /// Signed in as this user.
    case signedIn(Api.User)
    /// The account has a cloud password: call `checkPassword`. `hint` is the account's.
    case passwordNeeded(hint: String?)
    /// The number is new: call `signUp`, after showing `terms` when given.
    case signUpRequired(terms: Api.help.TermsOfService?)
}

extension TelegramClient {
    /// Sends a login code to `phone` (`auth.sendCode`). Returns `.signedIn` when the server signed in without a code
    /// (`auth.sentCodeSuccess`), else the code's details in `.code`.
    public nonisolated func sendCode(to phone: String) async throws -> SendCodeResult {
        let app = configuration.app
        let sent = try await signInErrors {
            try await invoke(Api.functions.auth.sendCode(phoneNumber: phone, apiId: app.apiID, apiHash: app.apiHash,
                                                         settings: .codeSettings(.init())))
        }
        return try Self.sendCodeResult(sent, phone: phone)
    }

    /// What `sendCode(to:)` returns.
    public enum SendCodeResult: Sendable {
        /// A code was sent.
        case code(SentCode)
        /// Signed in already (a future-auth token was accepted).
        case signedIn(Api.User)
    }

    private nonisolated static func sendCodeResult(_ sent: Api.auth.SentCode, phone: String) throws -> SendCodeResult {
        switch sent {
            case .sentCode(let code):
                return .code(SentCode(phoneNumber: phone, phoneCodeHash: code.phoneCodeHash, type: code.type,
                                      nextType: code.nextType, timeout: code.timeout.map(Int.init)))
            case .sentCodeSuccess(let success):
                guard case .authorization(let authorization) = success.authorization else { throw SignInError.signUpRequired }
                return .signedIn(authorization.user)
            case .sentCodePaymentRequired:
                throw SignInError.rpc(RPCError(code: 400, message: "PAYMENT_REQUIRED"))
        }
    }

    /// Sends the code again (`auth.resendCode`), as `sent.nextType` says.
    public nonisolated func resendCode(_ sent: SentCode) async throws -> SentCode {
        let answer = try await signInErrors {
            try await invoke(Api.functions.auth.resendCode(phoneNumber: sent.phoneNumber, phoneCodeHash: sent.phoneCodeHash))
        }
        guard case .code(let next) = try Self.sendCodeResult(answer, phone: sent.phoneNumber) else { return sent }
        return next
    }

    /// Invalidates a sent code (`auth.cancelCode`), when the user gives up.
    public nonisolated func cancelCode(_ sent: SentCode) async throws {
        _ = try await signInErrors {
            try await invoke(Api.functions.auth.cancelCode(phoneNumber: sent.phoneNumber, phoneCodeHash: sent.phoneCodeHash))
        }
    }

    /// Signs in with the code the user received (`auth.signIn`).
    public nonisolated func signIn(code: String, for sent: SentCode) async throws -> SignInStep {
        let answer: Api.auth.Authorization
        do {
            answer = try await invoke(Api.functions.auth.signIn(phoneNumber: sent.phoneNumber,
                                                                phoneCodeHash: sent.phoneCodeHash, phoneCode: code))
        } catch {
            guard case .passwordNeeded? = SignInError.from(error) else { throw SignInError.from(error) ?? error }
            return .passwordNeeded(hint: try await passwordHint())
        }
        switch answer {
            case .authorization(let authorization): return .signedIn(authorization.user)
            case .authorizationSignUpRequired(let required): return .signUpRequired(terms: required.termsOfService)
        }
    }

    /// Creates the account for a new number (`auth.signUp`), after `signIn(code:for:)` answered `.signUpRequired`.
    public nonisolated func signUp(_ details: SignUpDetails, for sent: SentCode) async throws -> Api.User {
        let answer = try await signInErrors {
            try await invoke(Api.functions.auth.signUp(phoneNumber: sent.phoneNumber, phoneCodeHash: sent.phoneCodeHash,
                                                       firstName: details.firstName, lastName: details.lastName))
        }
        guard case .authorization(let authorization) = answer else { throw SignInError.signUpRequired }
        return authorization.user
    }

    /// Finishes a sign-in with the account's cloud password (`account.getPassword`, then `auth.checkPassword` with
    /// the SRP proof). See ``TelegramClient/passwordCheck(for:password:random:)`` for the checks made first.
    public nonisolated func checkPassword(_ password: String) async throws -> Api.User {
        let state = try await signInErrors { try await invoke(Api.functions.account.getPassword()) }
        let check = try await Self.passwordCheck(for: state, password: password, random: configuration.random)
        let answer = try await signInErrors { try await invoke(Api.functions.auth.checkPassword(password: check)) }
        guard case .authorization(let authorization) = answer else { throw SignInError.signUpRequired }
        return authorization.user
    }

    private nonisolated func passwordHint() async throws -> String? {
        let state = try await signInErrors { try await invoke(Api.functions.account.getPassword()) }
        guard case .password(let info) = state else { return nil }
        return info.hint
    }

    /// Signs in with a phone number from start to end, as Telegram's apps do: the code (resent when the prompt
    /// asks), the cloud password when the account has one, sign-up when the number is new. Wrong codes and
    /// passwords are asked again up to `prompts.attempts` times. Returns the signed-in user; throws
    /// ``SignInError`` for what a user can act on.
    public nonisolated func signIn(phone: String, prompts: SignInPrompts) async throws -> Api.User {
        var sent: SentCode
        switch try await sendCode(to: phone) {
            case .signedIn(let user): return user
            case .code(let code): sent = code
        }
        var previous: SignInError?
        var step: SignInStep?
        var failures = 0
        while step == nil {
            switch try await prompts.code(sent, previous) {
                case .resend:
                    sent = try await resendCode(sent)
                    previous = nil
                case .code(let code):
                    do {
                        step = try await signIn(code: code, for: sent)
                    } catch SignInError.codeInvalid {
                        failures += 1
                        if failures >= prompts.attempts { throw SignInError.codeInvalid }
                        previous = .codeInvalid
                    }
            }
        }
        switch step {
            case .signedIn(let user)?:
                return user
            case .signUpRequired(let terms)?:
                guard let details = try await prompts.signUp(terms) else { throw SignInError.signUpRequired }
                return try await signUp(details, for: sent)
            case .passwordNeeded(let hint)?:
                return try await finishWithPassword(hint: hint, ask: prompts.password, attempts: prompts.attempts)
            case nil:
                throw SignInError.codeEmpty
        }
    }

    /// Asks the password and checks it, up to `attempts` times while it is wrong.
    nonisolated func finishWithPassword(hint: String?, ask: @Sendable (String?, SignInError?) async throws -> String,
                                        attempts: Int) async throws -> Api.User {
        var previous: SignInError?
        for attempt in 1...max(1, attempts) {
            do {
                return try await checkPassword(try await ask(hint, previous))
            } catch SignInError.passwordInvalid where attempt < attempts {
                previous = .passwordInvalid
            }
        }
        throw SignInError.passwordInvalid
    }

    /// Signs in as a bot with the token BotFather gave (`auth.importBotAuthorization`). Throws
    /// ``SignInError/botTokenInvalid`` for a bad token.
    public nonisolated func signIn(botToken: String) async throws -> Api.User {
        let app = configuration.app
        let answer = try await signInErrors {
            try await invoke(Api.functions.auth.importBotAuthorization(flags: 0, apiId: app.apiID, apiHash: app.apiHash,
                                                                       botAuthToken: botToken))
        }
        guard case .authorization(let authorization) = answer else { throw SignInError.botTokenInvalid }
        return authorization.user
    }

    /// Signs out (`auth.logOut`): the key is no longer logged in, and the update sequence stops.
    public nonisolated func logOut() async throws {
        _ = try await invoke(Api.functions.auth.logOut())
    }
}
