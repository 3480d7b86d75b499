// The one error the auth-key exchange throws, in either role: which message was being processed (`Step`) and which
// check failed (`Reason`), so a failed handshake can be logged and diagnosed without a packet capture.
import MTProtoCrypto
import TLRuntime

/// Why an auth-key exchange stopped: the step (the message being read) and the check that failed.
public struct AuthKeyExchangeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message being processed when the check failed (core.telegram.org/mtproto/auth_key, steps 1–9).
    public enum Step: String, Sendable, Hashable, CaseIterable {
        /// Server role: reading `req_pq` / `req_pq_multi`.
        case reqPQ = "req_pq"
        /// Client role: reading `resPQ`.
        case resPQ = "resPQ"
        /// Server role: reading `req_DH_params`.
        case reqDHParams = "req_DH_params"
        /// Client role: reading `server_DH_params_ok` / `server_DH_params_fail`.
        case serverDHParams = "server_DH_params"
        /// Server role: reading `set_client_DH_params`.
        case setClientDHParams = "set_client_DH_params"
        /// Client role: reading `dh_gen_ok` / `dh_gen_retry` / `dh_gen_fail`.
        case dhGenAnswer = "dh_gen answer"
    }

    /// The check that failed.
    public enum Reason: Sendable, Equatable {
        /// The frame is longer than any valid message of this step.
        case frameTooLong(Int, limit: Int)
        /// The unencrypted envelope is malformed.
        case envelope(UnencryptedMessageError)
        /// The envelope's msg_id breaks a rule (residue, order, or agreement with the peer's clock); `rule` says which.
        case messageID(Int64, rule: String)
        /// The body does not parse as the expected TL (an unknown constructor included) or has trailing bytes.
        case malformed(TLDecodingError)
        /// The body parses but is not written canonically (non-zero bytes padding, a long length form): the
        /// first differing byte's offset in the body.
        case nonCanonicalEncoding(offset: Int)
        /// `nonce` differs from the one the client chose.
        case nonceMismatch
        /// `server_nonce` differs from the one the server chose.
        case serverNonceMismatch
        /// Client: none of the server's key fingerprints belongs to a key we hold.
        case unknownFingerprints([Int64])
        /// Client: pq could not be split into two primes.
        case pqNotFactorable(CryptoError)
        /// Client: a factor of pq is not prime (pq is not a product of two primes).
        case pqFactorNotPrime(UInt64)
        /// Server: a field of the request disagrees with what the server sent or holds; `field` names it.
        case fieldMismatch(field: String)
        /// Server: `encrypted_data` is not one 256-byte RSA block, or is not below the key's modulus.
        case encryptedDataInvalid(CryptoError)
        /// Server: the RSA block decodes under neither RSA_PAD nor the legacy SHA-1 scheme.
        case rsaPaddingInvalid
        /// Server: the inner data names a DC this server does not serve.
        case dcMismatch(Int32)
        /// Server: a temporary key's `expires_in` is not positive or is above the server's limit.
        case invalidExpiry(Int32)
        /// An AES-IGE payload whose length is not a positive multiple of 16 (or is too short for its hash).
        case encryptedPayloadLength(Int)
        /// SHA1 of the decrypted inner data does not match the hash in front of it.
        case innerDataHashMismatch
        /// More than 15 bytes of padding after the decrypted inner data.
        case paddingTooLong(Int)
        /// dh_prime or g fails the checks (safe 2048-bit prime, g generating the order-q subgroup).
        case dhParameters(CryptoError)
        /// g_a or g_b outside (2^1984, dh_prime − 2^1984).
        case dhValueOutOfRange(CryptoError)
        /// new_nonce_hash`number` does not match (0 is the hash in `server_DH_params_fail`).
        case newNonceHashMismatch(number: Int)
        /// Client: the server answered `server_DH_params_fail` (authenticated by its new_nonce_hash).
        case serverRefusedDHParams
        /// Client: the server answered `dh_gen_fail` (authenticated by new_nonce_hash3). Server: its key decision
        /// was `.fail`.
        case keyGenerationFailed
        /// More `dh_gen_retry` rounds than the bound allows.
        case tooManyRetries(limit: Int)
        /// Server: `retry_id` is not the aux_hash of the previous attempt's key (0 on the first attempt).
        case retryIDMismatch(Int64)
        /// The injected randomness did not yield a usable value within the attempt bound (`what` names it).
        case randomnessExhausted(what: String)
        /// A cryptographic primitive refused its input (should not happen with valid state; reported, not trapped).
        case crypto(CryptoError)
        /// A message arrived after the exchange finished or failed (reported under the role's last step), or
        /// before the client started (under `.resPQ`).
        case notExpected
        /// Client: the server answered the exchange with a transport error instead of its next message (−404
        /// when the inner data names a DC that address does not serve).
        case refusedByServer(code: Int32)
    }

    /// The step the exchange was at.
    public let step: Step
    /// What went wrong there.
    public let reason: Reason

    /// An error at `step` for `reason`.
    public init(_ step: Step, _ reason: Reason) {
        self.step = step
        self.reason = reason
    }

    /// A one-line account naming the step and the failed check.
    public var description: String {
        let what: String = switch reason {
            case let .frameTooLong(n, limit): "frame of \(n) bytes exceeds the \(limit)-byte limit"
            case .envelope(let e): e.description
            case let .messageID(id, rule): "msg_id \(id) breaks the rule: \(rule)"
            case .malformed(let e): "malformed body: \(e)"
            case .nonCanonicalEncoding(let offset): "body is not canonically encoded (byte \(offset))"
            case .nonceMismatch: "nonce does not match the client's"
            case .serverNonceMismatch: "server_nonce does not match the server's"
            case .unknownFingerprints(let f):
                // Hex, 16 digits, as Telegram's key lists and mtserver's ready line print fingerprints.
                "no key for any server fingerprint (\(f.map(RSAPublicKey.hexFingerprint).joined(separator: ", ")))"
            case .pqNotFactorable(let e): "pq cannot be factored: \(e)"
            case .pqFactorNotPrime(let n): "pq's factor \(n) is not prime"
            case .fieldMismatch(let field): "\(field) does not match"
            case .encryptedDataInvalid(let e): "encrypted_data is not a valid RSA block: \(e)"
            case .rsaPaddingInvalid: "encrypted_data decodes under neither RSA_PAD nor the legacy SHA-1 scheme"
            case .dcMismatch(let dc): "inner data names DC \(dc), which this server does not serve"
            case .invalidExpiry(let e): "temporary key expires_in \(e) is out of range"
            case .encryptedPayloadLength(let n): "encrypted payload of \(n) bytes is not a positive multiple of 16"
            case .innerDataHashMismatch: "SHA1 of the decrypted inner data does not match"
            case .paddingTooLong(let n): "\(n) bytes of padding after the inner data (at most 15)"
            case .dhParameters(let e): "DH parameters rejected: \(e)"
            case .dhValueOutOfRange(let e): "DH value out of range: \(e)"
            case .newNonceHashMismatch(let n): "new_nonce_hash\(n == 0 ? "" : String(n)) does not match"
            case .serverRefusedDHParams: "server answered server_DH_params_fail"
            case .keyGenerationFailed: "key generation failed (dh_gen_fail)"
            case .tooManyRetries(let limit): "more than \(limit) dh_gen_retry rounds"
            case .retryIDMismatch(let id): "retry_id \(id) is not the previous attempt's aux_hash"
            case .randomnessExhausted(let what): "randomness gave no usable \(what)"
            case .crypto(let e): "crypto failure: \(e)"
            case .refusedByServer(let code):
                "the server answered transport error \(code)" + (code == -404 ? " (it does not serve this DC)" : "")
            case .notExpected: "no message is expected in this state"
        }
        return "auth-key exchange, \(step.rawValue): \(what)"
    }
}
