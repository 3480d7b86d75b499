// RSA keys from PEM for the portable backend: the base64 body of the first PEM block, then the few DER structures
// RSA keys come in (RFC 8017 A.1 for PKCS#1, RFC 5280 4.1 for SubjectPublicKeyInfo, RFC 5208 5 for PKCS#8). Every
// length is checked against what remains, so a malformed key is an `invalidPEM` naming what was wrong.
import Foundation

enum DER {
    /// rsaEncryption, 1.2.840.113549.1.1.1.
    private static let rsaEncryption: [UInt8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]

    static func rsaKey(pem: String, wantPrivate: Bool) throws(CryptoError) -> RSAKeyNumbers {
        let (label, der) = try block(pem)
        switch (label, wantPrivate) {
        case ("RSA PUBLIC KEY", false):
            return try pkcs1Public(der)
        case ("PUBLIC KEY", false):
            var outer = Reader(der)
            var info = try outer.sequence("SubjectPublicKeyInfo")
            try algorithm(&info)
            var bits = try info.element(tag: 0x03, "subjectPublicKey")
            guard try bits.byte("unused bits") == 0 else { throw .invalidPEM("subjectPublicKey has unused bits") }
            return try pkcs1Public(bits.rest)
        case ("RSA PRIVATE KEY", true):
            return try pkcs1Private(der)
        case ("PRIVATE KEY", true):
            var outer = Reader(der)
            var info = try outer.sequence("PrivateKeyInfo")
            _ = try info.integer("version")
            try algorithm(&info)
            return try pkcs1Private(try info.element(tag: 0x04, "privateKey").rest)
        default:
            throw .invalidPEM("not an RSA \(wantPrivate ? "private" : "public") key PEM (a \(label) block)")
        }
    }

    /// The label and decoded body of the first `-----BEGIN …-----` block.
    private static func block(_ pem: String) throws(CryptoError) -> (String, [UInt8]) {
        let lines = pem.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") }) else {
            throw .invalidPEM("no -----BEGIN line")
        }
        let label = String(lines[begin].dropFirst(11).dropLast(5))
        guard let end = lines[(begin + 1)...].firstIndex(of: "-----END \(label)-----") else {
            throw .invalidPEM("no -----END \(label)----- line")
        }
        let body = lines[(begin + 1)..<end].filter { !$0.contains(":") }.joined()
        guard let data = Data(base64Encoded: body) else { throw .invalidPEM("the \(label) body is not base64") }
        return (label, Array(data))
    }

    private static func algorithm(_ reader: inout Reader) throws(CryptoError) {
        var identifier = try reader.sequence("AlgorithmIdentifier")
        guard try identifier.element(tag: 0x06, "algorithm").rest == rsaEncryption else {
            throw .invalidPEM("the PEM holds a non-RSA key")
        }
    }

    private static func pkcs1Public(_ der: [UInt8]) throws(CryptoError) -> RSAKeyNumbers {
        var outer = Reader(der)
        var key = try outer.sequence("RSAPublicKey")
        return RSAKeyNumbers(modulus: try key.integer("modulus"), publicExponent: try key.integer("publicExponent"),
                             privateExponent: nil)
    }

    private static func pkcs1Private(_ der: [UInt8]) throws(CryptoError) -> RSAKeyNumbers {
        var outer = Reader(der)
        var key = try outer.sequence("RSAPrivateKey")
        _ = try key.integer("version")
        return RSAKeyNumbers(modulus: try key.integer("modulus"), publicExponent: try key.integer("publicExponent"),
                             privateExponent: try key.integer("privateExponent"))
    }

    /// Reads DER elements (tag, definite length, contents) from the front of some bytes.
    struct Reader {
        private let bytes: [UInt8]
        private var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        /// What has not been read yet.
        var rest: [UInt8] { Array(bytes[position...]) }

        mutating func byte(_ what: String) throws(CryptoError) -> UInt8 {
            guard position < bytes.count else { throw .invalidPEM("\(what): the DER ends early") }
            defer { position += 1 }
            return bytes[position]
        }

        /// The next element, which must have `tag`, as a reader over its contents.
        mutating func element(tag: UInt8, _ what: String) throws(CryptoError) -> Reader {
            let found = try byte(what)
            guard found == tag else { throw .invalidPEM("\(what): DER tag \(found), expected \(tag)") }
            var length = Int(try byte(what))
            if length >= 0x80 {
                let count = length & 0x7f
                guard (1...3).contains(count) else { throw .invalidPEM("\(what): a DER length of \(count) bytes") }
                length = 0
                for _ in 0..<count { length = length << 8 | Int(try byte(what)) }
            }
            guard length <= bytes.count - position else {
                throw .invalidPEM("\(what): \(length) bytes declared, \(bytes.count - position) left")
            }
            defer { position += length }
            return Reader(Array(bytes[position..<(position + length)]))
        }

        mutating func sequence(_ what: String) throws(CryptoError) -> Reader { try element(tag: 0x30, what) }

        /// A non-negative INTEGER as minimal big-endian bytes.
        mutating func integer(_ what: String) throws(CryptoError) -> [UInt8] {
            let contents = try element(tag: 0x02, what).rest
            guard let first = contents.first, first & 0x80 == 0 else { throw .invalidPEM("\(what) is empty or negative") }
            return Array(contents.drop { $0 == 0 })
        }
    }
}
