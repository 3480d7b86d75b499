// The five generated secret-chat layers behind one interface. A chat serializes and parses with the namespace of its
// negotiated layer (min of both parties' layers, core.telegram.org/api/end-to-end, "Layer negotiation"); messages
// without a decryptedMessageLayer wrapper are layer-8 messages and always read with SecretApi8. How each layer's
// messages are read and built (its adapter) tlgen writes from the layer's definitions; here each namespace is only
// named with its `SecretPayload` case.
// Service actions have the same constructors in every layer that has them, so the engine models them once
// (`SecretServiceAction`) and moves them into a namespace by serializing and parsing with that namespace: an action
// the layer lacks is refused by the layer's own parser.
import MTProtoCrypto
import SecretApi
import TLRuntime

/// The secret-chat layers this package generates.
public enum SecretLayer: Int32, Sendable, Codable, CaseIterable, Comparable, CustomStringConvertible {
    /// Layer 8: messages without sequence numbers, MTProto 1.0.
    case layer8 = 8
    /// Layer 46.
    case layer46 = 46
    /// Layer 73: the first with MTProto 2.0.
    case layer73 = 73
    /// Layer 101.
    case layer101 = 101
    /// Layer 144, the newest generated.
    case layer144 = 144

    /// Orders layers by number.
    public static func < (a: SecretLayer, b: SecretLayer) -> Bool { a.rawValue < b.rawValue }

    /// The highest generated layer not above `layer` (a peer at 120 is spoken to with the 101 namespace).
    public init(atMost layer: Int32) {
        self = SecretLayer.allCases.last { $0.rawValue <= layer } ?? .layer8
    }

    /// Messages are wrapped in decryptedMessageLayer, with sequence numbers, from layer 17 on.
    public var isLayered: Bool { self != .layer8 }
    /// Re-keying (requestKey…commitKey) exists from layer 20 on.
    public var supportsRekeying: Bool { self != .layer8 }
    /// Both parties at layer 73 or above use MTProto 2.0.
    public var mtproto: SecretMTProtoVersion { rawValue >= 73 ? .v2 : .v1 }

    /// `layer N`.
    public var description: String { "layer \(rawValue)" }
}

/// A decrypted message in the namespace of the layer it was parsed with.
public enum SecretPayload: Sendable {
    /// Parsed with `SecretApi8`.
    case layer8(SecretApi8.DecryptedMessage)
    /// Parsed with `SecretApi46`.
    case layer46(SecretApi46.DecryptedMessage)
    /// Parsed with `SecretApi73`.
    case layer73(SecretApi73.DecryptedMessage)
    /// Parsed with `SecretApi101`.
    case layer101(SecretApi101.DecryptedMessage)
    /// Parsed with `SecretApi144`.
    case layer144(SecretApi144.DecryptedMessage)

    /// The layer the message was parsed with.
    public var layer: SecretLayer {
        switch self {
        case .layer8: .layer8
        case .layer46: .layer46
        case .layer73: .layer73
        case .layer101: .layer101
        case .layer144: .layer144
        }
    }

    /// The message's random_id.
    public var randomID: Int64 {
        switch self {
        case .layer8(let m): SecretApi8.randomID(of: m)
        case .layer46(let m): SecretApi46.randomID(of: m)
        case .layer73(let m): SecretApi73.randomID(of: m)
        case .layer101(let m): SecretApi101.randomID(of: m)
        case .layer144(let m): SecretApi144.randomID(of: m)
        }
    }

    /// Text, document and timer of an ordinary (non-service) message.
    public var content: SecretContent? {
        switch self {
        case .layer8(let m): SecretApi8.secretContent(of: m)
        case .layer46(let m): SecretApi46.secretContent(of: m)
        case .layer73(let m): SecretApi73.secretContent(of: m)
        case .layer101(let m): SecretApi101.secretContent(of: m)
        case .layer144(let m): SecretApi144.secretContent(of: m)
        }
    }

    /// The text of an ordinary (non-service) message.
    public var text: String? { content?.text }

    /// The attached encrypted document's key, IV and size, if the message carries one.
    public var document: SecretDocumentInfo? { content?.document }

    /// The service action, for service messages, in the engine's layer-neutral form (nil when it has none).
    public var action: SecretServiceAction? {
        switch self {
        case .layer8(let m): SecretApi8.serviceAction(of: m).flatMap(SecretServiceAction.init)
        case .layer46(let m): SecretApi46.serviceAction(of: m).flatMap(SecretServiceAction.init)
        case .layer73(let m): SecretApi73.serviceAction(of: m).flatMap(SecretServiceAction.init)
        case .layer101(let m): SecretApi101.serviceAction(of: m).flatMap(SecretServiceAction.init)
        case .layer144(let m): SecretApi144.serviceAction(of: m).flatMap(SecretServiceAction.init)
        }
    }

    var object: any TLObject {
        switch self {
        case .layer8(let m): m
        case .layer46(let m): m
        case .layer73(let m): m
        case .layer101(let m): m
        case .layer144(let m): m
        }
    }
}

/// What the engine needs to know of a document attached to a message.
public struct SecretDocumentInfo: Sendable, Hashable {
    /// The file's AES-256 key, 32 bytes.
    public var key: [UInt8]
    /// The file's IGE initialization vector, 32 bytes.
    public var iv: [UInt8]
    /// The file's size before padding, bytes.
    public var size: Int64
    /// Its MIME type.
    public var mimeType: String
    /// Its file name.
    public var fileName: String

    /// A document's key, IV, size and names.
    public init(key: [UInt8], iv: [UInt8], size: Int64, mimeType: String, fileName: String) {
        self.key = key
        self.iv = iv
        self.size = size
        self.mimeType = mimeType
        self.fileName = fileName
    }
}

/// The text and optional document of an ordinary message, the part common to every layer.
public struct SecretContent: Sendable, Hashable {
    /// The message's text (may be empty when a document is attached).
    public var text: String
    /// The attached document, if any.
    public var document: SecretDocumentInfo?
    /// Self-destruct timer in seconds (layer 17+; ignored at layer 8).
    public var ttl: Int32

    /// A message with `text`, an optional document and self-destruct timer.
    public init(text: String, document: SecretDocumentInfo? = nil, ttl: Int32 = 0) {
        self.text = text
        self.document = document
        self.ttl = ttl
    }
}

/// Service actions the engine sends or acts on; the same constructors in every layer that has them.
public enum SecretServiceAction: Sendable, Hashable {
    /// The sender's layer (`decryptedMessageActionNotifyLayer`).
    case notifyLayer(Int32)
    /// The self-destruct timer for the chat, seconds.
    case setMessageTTL(Int32)
    /// Messages the peer read, by random id.
    case readMessages([Int64])
    /// Messages to delete, by random id.
    case deleteMessages([Int64])
    /// Messages the peer took a screenshot of, by random id.
    case screenshotMessages([Int64])
    /// Clear the chat's history.
    case flushHistory
    /// Sequence numbers in their wire form (2n + x of the party asked to resend).
    case resend(start: Int32, end: Int32)
    /// A re-key request with the requester's g_a.
    case requestKey(exchangeID: Int64, gA: [UInt8])
    /// A re-key acceptance with g_b and the new key's fingerprint.
    case acceptKey(exchangeID: Int64, gB: [UInt8], keyFingerprint: Int64)
    /// A re-key abandoned.
    case abortKey(exchangeID: Int64)
    /// The requester switches to the new key.
    case commitKey(exchangeID: Int64, keyFingerprint: Int64)
    /// Nothing: fills a sequence number during a re-key.
    case noop

    /// Reads an action of any layer through the layer-144 model, which has every action of the older layers.
    init?(_ action: some TLObject) {
        guard let a = try? convert(action, to: SecretApi144.DecryptedMessageAction.self) else { return nil }
        switch a {
        case .decryptedMessageActionNotifyLayer(let c): self = .notifyLayer(c.layer)
        case .decryptedMessageActionSetMessageTTL(let c): self = .setMessageTTL(c.ttlSeconds)
        case .decryptedMessageActionReadMessages(let c): self = .readMessages(c.randomIds)
        case .decryptedMessageActionDeleteMessages(let c): self = .deleteMessages(c.randomIds)
        case .decryptedMessageActionScreenshotMessages(let c): self = .screenshotMessages(c.randomIds)
        case .decryptedMessageActionFlushHistory: self = .flushHistory
        case .decryptedMessageActionResend(let c): self = .resend(start: c.startSeqNo, end: c.endSeqNo)
        case .decryptedMessageActionRequestKey(let c): self = .requestKey(exchangeID: c.exchangeId, gA: c.gA)
        case .decryptedMessageActionAcceptKey(let c):
            self = .acceptKey(exchangeID: c.exchangeId, gB: c.gB, keyFingerprint: c.keyFingerprint)
        case .decryptedMessageActionAbortKey(let c): self = .abortKey(exchangeID: c.exchangeId)
        case .decryptedMessageActionCommitKey(let c):
            self = .commitKey(exchangeID: c.exchangeId, keyFingerprint: c.keyFingerprint)
        case .decryptedMessageActionNoop: self = .noop
        }
    }

    var model: SecretApi144.DecryptedMessageAction {
        typealias A = SecretApi144.DecryptedMessageAction
        switch self {
        case .notifyLayer(let l): return .decryptedMessageActionNotifyLayer(.init(layer: l))
        case .setMessageTTL(let t): return .decryptedMessageActionSetMessageTTL(.init(ttlSeconds: t))
        case .readMessages(let ids): return .decryptedMessageActionReadMessages(.init(randomIds: ids))
        case .deleteMessages(let ids): return .decryptedMessageActionDeleteMessages(.init(randomIds: ids))
        case .screenshotMessages(let ids): return .decryptedMessageActionScreenshotMessages(.init(randomIds: ids))
        case .flushHistory: return .decryptedMessageActionFlushHistory
        case .resend(let s, let e): return .decryptedMessageActionResend(.init(startSeqNo: s, endSeqNo: e))
        case .requestKey(let id, let gA): return .decryptedMessageActionRequestKey(.init(exchangeId: id, gA: gA))
        case .acceptKey(let id, let gB, let f):
            return .decryptedMessageActionAcceptKey(.init(exchangeId: id, gB: gB, keyFingerprint: f))
        case .abortKey(let id): return .decryptedMessageActionAbortKey(.init(exchangeId: id))
        case .commitKey(let id, let f): return .decryptedMessageActionCommitKey(.init(exchangeId: id, keyFingerprint: f))
        case .noop: return .decryptedMessageActionNoop
        }
    }
}

/// Re-reads a value in another namespace: serialize boxed, parse, demand no trailing bytes.
func convert<To: TLParsable>(_ value: some TLSerializable, to: To.Type) throws(TLDecodingError) -> To {
    try SecretChatEngine.parse(value.boxedBytes, as: To.self)
}

/// One generated namespace, as the engine uses it: the layer's adapter, which tlgen writes from the layer's own
/// definitions (`SecretLayerSchema`, Generated/SecretApi/*Adapter.swift), and which `SecretPayload` case it is.
protocol SecretNamespace: SecretLayerSchema {
    static func payload(_ message: Message) -> SecretPayload
}

/// A namespace with decryptedMessageLayer (layer 17 and later).
protocol LayeredSecretNamespace: SecretNamespace, LayeredSecretLayerSchema {}

extension SecretNamespace {
    /// The message, if `payload` is already in this namespace (each layer's messages are a type of their own).
    static func message(in payload: SecretPayload) -> Message? { payload.object as? Message }

    /// Text, document and timer of an ordinary message.
    static func secretContent(of message: Message) -> SecretContent? {
        content(of: message).map { c in
            SecretContent(text: c.text, document: c.document.map {
                SecretDocumentInfo(key: $0.key, iv: $0.iv, size: $0.size, mimeType: $0.mimeType, fileName: $0.fileName)
            }, ttl: c.ttl)
        }
    }

    static func service(randomID: Int64, action: Action, random: some RandomSource) -> Message {
        service(randomID: randomID, action: action, randomBytes: { messageRandomBytes(random) })
    }

    static func message(randomID: Int64, content: SecretContent, random: some RandomSource) -> Message {
        let document = content.document.map {
            (key: $0.key, iv: $0.iv, size: $0.size, mimeType: $0.mimeType, fileName: $0.fileName)
        }
        return message(randomID: randomID, content: (text: content.text, ttl: content.ttl, document: document),
                       randomBytes: { messageRandomBytes(random) })
    }
}

/// Random bytes inside a message: at least 15 (end-to-end docs, "random_bytes ... at least 15 bytes"), 15…27.
func messageRandomBytes(_ random: some RandomSource) -> [UInt8] {
    random.bytes(15 + 4 * Int(random.bytes(1)[0] % 4))
}

// Each namespace's `SecretPayload` case.
extension SecretApi8: SecretNamespace { static func payload(_ m: Message) -> SecretPayload { .layer8(m) } }
extension SecretApi46: LayeredSecretNamespace { static func payload(_ m: Message) -> SecretPayload { .layer46(m) } }
extension SecretApi73: LayeredSecretNamespace { static func payload(_ m: Message) -> SecretPayload { .layer73(m) } }
extension SecretApi101: LayeredSecretNamespace { static func payload(_ m: Message) -> SecretPayload { .layer101(m) } }
extension SecretApi144: LayeredSecretNamespace { static func payload(_ m: Message) -> SecretPayload { .layer144(m) } }
