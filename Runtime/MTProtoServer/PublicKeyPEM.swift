// The PKCS#1 PEM of an RSA public key (`-----BEGIN RSA PUBLIC KEY-----`), the form Telegram publishes its keys in
// and clients load (Telethon's `add_key`), so a test server can hand its key to them.
import MTProtoCrypto

/// The PKCS#1 PEM form Telegram publishes its keys in, for handing a test server's key to clients.
extension RSAPublicKey {
    /// RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER } (RFC 8017, A.1.1) as PEM.
    public var pkcs1PEM: String {
        let body = Self.derInteger(modulus) + Self.derInteger(exponent)
        let der = [0x30] + Self.derLength(body.count) + body
        let base64 = Self.base64Encode(der)
        var lines = ["-----BEGIN RSA PUBLIC KEY-----"]
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<end]))
            index = end
        }
        lines.append("-----END RSA PUBLIC KEY-----")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func derInteger(_ bigEndian: [UInt8]) -> [UInt8] {
        var value = Array(bigEndian.drop { $0 == 0 })
        if value.isEmpty { value = [0] }
        if value[0] & 0x80 != 0 { value.insert(0, at: 0) }  // keep it positive
        return [0x02] + derLength(value.count) + value
    }

    private static func derLength(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    private static func base64Encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let word = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[word >> (18 - 6 * position) & 0x3f] : "=")
            }
            index += 3
        }
        return out
    }
}
