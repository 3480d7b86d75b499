// The authorization key and the values derived from it by SHA-1 (core.telegram.org/mtproto/auth_key and
// /mtproto/description): auth_key_id, aux_hash and new_nonce_hash1/2/3.

/// A 2048-bit MTProto authorization key with its derived identifiers. Printing it (`description`, `dump`,
/// string interpolation, logs) shows only its id: the key bytes are as good as a login.
public struct AuthKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable {
    /// The 256 key bytes, big-endian as produced by the DH exchange.
    public let bytes: [UInt8]
    /// auth_key_id as its 8 wire bytes: SHA1(auth_key)[12..<20] ("the 64 lower-order bits of the SHA1").
    public let id: [UInt8]
    /// aux_hash: SHA1(auth_key)[0..<8] ("the 64 higher-order bits"), used in new_nonce_hash.
    public let auxHash: [UInt8]

    /// - Parameter bytes: the 256 key bytes; any other length throws `invalidKeyLength`.
    public init(_ bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == 256 else { throw .invalidKeyLength(what: "auth_key", expected: 256, actual: bytes.count) }
        self.bytes = bytes
        let digest = Hash.sha1(bytes)
        id = Array(digest[12..<20])
        auxHash = Array(digest[0..<8])
    }

    /// The key's id in hex, never its bytes (the value may end up in logs).
    public var description: String { "AuthKey(id: \(String(idValue, radix: 16)))" }
    /// As `description`: the id only.
    public var debugDescription: String { description }
    /// The id only, so `dump` and debuggers do not show the key.
    public var customMirror: Mirror { Mirror(self, children: ["id": String(idValue, radix: 16)]) }

    /// auth_key_id read as the little-endian 64-bit integer it is on the wire.
    public var idValue: UInt64 {
        id.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// new_nonce_hash`number` = SHA1(new_nonce ‖ number ‖ aux_hash)[4..<20], checked against the server's
    /// dh_gen_ok (1), dh_gen_retry (2) and dh_gen_fail (3).
    public func newNonceHash(_ number: UInt8, newNonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard newNonce.count == 32 else {
            throw .invalidLength(what: "new_nonce", expected: "32 bytes", actual: newNonce.count)
        }
        guard (1...3).contains(number) else {
            throw .invalidLength(what: "new_nonce_hash number", expected: "1, 2 or 3", actual: Int(number))
        }
        return Array(Hash.sha1(newNonce, [number], auxHash)[4..<20])
    }

    /// Checks a received new_nonce_hash in constant time.
    public func verifyNewNonceHash(_ received: [UInt8], number: UInt8, newNonce: [UInt8]) throws(CryptoError) -> Bool {
        constantTimeEquals(try newNonceHash(number, newNonce: newNonce), received)
    }
}
