// The auth-key exchange (core.telegram.org/mtproto/auth_key) as two sans-IO state machines, `AuthKeyExchange.Client`
// and `AuthKeyExchange.Server`: unencrypted frames and the current time in, frames to send and the finished key out,
// randomness injected. This file holds what both roles share: the envelope rules for handshake messages, the
// `SHA1(data) ‖ data ‖ padding` AES-IGE wrapping of the inner data (steps 5 and 9) and small byte helpers.
import MTProtoCrypto
import TLRuntime

/// Namespace of the auth-key exchange: `Client` and `Server` (in their own files), the shared limits, and
/// `TemporaryKeyBinding` for perfect forward secrecy.
///
/// ```swift
/// var client = AuthKeyExchange.Client(configuration: .init(keys: serverKeys, dcID: 2), random: SystemRandom())
/// var output = AuthKeyExchange.Client.Output.send(client.start(now: clock()))
/// while case .send(let frame) = output {
///     output = try client.receive(frame: try await transport.exchange(frame), now: clock())
/// }
/// guard case .done(let result) = output else { return }  // result.authKey, .firstSalt, .timeOffset
///
/// var server = AuthKeyExchange.Server(configuration: try .init(keys: [privateKey], dcID: 2), random: SystemRandom())
/// switch try server.receive(frame: frameFromClient, now: clock()) {
///     case .send(let frame): send(frame)
///     case let .finished(frame, result): send(frame); store(result.authKey)
///     case let .refused(frame, _): send(frame)
/// }
/// ```
public enum AuthKeyExchange {
    /// How far, in seconds, a peer's msg_id may stray from where its clock is known to be (client: from the
    /// `server_time` of server_DH_inner_data; server: from the client's first msg_id plus the server's elapsed time).
    public static let defaultMessageTimeTolerance: Double = 30

    /// dh_gen_retry rounds a client accepts (and a server offers) before giving up.
    public static let defaultMaxRetries = 5

    // MARK: Envelope

    /// Parses an unencrypted frame for `step`, bounded by `limit` bytes.
    static func unwrap(_ frame: [UInt8], step: AuthKeyExchangeError.Step,
                       limit: Int) throws(AuthKeyExchangeError) -> UnencryptedMessage {
        guard frame.count <= limit else { throw .init(step, .frameTooLong(frame.count, limit: limit)) }
        do {
            return try UnencryptedMessage(parsing: frame)
        } catch {
            throw .init(step, .envelope(error))
        }
    }

    /// Reads a whole body with `parse`; trailing bytes are an error.
    static func parseBody<T>(_ body: [UInt8], step: AuthKeyExchangeError.Step,
                             _ parse: (inout BufferReader) throws(TLDecodingError) -> T) throws(AuthKeyExchangeError) -> T {
        var reader = BufferReader(bytes: body)
        do {
            let value = try parse(&reader)
            try reader.expectEnd()
            return value
        } catch {
            throw .init(step, .malformed(error))
        }
    }

    /// Requires `body` to be exactly what `write` serializes from the parsed value. TL's bytes padding and
    /// length forms are otherwise unauthenticated slack in these unencrypted messages; every implementation
    /// writes them canonically (zero padding, shortest length), so anything else is tampering or garbage.
    static func requireCanonical(_ body: [UInt8], step: AuthKeyExchangeError.Step,
                                 _ write: (Buffer) -> Void) throws(AuthKeyExchangeError) {
        let buffer = Buffer(capacity: body.count)
        write(buffer)
        let canonical = buffer.bytes
        guard canonical != body else { return }
        let offset = zip(canonical, body).prefix { $0 == $1 }.count
        throw .init(step, .nonCanonicalEncoding(offset: offset))
    }

    // MARK: Inner data under the nonce key (steps 5 and 9)

    /// answer_with_hash = SHA1(data) ‖ data ‖ 0…15 random bytes to a multiple of 16, AES-256-IGE under the
    /// temporary key derived from the nonces.
    static func encryptInnerData(_ data: [UInt8], key: AESKeyIV, random: some RandomSource) throws(CryptoError) -> [UInt8] {
        let unpadded = 20 + data.count
        var plaintext = Hash.sha1(data)
        plaintext.reserveCapacity(unpadded + 15)
        plaintext += data
        plaintext += random.bytes((16 - unpadded % 16) % 16)
        return try key.cipher.encrypt(plaintext)
    }

    /// Decrypts `SHA1(data) ‖ data ‖ padding`, parses data with `parse`, and checks the hash and that at most 15
    /// bytes of padding follow.
    static func decryptInnerData<T>(_ encrypted: [UInt8], key: AESKeyIV, step: AuthKeyExchangeError.Step,
                                    _ parse: (inout BufferReader) throws(TLDecodingError) -> T) throws(AuthKeyExchangeError) -> T {
        guard encrypted.count >= 32, encrypted.count % 16 == 0 else {
            throw .init(step, .encryptedPayloadLength(encrypted.count))
        }
        let plaintext: [UInt8]
        do {
            plaintext = try key.cipher.decrypt(encrypted)
        } catch {
            throw .init(step, .crypto(error))
        }
        var reader = BufferReader(bytes: Array(plaintext[20...]))
        let value: T
        do {
            value = try parse(&reader)
        } catch {
            throw .init(step, .malformed(error))
        }
        let dataLength = reader.offset
        guard constantTimeEquals(Hash.sha1(Array(plaintext[20..<(20 + dataLength)])), Array(plaintext[0..<20])) else {
            throw .init(step, .innerDataHashMismatch)
        }
        guard reader.remaining < 16 else { throw .init(step, .paddingTooLong(reader.remaining)) }
        return value
    }

    /// The temporary AES key and IV of steps 5 and 9.
    static func nonceKey(newNonce: [UInt8], serverNonce: [UInt8],
                         step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) -> AESKeyIV {
        do {
            return try NonceKDF.temporaryKey(newNonce: newNonce, serverNonce: serverNonce)
        } catch {
            throw .init(step, .crypto(error))
        }
    }

    /// The first server salt, new_nonce[0..<8] XOR server_nonce[0..<8], read as the little-endian long it is.
    static func firstSalt(newNonce: [UInt8], serverNonce: [UInt8]) -> Int64 {
        var salt: UInt64 = 0
        for i in (0..<8).reversed() { salt = salt << 8 | UInt64(newNonce[i] ^ serverNonce[i]) }
        return Int64(bitPattern: salt)
    }

    /// new_nonce_hash`number`, or the hash in server_DH_params_fail (`number` 0: SHA1(new_nonce)[4..<20]).
    static func newNonceHash(_ number: UInt8, key: AuthKey?, newNonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard number != 0, let key else { return Array(Hash.sha1(newNonce)[4..<20]) }
        return try key.newNonceHash(number, newNonce: newNonce)
    }

    /// Builds the 256-byte auth key from a DH result (already 256 bytes, left-padded by DHParameters).
    static func authKey(_ bytes: [UInt8], step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) -> AuthKey {
        do {
            return try AuthKey(bytes)
        } catch {
            throw .init(step, .crypto(error))
        }
    }

    // MARK: Byte helpers

    static func int128(_ bytes: [UInt8]) -> TLInt128 {
        TLInt128(littleEndianWord(bytes, at: 0), littleEndianWord(bytes, at: 8))
    }

    static func int256(_ bytes: [UInt8]) -> TLInt256 {
        TLInt256(littleEndianWord(bytes, at: 0), littleEndianWord(bytes, at: 8),
                 littleEndianWord(bytes, at: 16), littleEndianWord(bytes, at: 24))
    }

    /// The little-endian word at `at`; the callers pass arrays of 16 or 32 bytes.
    static func littleEndianWord(_ bytes: [UInt8], at: Int) -> UInt64 {
        var word: UInt64 = 0
        for i in (at..<min(at + 8, bytes.count)).reversed() { word = word << 8 | UInt64(bytes[i]) }
        return word
    }

    /// An 8-byte wire value (auth_key_id, aux_hash) as the TL `long` it is.
    static func long(_ bytes: [UInt8]) -> Int64 {
        Int64(bitPattern: littleEndianWord(bytes, at: 0))
    }

    /// Minimal big-endian bytes of a positive integer (how p, q and pq travel as TL `bytes`).
    static func bigEndianBytes(_ value: UInt64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0.drop { $0 == 0 }) }
    }
}

/// The peer's msg_ids of one exchange: their residue, their order, and their agreement with what is known of the
/// peer's clock. The low bytes of an unencrypted msg_id are authenticated by nothing, so these are the only checks
/// possible on them; a change that stays inside the tolerance is harmless (the id is used for nothing else).
struct PeerMessageIDs {
    let expectedResidue: Int64
    let tolerance: Double
    /// (msg_id, local time of arrival), at most one per message of the exchange (bounded by its step bound).
    private(set) var received: [(id: Int64, at: Double)] = []

    init(expectedResidue: Int64, tolerance: Double) {
        self.expectedResidue = expectedResidue
        self.tolerance = tolerance
    }

    /// Records a msg_id after checking its residue and that it is later than the previous one.
    mutating func record(_ id: Int64, at now: Double, step: AuthKeyExchangeError.Step) throws(AuthKeyExchangeError) {
        guard id & 3 == expectedResidue else {
            throw .init(step, .messageID(id, rule: "must be \(expectedResidue) mod 4"))
        }
        if let last = received.last, id <= last.id {
            throw .init(step, .messageID(id, rule: "must be greater than the previous msg_id \(last.id)"))
        }
        received.append((id, now))
    }

    /// Checks every recorded id against a clock model: `peerTime(localTime)` is where the peer's clock stood.
    func check(step: AuthKeyExchangeError.Step, peerTime: (Double) -> Double) throws(AuthKeyExchangeError) {
        for (id, at) in received {
            let claimed = MessageIDGenerator.time(of: id)
            guard abs(claimed - peerTime(at)) <= tolerance else {
                throw .init(step, .messageID(id, rule: "its time must be within \(tolerance) s of the peer's clock"))
            }
        }
    }
}
