// The Bot API's MarkdownV2 (core.telegram.org/bots/api#markdownv2-style). Its rules, as applied here:
// - `\` before any character from 1 to 126 makes it ordinary text; before anything else it is itself text.
// - Outside code, `_ * [ ] ( ) ~ ` > # + - = | { } . !` are markup and must be escaped to be text; one that does no
//   markup where it stands is an error.
// - `*` bold, `_` italic, `__` underline (taken greedily, left to right), `~` strikethrough, `||` spoiler: the same
//   marker closes the innermost entity or opens a new one, and an entity cannot open inside one of its kind.
// - `[text](URL)`, `[text](tg://user?id=N)`, `![emoji](tg://emoji?id=N)`; in the URL only `)` and `\` need escaping.
// - `` `code` `` and ```` ```language\n…``` ````: inside, only `` ` `` and `\` are escaped (a lone `` ` `` in `pre`
//   is an error); the language is the opening line when it has no spaces, and that line's newline is not text.
// - A line starting with `>` (or `**>`, which also ends a quotation just before) is a block quotation line;
//   consecutive ones make one quotation, which ends before the newline of its last line; `||` ending a quotation's
//   line makes it expandable and ends it.
// Empty entities make nothing (so `**` separates `_` from `__`). One pass over the UTF-16 units.

struct MarkdownParser {
    private let input: [UInt16]
    private var i = 0
    private var parsed: ParsedText

    /// Kinds by their markup; a link and a mention are one kind.
    private enum Kind: Equatable {
        case bold, italic, underline, strike, spoiler, code, pre, link, customEmoji, blockquote
    }

    private struct Entity {
        var kind: Kind
        var span: Int
        var markupOffset: Int
    }
    private var open: [Entity] = []

    init(_ input: [UInt16], limits: FormattedText.Limits) {
        self.input = input
        self.parsed = ParsedText(limits: limits)
    }

    private func name(of entity: Entity) -> String { parsed.spans[entity.span].style.name }

    private func unit(_ at: Int) -> UInt16? { at < input.count ? input[at] : nil }
    private func isEndOfLine(_ at: Int) -> Bool { at >= input.count || input[at] == ASCII.newline }

    mutating func parse() throws(FormattingError) -> FormattedText {
        guard input.count <= Int(Int32.max) else { throw FormattingError(.tooLong, at: 0) }
        var lineStart = true
        while i < input.count {
            if lineStart {
                lineStart = false
                try startLine()
                continue
            }
            let u = input[i]
            if let top = open.last, top.kind == .code || top.kind == .pre {
                try code(u, in: top)
                continue
            }
            switch u {
                case ASCII.backslash:
                    if let next = unit(i + 1), (1...126).contains(next) {
                        parsed.units.append(next)
                        lineStart = next == ASCII.newline
                        i += 2
                    } else {
                        parsed.units.append(u)
                        i += 1
                    }
                case ASCII.newline:
                    parsed.units.append(u)
                    lineStart = true
                    i += 1
                case 0x5F:  // _
                    if unit(i + 1) == 0x5F {
                        try toggle(.underline, .underline, width: 2)
                    } else {
                        try toggle(.italic, .italic, width: 1)
                    }
                case 0x2A: try toggle(.bold, .bold, width: 1)  // *
                case 0x7E: try toggle(.strike, .strike, width: 1)  // ~
                case 0x7C:  // |
                    guard unit(i + 1) == 0x7C else { throw FormattingError(.unescaped("|"), at: i) }
                    if open.last?.kind == .blockquote, isEndOfLine(i + 2) {
                        // The expandability mark ends the quotation.
                        if let quote = open.popLast() {
                            parsed.spans[quote.span].style = .blockquote(collapsed: true)
                            parsed.close(quote.span)
                        }
                        i += 2
                    } else {
                        try toggle(.spoiler, .spoiler, width: 2)
                    }
                case ASCII.backtick:
                    if unit(i + 1) == ASCII.backtick, unit(i + 2) == ASCII.backtick {
                        try openPre()
                    } else {
                        try begin(.code, .code, width: 1)
                    }
                case 0x5B: try begin(.link, .textURL(""), width: 1)  // [
                case ASCII.bang:
                    guard unit(i + 1) == 0x5B else { throw FormattingError(.unescaped("!"), at: i) }
                    try begin(.customEmoji, .customEmoji(documentID: 0), width: 2)
                case 0x5D: try closeLink()  // ]
                case 0x28, 0x29, ASCII.greater, ASCII.hash, 0x2B, 0x2D, ASCII.equals, 0x7B, 0x7D, 0x2E:
                    throw FormattingError(.unescaped(Character(Unicode.Scalar(UInt8(u)))), at: i)
                default:
                    parsed.units.append(u)
                    i += 1
            }
        }
        if lineStart { try startLine() }
        if let quote = open.last, quote.kind == .blockquote {
            open.removeLast()
            parsed.close(quote.span)
        }
        if let last = open.last { throw FormattingError(.unclosed(name(of: last)), at: last.markupOffset) }
        return try parsed.result()
    }

    /// At the start of a line (outside code): `>` or `**>` continues or begins a quotation; anything else ends an
    /// open one before the newline just read.
    private mutating func startLine() throws(FormattingError) {
        let quoted = unit(i) == ASCII.greater
        let separated = !quoted && unit(i) == 0x2A && unit(i + 1) == 0x2A && unit(i + 2) == ASCII.greater
        let inQuote = open.first?.kind == .blockquote
        if inQuote, !quoted {
            guard let last = open.last, last.kind == .blockquote else {
                throw FormattingError(.unclosed(name(of: open[open.count - 1])), at: open[open.count - 1].markupOffset)
            }
            // The newline that ended the quotation's last line is not in it.
            parsed.spans[last.span].length = parsed.units.count - 1 - parsed.spans[last.span].offset
            open.removeLast()
        }
        guard quoted || separated else { return }
        if !(inQuote && quoted) { try begin(.blockquote, .blockquote(collapsed: false), width: 0) }
        i += quoted ? 1 : 3
    }

    /// One unit inside `code` or `pre`.
    private mutating func code(_ u: UInt16, in top: Entity) throws(FormattingError) {
        if u == ASCII.backslash, let next = unit(i + 1), (1...126).contains(next) {
            parsed.units.append(next)
            i += 2
        } else if u == ASCII.backtick {
            if top.kind == .code {
                close(width: 1)
            } else if unit(i + 1) == ASCII.backtick, unit(i + 2) == ASCII.backtick {
                close(width: 3)
            } else {
                throw FormattingError(.unescaped("`"), at: i)
            }
        } else {
            parsed.units.append(u)
            i += 1
        }
    }

    /// Closes the innermost entity of `kind`, or opens one.
    private mutating func toggle(_ kind: Kind, _ style: Style, width: Int) throws(FormattingError) {
        if open.last?.kind == kind {
            close(width: width)
        } else {
            try begin(kind, style, width: width)
        }
    }

    private mutating func begin(_ kind: Kind, _ style: Style, width: Int) throws(FormattingError) {
        if kind == .blockquote {
            guard open.isEmpty else { throw FormattingError(.blockquoteInsideEntity, at: i) }
        } else if open.contains(where: { $0.kind == kind }) {
            throw FormattingError(.nestedSameKind(style.name), at: i)
        }
        guard open.count < parsed.limits.maxDepth else {
            throw FormattingError(.tooDeep(limit: parsed.limits.maxDepth), at: i)
        }
        let span = try parsed.open(style, markupOffset: i)
        open.append(Entity(kind: kind, span: span, markupOffset: i))
        i += width
    }

    private mutating func close(width: Int) {
        if let last = open.popLast() { parsed.close(last.span) }
        i += width
    }

    /// ```` ``` ```` at `i`: the language is the rest of the line when it has no spaces, backticks or backslashes.
    private mutating func openPre() throws(FormattingError) {
        try begin(.pre, .pre(language: ""), width: 3)
        var j = i
        while let u = unit(j), u != ASCII.newline, !ASCII.isSpace(u), u != ASCII.backtick, u != ASCII.backslash {
            j += 1
        }
        guard unit(j) == ASCII.newline else { return }
        if j > i, let pre = open.last { parsed.spans[pre.span].style = .pre(language: ASCII.string(input[i..<j])) }
        i = j + 1
    }

    /// `]` at `i`: ends the innermost link or custom emoji with the `(URL)` that must follow.
    private mutating func closeLink() throws(FormattingError) {
        guard let last = open.last, last.kind == .link || last.kind == .customEmoji else {
            if let last = open.last, open.contains(where: { $0.kind == .link || $0.kind == .customEmoji }) {
                throw FormattingError(.unclosed(name(of: last)), at: last.markupOffset)
            }
            throw FormattingError(.unescaped("]"), at: i)
        }
        guard unit(i + 1) == 0x28 else { throw FormattingError(.invalidLink, at: i) }
        var j = i + 2
        var url: [UInt16] = []
        while let u = unit(j), u != 0x29 {
            if u == ASCII.backslash, let next = unit(j + 1), (1...126).contains(next) {
                url.append(next)
                j += 2
            } else {
                url.append(u)
                j += 1
            }
        }
        guard unit(j) == 0x29, !url.isEmpty else { throw FormattingError(.invalidLink, at: i + 1) }
        if last.kind == .customEmoji {
            guard let id = ASCII.customEmoji(url) else { throw FormattingError(.invalidCustomEmoji, at: i + 1) }
            parsed.spans[last.span].style = .customEmoji(documentID: id)
        } else if let user = ASCII.mentionedUser(url) {
            parsed.spans[last.span].style = .mention(userID: user)
        } else {
            parsed.spans[last.span].style = .textURL(ASCII.string(url))
        }
        open.removeLast()
        parsed.close(last.span)
        i = j + 1
    }
}
