// Message text with its formatting: HTML and MarkdownV2 (the Bot API's two markup languages,
// core.telegram.org/bots/api#formatting-options) to text and `MessageEntity` values and back. Offsets and lengths
// count UTF-16 code units (core.telegram.org/api/entities#entity-length).
import TelegramApi

/// Message text and its formatting entities, as `messages.sendMessage` takes them and messages carry them.
///
/// Offsets and lengths of ``entities`` count UTF-16 code units of ``text``. Build one from HTML with
/// ``init(html:limits:)`` or from MarkdownV2 with ``init(markdown:limits:)``; write one back with ``html(limits:)`` or
/// ``markdown(limits:)``.
public struct FormattedText: Sendable {
    /// The text as the recipient sees it, without markup.
    public var text: String
    /// The formatting, offsets and lengths in UTF-16 code units of ``text``. Parsed entities come sorted by offset,
    /// an entity before the entities it contains.
    public var entities: [Api.MessageEntity]

    /// Text and entities as they are (no checks; the writers check).
    public init(text: String, entities: [Api.MessageEntity] = []) {
        self.text = text
        self.entities = entities
    }

    /// Bounds on the work a parse or a write may do, so hostile markup or entities cost bounded time and memory.
    public struct Limits: Sendable, Equatable {
        /// The deepest nesting of elements or entities the parser accepts.
        public var maxDepth: Int
        /// The most entities a parse may produce, and the most elements a write may open (an entity that crosses
        /// another is opened once per piece).
        public var maxEntities: Int

        /// Defaults far above what Telegram accepts in one message (100 entities), far below what could hurt.
        public init(maxDepth: Int = 100, maxEntities: Int = 10_000) {
            self.maxDepth = maxDepth
            self.maxEntities = maxEntities
        }
    }

    /// Parses the Bot API's HTML (core.telegram.org/bots/api#html-style).
    ///
    /// Text is kept exactly (no trimming); empty elements make no entity. Throws ``FormattingError`` with the UTF-16
    /// offset into `html` of what is wrong.
    public init(html: String, limits: Limits = Limits()) throws(FormattingError) {
        var parser = HTMLParser(Array(html.utf16), limits: limits)
        self = try parser.parse()
    }

    /// Parses the Bot API's MarkdownV2 (core.telegram.org/bots/api#markdownv2-style).
    ///
    /// Empty entities (such as the `**` that separates italic from underline) make no entity. Throws
    /// ``FormattingError`` with the UTF-16 offset into `markdown` of what is wrong.
    public init(markdown: String, limits: Limits = Limits()) throws(FormattingError) {
        var parser = MarkdownParser(Array(markdown.utf16), limits: limits)
        self = try parser.parse()
    }

    /// Parses `markup` in its language (plain text is taken as it is).
    public init(_ markup: Markup, limits: Limits = Limits()) throws(FormattingError) {
        switch markup {
            case .plain(let text): self.init(text: text)
            case .html(let html): try self.init(html: html, limits: limits)
            case .markdown(let markdown): try self.init(markdown: markdown, limits: limits)
        }
    }

    /// The text as Bot API HTML that parses back to the same text and entities.
    ///
    /// Entities HTML cannot write (mentions, hashtags, URLs and the other kinds Telegram finds in the text itself)
    /// are left out; a `code` inside a `pre` is left out too. Entities that cross are written in pieces, so they
    /// parse back as several entities covering the same units. Throws ``FormattingError`` (offset into ``text``)
    /// for an entity out of the text's bounds or splitting a surrogate pair.
    public func html(limits: Limits = Limits()) throws(FormattingError) -> String {
        try HTMLWriter.write(self, limits: limits)
    }

    /// The text as MarkdownV2 that parses back to the same text and entities.
    ///
    /// Leaves out the entities ``html(limits:)`` leaves out, and throws ``FormattingError`` with reason
    /// ``FormattingError/Reason/unrepresentable(entity:_:)`` for what MarkdownV2 cannot write: an entity inside
    /// one of the same kind, anything inside `code` or `pre`, a block quotation that is not whole lines at the top
    /// level or that another entity crosses, a `pre` language with spaces or backticks, an empty URL.
    public func markdown(limits: Limits = Limits()) throws(FormattingError) -> String {
        try MarkdownWriter.write(self, limits: limits)
    }
}

/// Text in one of the markup languages ``FormattedText`` parses.
public enum Markup: Sendable, Equatable {
    /// Plain text: no formatting, nothing escaped.
    case plain(String)
    /// Bot API HTML (core.telegram.org/bots/api#html-style).
    case html(String)
    /// Bot API MarkdownV2 (core.telegram.org/bots/api#markdownv2-style).
    case markdown(String)
}

/// Malformed markup, or entities that cannot be written: what is wrong and where.
public struct FormattingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Sendable, Equatable {
        /// A character that must be escaped was not: `<` in HTML (write `&lt;`), the backtick or one of
        /// `_*[]()~>#+-=|{}.!` in MarkdownV2 (write it after a `\`), a lone backtick inside a MarkdownV2 `pre`.
        case unescaped(Character)
        /// An HTML tag the Bot API does not define.
        case unsupportedTag(String)
        /// A tag cut short or not well formed (a missing `>` or quote, a self-closing tag).
        case malformedTag
        /// An end tag that closes nothing, or not the innermost open element (whose name is `expected`).
        case unexpectedEndTag(String, expected: String?)
        /// An element or entity still open at the end of the markup.
        case unclosed(String)
        /// A required attribute is missing: `href` of `a`, `emoji-id` of `tg-emoji`.
        case missingAttribute(tag: String, attribute: String)
        /// An attribute with a value the tag cannot use: `emoji-id` that is not a number, `span` without
        /// `class="tg-spoiler"`, an empty `href`.
        case invalidAttribute(tag: String, attribute: String)
        /// A numeric character reference to no Unicode scalar (`&#0;`, a surrogate, past U+10FFFF).
        case invalidCharacterReference
        /// A MarkdownV2 entity opened inside one of the same kind (`*a _b *c* b_ a*`).
        case nestedSameKind(String)
        /// A MarkdownV2 link or custom emoji without its `(URL)`, or with an empty or unterminated one.
        case invalidLink
        /// A MarkdownV2 custom emoji whose URL is not `tg://emoji?id=N`.
        case invalidCustomEmoji
        /// A MarkdownV2 block quotation starting inside another entity.
        case blockquoteInsideEntity
        /// More nesting than ``FormattedText/Limits/maxDepth``.
        case tooDeep(limit: Int)
        /// More entities than ``FormattedText/Limits/maxEntities``.
        case tooManyEntities(limit: Int)
        /// Markup or text longer than an entity offset can count (2^31 - 1 UTF-16 units).
        case tooLong
        /// Entity `entity` (its index in ``FormattedText/entities``) reaches outside the text or has a negative
        /// offset or length.
        case entityOutOfBounds(entity: Int)
        /// Entity `entity` starts or ends between the two halves of a surrogate pair.
        case entitySplitsCharacter(entity: Int)
        /// Entity `entity` cannot be written in MarkdownV2, for the reason given.
        case unrepresentable(entity: Int, String)
    }

    /// What is wrong.
    public let reason: Reason
    /// Where, in UTF-16 code units from the start: of the markup for a parse, of ``FormattedText/text`` for a
    /// write.
    public let offset: Int

    /// An error for `reason` at UTF-16 offset `offset`.
    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// The reason and the UTF-16 offset, in words.
    public var description: String {
        let what: String = switch reason {
            case .unescaped(let c): "'\(c)' must be escaped"
            case .unsupportedTag(let name): "unsupported tag <\(name)>"
            case .malformedTag: "malformed tag"
            case .unexpectedEndTag(let name, let expected):
                expected.map { "end tag </\(name)> where </\($0)> was expected" } ?? "end tag </\(name)> closes nothing"
            case .unclosed(let name): "\(name) is not closed"
            case .missingAttribute(let tag, let attribute): "<\(tag)> needs the attribute \(attribute)"
            case .invalidAttribute(let tag, let attribute): "invalid \(attribute) in <\(tag)>"
            case .invalidCharacterReference: "character reference to no Unicode scalar"
            case .nestedSameKind(let name): "\(name) inside \(name)"
            case .invalidLink: "link without a valid (URL)"
            case .invalidCustomEmoji: "custom emoji URL is not tg://emoji?id=N"
            case .blockquoteInsideEntity: "block quotation inside another entity"
            case .tooDeep(let limit): "nesting deeper than \(limit)"
            case .tooManyEntities(let limit): "more than \(limit) entities"
            case .tooLong: "longer than 2^31 - 1 UTF-16 units"
            case .entityOutOfBounds(let index): "entity \(index) is out of the text's bounds"
            case .entitySplitsCharacter(let index): "entity \(index) splits a surrogate pair"
            case .unrepresentable(let index, let why): "entity \(index) cannot be written in MarkdownV2: \(why)"
        }
        return "\(what) at UTF-16 offset \(offset)"
    }
}
