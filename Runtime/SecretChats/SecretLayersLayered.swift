// The four layered namespaces (46, 73, 101, 144) as `LayeredSecretNamespace`s. The generated types of each layer are
// distinct Swift types, so each adapter repeats the same few lines with its own namespace; only the document size
// differs (int before layer 143, long after).
import MTProtoCrypto
import SecretApi

enum L46: LayeredSecretNamespace {
    typealias Message = SecretApi46.DecryptedMessage
    typealias Action = SecretApi46.DecryptedMessageAction
    typealias Layered = SecretApi46.DecryptedMessageLayer
    static let layer = SecretLayer.layer46

    static func randomID(of m: Message) -> Int64 {
        switch m {
        case .decryptedMessage(let c): c.randomId
        case .decryptedMessageService(let c): c.randomId
        }
    }
    static func serviceAction(of m: Message) -> Action? {
        if case .decryptedMessageService(let c) = m { return c.action }
        return nil
    }
    static func content(of m: Message) -> SecretContent? {
        guard case .decryptedMessage(let c) = m else { return nil }
        var document: SecretDocumentInfo?
        if case .decryptedMessageMediaDocument(let d)? = c.media {
            let name = d.attributes.lazy.compactMap { a -> String? in
                if case .documentAttributeFilename(let f) = a { return f.fileName }
                return nil
            }.first
            document = SecretDocumentInfo(key: d.key, iv: d.iv, size: Int64(d.size), mimeType: d.mimeType,
                                          fileName: name ?? "")
        }
        return SecretContent(text: c.message, document: document, ttl: c.ttl)
    }
    static func service(randomID: Int64, action: Action, random: some RandomSource) -> Message {
        .decryptedMessageService(.init(randomId: randomID, action: action))
    }
    static func message(randomID: Int64, content: SecretContent, random: some RandomSource) -> Message {
        let media = content.document.map { d in
            SecretApi46.DecryptedMessageMedia.decryptedMessageMediaDocument(.init(
                thumb: [], thumbW: 0, thumbH: 0, mimeType: d.mimeType, size: Int32(clamping: d.size), key: d.key, iv: d.iv,
                attributes: [.documentAttributeFilename(.init(fileName: d.fileName))], caption: ""))
        }
        return .decryptedMessage(.init(randomId: randomID, ttl: content.ttl, message: content.text, media: media))
    }
    static func payload(_ m: Message) -> SecretPayload { .layer46(m) }
    static func message(in payload: SecretPayload) -> Message? {
        if case .layer46(let m) = payload { return m }
        return nil
    }
    static func wrap(randomBytes: [UInt8], layer: Int32, inSeqNo: Int32, outSeqNo: Int32, message: Message) -> Layered {
        .decryptedMessageLayer(.init(randomBytes: randomBytes, layer: layer, inSeqNo: inSeqNo, outSeqNo: outSeqNo,
                                     message: message))
    }
    static func unwrap(_ l: Layered) -> (layer: Int32, inSeqNo: Int32, outSeqNo: Int32, message: Message) {
        switch l {
        case .decryptedMessageLayer(let c): (c.layer, c.inSeqNo, c.outSeqNo, c.message)
        }
    }
}

enum L73: LayeredSecretNamespace {
    typealias Message = SecretApi73.DecryptedMessage
    typealias Action = SecretApi73.DecryptedMessageAction
    typealias Layered = SecretApi73.DecryptedMessageLayer
    static let layer = SecretLayer.layer73

    static func randomID(of m: Message) -> Int64 {
        switch m {
        case .decryptedMessage(let c): c.randomId
        case .decryptedMessageService(let c): c.randomId
        }
    }
    static func serviceAction(of m: Message) -> Action? {
        if case .decryptedMessageService(let c) = m { return c.action }
        return nil
    }
    static func content(of m: Message) -> SecretContent? {
        guard case .decryptedMessage(let c) = m else { return nil }
        var document: SecretDocumentInfo?
        if case .decryptedMessageMediaDocument(let d)? = c.media {
            let name = d.attributes.lazy.compactMap { a -> String? in
                if case .documentAttributeFilename(let f) = a { return f.fileName }
                return nil
            }.first
            document = SecretDocumentInfo(key: d.key, iv: d.iv, size: Int64(d.size), mimeType: d.mimeType,
                                          fileName: name ?? "")
        }
        return SecretContent(text: c.message, document: document, ttl: c.ttl)
    }
    static func service(randomID: Int64, action: Action, random: some RandomSource) -> Message {
        .decryptedMessageService(.init(randomId: randomID, action: action))
    }
    static func message(randomID: Int64, content: SecretContent, random: some RandomSource) -> Message {
        let media = content.document.map { d in
            SecretApi73.DecryptedMessageMedia.decryptedMessageMediaDocument(.init(
                thumb: [], thumbW: 0, thumbH: 0, mimeType: d.mimeType, size: Int32(clamping: d.size), key: d.key, iv: d.iv,
                attributes: [.documentAttributeFilename(.init(fileName: d.fileName))], caption: ""))
        }
        return .decryptedMessage(.init(randomId: randomID, ttl: content.ttl, message: content.text, media: media))
    }
    static func payload(_ m: Message) -> SecretPayload { .layer73(m) }
    static func message(in payload: SecretPayload) -> Message? {
        if case .layer73(let m) = payload { return m }
        return nil
    }
    static func wrap(randomBytes: [UInt8], layer: Int32, inSeqNo: Int32, outSeqNo: Int32, message: Message) -> Layered {
        .decryptedMessageLayer(.init(randomBytes: randomBytes, layer: layer, inSeqNo: inSeqNo, outSeqNo: outSeqNo,
                                     message: message))
    }
    static func unwrap(_ l: Layered) -> (layer: Int32, inSeqNo: Int32, outSeqNo: Int32, message: Message) {
        switch l {
        case .decryptedMessageLayer(let c): (c.layer, c.inSeqNo, c.outSeqNo, c.message)
        }
    }
}

enum L101: LayeredSecretNamespace {
    typealias Message = SecretApi101.DecryptedMessage
    typealias Action = SecretApi101.DecryptedMessageAction
    typealias Layered = SecretApi101.DecryptedMessageLayer
    static let layer = SecretLayer.layer101

    static func randomID(of m: Message) -> Int64 {
        switch m {
        case .decryptedMessage(let c): c.randomId
        case .decryptedMessageService(let c): c.randomId
        }
    }
    static func serviceAction(of m: Message) -> Action? {
        if case .decryptedMessageService(let c) = m { return c.action }
        return nil
    }
    static func content(of m: Message) -> SecretContent? {
        guard case .decryptedMessage(let c) = m else { return nil }
        var document: SecretDocumentInfo?
        if case .decryptedMessageMediaDocument(let d)? = c.media {
            let name = d.attributes.lazy.compactMap { a -> String? in
                if case .documentAttributeFilename(let f) = a { return f.fileName }
                return nil
            }.first
            document = SecretDocumentInfo(key: d.key, iv: d.iv, size: Int64(d.size), mimeType: d.mimeType,
                                          fileName: name ?? "")
        }
        return SecretContent(text: c.message, document: document, ttl: c.ttl)
    }
    static func service(randomID: Int64, action: Action, random: some RandomSource) -> Message {
        .decryptedMessageService(.init(randomId: randomID, action: action))
    }
    static func message(randomID: Int64, content: SecretContent, random: some RandomSource) -> Message {
        let media = content.document.map { d in
            SecretApi101.DecryptedMessageMedia.decryptedMessageMediaDocument(.init(
                thumb: [], thumbW: 0, thumbH: 0, mimeType: d.mimeType, size: Int32(clamping: d.size), key: d.key, iv: d.iv,
                attributes: [.documentAttributeFilename(.init(fileName: d.fileName))], caption: ""))
        }
        return .decryptedMessage(.init(randomId: randomID, ttl: content.ttl, message: content.text, media: media))
    }
    static func payload(_ m: Message) -> SecretPayload { .layer101(m) }
    static func message(in payload: SecretPayload) -> Message? {
        if case .layer101(let m) = payload { return m }
        return nil
    }
    static func wrap(randomBytes: [UInt8], layer: Int32, inSeqNo: Int32, outSeqNo: Int32, message: Message) -> Layered {
        .decryptedMessageLayer(.init(randomBytes: randomBytes, layer: layer, inSeqNo: inSeqNo, outSeqNo: outSeqNo,
                                     message: message))
    }
    static func unwrap(_ l: Layered) -> (layer: Int32, inSeqNo: Int32, outSeqNo: Int32, message: Message) {
        switch l {
        case .decryptedMessageLayer(let c): (c.layer, c.inSeqNo, c.outSeqNo, c.message)
        }
    }
}

enum L144: LayeredSecretNamespace {
    typealias Message = SecretApi144.DecryptedMessage
    typealias Action = SecretApi144.DecryptedMessageAction
    typealias Layered = SecretApi144.DecryptedMessageLayer
    static let layer = SecretLayer.layer144

    static func randomID(of m: Message) -> Int64 {
        switch m {
        case .decryptedMessage(let c): c.randomId
        case .decryptedMessageService(let c): c.randomId
        }
    }
    static func serviceAction(of m: Message) -> Action? {
        if case .decryptedMessageService(let c) = m { return c.action }
        return nil
    }
    static func content(of m: Message) -> SecretContent? {
        guard case .decryptedMessage(let c) = m else { return nil }
        var document: SecretDocumentInfo?
        if case .decryptedMessageMediaDocument(let d)? = c.media {
            let name = d.attributes.lazy.compactMap { a -> String? in
                if case .documentAttributeFilename(let f) = a { return f.fileName }
                return nil
            }.first
            document = SecretDocumentInfo(key: d.key, iv: d.iv, size: Int64(d.size), mimeType: d.mimeType,
                                          fileName: name ?? "")
        }
        return SecretContent(text: c.message, document: document, ttl: c.ttl)
    }
    static func service(randomID: Int64, action: Action, random: some RandomSource) -> Message {
        .decryptedMessageService(.init(randomId: randomID, action: action))
    }
    static func message(randomID: Int64, content: SecretContent, random: some RandomSource) -> Message {
        let media = content.document.map { d in
            SecretApi144.DecryptedMessageMedia.decryptedMessageMediaDocument(.init(
                thumb: [], thumbW: 0, thumbH: 0, mimeType: d.mimeType, size: d.size, key: d.key, iv: d.iv,
                attributes: [.documentAttributeFilename(.init(fileName: d.fileName))], caption: ""))
        }
        return .decryptedMessage(.init(randomId: randomID, ttl: content.ttl, message: content.text, media: media))
    }
    static func payload(_ m: Message) -> SecretPayload { .layer144(m) }
    static func message(in payload: SecretPayload) -> Message? {
        if case .layer144(let m) = payload { return m }
        return nil
    }
    static func wrap(randomBytes: [UInt8], layer: Int32, inSeqNo: Int32, outSeqNo: Int32, message: Message) -> Layered {
        .decryptedMessageLayer(.init(randomBytes: randomBytes, layer: layer, inSeqNo: inSeqNo, outSeqNo: outSeqNo,
                                     message: message))
    }
    static func unwrap(_ l: Layered) -> (layer: Int32, inSeqNo: Int32, outSeqNo: Int32, message: Message) {
        switch l {
        case .decryptedMessageLayer(let c): (c.layer, c.inSeqNo, c.outSeqNo, c.message)
        }
    }
}
