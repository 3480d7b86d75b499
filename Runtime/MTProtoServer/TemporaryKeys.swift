// The server's side of perfect forward secrecy (core.telegram.org/api/pfs): `auth.bindTempAuthKey` checked with
// `TemporaryKeyBinding.verify` and stored in the `AuthKeyStore`, and the rule that a temporary key runs requests
// under the authorization of the permanent key it is bound to, while an unbound one may only bind, ask for the
// config or the nearest DC (anything else: 401 AUTH_KEY_PERM_EMPTY). The method is found by its constructor ID and
// read by the typed request below, whose layout is the same in every layer, so no API layer is compiled in; its
// answer is the boxed `Bool`, the same in every layer.
import MTProto
import MTProtoCrypto
import TLRuntime

extension ServerContext {
    /// What an unbound temporary key may call, by constructor ID (core.telegram.org/api/pfs).
    public static let methodsWithoutBinding: Set<UInt32> = [
        BindTemporaryKey.tlConstructorID,
        0xc4f9_186b,  // help.getConfig#c4f9186b = Config;
        0x1fb3_3026,  // help.getNearestDc#1fb33026 = NearestDc;
    ]

    /// Answers one decoded request that arrived under `entry` (the key `authKeyID` names): binds on
    /// `auth.bindTempAuthKey`, refuses an unbound temporary key what it may not call, and otherwise runs the handler
    /// under the key the request's authorization belongs to.
    func answer(_ decoded: RPCHandlers.Decoded, entry: AuthKeyStore.Entry, authKeyID: UInt64, sessionID: Int64,
                messageID: Int64, now: Double) -> RPCOutcome {
        if decoded.constructorID == BindTemporaryKey.tlConstructorID {
            guard let request = try? BindTemporaryKey.parse(bytes: decoded.bytes) else {
                return .answered(.failure(RPCError(code: 400, message: "INPUT_REQUEST_INVALID")))
            }
            return .answered(bindTemporaryKey(request, entry: entry, authKeyID: authKeyID, sessionID: sessionID,
                                              messageID: messageID, now: now))
        }
        // Looked up per request: a bind earlier in the same container counts for the requests after it.
        var authorization = keys.authorizationKey(of: authKeyID, at: now)
        if authorization == nil, entry.isTemporary, Self.methodsWithoutBinding.contains(decoded.constructorID) {
            authorization = authKeyID
        }
        guard let authorization else {
            return .answered(.failure(RPCError(code: 401, message: "AUTH_KEY_PERM_EMPTY")))
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
    func bindTemporaryKey(_ request: BindTemporaryKey, entry: AuthKeyStore.Entry, authKeyID: UInt64, sessionID: Int64,
                          messageID: Int64, now: Double) -> Result<[UInt8], RPCError> {
        guard entry.isTemporary else { return .failure(RPCError(code: 400, message: "TEMP_AUTH_KEY_EMPTY")) }
        let permanentID = request.permAuthKeyId, nonce = request.nonce, expiresAt = request.expiresAt
        let message = request.encryptedMessage
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

/// `auth.bindTempAuthKey#cdd42a05 perm_auth_key_id:long nonce:long expires_at:int encrypted_message:bytes = Bool`:
/// unchanged since layer 46, so the server reads it without an API layer (core.telegram.org/method/auth.bindTempAuthKey).
public struct BindTemporaryKey: TLTypedRequest {
    /// `Bool`: boolTrue once bound.
    public typealias Result = Bool
    /// `0xcdd42a05`.
    public static var tlConstructorID: UInt32 { 0xcdd4_2a05 }
    /// `auth.bindTempAuthKey`.
    public static var tlFunctionName: String { "auth.bindTempAuthKey" }

    /// The permanent key's id.
    public let permAuthKeyId: Int64
    /// The nonce the encrypted binding message repeats.
    public let nonce: Int64
    /// When the binding ends (Unix seconds).
    public let expiresAt: Int32
    /// The binding message, encrypted with the permanent key.
    public let encryptedMessage: [UInt8]

    /// A request with these fields.
    public init(permAuthKeyId: Int64, nonce: Int64, expiresAt: Int32, encryptedMessage: [UInt8]) {
        self.permAuthKeyId = permAuthKeyId
        self.nonce = nonce
        self.expiresAt = expiresAt
        self.encryptedMessage = encryptedMessage
    }

    /// Reads the four fields, the constructor ID already read.
    public static func parseFields(_ reader: inout BufferReader) throws(TLDecodingError) -> BindTemporaryKey {
        var field = 0
        do {
            let permanent = try reader.readInt64()
            field = 1
            let nonce = try reader.readInt64()
            field = 2
            let expiresAt = try reader.readInt32()
            field = 3
            let message = try reader.readTLBytes()
            return BindTemporaryKey(permAuthKeyId: permanent, nonce: nonce, expiresAt: expiresAt, encryptedMessage: message)
        } catch {
            throw error.inside(constructor: "auth.bindTempAuthKey",
                               fields: "perm_auth_key_id,nonce,expires_at,encrypted_message", index: field)
        }
    }

    /// Writes the request, its constructor ID first when `boxed`.
    public func serialize(_ buffer: Buffer, _ boxed: Bool) {
        if boxed { buffer.appendUInt32(Self.tlConstructorID) }
        buffer.appendInt64(permAuthKeyId)
        buffer.appendInt64(nonce)
        buffer.appendInt32(expiresAt)
        buffer.appendTLBytes(encryptedMessage)
    }

    /// Writes `boolTrue` or `boolFalse`.
    public static func writeResult(_ result: Bool, into buffer: Buffer) { buffer.appendBool(result) }
}
