// The markup parsers (TelegramFormatting): any input ends in text and entities or a `FormattingError`, never a trap.
// Parsed entities lie inside the text, are not empty and split no surrogate pair; what a parse gives, the writer of
// the same language writes, and that parses back to the same text and entities. With the first byte odd, the rest
// is text and entities instead (any offsets and lengths): both writers either refuse them with an error or write
// markup their parser reads back to the same text.
import TelegramApi
import TelegramFormatting

/// Input: a mode byte, then markup (mode even) or text and entities (mode odd).
public func fuzzFormatting(_ language: FormattingLanguage, _ data: [UInt8]) throws(Violation) {
    var reader = InputReader(data)
    if reader.byte() & 1 == 0 {
        try markupRoundTrip(language, String(decoding: reader.rest(), as: UTF8.self))
    } else {
        try writersAgreeWithParsers(entitySet(&reader))
    }
}

/// The two markup languages.
public enum FormattingLanguage: Sendable {
    /// Bot API HTML.
    case html
    /// Bot API MarkdownV2.
    case markdown
}

private let limits = FormattedText.Limits(maxDepth: 100, maxEntities: 2_000)

private func parse(_ language: FormattingLanguage, _ markup: String) throws(FormattingError) -> FormattedText {
    switch language {
        case .html: try FormattedText(html: markup, limits: limits)
        case .markdown: try FormattedText(markdown: markup, limits: limits)
    }
}

private func write(_ language: FormattingLanguage, _ text: FormattedText) throws(FormattingError) -> String {
    switch language {
        case .html: try text.html(limits: limits)
        case .markdown: try text.markdown(limits: limits)
    }
}

/// Offset and length of the kinds the parsers make.
private func range(of entity: Api.MessageEntity) -> (Int, Int)? {
    switch entity {
        case .messageEntityBold(let c): (Int(c.offset), Int(c.length))
        case .messageEntityItalic(let c): (Int(c.offset), Int(c.length))
        case .messageEntityUnderline(let c): (Int(c.offset), Int(c.length))
        case .messageEntityStrike(let c): (Int(c.offset), Int(c.length))
        case .messageEntitySpoiler(let c): (Int(c.offset), Int(c.length))
        case .messageEntityCode(let c): (Int(c.offset), Int(c.length))
        case .messageEntityPre(let c): (Int(c.offset), Int(c.length))
        case .messageEntityTextUrl(let c): (Int(c.offset), Int(c.length))
        case .messageEntityMentionName(let c): (Int(c.offset), Int(c.length))
        case .messageEntityCustomEmoji(let c): (Int(c.offset), Int(c.length))
        case .messageEntityBlockquote(let c): (Int(c.offset), Int(c.length))
        default: nil
    }
}

private func bytes(_ entities: [Api.MessageEntity]) -> [[UInt8]] { entities.map(serialized) }

private func markupRoundTrip(_ language: FormattingLanguage, _ markup: String) throws(Violation) {
    guard let parsed = try? parse(language, markup) else { return }
    let units = Array(parsed.text.utf16)
    var previous = 0
    for (index, entity) in parsed.entities.enumerated() {
        guard let (offset, length) = range(of: entity) else {
            throw Violation("entity \(index) is of a kind no parser makes: \(fullDescription(entity))")
        }
        guard offset >= previous, length > 0, offset + length <= units.count else {
            throw Violation("entity \(index) at \(offset)+\(length) of \(units.count) units (previous offset \(previous))")
        }
        for edge in [offset, offset + length] where edge > 0 && edge < units.count {
            guard !(UTF16.isLeadSurrogate(units[edge - 1]) && UTF16.isTrailSurrogate(units[edge])) else {
                throw Violation("entity \(index) splits a surrogate pair at \(edge)")
            }
        }
        previous = offset
    }
    let written: String
    do {
        written = try write(language, parsed)
    } catch {
        throw Violation("parsed \(language) the writer refuses: \(error)")
    }
    let again: FormattedText
    do {
        again = try parse(language, written)
    } catch {
        throw Violation("written \(language) does not parse: \(error) in \(written.debugDescription)")
    }
    guard again.text == parsed.text, bytes(again.entities) == bytes(parsed.entities) else {
        throw Violation("\(language) round trip differs: \(markup.debugDescription) -> \(written.debugDescription)")
    }
}

/// Text and up to 64 entities of any kind, offset and length (many out of bounds or splitting characters).
private func entitySet(_ reader: inout InputReader) -> FormattedText {
    let count = Int(reader.byte() % 64)
    var entities: [Api.MessageEntity] = []
    for _ in 0..<count {
        let kind = reader.byte()
        let offset = Int32(Int8(bitPattern: reader.byte()))
        let length = Int32(Int8(bitPattern: reader.byte()))
        let argument = reader.byte()
        let entity: Api.MessageEntity = switch kind % 14 {
            case 0: .messageEntityBold(.init(offset: offset, length: length))
            case 1: .messageEntityItalic(.init(offset: offset, length: length))
            case 2: .messageEntityUnderline(.init(offset: offset, length: length))
            case 3: .messageEntityStrike(.init(offset: offset, length: length))
            case 4: .messageEntitySpoiler(.init(offset: offset, length: length))
            case 5: .messageEntityCode(.init(offset: offset, length: length))
            case 6: .messageEntityPre(.init(offset: offset, length: length,
                                            language: ["", "swift", "a b", "`", "\"<&"][Int(argument % 5)]))
            case 7: .messageEntityTextUrl(.init(offset: offset, length: length,
                                                url: ["", "https://e.org/)\\", "tg://user?id=5", "a\"<&"][Int(argument % 4)]))
            case 8: .messageEntityMentionName(.init(offset: offset, length: length, userId: Int64(argument)))
            case 9: .messageEntityCustomEmoji(.init(offset: offset, length: length, documentId: Int64(argument) + 1))
            case 10: .messageEntityBlockquote(.init(collapsed: argument & 1 == 1, offset: offset, length: length))
            case 11: .messageEntityHashtag(.init(offset: offset, length: length))
            case 12: .inputMessageEntityMentionName(.init(offset: offset, length: length,
                                                          userId: argument & 1 == 1 ? .inputUserSelf : .inputUser(.init(userId: 5, accessHash: 6))))
            default: .messageEntityUrl(.init(offset: offset, length: length))
        }
        entities.append(entity)
    }
    return FormattedText(text: String(decoding: reader.rest(), as: UTF8.self), entities: entities)
}

private func writersAgreeWithParsers(_ formatted: FormattedText) throws(Violation) {
    for language in [FormattingLanguage.html, .markdown] {
        guard let written = try? write(language, formatted) else { continue }
        let parsed: FormattedText
        do {
            parsed = try parse(language, written)
        } catch {
            throw Violation("written \(language) does not parse: \(error) in \(written.debugDescription)")
        }
        guard parsed.text == formatted.text else {
            throw Violation("written \(language) reads back as other text: \(written.debugDescription)")
        }
    }
}
