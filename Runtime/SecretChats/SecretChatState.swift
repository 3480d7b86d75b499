// What the engine keeps per secret chat, Codable so the client's session store can save it whole: keys, sequence
// numbers, both layers, the outgoing history that answers resend requests, incoming messages held while a gap is
// being filled, and a re-key in progress. It holds chat keys: store it only where auth keys may be stored.
import MTProtoCrypto

/// The Diffie–Hellman parameters from `messages.getDhConfig`, before their checks.
public struct SecretDHConfig: Sendable, Codable, Hashable {
    /// The DH prime p, 256 bytes big-endian.
    public var prime: [UInt8]
    /// The generator g.
    public var g: Int32
    /// The server's version of these parameters (`messages.getDhConfig`'s `version`).
    public var version: Int32

    /// Parameters as `messages.getDhConfig` returned them.
    public init(prime: [UInt8], g: Int32, version: Int32) {
        self.prime = prime
        self.g = g
        self.version = version
    }

    /// The checked parameters (the same checks as the auth-key exchange; known primes are cached).
    func checked() throws(SecretChatError) -> DHParameters {
        do {
            return try DHParameters(prime: prime, g: Int(g))
        } catch {
            throw .diffieHellman(error)
        }
    }
}

/// One secret chat, as the engine sees it.
public struct SecretChatState: Sendable, Codable {
    /// Where a chat is in its life.
    public enum Phase: String, Sendable, Codable {
        /// We asked (`requestEncryption`) and wait for the peer to accept.
        case waiting
        /// The peer asked; the application decides whether to accept.
        case requested
        /// The key is established.
        case ready
        /// Discarded by either side, or aborted after a security violation.
        case discarded
    }

    struct Outgoing: Sendable, Codable {
        var rawOutSeqNo: Int32
        /// The serialized decryptedMessageLayer, resent unchanged.
        var layered: [UInt8]
        var isService: Bool
        var attachment: SecretAttachment?
    }

    struct Held: Sendable, Codable {
        var rawOutSeqNo: Int32
        var rawInSeqNo: Int32
        var payload: [UInt8]
        var layer: SecretLayer
        var date: Int32
        var file: SecretFileReference?
    }

    struct Rekey: Sendable, Codable {
        var exchangeID: Int64
        /// The initiator's secret exponent while it waits for acceptKey.
        var exponent: [UInt8]?
        /// The acceptor's new key while it waits for commitKey.
        var newKey: [UInt8]?
    }

    /// The chat's id, from the server.
    public let id: Int32
    /// The chat's access hash, for `InputEncryptedChat`.
    public internal(set) var accessHash: Int64
    /// The other party's user id.
    public let peerUserID: Int64
    /// We created the chat (x = 0 in the 2.0 KDF and the seq_no parities of the originator).
    public let isOriginator: Bool
    /// Where the chat is in its life.
    public internal(set) var phase: Phase
    /// Our highest layer for this chat.
    public internal(set) var maxLayer: SecretLayer
    /// The peer's layer from its last decryptedMessageActionNotifyLayer; nil until it sends one.
    public internal(set) var peerLayer: Int32?
    /// Raw counts: messages received and processed in order, messages sent (end-to-end/seq_no).
    public internal(set) var inSeqNo: Int32 = 0
    /// Messages sent (raw count; see `inSeqNo`).
    public internal(set) var outSeqNo: Int32 = 0
    /// Self-destruct timer the peer set, seconds.
    public internal(set) var ttl: Int32 = 0
    /// The fingerprint of the current key: its SHA-1's low 64 bits, as `sendEncrypted` carries it.
    public internal(set) var keyFingerprint: Int64 = 0

    var exponent: [UInt8]?
    var gA: [UInt8]?
    var key: [UInt8] = []
    var previousKey: [UInt8]?
    var keyCreatedAt: Double = 0
    var keyUseCount = 0
    var peerInSeqNo: Int32 = 0
    var peerSentV2 = false
    var history: [Outgoing] = []
    var held: [Held] = []
    var resendRequestedUpTo: Int32 = -1
    var rekey: Rekey?
    var seenBareRandomIDs: [Int64] = []

    init(id: Int32, accessHash: Int64, peerUserID: Int64, isOriginator: Bool, phase: Phase, maxLayer: SecretLayer) {
        self.id = id
        self.accessHash = accessHash
        self.peerUserID = peerUserID
        self.isOriginator = isOriginator
        self.phase = phase
        self.maxLayer = maxLayer
    }

    /// The layer the chat speaks: the lower of both parties' layers; 8 until the peer says (end-to-end docs).
    public var layer: SecretLayer { min(maxLayer, SecretLayer(atMost: peerLayer ?? 8)) }

    /// The MTProto version outgoing messages use.
    public var mtproto: SecretMTProtoVersion { layer.mtproto }

    /// The key's picture bytes for the users to compare (empty until the key exists).
    public var keyVisualization: [UInt8] { key.isEmpty ? [] : SecretChatCrypto.keyVisualization(key) }

    /// Parity bits of end-to-end/seq_no: out_seq_no = 2n + 1 for the originator's messages, 2n for the other's.
    var xOut: Int32 { isOriginator ? 1 : 0 }
    var xIn: Int32 { isOriginator ? 0 : 1 }
}

/// A file attached to an encrypted message, as the server refers to it (the manager maps it to the API's
/// InputEncryptedFile/EncryptedFile).
public struct SecretFileReference: Sendable, Codable, Hashable {
    /// The encrypted file's id.
    public var id: Int64
    /// Its access hash.
    public var accessHash: Int64
    /// Its size in bytes, as uploaded (padded to 16).
    public var size: Int64
    /// The DC it is stored on.
    public var dcID: Int32
    /// The fingerprint of the file's key, which the message's document carries too.
    public var keyFingerprint: Int32

    /// A reference to an uploaded encrypted file.
    public init(id: Int64, accessHash: Int64, size: Int64, dcID: Int32, keyFingerprint: Int32) {
        self.id = id
        self.accessHash = accessHash
        self.size = size
        self.dcID = dcID
        self.keyFingerprint = keyFingerprint
    }
}

/// The file an outgoing message carries: freshly uploaded parts, or a file the server already holds (resends).
public enum SecretAttachment: Sendable, Codable, Hashable {
    /// `inputEncryptedFileUploaded` / `inputEncryptedFileBigUploaded` (big when `md5` is nil).
    case uploaded(fileID: Int64, parts: Int32, md5: String?, keyFingerprint: Int32)
    /// `inputEncryptedFile`.
    case existing(id: Int64, accessHash: Int64)
}
