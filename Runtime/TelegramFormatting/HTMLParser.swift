// The Bot API's HTML (core.telegram.org/bots/api#html-style): the tags it lists, `&lt;` `&gt;` `&amp;` `&quot;`
// (and `&apos;`) and numeric character references. Strict where the Bot API is: an unknown tag, a bare `<`, an end
// tag that is not the innermost element's, or an element left open is an error. One pass over the UTF-16 units.

/// ASCII code units by name, for the parsers and writers.
enum ASCII {
    static let tab: UInt16 = 0x09, newline: UInt16 = 0x0A, formFeed: UInt16 = 0x0C, carriageReturn: UInt16 = 0x0D
    static let space: UInt16 = 0x20, bang: UInt16 = 0x21, quote: UInt16 = 0x22, hash: UInt16 = 0x23
    static let ampersand: UInt16 = 0x26, apostrophe: UInt16 = 0x27, slash: UInt16 = 0x2F, semicolon: UInt16 = 0x3B
    static let less: UInt16 = 0x3C, equals: UInt16 = 0x3D, greater: UInt16 = 0x3E, backslash: UInt16 = 0x5C
    static let backtick: UInt16 = 0x60

    static func isSpace(_ u: UInt16) -> Bool {
        u == space || u == tab || u == newline || u == formFeed || u == carriageReturn
    }
    static func isLetter(_ u: UInt16) -> Bool { (0x41...0x5A).contains(u) || (0x61...0x7A).contains(u) }
    static func isDigit(_ u: UInt16) -> Bool { (0x30...0x39).contains(u) }
    static func lowercased(_ u: UInt16) -> UInt16 { (0x41...0x5A).contains(u) ? u + 0x20 : u }
    static func string(_ units: some Collection<UInt16>) -> String { String(decoding: units, as: UTF16.self) }

    /// The value of `digits` as a positive Int64 (decimal digits only, no sign), or nil.
    static func positiveInt64<C: Collection<UInt16>>(_ digits: C) -> Int64? {
        guard !digits.isEmpty, digits.count <= 19 else { return nil }
        var value: Int64 = 0
        for d in digits {
            guard isDigit(d) else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int64(d - 0x30))
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value > 0 ? value : nil
    }

    /// The user id of a `tg://user?id=N` link, or nil.
    static func mentionedUser(_ url: [UInt16]) -> Int64? { linkID(url, prefix: "tg://user?id=") }

    /// The document id of a `tg://emoji?id=N` link, or nil.
    static func customEmoji(_ url: [UInt16]) -> Int64? { linkID(url, prefix: "tg://emoji?id=") }

    private static func linkID(_ url: [UInt16], prefix: String) -> Int64? {
        let prefix = Array(prefix.utf16)
        guard url.count > prefix.count, url[..<prefix.count].elementsEqual(prefix) else { return nil }
        return positiveInt64(url[prefix.count...])
    }
}

struct HTMLParser {
    private let input: [UInt16]
    private var i = 0
    private var parsed: ParsedText

    /// An open element: its lowercased name, its span (nil for a `code` that gives its `pre` a language), and where
    /// its start tag is.
    private struct Element {
        var name: [UInt16]
        var span: Int?
        var markupOffset: Int
    }
    private var open: [Element] = []

    init(_ input: [UInt16], limits: FormattedText.Limits) {
        self.input = input
        self.parsed = ParsedText(limits: limits)
    }

    mutating func parse() throws(FormattingError) -> FormattedText {
        guard input.count <= Int(Int32.max) else { throw FormattingError(.tooLong, at: 0) }
        while i < input.count {
            switch input[i] {
                case ASCII.less: try tag()
                case ASCII.ampersand: parsed.units.append(contentsOf: try reference())
                default:
                    parsed.units.append(input[i])
                    i += 1
            }
        }
        if let last = open.last {
            throw FormattingError(.unclosed("<\(ASCII.string(last.name))>"), at: last.markupOffset)
        }
        return try parsed.result()
    }

    private func unit(_ at: Int) -> UInt16? { at < input.count ? input[at] : nil }

    /// A character reference at `i` (an `&`), decoded; a lone `&` or an unknown name stays as it is.
    private mutating func reference() throws(FormattingError) -> [UInt16] {
        let start = i
        var j = i + 1
        if unit(j) == ASCII.hash {
            j += 1
            let hex = unit(j) == 0x78 || unit(j) == 0x58
            if hex { j += 1 }
            let digitsStart = j
            var value: UInt32 = 0
            while let u = unit(j), j - digitsStart < 8 {
                let digit: UInt32
                if ASCII.isDigit(u) {
                    digit = UInt32(u - 0x30)
                } else if hex, (0x61...0x66).contains(ASCII.lowercased(u)) {
                    digit = UInt32(ASCII.lowercased(u) - 0x61 + 10)
                } else {
                    break
                }
                value = value * (hex ? 16 : 10) + digit
                j += 1
            }
            guard j > digitsStart, unit(j) == ASCII.semicolon else {
                i += 1
                return [ASCII.ampersand]
            }
            guard value != 0, let scalar = Unicode.Scalar(value) else {
                throw FormattingError(.invalidCharacterReference, at: start)
            }
            i = j + 1
            return Array(String(scalar).utf16)
        }
        let names: [(String, UInt16)] = [("lt;", ASCII.less), ("gt;", ASCII.greater), ("amp;", ASCII.ampersand),
                                         ("quot;", ASCII.quote), ("apos;", ASCII.apostrophe)]
        for (name, value) in names {
            let units = Array(name.utf16)
            if j + units.count <= input.count, input[j..<j + units.count].elementsEqual(units) {
                i = j + units.count
                return [value]
            }
        }
        i += 1
        return [ASCII.ampersand]
    }

    /// A start or end tag at `i` (a `<`).
    private mutating func tag() throws(FormattingError) {
        let start = i
        var j = i + 1
        let closing = unit(j) == ASCII.slash
        if closing { j += 1 }
        guard let first = unit(j), ASCII.isLetter(first) else {
            if closing { throw FormattingError(.malformedTag, at: start) }
            throw FormattingError(.unescaped("<"), at: start)
        }
        var name: [UInt16] = []
        while let u = unit(j), ASCII.isLetter(u) || ASCII.isDigit(u) || u == 0x2D {
            name.append(ASCII.lowercased(u))
            j += 1
        }
        if closing {
            while let u = unit(j), ASCII.isSpace(u) { j += 1 }
            guard unit(j) == ASCII.greater else { throw FormattingError(.malformedTag, at: start) }
            i = j + 1
            try endTag(name, at: start)
            return
        }
        i = j
        let attributes = try self.attributes(tagStart: start)
        try startTag(name, attributes, at: start)
    }

    /// Attributes up to and including the `>` that ends a start tag: lowercased names, decoded values (a name
    /// without a value has an empty one). Kept in order, repeats too: a lookup takes the last (linear in the tag).
    private mutating func attributes(tagStart: Int) throws(FormattingError) -> [([UInt16], [UInt16])] {
        var out: [([UInt16], [UInt16])] = []
        while true {
            let before = i
            while let u = unit(i), ASCII.isSpace(u) { i += 1 }
            guard let u = unit(i) else { throw FormattingError(.malformedTag, at: tagStart) }
            if u == ASCII.greater {
                i += 1
                return out
            }
            // A self-closing tag, or an attribute run into the name: neither is Bot API HTML.
            guard u != ASCII.slash, i > before else { throw FormattingError(.malformedTag, at: tagStart) }
            var name: [UInt16] = []
            while let u = unit(i), !ASCII.isSpace(u), u != ASCII.equals, u != ASCII.greater, u != ASCII.slash,
                  u != ASCII.quote, u != ASCII.apostrophe, u != ASCII.less {
                name.append(ASCII.lowercased(u))
                i += 1
            }
            guard !name.isEmpty else { throw FormattingError(.malformedTag, at: tagStart) }
            var j = i
            while let u = unit(j), ASCII.isSpace(u) { j += 1 }
            guard unit(j) == ASCII.equals else {
                out.append((name, []))
                continue
            }
            j += 1
            while let u = unit(j), ASCII.isSpace(u) { j += 1 }
            i = j
            var value: [UInt16] = []
            if let quote = unit(i), quote == ASCII.quote || quote == ASCII.apostrophe {
                i += 1
                while let u = unit(i), u != quote {
                    if u == ASCII.ampersand {
                        value.append(contentsOf: try reference())
                    } else {
                        value.append(u)
                        i += 1
                    }
                }
                guard unit(i) == quote else { throw FormattingError(.malformedTag, at: tagStart) }
                i += 1
            } else {
                while let u = unit(i), !ASCII.isSpace(u), u != ASCII.greater, u != ASCII.quote, u != ASCII.apostrophe,
                      u != ASCII.less, u != ASCII.equals, u != ASCII.backtick {
                    if u == ASCII.ampersand {
                        value.append(contentsOf: try reference())
                    } else {
                        value.append(u)
                        i += 1
                    }
                }
                guard !value.isEmpty else { throw FormattingError(.malformedTag, at: tagStart) }
            }
            out.append((name, value))
        }
    }

    private mutating func startTag(_ name: [UInt16], _ attributes: [([UInt16], [UInt16])],
                                   at offset: Int) throws(FormattingError) {
        guard open.count < parsed.limits.maxDepth else {
            throw FormattingError(.tooDeep(limit: parsed.limits.maxDepth), at: offset)
        }
        let tag = ASCII.string(name)
        func attribute(_ key: String) -> [UInt16]? {
            let key = Array(key.utf16)
            return attributes.last(where: { $0.0 == key })?.1
        }
        let style: Style?
        switch tag {
            case "b", "strong": style = .bold
            case "i", "em": style = .italic
            case "u", "ins": style = .underline
            case "s", "strike", "del": style = .strike
            case "tg-spoiler": style = .spoiler
            case "span":
                guard attribute("class").map({ ASCII.string($0) }) == "tg-spoiler" else {
                    throw FormattingError(.invalidAttribute(tag: tag, attribute: "class"), at: offset)
                }
                style = .spoiler
            case "code":
                // Inside `pre`, `<code class="language-X">` names the block's language and makes no entity
                // (core.telegram.org/bots/api#html-style).
                if let pre = open.last(where: { $0.name == Array("pre".utf16) })?.span {
                    let prefix = Array("language-".utf16)
                    if let value = attribute("class"), value.starts(with: prefix) {
                        parsed.spans[pre].style = .pre(language: ASCII.string(value[prefix.count...]))
                    }
                    style = nil
                } else {
                    style = .code
                }
            case "pre": style = .pre(language: "")
            case "blockquote": style = .blockquote(collapsed: attribute("expandable") != nil)
            case "a":
                guard let href = attribute("href") else {
                    throw FormattingError(.missingAttribute(tag: tag, attribute: "href"), at: offset)
                }
                guard !href.isEmpty else { throw FormattingError(.invalidAttribute(tag: tag, attribute: "href"), at: offset) }
                if let user = ASCII.mentionedUser(href) {
                    style = .mention(userID: user)
                } else {
                    style = .textURL(ASCII.string(href))
                }
            case "tg-emoji":
                guard let id = attribute("emoji-id") else {
                    throw FormattingError(.missingAttribute(tag: tag, attribute: "emoji-id"), at: offset)
                }
                guard let document = ASCII.positiveInt64(id) else {
                    throw FormattingError(.invalidAttribute(tag: tag, attribute: "emoji-id"), at: offset)
                }
                style = .customEmoji(documentID: document)
            default:
                throw FormattingError(.unsupportedTag(tag), at: offset)
        }
        let span = try style.map { (style) throws(FormattingError) in try parsed.open(style, markupOffset: offset) }
        open.append(Element(name: name, span: span, markupOffset: offset))
    }

    private mutating func endTag(_ name: [UInt16], at offset: Int) throws(FormattingError) {
        guard let last = open.last, last.name == name else {
            throw FormattingError(.unexpectedEndTag(ASCII.string(name), expected: open.last.map { ASCII.string($0.name) }),
                                  at: offset)
        }
        open.removeLast()
        if let span = last.span { parsed.close(span) }
    }
}
