// Text and entities to MarkdownV2 that `MarkdownParser` reads back to the same text and entities, or an
// `unrepresentable` error for what MarkdownV2 cannot write.

enum MarkdownWriter {
    /// Characters that are markup outside code (core.telegram.org/bots/api#markdownv2-style), and `\`.
    static let reserved: Set<UInt16> = Set("_*[]()~`>#+-=|{}.!\\".utf16)

    static func write(_ formatted: FormattedText, limits: FormattedText.Limits) throws(FormattingError) -> String {
        let units = Array(formatted.text.utf16)
        let checked = try Span.checked(formatted.entities, in: units)
        let spans = checked.map(\.span)
        var writer = Writer(units: units)
        // A refusal names the entity (its index in `formatted.entities`) and where it starts.
        func refusing(_ index: Int, _ body: () throws(Unrepresentable) -> Void) throws(FormattingError) {
            do throws(Unrepresentable) {
                try body()
            } catch {
                throw FormattingError(.unrepresentable(entity: checked[index].index, error.reason), at: spans[index].offset)
            }
        }
        try Span.walk(spans, count: units.count, maxOpened: limits.maxEntities) { (event) throws(FormattingError) in
            switch event {
                case .text(let range): writer.text(range)
                case .open(let index, let continued):
                    try refusing(index) { () throws(Unrepresentable) in try writer.open(spans[index], continued: continued) }
                case .close(let index, let final):
                    try refusing(index) { () throws(Unrepresentable) in try writer.close(spans[index], final: final) }
            }
        }
        return ASCII.string(writer.out)
    }

    struct Unrepresentable: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The output and what the parser will know at each point of it.
    struct Writer {
        let units: [UInt16]
        var out: [UInt16] = []
        var open: [Style] = []
        var inCode = false
        var quoted = false
        /// Where the last quotation ended: one starting on the next line needs `**>` to be a new one.
        var lastQuoteEnd: Int?
        /// The last thing written is an italic `_`, which a following `_` would turn into `__`.
        var afterItalicMarker = false
        /// Where the text written so far ends, and where an entity was last closed to be opened again.
        var position = 0
        var splitAt: Int?

        init(units: [UInt16]) {
            self.units = units
            out.reserveCapacity(units.count * 2)
        }

        mutating func append(_ s: String) {
            out.append(contentsOf: s.utf16)
            afterItalicMarker = false
        }

        mutating func text(_ range: Range<Int>) {
            for u in units[range] {
                if inCode {
                    if u == ASCII.backtick || u == ASCII.backslash { out.append(ASCII.backslash) }
                    out.append(u)
                } else {
                    if MarkdownWriter.reserved.contains(u) { out.append(ASCII.backslash) }
                    out.append(u)
                    if u == ASCII.newline, quoted { out.append(ASCII.greater) }
                }
            }
            if !range.isEmpty { afterItalicMarker = false }
            position = range.upperBound
        }

        /// An empty entity of a kind not open (so its markers neither close nor nest anything), parsed as nothing:
        /// it separates markers that would otherwise read as others. Underline only where no `_` can follow.
        mutating func separator(underlineAllowed: Bool) {
            if !open.contains(.bold) {
                append("**")
            } else if !open.contains(.strike) {
                append("~~")
            } else if underlineAllowed, !open.contains(.underline) {
                append("____")
            } else {
                append("``")
            }
        }

        /// `_` or `__`, with an empty entity between it and an italic `_` just before.
        mutating func underscores(_ count: Int) {
            if afterItalicMarker { separator(underlineAllowed: false) }
            append(String(repeating: "_", count: count))
            afterItalicMarker = count == 1
        }

        private func isLineStart(_ offset: Int) -> Bool { offset == 0 || units[offset - 1] == ASCII.newline }
        private func isLineEnd(_ offset: Int) -> Bool { offset == units.count || units[offset] == ASCII.newline }

        static func sameKind(_ a: Style, _ b: Style) -> Bool {
            switch (a, b) {
                case (.pre, .pre), (.textURL, .textURL), (.textURL, .mention), (.mention, .textURL), (.mention, .mention),
                     (.customEmoji, .customEmoji), (.blockquote, .blockquote):
                    true
                default: a == b
            }
        }

        mutating func open(_ span: Span, continued: Bool) throws(Unrepresentable) {
            guard !inCode else { throw Unrepresentable("nothing can be inside code or pre") }
            guard !open.contains(where: { Self.sameKind($0, span.style) }) else {
                throw Unrepresentable("inside an entity of the same kind")
            }
            let top = open.last
            switch span.style {
                case .bold: append("*")
                case .italic: underscores(1)
                case .underline: underscores(2)
                case .strike: append("~")
                case .spoiler:
                    append("||")
                    // `||` before a line's end right inside a quotation would be its expandability mark.
                    if case .blockquote = top, units[span.offset] == ASCII.newline { separator(underlineAllowed: true) }
                case .code:
                    append("`")
                    inCode = true
                case .pre(let language):
                    guard !language.utf16.contains(where: {
                        ASCII.isSpace($0) || $0 == ASCII.backtick || $0 == ASCII.backslash
                    }) else {
                        throw Unrepresentable("a pre language with spaces, backticks or backslashes")
                    }
                    append("```" + language + "\n")
                    inCode = true
                case .textURL(let url):
                    guard !url.isEmpty else { throw Unrepresentable("an empty URL") }
                    append("[")
                case .mention: append("[")
                case .customEmoji: append("![")
                case .blockquote:
                    guard !continued, open.isEmpty, isLineStart(span.offset), isLineEnd(span.end),
                          out.last.map({ $0 == ASCII.newline }) ?? true else {
                        throw Unrepresentable("a block quotation must be whole lines, inside no other entity")
                    }
                    append(lastQuoteEnd == span.offset - 1 ? "**>" : ">")
                    quoted = true
            }
            open.append(span.style)
        }

        mutating func close(_ span: Span, final: Bool) throws(Unrepresentable) {
            open.removeLast()
            if !final { splitAt = position }
            switch span.style {
                case .bold: append("*")
                case .italic: underscores(1)
                case .underline: underscores(2)
                case .strike: append("~")
                case .spoiler: append("||")
                case .code:
                    append("`")
                    inCode = false
                case .pre:
                    append("```")
                    inCode = false
                case .textURL(let url):
                    append("](")
                    for u in url.utf16 {
                        if u == 0x29 || u == ASCII.backslash { out.append(ASCII.backslash) }
                        out.append(u)
                    }
                    append(")")
                case .mention(let user): append("](tg://user?id=\(user))")
                case .customEmoji(let id): append("](tg://emoji?id=\(id))")
                case .blockquote(let collapsed):
                    // Crossed: closed here to be opened again, or closing where an entity inside it goes on.
                    guard final, splitAt != position else {
                        throw Unrepresentable("a block quotation crossed by another entity")
                    }
                    if collapsed { append("||") }
                    quoted = false
                    lastQuoteEnd = span.end
            }
        }
    }
}
