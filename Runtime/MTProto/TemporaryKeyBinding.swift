// Binding a temporary auth key to the permanent one for perfect forward secrecy (core.telegram.org/method/
// auth.bindTempAuthKey, "Binding message contents" and "Generating encrypted_message"). MTProto does not import
// TelegramApi, so this file builds and checks the method's arguments as bytes and numbers; the client layer wraps
// them in `auth.bindTempAuthKey(perm_auth_key_id:nonce:expires_at:encrypted_message:)`, sent over the temporary key.
import MTProtoApi
import MTProtoCrypto
import TLRuntime

/// Why a server rejects a binding (Telegram answers `ENCRYPTED_MESSAGE_INVALID` for all of them).
public enum TemporaryKeyBindingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// encrypted_message does not decrypt under the permanent key by the MTProto 1.0 rules.
    case decryption(CryptoError)
    /// The decrypted message or its bind_auth_key_inner does not parse.
    case malformed(TLDecodingError)
    /// A field of the binding disagrees with the call or the connection; `field` names it.
    case mismatch(field: String)
    /// expires_at is already past, or later than the temporary key's own expiry.
    case expired(expiresAt: Int32)

    /// A one-line account of the failed check.
    public var description: String {
        switch self {
            case .decryption(let e): "bind_auth_key_inner does not decrypt under the permanent key: \(e)"
            case .malformed(let e): "malformed binding message: \(e)"
            case .mismatch(let field): "binding field \(field) does not match"
            case .expired(let at): "binding expires_at \(at) is in the past or beyond the temporary key's expiry"
        }
    }
}

/// The arguments of `auth.bindTempAuthKey`: which permanent key, the binding nonce, the expiry, and the
/// MTProto 1.0 message that proves the client holds both keys.
public struct TemporaryKeyBinding: Sendable, Hashable {
    /// perm_auth_key_id.
    public let permanentKeyID: Int64
    /// A random long, repeated inside the encrypted message.
    public let nonce: Int64
    /// Unix time (server clock) at which the binding, and the temporary key, stop being valid.
    public let expiresAt: Int32
    /// encrypted_message: perm auth_key_id ‖ msg_key ‖ AES-IGE(random:int128 ‖ msg_id ‖ seqno=0 ‖ length ‖
    /// bind_auth_key_inner ‖ padding), with the MTProto 1.0 key derivation (x = 0) under the permanent key.
    public let encryptedMessage: [UInt8]

    /// A binding from its fields.
    public init(permanentKeyID: Int64, nonce: Int64, expiresAt: Int32, encryptedMessage: [UInt8]) {
        self.permanentKeyID = permanentKeyID
        self.nonce = nonce
        self.expiresAt = expiresAt
        self.encryptedMessage = encryptedMessage
    }

    /// Client role: the binding for the `auth.bindTempAuthKey` call about to be sent over the temporary key.
    /// - Parameters:
    ///   - permanentKey: the key the temporary one is bound to.
    ///   - temporaryKey: the key the call goes under.
    ///   - messageID: the msg_id that call will be sent with (the server checks they are equal).
    ///   - temporarySessionID: the session id that call will be sent in.
    ///   - expiresAt: usually the temporary exchange's `Result.expiresAt`.
    ///   - random: where the binding's nonce and padding come from.
    public init(permanentKey: AuthKey, temporaryKey: AuthKey, temporarySessionID: Int64, expiresAt: Int32,
                messageID: Int64, random: some RandomSource) throws(CryptoError) {
        let nonce = AuthKeyExchange.long(random.bytes(8))
        let inner = Buffer(capacity: 40)
        MT.BindAuthKeyInner.bind_auth_key_inner(.init(
            nonce: nonce, tempAuthKeyId: AuthKeyExchange.long(temporaryKey.id),
            permAuthKeyId: AuthKeyExchange.long(permanentKey.id), tempSessionId: temporarySessionID,
            expiresAt: expiresAt)).serialize(inner, true)
        let plaintext = Buffer(capacity: 72)
        plaintext.appendRaw(random.bytes(16))  // random:int128 in place of salt and session_id
        plaintext.appendInt64(messageID)
        plaintext.appendInt32(0)  // seqno
        plaintext.appendInt32(Int32(inner.count))
        plaintext.append(inner)
        self.init(permanentKeyID: AuthKeyExchange.long(permanentKey.id), nonce: nonce, expiresAt: expiresAt,
                  encryptedMessage: try MTProto1.encrypt(plaintext: plaintext.bytes, authKey: permanentKey,
                                                         direction: .client, random: random))
    }

    /// The call as sent: `auth.bindTempAuthKey#cdd42a05 perm_auth_key_id:long nonce:long expires_at:int
    /// encrypted_message:bytes = Bool` (the constructor is the same in every API layer).
    public var requestBody: [UInt8] {
        let buffer = Buffer(capacity: 24 + 4 + encryptedMessage.count + 3)
        buffer.appendUInt32(0xcdd4_2a05)
        buffer.appendInt64(permanentKeyID)
        buffer.appendInt64(nonce)
        buffer.appendInt32(expiresAt)
        buffer.appendTLBytes(encryptedMessage)
        return buffer.bytes
    }

    /// Server role: checks a received `auth.bindTempAuthKey` against the keys and the call that carried it.
    /// - Parameters:
    ///   - permanentKey: the key named by `permanentKeyID` (the caller looks it up; a mismatch is reported).
    ///   - temporaryKey: the key the call arrived under.
    ///   - messageID: the msg_id of the call.
    ///   - sessionID: the session_id of the call.
    ///   - temporaryKeyExpiresAt: the temporary key's expiry from its exchange, if it was made temporary.
    ///   - now: the server's clock.
    public func verify(permanentKey: AuthKey, temporaryKey: AuthKey, messageID: Int64, sessionID: Int64,
                       temporaryKeyExpiresAt: Int32?, now: Double) throws(TemporaryKeyBindingError) {
        guard AuthKeyExchange.long(permanentKey.id) == permanentKeyID else {
            throw .mismatch(field: "perm_auth_key_id (call)")
        }
        let plaintext: [UInt8]
        do {
            plaintext = try MTProto1.decrypt(encryptedMessage, authKey: permanentKey, direction: .client)
        } catch {
            throw .decryption(error)
        }
        var reader = BufferReader(bytes: plaintext)
        let fields: (msgID: Int64, seqNo: Int32, length: Int32, inner: MT.BindAuthKeyInner)
        do {
            try reader.skip(count: 16)
            fields = (try reader.readInt64(), try reader.readInt32(), try reader.readInt32(),
                      try MT.BindAuthKeyInner.parse(&reader))
            try reader.expectEnd()
        } catch {
            throw .malformed(error)
        }
        guard fields.msgID == messageID else { throw .mismatch(field: "msg_id") }
        guard fields.seqNo == 0 else { throw .mismatch(field: "seqno") }
        guard fields.length == 40 else { throw .mismatch(field: "message length") }
        let inner = switch fields.inner { case .bind_auth_key_inner(let c): c }
        guard inner.nonce == nonce else { throw .mismatch(field: "nonce") }
        guard inner.permAuthKeyId == permanentKeyID else { throw .mismatch(field: "perm_auth_key_id") }
        guard inner.tempAuthKeyId == AuthKeyExchange.long(temporaryKey.id) else { throw .mismatch(field: "temp_auth_key_id") }
        guard inner.tempSessionId == sessionID else { throw .mismatch(field: "temp_session_id") }
        guard inner.expiresAt == expiresAt else { throw .mismatch(field: "expires_at") }
        guard Double(expiresAt) > now, expiresAt <= temporaryKeyExpiresAt ?? .max else {
            throw .expired(expiresAt: expiresAt)
        }
    }
}
