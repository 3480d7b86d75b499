// MTProxy secrets as users paste them: hex from a proxy's configuration, or the base64 (URL-safe or standard)
// found in `tg://proxy?...&secret=` links. Three shapes exist (core.telegram.org/mtproto/mtproto-transports,
// "MTProxy"): 16 random bytes; `dd` + 16 bytes, which forces padded intermediate; `ee` + 16 bytes + a domain,
// which adds fake-TLS with that domain as SNI.

/// A parsed MTProxy secret.
public struct MTProxySecret: Sendable, Hashable, CustomStringConvertible {
    /// What the secret's prefix asks of the client.
    public enum Kind: Sendable, Hashable {
        /// 16 bytes: obfuscated2 keyed with the secret, any framing.
        case plain
        /// `dd` prefix: obfuscated2 with padded intermediate only.
        case paddedIntermediate
        /// `ee` prefix: fake-TLS with `domain` as SNI, padded intermediate inside.
        case fakeTLS(domain: String)
    }

    /// Longest SNI domain accepted, the limit tdlib applies.
    public static let maximumDomainLength = 182

    /// The 16-byte key mixed into the obfuscated2 keys and, for fake-TLS, the HMAC key.
    public let key: [UInt8]
    /// What the prefix asks: plain, `dd` or `ee` with its domain.
    public let kind: Kind

    /// A secret from its parts; throws ``TransportError/invalidSecret(_:)`` unless `key` is 16 bytes and a fake-TLS
    /// domain is 1 to ``maximumDomainLength`` bytes of ASCII letters, digits, `-` and `.`.
    public init(key: [UInt8], kind: Kind) throws(TransportError) {
        guard key.count == 16 else { throw .invalidSecret("the key must be 16 bytes, got \(key.count)") }
        if case let .fakeTLS(domain) = kind { try Self.validate(domain: Array(domain.utf8)) }
        self.key = key
        self.kind = kind
    }

    /// Parses the hex or base64 / base64url form. Hex is tried first: a 32-character hex string is also valid
    /// base64, and proxies print hex.
    public init(parsing text: String) throws(TransportError) {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .invalidSecret("the secret is empty") }
        if let bytes = decodeHex(trimmed) {
            try self.init(bytes: bytes, form: "hex")
        } else if let bytes = decodeBase64(trimmed) {
            try self.init(bytes: bytes, form: "base64")
        } else {
            throw .invalidSecret("'\(trimmed.prefix(80))' is neither hex nor base64")
        }
    }

    /// Interprets raw secret bytes: 16, `dd` + 16, or `ee` + 16 + domain.
    public init(bytes: [UInt8], form: String = "raw") throws(TransportError) {
        switch (bytes.count, bytes.first) {
        case (16, _):
            self.init(validKey: bytes, kind: .plain)
        case (17, 0xdd):
            self.init(validKey: Array(bytes[1...]), kind: .paddedIntermediate)
        case (17, 0xee):
            throw .invalidSecret("an ee (fake-TLS) secret needs a domain after its 16-byte key")
        case (let count, 0xee) where count > 17:
            let domain = Array(bytes[17...])
            try Self.validate(domain: domain)
            self.init(validKey: Array(bytes[1..<17]), kind: .fakeTLS(domain: String(decoding: domain, as: UTF8.self)))
        case (let count, let first?) where count > 16:
            throw .invalidSecret(
                "\(form) secret of \(count) bytes starts with 0x\(hexByte(first)); expected 16 bytes, dd + 16, or ee + 16 + domain"
            )
        default:
            throw .invalidSecret(
                "\(form) secret has \(bytes.count) bytes; expected 16 bytes, dd + 16, or ee + 16 + domain")
        }
    }

    private init(validKey: [UInt8], kind: Kind) {
        key = validKey
        self.kind = kind
    }

    private static func validate(domain: [UInt8]) throws(TransportError) {
        guard !domain.isEmpty else { throw .invalidSecret("the fake-TLS domain is empty") }
        guard domain.count <= maximumDomainLength else {
            throw .invalidSecret("the fake-TLS domain has \(domain.count) bytes, more than \(maximumDomainLength)")
        }
        // SNI host names are ASCII letters, digits, '-' and '.'; anything else would mark the hello as fake.
        for (index, byte) in domain.enumerated() {
            let ok = (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2d || byte == 0x2e
            guard ok else {
                throw .invalidSecret("the fake-TLS domain has byte 0x\(hexByte(byte)) at position \(index), not a host-name character")
            }
        }
    }

    /// The domain for fake-TLS secrets.
    public var domain: String? {
        if case let .fakeTLS(domain) = kind { return domain }
        return nil
    }

    /// The secret as bytes, prefix included.
    public var bytes: [UInt8] {
        switch kind {
        case .plain: key
        case .paddedIntermediate: [0xdd] + key
        case let .fakeTLS(domain): [0xee] + key + Array(domain.utf8)
        }
    }

    /// Lowercase hex of `bytes`.
    public var hexString: String { bytes.map(hexByte).joined() }

    /// The kind and the domain, never the key.
    public var description: String {
        switch kind {
        case .plain: "MTProxySecret(plain)"
        case .paddedIntermediate: "MTProxySecret(dd)"
        case let .fakeTLS(domain): "MTProxySecret(ee, \(domain))"
        }
    }

    /// The framing this secret requires, if it constrains it.
    public var requiredKind: TransportKind? {
        switch kind {
        case .plain: nil
        case .paddedIntermediate, .fakeTLS: .paddedIntermediate
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0.properties.isWhitespace }
        guard let start = scalars.firstIndex(where: { !isSpace($0) }),
            let end = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[start...end])
    }
}

/// Decodes hex (either case); nil if `text` is not an even number of hex digits.
public func decodeHex(_ text: String) -> [UInt8]? {
    let chars = Array(text.utf8)
    guard chars.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(chars.count / 2)
    var index = 0
    while index < chars.count {
        guard let high = hexValue(chars[index]), let low = hexValue(chars[index + 1]) else { return nil }
        out.append(high << 4 | low)
        index += 2
    }
    return out
}

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: c - 0x30
    case 0x61...0x66: c - 0x61 + 10
    case 0x41...0x46: c - 0x41 + 10
    default: nil
    }
}

/// Decodes base64 in the standard (`+/`) or URL-safe (`-_`) alphabet, with or without `=` padding.
public func decodeBase64(_ text: String) -> [UInt8]? {
    var chars = Array(text.utf8)
    while chars.last == 0x3d { chars.removeLast() }
    guard chars.count % 4 != 1 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(chars.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    for c in chars {
        let value: UInt8
        switch c {
        case 0x41...0x5a: value = c - 0x41
        case 0x61...0x7a: value = c - 0x61 + 26
        case 0x30...0x39: value = c - 0x30 + 52
        case 0x2b, 0x2d: value = 62
        case 0x2f, 0x5f: value = 63
        default: return nil
        }
        accumulator = accumulator << 6 | UInt32(value)
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        }
    }
    return out
}
