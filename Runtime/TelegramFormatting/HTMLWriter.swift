// Text and entities to Bot API HTML that `HTMLParser` reads back to the same text and entities.

enum HTMLWriter {
    static func write(_ formatted: FormattedText, limits: FormattedText.Limits) throws(FormattingError) -> String {
        let units = Array(formatted.text.utf16)
        let checked = try Span.checked(formatted.entities, in: units)
        let spans = checked.map(\.span)
        var out: [UInt16] = []
        out.reserveCapacity(units.count + 16 * spans.count)
        var preDepth = 0
        // A `code` inside a `pre` would read back as the `pre`'s language carrier: it is not written.
        var silent = [Bool](repeating: false, count: spans.count)

        func append(_ s: String) { out.append(contentsOf: s.utf16) }
        func escaped(_ units: some Sequence<UInt16>, attribute: Bool) {
            for u in units {
                switch u {
                    case ASCII.less: append("&lt;")
                    case ASCII.greater: append("&gt;")
                    case ASCII.ampersand: append("&amp;")
                    case ASCII.quote where attribute: append("&quot;")
                    default: out.append(u)
                }
            }
        }

        try Span.walk(spans, count: units.count, maxOpened: limits.maxEntities) { (event) throws(FormattingError) in
            switch event {
                case .text(let range):
                    escaped(units[range], attribute: false)
                case .open(let index, _):
                    let style = spans[index].style
                    switch style {
                        case .bold: append("<b>")
                        case .italic: append("<i>")
                        case .underline: append("<u>")
                        case .strike: append("<s>")
                        case .spoiler: append("<tg-spoiler>")
                        case .code:
                            silent[index] = preDepth > 0
                            if !silent[index] { append("<code>") }
                        case .pre(let language):
                            preDepth += 1
                            append("<pre>")
                            if !language.isEmpty {
                                append("<code class=\"language-")
                                escaped(language.utf16, attribute: true)
                                append("\">")
                            }
                        case .textURL(let url):
                            guard !url.isEmpty else {
                                throw FormattingError(.unrepresentable(entity: checked[index].index, "empty URL"),
                                                      at: spans[index].offset)
                            }
                            append("<a href=\"")
                            escaped(url.utf16, attribute: true)
                            append("\">")
                        case .mention(let user): append("<a href=\"tg://user?id=\(user)\">")
                        case .customEmoji(let id): append("<tg-emoji emoji-id=\"\(id)\">")
                        case .blockquote(let collapsed): append(collapsed ? "<blockquote expandable>" : "<blockquote>")
                    }
                case .close(let index, _):
                    switch spans[index].style {
                        case .bold: append("</b>")
                        case .italic: append("</i>")
                        case .underline: append("</u>")
                        case .strike: append("</s>")
                        case .spoiler: append("</tg-spoiler>")
                        case .code: if !silent[index] { append("</code>") }
                        case .pre(let language):
                            preDepth -= 1
                            append(language.isEmpty ? "</pre>" : "</code></pre>")
                        case .textURL, .mention: append("</a>")
                        case .customEmoji: append("</tg-emoji>")
                        case .blockquote: append("</blockquote>")
                    }
            }
        }
        return ASCII.string(out)
    }
}
