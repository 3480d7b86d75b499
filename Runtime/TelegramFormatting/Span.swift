// The formatting both markup languages can write, between `Api.MessageEntity` and the parsers and writers.
import TelegramApi

/// One kind of formatting markup can write.
enum Style: Equatable, Sendable {
    case bold, italic, underline, strike, spoiler, code
    case pre(language: String)
    case textURL(String)
    case mention(userID: Int64)
    case customEmoji(documentID: Int64)
    case blockquote(collapsed: Bool)

    /// A name for errors.
    var name: String {
        switch self {
            case .bold: "bold"
            case .italic: "italic"
            case .underline: "underline"
            case .strike: "strikethrough"
            case .spoiler: "spoiler"
            case .code: "code"
            case .pre: "pre"
            case .textURL, .mention: "link"
            case .customEmoji: "custom emoji"
            case .blockquote: "block quotation"
        }
    }

    /// The style of `entity`, or nil for the kinds Telegram detects in the text itself (mentions by username,
    /// hashtags, URLs…) and the kinds no markup writes.
    init?(_ entity: Api.MessageEntity) {
        switch entity {
            case .messageEntityBold: self = .bold
            case .messageEntityItalic: self = .italic
            case .messageEntityUnderline: self = .underline
            case .messageEntityStrike: self = .strike
            case .messageEntitySpoiler: self = .spoiler
            case .messageEntityCode: self = .code
            case .messageEntityPre(let c): self = .pre(language: c.language)
            case .messageEntityTextUrl(let c): self = .textURL(c.url)
            case .messageEntityMentionName(let c): self = .mention(userID: c.userId)
            case .inputMessageEntityMentionName(let c):
                switch c.userId {
                    case .inputUser(let user): self = .mention(userID: user.userId)
                    case .inputUserFromMessage(let user): self = .mention(userID: user.userId)
                    default: return nil
                }
            case .messageEntityCustomEmoji(let c): self = .customEmoji(documentID: c.documentId)
            case .messageEntityBlockquote(let c): self = .blockquote(collapsed: c.collapsed)
            default: return nil
        }
    }

    /// The entity of this style over `offset..<offset + length`.
    func entity(offset: Int32, length: Int32) -> Api.MessageEntity {
        switch self {
            case .bold: .messageEntityBold(.init(offset: offset, length: length))
            case .italic: .messageEntityItalic(.init(offset: offset, length: length))
            case .underline: .messageEntityUnderline(.init(offset: offset, length: length))
            case .strike: .messageEntityStrike(.init(offset: offset, length: length))
            case .spoiler: .messageEntitySpoiler(.init(offset: offset, length: length))
            case .code: .messageEntityCode(.init(offset: offset, length: length))
            case .pre(let language): .messageEntityPre(.init(offset: offset, length: length, language: language))
            case .textURL(let url): .messageEntityTextUrl(.init(offset: offset, length: length, url: url))
            case .mention(let user): .messageEntityMentionName(.init(offset: offset, length: length, userId: user))
            case .customEmoji(let id): .messageEntityCustomEmoji(.init(offset: offset, length: length, documentId: id))
            case .blockquote(let collapsed):
                .messageEntityBlockquote(.init(collapsed: collapsed, offset: offset, length: length))
        }
    }
}

/// A style over a range of UTF-16 units.
struct Span: Equatable, Sendable {
    var style: Style
    var offset: Int
    var length: Int
    var end: Int { offset + length }
}

extension Span {
    /// The spans of `entities` a writer writes, each with its index in `entities`, checked against `count` UTF-16
    /// units of `units`: in bounds and not splitting a surrogate pair. Empty entities are dropped.
    static func checked(_ entities: [Api.MessageEntity],
                        in units: [UInt16]) throws(FormattingError) -> [(span: Span, index: Int)] {
        var out: [(span: Span, index: Int)] = []
        for (index, entity) in entities.enumerated() {
            guard let style = Style(entity) else { continue }
            let (offset, length) = entity.range
            guard offset >= 0, length >= 0, Int(offset) + Int(length) <= units.count else {
                throw FormattingError(.entityOutOfBounds(entity: index), at: max(0, Int(offset)))
            }
            guard length > 0 else { continue }
            let span = Span(style: style, offset: Int(offset), length: Int(length))
            for edge in [span.offset, span.end] where edge > 0 && edge < units.count {
                if UTF16.isLeadSurrogate(units[edge - 1]) && UTF16.isTrailSurrogate(units[edge]) {
                    throw FormattingError(.entitySplitsCharacter(entity: index), at: edge)
                }
            }
            out.append((span, index))
        }
        return out
    }
}

/// Where an entity lies in its message's text, whatever its kind.
extension Api.MessageEntity {
    /// The offset and length every constructor carries, in UTF-16 code units of the message's text
    /// (core.telegram.org/api/entities).
    public var range: (offset: Int32, length: Int32) {
        switch self {
            case .messageEntityUnknown(let c): (c.offset, c.length)
            case .messageEntityMention(let c): (c.offset, c.length)
            case .messageEntityHashtag(let c): (c.offset, c.length)
            case .messageEntityBotCommand(let c): (c.offset, c.length)
            case .messageEntityUrl(let c): (c.offset, c.length)
            case .messageEntityEmail(let c): (c.offset, c.length)
            case .messageEntityBold(let c): (c.offset, c.length)
            case .messageEntityItalic(let c): (c.offset, c.length)
            case .messageEntityCode(let c): (c.offset, c.length)
            case .messageEntityPre(let c): (c.offset, c.length)
            case .messageEntityTextUrl(let c): (c.offset, c.length)
            case .messageEntityMentionName(let c): (c.offset, c.length)
            case .inputMessageEntityMentionName(let c): (c.offset, c.length)
            case .messageEntityPhone(let c): (c.offset, c.length)
            case .messageEntityCashtag(let c): (c.offset, c.length)
            case .messageEntityUnderline(let c): (c.offset, c.length)
            case .messageEntityStrike(let c): (c.offset, c.length)
            case .messageEntityBankCard(let c): (c.offset, c.length)
            case .messageEntitySpoiler(let c): (c.offset, c.length)
            case .messageEntityCustomEmoji(let c): (c.offset, c.length)
            case .messageEntityBlockquote(let c): (c.offset, c.length)
            case .messageEntityFormattedDate(let c): (c.offset, c.length)
            case .messageEntityDiffInsert(let c): (c.offset, c.length)
            case .messageEntityDiffReplace(let c): (c.offset, c.length)
            case .messageEntityDiffDelete(let c): (c.offset, c.length)
        }
    }
}

/// What a parser builds: the output text's UTF-16 units and the spans in the order they were opened (which is by
/// offset, an outer span before the spans it contains).
struct ParsedText {
    var units: [UInt16] = []
    var spans: [Span] = []
    let limits: FormattedText.Limits

    init(limits: FormattedText.Limits) { self.limits = limits }

    /// Opens a span at the current end of the text; returns its index.
    mutating func open(_ style: Style, markupOffset: Int) throws(FormattingError) -> Int {
        guard spans.count < limits.maxEntities else {
            throw FormattingError(.tooManyEntities(limit: limits.maxEntities), at: markupOffset)
        }
        spans.append(Span(style: style, offset: units.count, length: 0))
        return spans.count - 1
    }

    mutating func close(_ index: Int) { spans[index].length = units.count - spans[index].offset }

    /// The text and its non-empty spans as entities.
    func result() throws(FormattingError) -> FormattedText {
        guard units.count <= Int(Int32.max) else { throw FormattingError(.tooLong, at: 0) }
        let entities = spans.lazy.filter { $0.length > 0 }.map {
            $0.style.entity(offset: Int32($0.offset), length: Int32($0.length))
        }
        return FormattedText(text: String(decoding: units, as: UTF16.self), entities: Array(entities))
    }
}

/// What a writer sees, in text order: runs of text, and spans opening and closing around them. Spans come properly
/// nested: one that crosses another is closed where the other closes and opened again after it.
enum WriterEvent {
    case text(Range<Int>)
    /// Opens `spans[span]`; `continued` when this piece is not the span's first.
    case open(span: Int, continued: Bool)
    /// Closes `spans[span]`; `final` when the span ends here (not a piece closed to be opened again).
    case close(span: Int, final: Bool)
}

extension Span {
    /// Walks `spans` over `count` units in text order, nested as `WriterEvent` says. Spans with the same offset nest
    /// longest outside, then in their order in `spans`. At most `maxOpened` opens (crossing spans are opened once
    /// per piece): past that, `tooManyEntities`.
    static func walk(_ spans: [Span], count: Int, maxOpened: Int,
                     _ visit: (WriterEvent) throws(FormattingError) -> Void) throws(FormattingError) {
        let order = spans.indices.sorted {
            (spans[$0].offset, -spans[$0].length, $0) < (spans[$1].offset, -spans[$1].length, $1)
        }
        let ends = spans.indices.sorted { (spans[$0].end, $0) < (spans[$1].end, $1) }
        var stack: [Int] = []
        var stackIndex = [Int?](repeating: nil, count: spans.count)
        var nextStart = 0, nextEnd = 0, position = 0, opened = 0

        func open(_ span: Int, continued: Bool) throws(FormattingError) {
            opened += 1
            guard opened <= maxOpened else {
                throw FormattingError(.tooManyEntities(limit: maxOpened), at: spans[span].offset)
            }
            stackIndex[span] = stack.count
            stack.append(span)
            try visit(.open(span: span, continued: continued))
        }

        while nextStart < order.count || nextEnd < ends.count {
            let start = nextStart < order.count ? spans[order[nextStart]].offset : Int.max
            let end = nextEnd < ends.count ? spans[ends[nextEnd]].end : Int.max
            let boundary = min(start, end)
            if boundary > position {
                try visit(.text(position..<boundary))
                position = boundary
            }
            // Close down to the lowest span ending here; spans above it that go on are opened again.
            var lowest = stack.count
            while nextEnd < ends.count, spans[ends[nextEnd]].end == boundary {
                if let index = stackIndex[ends[nextEnd]] { lowest = min(lowest, index) }
                nextEnd += 1
            }
            var reopen: [Int] = []
            while stack.count > lowest {
                let span = stack.removeLast()
                stackIndex[span] = nil
                let final = spans[span].end == boundary
                try visit(.close(span: span, final: final))
                if !final { reopen.append(span) }
            }
            for span in reopen.reversed() { try open(span, continued: true) }
            while nextStart < order.count, spans[order[nextStart]].offset == boundary {
                try open(order[nextStart], continued: false)
                nextStart += 1
            }
        }
        if count > position { try visit(.text(position..<count)) }
    }
}
