// The server's side of perfect forward secrecy (core.telegram.org/api/pfs): `auth.bindTempAuthKey` checked with
// `TemporaryKeyBinding.verify` and stored in the `AuthKeyStore`, and the rule that a temporary key runs requests
// under the authorization of the permanent key it is bound to, while an unbound one may only bind, ask for the
// config or the nearest DC (anything else: 401 AUTH_KEY_PERM_EMPTY). The method is read by field name from the
// registry's decoding, so no API layer is compiled in; its answer is the boxed `Bool`, the same in every layer.
import MTProto
import MTProtoCrypto
import TLRuntime

extension ServerContext {
    /// What an unbound temporary key may call (core.telegram.org/api/pfs).
    public static let methodsWithoutBinding: Set<String> = ["auth.bindTempAuthKey", "help.getConfig", "help.getNearestDc"]

    /// Answers one decoded request that arrived under `entry` (the key `authKeyID` names): binds on
    /// `auth.bindTempAuthKey`, refuses an unbound temporary key what it may not call, and otherwise runs the handler
    /// under the key the request's authorization belongs to.
    func answer(_ decoded: RPCHandlers.Decoded, entry: AuthKeyStore.Entry, authKeyID: UInt64, sessionID: Int64,
                messageID: Int64, now: Double) -> Result<[UInt8], RPCError> {
        if decoded.method == "auth.bindTempAuthKey" {
            return bindTemporaryKey(decoded.request, entry: entry, authKeyID: authKeyID, sessionID: sessionID,
                                    messageID: messageID, now: now)
        }
        // Looked up per request: a bind earlier in the same container counts for the requests after it.
        var authorization = keys.authorizationKey(of: authKeyID, at: now)
        if authorization == nil, entry.isTemporary, Self.methodsWithoutBinding.contains(decoded.method) {
            authorization = authKeyID
        }
        guard let authorization else {
            return .failure(RPCError(code: 401, message: "AUTH_KEY_PERM_EMPTY"))
        }
        return handlers.run(decoded, authKeyID: authorization, temporaryKeyID: entry.isTemporary ? authKeyID : nil,
                            sessionID: sessionID, messageID: messageID, endpoint: endpoint,
                            dcs: directory.endpoints, now: now)
    }

    /// `auth.bindTempAuthKey perm_auth_key_id:long nonce:long expires_at:int encrypted_message:bytes = Bool`, with
    /// the errors Telegram lists for it (core.telegram.org/method/auth.bindTempAuthKey): TEMP_AUTH_KEY_EMPTY when
    /// not sent under a temporary key, ENCRYPTED_MESSAGE_INVALID when the permanent key is unknown or the message
    /// does not check, EXPIRES_AT_INVALID for an expiry in the past or beyond the temporary key's, and
    /// TEMP_AUTH_KEY_ALREADY_BOUND when the key is bound to another permanent key.
    func bindTemporaryKey(_ request: TLRequest, entry: AuthKeyStore.Entry, authKeyID: UInt64, sessionID: Int64,
                          messageID: Int64, now: Double) -> Result<[UInt8], RPCError> {
        guard entry.isTemporary else { return .failure(RPCError(code: 400, message: "TEMP_AUTH_KEY_EMPTY")) }
        guard case .long(let permanentID)? = request["perm_auth_key_id"], case .long(let nonce)? = request["nonce"],
              case .int(let expiresAt)? = request["expires_at"], case .bytes(let message)? = request["encrypted_message"]
        else { return .failure(RPCError(code: 400, message: "INPUT_REQUEST_INVALID")) }
        let invalid = RPCError(code: 400, message: "ENCRYPTED_MESSAGE_INVALID")
        let permanentKeyID = UInt64(bitPattern: permanentID)
        guard let permanent = keys.entry(id: permanentKeyID), !permanent.isTemporary else { return .failure(invalid) }
        let binding = TemporaryKeyBinding(permanentKeyID: permanentID, nonce: nonce, expiresAt: expiresAt,
                                          encryptedMessage: message)
        do throws(TemporaryKeyBindingError) {
            try binding.verify(permanentKey: permanent.key, temporaryKey: entry.key, messageID: messageID,
                               sessionID: sessionID, temporaryKeyExpiresAt: entry.expiresAt, now: now)
        } catch .expired {
            return .failure(RPCError(code: 400, message: "EXPIRES_AT_INVALID"))
        } catch {
            return .failure(invalid)
        }
        do throws(AuthKeyStore.BindRefusal) {
            try keys.bind(temporary: authKeyID, to: permanentKeyID, expiresAt: expiresAt)
        } catch .alreadyBound {
            return .failure(RPCError(code: 400, message: "TEMP_AUTH_KEY_ALREADY_BOUND"))
        } catch {
            return .failure(invalid)
        }
        return .success(Self.boolTrue)
    }

    /// boolTrue#997275b5, boxed.
    static let boolTrue: [UInt8] = [0xb5, 0x75, 0x72, 0x99]

    /// The sessions whose requests run as `authKeyID`: its own, and those of the temporary key bound to it; with
    /// `subscribedOnly`, those subscribed to updates, which an account's updates go to.
    public func sessionKeys(authorizedAs authKeyID: UInt64, subscribedOnly: Bool = false) -> [SessionKey] {
        var found = sessions.keys(authKeyID: authKeyID, subscribedOnly: subscribedOnly)
        if let temporary = keys.boundTemporaryKey(of: authKeyID) {
            found += sessions.keys(authKeyID: temporary, subscribedOnly: subscribedOnly)
        }
        return found
    }
}
