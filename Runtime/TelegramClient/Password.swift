// Cloud passwords on the client (core.telegram.org/api/srp): the answer to a password challenge, and setting,
// changing or removing the password. The server's group and srp_B are checked before the password is hashed, u
// before the answer exists; the 100,000 PBKDF2 iterations and the modexps run on the global executor, never on
// the client's event loop.
import MTProto
import MTProtoCrypto
import TLRuntime
import TelegramApi

extension TelegramClient {
    /// Tries a fresh `a` this many times when g^a lands outside the spec's range (about 2^−64 per draw).
    static let secretDraws = 8

    /// The `inputCheckPasswordSRP` proving `password` against a challenge from `account.getPassword`.
    ///
    /// Throws ``SignInError/noPassword`` when the account has none, ``SignInError/unsupportedPasswordAlgorithm``,
    /// or ``SignInError/unsafePasswordParameters(_:)`` when `p`, `g`, `srp_B` or `u` fail the spec's checks; in
    /// every such case nothing derived from the password has been computed or sent.
    public nonisolated static func passwordCheck(for state: Api.account.Password, password: String,
                                                 random: any RandomSource = SystemRandom()) async throws(SignInError)
        -> Api.InputCheckPasswordSRP {
        guard case .password(let info) = state, let algo = info.currentAlgo, let srpB = info.srpB, let srpID = info.srpId
        else { throw .noPassword }
        guard case .passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(let kdf) = algo else {
            throw .unsupportedPasswordAlgorithm
        }
        let outcome = await Task.detached {
            Result { () throws(CryptoError) in try Self.prove(kdf, srpB: srpB, password: password, random: random) }
        }.value
        let proof = try outcome.mapError(SignInError.unsafePasswordParameters).get()
        return .inputCheckPasswordSRP(.init(srpId: srpID, A: proof.a, M1: proof.m1))
    }

    /// The checks, then x, then A and M1 (a fresh `a` when g^a lands out of range).
    private nonisolated static func prove(_ kdf: Api.PasswordKdfAlgo.Cons_passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow,
                                          srpB: [UInt8], password: String,
                                          random: any RandomSource) throws(CryptoError) -> SRPProof {
        let parameters = try SRPParameters(salt1: kdf.salt1, salt2: kdf.salt2, g: Int(kdf.g), p: kdf.p)
        let challenge = try SRPChallenge(parameters: parameters, gB: srpB)
        let x = try SRP.passwordHash(password, salt1: kdf.salt1, salt2: kdf.salt2)
        var lastError = CryptoError.dhValueOutOfRange(what: "g_a")
        for _ in 0..<secretDraws {
            do {
                return try challenge.proof(passwordHash: x, a: random.bytes(256))
            } catch .dhValueOutOfRange(let what) where what.hasPrefix("g_a") {
                lastError = .dhValueOutOfRange(what: what)
            }
        }
        throw lastError
    }

    /// The verifier g^x of a new password.
    private nonisolated static func newVerifier(_ password: String, salt1: [UInt8], salt2: [UInt8], g: Int32,
                                             p: [UInt8]) throws(CryptoError) -> [UInt8] {
        let parameters = try SRPParameters(salt1: salt1, salt2: salt2, g: Int(g), p: p)
        return try SRP.verifier(passwordHash: try SRP.passwordHash(password, salt1: salt1, salt2: salt2),
                                parameters: parameters)
    }

    /// Sets, changes or removes the account's cloud password (`account.updatePasswordSettings`).
    ///
    /// - Parameters:
    ///   - newPassword: the new password, or nil to remove the password.
    ///   - current: the password in place, if the account has one (otherwise ignored).
    ///   - hint: shown when the password is asked for; not the password.
    /// Throws ``SignInError`` for a wrong `current` (``SignInError/passwordInvalid``), unsafe parameters, or a
    /// missing `current` (``SignInError/passwordNeeded(hint:)``).
    public nonisolated func setPassword(_ newPassword: String?, current: String? = nil, hint: String? = nil) async throws {
        let state = try await signInErrors { try await invoke(Api.functions.account.getPassword()) }
        guard case .password(let info) = state else { throw SignInError.noPassword }
        let check: Api.InputCheckPasswordSRP
        if info.hasPassword {
            guard let current else { throw SignInError.passwordNeeded(hint: info.hint) }
            check = try await Self.passwordCheck(for: state, password: current, random: configuration.random)
        } else {
            check = .inputCheckPasswordEmpty
        }
        let settings: Api.account.PasswordInputSettings
        if let newPassword {
            guard case .passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(let kdf) = info.newAlgo else {
                throw SignInError.unsupportedPasswordAlgorithm
            }
            // The new salt1 is the server's extended by 32 random bytes (core.telegram.org/api/srp#setting-a-new-2fa-password).
            let salt1 = kdf.salt1 + configuration.random.bytes(32)
            let outcome = await Task.detached {
                Result { () throws(CryptoError) in
                    try Self.newVerifier(newPassword, salt1: salt1, salt2: kdf.salt2, g: kdf.g, p: kdf.p)
                }
            }.value
            let verifier = try outcome.mapError(SignInError.unsafePasswordParameters).get()
            settings = .passwordInputSettings(.init(
                newAlgo: .passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
                    .init(salt1: salt1, salt2: kdf.salt2, g: kdf.g, p: kdf.p)),
                newPasswordHash: verifier, hint: hint ?? ""))
        } else {
            settings = .passwordInputSettings(.init(newAlgo: .passwordKdfAlgoUnknown, newPasswordHash: [], hint: ""))
        }
        _ = try await signInErrors {
            try await invoke(Api.functions.account.updatePasswordSettings(password: check, newSettings: settings))
        }
    }
}
