// obfuscated2 ("Transport obfuscation", core.telegram.org/mtproto/mtproto-transports): a 64-byte header whose
// bytes 8..56 are the AES-256-CTR keys of both directions, with the protocol tag and DC id hidden in its encrypted
// tail; then the whole stream is AES-256-CTR both ways. MTProxy secrets mix into the keys via SHA-256.
import MTProtoCrypto

/// The AES-256-CTR keys of one obfuscated2 connection, from the client's point of view.
public struct Obfuscated2Keys: Sendable, Hashable {
    /// The 32-byte key of what the client sends.
    public var encryptKey: [UInt8]
    /// The 16-byte counter start of what the client sends.
    public var encryptIV: [UInt8]
    /// The 32-byte key of what the client receives.
    public var decryptKey: [UInt8]
    /// The 16-byte counter start of what the client receives.
    public var decryptIV: [UInt8]

    /// "encrypt key = init[8..40], IV = init[40..56]; decrypt key and IV: the same from init[8..56] reversed";
    /// with an MTProxy secret each key becomes SHA256(key ‖ secret).
    public init(initBytes: [UInt8], secret: [UInt8]?) throws(TransportError) {
        guard initBytes.count >= 56 else { throw .obfuscation("keys come from 56 header bytes, got \(initBytes.count)") }
        let forward = Array(initBytes[8..<56])
        let reversed = Array(forward.reversed())
        var encryptKey = Array(forward[0..<32])
        var decryptKey = Array(reversed[0..<32])
        if let secret {
            encryptKey = Hash.sha256(encryptKey, secret)
            decryptKey = Hash.sha256(decryptKey, secret)
        }
        self.encryptKey = encryptKey
        self.encryptIV = Array(forward[32..<48])
        self.decryptKey = decryptKey
        self.decryptIV = Array(reversed[32..<48])
    }

    /// The keys the server uses: the client's, swapped.
    public var swapped: Obfuscated2Keys {
        var keys = self
        keys.encryptKey = decryptKey
        keys.encryptIV = decryptIV
        keys.decryptKey = encryptKey
        keys.decryptIV = encryptIV
        return keys
    }
}

/// The two running AES-256-CTR streams of an obfuscated2 connection, for either role. A reference type inside
/// (OpenSSL contexts), so do not copy it between connections.
public struct Obfuscated2Cipher: Sendable {
    private let encryptor: AES256CTR
    private let decryptor: AES256CTR

    init(keys: Obfuscated2Keys) throws(TransportError) {
        do {
            encryptor = try AES256CTR(key: keys.encryptKey, iv: keys.encryptIV)
            decryptor = try AES256CTR(key: keys.decryptKey, iv: keys.decryptIV)
        } catch {
            throw .crypto("\(error)")
        }
    }

    /// Encrypts outgoing bytes in place, continuing the outgoing keystream.
    public func encrypt(_ bytes: inout [UInt8]) { encryptor.process(&bytes) }

    /// Decrypts incoming bytes in place, continuing the incoming keystream.
    public func decrypt(_ bytes: inout [UInt8]) { decryptor.process(&bytes) }
}

/// Building and parsing the 64-byte obfuscated2 header.
public enum Obfuscated2 {
    /// "The first byte must not be 0xef, the first int must not be 0x44414548 ('HEAD'), 0x54534f50 ('POST'),
    /// 0x20544547 ('GET '), 0x4954504f ('OPTI'), 0x02010316 (TLS), 0xdddddddd or 0xeeeeeeee, and the second int must
    /// not be 0x00000000": otherwise the server would take the header for another protocol.
    public static let forbiddenFirstWords: Set<UInt32> = [
        0x4441_4548, 0x5453_4f50, 0x2054_4547, 0x4954_504f, 0x0201_0316, 0xdddd_dddd, 0xeeee_eeee,
    ]

    /// Whether `random` may start a header: the forbidden first byte and words above.
    public static func isAllowed(_ random: [UInt8]) -> Bool {
        guard random.count >= 8, random[0] != 0xef, let first = random.uint32LE(at: 0) else { return false }
        return !forbiddenFirstWords.contains(first) && random.uint32LE(at: 4) != 0
    }

    /// The client's header from 64 random bytes: tag at 56..60, DC id (int16 LE) at 60..62 if given, then bytes
    /// 56..64 replaced by their encryption. Returns the header and the cipher, whose outgoing stream has already
    /// consumed the header's 64 bytes (the client's stream "continues at keystream offset 64").
    public static func clientHeader(
        random64: [UInt8], tag: [UInt8], dcId: Int16?, secret: [UInt8]?
    ) throws(TransportError) -> (header: [UInt8], keys: Obfuscated2Keys, cipher: Obfuscated2Cipher) {
        guard random64.count == 64 else { throw .obfuscation("the header needs 64 random bytes, got \(random64.count)") }
        guard tag.count == 4 else { throw .obfuscation("the protocol tag must be 4 bytes, got \(tag.count)") }
        var initBytes = random64
        initBytes.replaceSubrange(56..<60, with: tag)
        if let dcId {
            let raw = UInt16(bitPattern: dcId)
            initBytes[60] = UInt8(truncatingIfNeeded: raw)
            initBytes[61] = UInt8(truncatingIfNeeded: raw >> 8)
        }
        let keys = try Obfuscated2Keys(initBytes: initBytes, secret: secret)
        let cipher = try Obfuscated2Cipher(keys: keys)
        var encrypted = initBytes
        cipher.encrypt(&encrypted)
        let header = Array(initBytes[0..<56]) + Array(encrypted[56..<64])
        return (header, keys, cipher)
    }

    /// A client header from fresh randomness, drawing 64 bytes again until they are allowed.
    public static func clientHeader(
        kind: TransportKind, dcId: Int16?, secret: [UInt8]?, random: any RandomSource
    ) throws(TransportError) -> (header: [UInt8], keys: Obfuscated2Keys, cipher: Obfuscated2Cipher) {
        guard let tag = kind.obfuscatedTag else { throw .obfuscation("the full transport cannot be obfuscated") }
        var bytes = random.bytes(64)
        var attempts = 1
        while !isAllowed(bytes) {
            // A working source fails this with probability ~2^-8; a broken one must not loop forever.
            guard attempts < 1000 else { throw .obfuscation("the random source keeps producing forbidden headers") }
            bytes = random.bytes(64)
            attempts += 1
        }
        return try clientHeader(random64: bytes, tag: tag, dcId: dcId, secret: secret)
    }

    /// What a server learns from a client's header.
    public struct Accepted: Sendable {
        /// The framing named by the header's protocol tag.
        public let kind: TransportKind
        /// The DC id at bytes 60..62 (meaningful when the client set it, e.g. through an MTProxy).
        public let dcId: Int16
        /// The client's view of the keys (use `.swapped` for the server's).
        public let keys: Obfuscated2Keys
        /// The server's cipher: incoming stream past the header, outgoing stream at 0.
        public let cipher: Obfuscated2Cipher
    }

    /// Server side: derives the keys from a client's 64-byte header, decrypts its tail and checks the tag.
    public static func acceptClientHeader(_ header: [UInt8], secret: [UInt8]?) throws(TransportError) -> Accepted {
        guard header.count == 64 else { throw .obfuscation("a header is 64 bytes, got \(header.count)") }
        let keys = try Obfuscated2Keys(initBytes: header, secret: secret)
        let cipher = try Obfuscated2Cipher(keys: keys.swapped)
        var decrypted = header
        cipher.decrypt(&decrypted)
        let tag = Array(decrypted[56..<60])
        guard let kind = TransportKind(obfuscatedTag: tag) else {
            throw .obfuscation(
                "the header decrypts to tag \(tag.map(hexByte).joined()), not a known protocol (wrong secret?)")
        }
        let dcId = Int16(bitPattern: UInt16(decrypted[60]) | UInt16(decrypted[61]) << 8)
        return Accepted(kind: kind, dcId: dcId, keys: keys, cipher: cipher)
    }
}
