// Key-exchange values derived from the nonces (core.telegram.org/mtproto/auth_key, steps 5 and 9).

/// The temporary AES key and IV that protect server_DH_inner_data and client_DH_inner_data, and the first
/// server salt.
public enum NonceKDF {
    /// tmp_aes_key = SHA1(new_nonce ‖ server_nonce) ‖ SHA1(server_nonce ‖ new_nonce)[0..<12];
    /// tmp_aes_iv = SHA1(server_nonce ‖ new_nonce)[12..<20] ‖ SHA1(new_nonce ‖ new_nonce) ‖ new_nonce[0..<4].
    public static func temporaryKey(newNonce: [UInt8], serverNonce: [UInt8]) throws(CryptoError) -> AESKeyIV {
        try check(newNonce: newNonce, serverNonce: serverNonce)
        let newServer = Hash.sha1(newNonce, serverNonce)
        let serverNew = Hash.sha1(serverNonce, newNonce)
        let newNew = Hash.sha1(newNonce, newNonce)
        return AESKeyIV(key: newServer + serverNew[0..<12],
                        iv: Array(serverNew[12..<20]) + newNew + newNonce[0..<4])
    }

    /// server_salt = substr(new_nonce, 0, 8) XOR substr(server_nonce, 0, 8), as 8 wire bytes.
    public static func firstServerSalt(newNonce: [UInt8], serverNonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        try check(newNonce: newNonce, serverNonce: serverNonce)
        return (0..<8).map { newNonce[$0] ^ serverNonce[$0] }
    }

    private static func check(newNonce: [UInt8], serverNonce: [UInt8]) throws(CryptoError) {
        guard newNonce.count == 32 else {
            throw .invalidLength(what: "new_nonce", expected: "32 bytes", actual: newNonce.count)
        }
        guard serverNonce.count == 16 else {
            throw .invalidLength(what: "server_nonce", expected: "16 bytes", actual: serverNonce.count)
        }
    }
}
