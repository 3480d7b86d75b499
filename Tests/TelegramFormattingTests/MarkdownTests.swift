// MarkdownV2 by hand, from the rules of core.telegram.org/bots/api#markdownv2-style: each example the Bot API
// gives, its escapes, and the errors its rules imply, with their UTF-16 offsets.
import Testing
import TelegramApi
@testable import TelegramFormatting

@Suite struct MarkdownTests {
    func parse(_ markdown: String) throws -> (String, [EntityRecord]) {
        let parsed = try FormattedText(markdown: markdown)
        return (parsed.text, parsed.records)
    }

    func error(_ markdown: String) -> FormattingError? {
        do {
            _ = try FormattedText(markdown: markdown)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("*bold \\*text*", "bold *text", [E.bold(0, 10)]),
        ("_italic \\*text_", "italic *text", [E.italic(0, 12)]),
        ("__underline__", "underline", [E.underline(0, 9)]),
        ("~strikethrough~", "strikethrough", [E.strike(0, 13)]),
        ("||spoiler||", "spoiler", [E.spoiler(0, 7)]),
        ("*bold _italic bold ~italic bold strikethrough ||italic bold strikethrough spoiler||~ __underline italic bold___ bold*",
         "bold italic bold italic bold strikethrough italic bold strikethrough spoiler underline italic bold bold",
         [E.bold(0, 103), E.italic(5, 93), E.strike(17, 59), E.spoiler(43, 33), E.underline(77, 21)]),
        ("[inline URL](http://www.example.com/)", "inline URL", [E.url(0, 10, "http://www.example.com/")]),
        ("[inline mention of a user](tg://user?id=123456789)", "inline mention of a user",
         [E.mention(0, 24, 123456789)]),
        ("![👍](tg://emoji?id=5368324170671202286)", "👍", [E.emoji(0, 2, 5368324170671202286)]),
        ("`inline fixed-width code`", "inline fixed-width code", [E.code(0, 23)]),
        ("```\npre-formatted fixed-width code block\n```", "pre-formatted fixed-width code block\n", [E.pre(0, 37)]),
        ("```python\nprint(1)\n```", "print(1)\n", [E.pre(0, 9, "python")]),
        // The opening line names the language only when it has no spaces and ends with a newline.
        ("```python print```", "python print", [E.pre(0, 12)]),
        ("```x```", "x", [E.pre(0, 1)]),
        // `__` is taken greedily: an empty bold separates italic from underline.
        ("___italic underline_**__", "italic underline", [E.underline(0, 16), E.italic(0, 16)]),
        ("_a_**__b__", "ab", [E.italic(0, 1), E.underline(1, 1)]),
        // Every character from 1 to 126 may be escaped; the reserved ones must be.
        ("\\_\\*\\[\\]\\(\\)\\~\\`\\>\\#\\+\\-\\=\\|\\{\\}\\.\\!\\\\", "_*[]()~`>#+-=|{}.!\\", []),
        ("\\a\\ \\1", "a 1", []),
        // A backslash before anything else is text.
        ("\\é\\😀", "\\é\\😀", []),
        // Inside code and pre only ` and \ are escaped; everything else is text.
        ("`a\\`b\\\\c*_[`", "a`b\\c*_[", [E.code(0, 8)]),
        ("```\na\\`b*_~```", "a`b*_~", [E.pre(0, 6)]),
        // In a URL only ) and \ are escaped.
        ("[a](http://x/\\)y\\\\z_*)", "a", [E.url(0, 1, "http://x/)y\\z_*")]),
        // Entities over astral characters count UTF-16 units.
        ("😀*𝔘e\u{301}*", "😀𝔘e\u{301}", [E.bold(2, 4)]),
        ("*a*~b~", "ab", [E.bold(0, 1), E.strike(1, 1)]),
        ("*a**b*", "ab", [E.bold(0, 1), E.bold(1, 1)]),
        // Empty entities make nothing.
        ("a**b____c", "abc", []),
    ] as [(String, String, [Api.MessageEntity])])
    func botAPIRules(markdown: String, text: String, entities: [Api.MessageEntity]) throws {
        let (parsedText, records) = try parse(markdown)
        #expect(parsedText == text)
        #expect(records == entities.map(EntityRecord.init))
    }

    @Test func blockQuotations() throws {
        // The Bot API's example: a quotation, then an expandable one separated by an empty bold entity.
        let example = """
            >Block quotation started
            >Block quotation continued
            >The last line of the block quotation
            **>The expandable block quotation started right after the previous block quotation
            >It is separated from the previous block quotation by an empty bold entity
            >The last line of the expandable block quotation with the expandability mark||
            after
            """
        let (text, records) = try parse(example)
        let first = "Block quotation started\nBlock quotation continued\nThe last line of the block quotation"
        let second = """
            The expandable block quotation started right after the previous block quotation
            It is separated from the previous block quotation by an empty bold entity
            The last line of the expandable block quotation with the expandability mark
            """
        #expect(text == first + "\n" + second + "\nafter")
        let firstLength = Int32(first.utf16.count)
        #expect(records == [E.quote(0, firstLength), E.quote(firstLength + 1, Int32(second.utf16.count), collapsed: true)]
            .map(EntityRecord.init))

        #expect(try parse(">a\n>b\nc") == ("a\nb\nc", [EntityRecord(E.quote(0, 3))]))
        #expect(try parse(">a||\n>b") == ("a\nb", [EntityRecord(E.quote(0, 1, collapsed: true)), EntityRecord(E.quote(2, 1))]))
        #expect(try parse(">a\n") == ("a\n", [EntityRecord(E.quote(0, 1))]))
        #expect(try parse(">a\n>") == ("a\n", [EntityRecord(E.quote(0, 2))]))
        // `||` right after a spoiler closes the spoiler, not the quotation.
        #expect(try parse(">||s||") == ("s", [EntityRecord(E.quote(0, 1)), EntityRecord(E.spoiler(0, 1))]))
        #expect(try parse(">||s||||") == ("s", [EntityRecord(E.quote(0, 1, collapsed: true)),
                                                  EntityRecord(E.spoiler(0, 1))]))
        // Entities inside a quotation may span its lines.
        #expect(try parse(">*a\n>b*") == ("a\nb", [EntityRecord(E.quote(0, 3)), EntityRecord(E.bold(0, 3))]))
        // A pre inside a quotation: its lines need no `>`.
        #expect(try parse(">```\na\nb```") == ("a\nb", [EntityRecord(E.quote(0, 3)), EntityRecord(E.pre(0, 3))]))
    }

    @Test(arguments: [
        ("a.b", FormattingError(.unescaped("."), at: 1)),
        ("a > b", FormattingError(.unescaped(">"), at: 2)),
        ("1+1=2", FormattingError(.unescaped("+"), at: 1)),
        ("|a|", FormattingError(.unescaped("|"), at: 0)),
        ("!a", FormattingError(.unescaped("!"), at: 0)),
        ("a]", FormattingError(.unescaped("]"), at: 1)),
        ("😀(", FormattingError(.unescaped("("), at: 2)),
        ("*bold", FormattingError(.unclosed("bold"), at: 0)),
        ("ab `code", FormattingError(.unclosed("code"), at: 3)),
        ("```\ncode", FormattingError(.unclosed("pre"), at: 0)),
        ("*a _b* c_", FormattingError(.nestedSameKind("bold"), at: 5)),
        ("___italic underline___", FormattingError(.nestedSameKind("underline"), at: 19)),
        ("[a [b](u)](v)", FormattingError(.nestedSameKind("link"), at: 3)),
        ("[a]", FormattingError(.invalidLink, at: 2)),
        ("[a](b", FormattingError(.invalidLink, at: 3)),
        ("[a]()", FormattingError(.invalidLink, at: 3)),
        ("[*a]", FormattingError(.unclosed("bold"), at: 1)),
        ("![x](https://e.org)", FormattingError(.invalidCustomEmoji, at: 4)),
        ("![x](tg://emoji?id=0)", FormattingError(.invalidCustomEmoji, at: 4)),
        ("```\na`b```", FormattingError(.unescaped("`"), at: 5)),
        ("*a\n>b*", FormattingError(.blockquoteInsideEntity, at: 3)),
        (">*a\nb*", FormattingError(.unclosed("bold"), at: 1)),
    ])
    func malformedMarkupIsAnErrorWithItsOffset(markdown: String, expected: FormattingError) {
        #expect(error(markdown) == expected)
    }

    @Test func limitsBoundTheWork() {
        let many = String(repeating: "*a*", count: 11)
        #expect(error(many) == nil)
        #expect(throws: FormattingError(.tooManyEntities(limit: 10), at: 30)) {
            try FormattedText(markdown: many, limits: .init(maxEntities: 10))
        }
        #expect(throws: FormattingError(.tooDeep(limit: 2), at: 2)) {
            try FormattedText(markdown: "*_~a~_*", limits: .init(maxDepth: 2))
        }
        // A million markers: one pass, an error at the first entity past the default limit.
        let hostile = String(repeating: "*a*", count: 1_000_000)
        #expect(error(hostile) == FormattingError(.tooManyEntities(limit: 10_000), at: 30_000))
    }

    @Test func writesWhatTheParserReads() throws {
        func markdown(_ text: String, _ entities: [Api.MessageEntity]) throws -> String {
            try FormattedText(text: text, entities: entities).markdown()
        }
        #expect(try markdown("a.b_c", []) == "a\\.b\\_c")
        #expect(try markdown("ab", [E.italic(0, 1), E.underline(1, 1)]) == "_a_**__b__")
        #expect(try markdown("ab", [E.bold(0, 2), E.italic(0, 1), E.italic(1, 1)]) == "*_a_~~_b_*")
        #expect(try markdown("a`\\", [E.code(0, 3)]) == "`a\\`\\\\`")
        #expect(try markdown("x", [E.pre(0, 1, "swift")]) == "```swift\nx```")
        #expect(try markdown("x", [E.url(0, 1, "http://e/)\\")]) == "[x](http://e/\\)\\\\)")
        #expect(try markdown("x", [E.mention(0, 1, 7)]) == "[x](tg://user?id=7)")
        #expect(try markdown("👍", [E.emoji(0, 2, 9)]) == "![👍](tg://emoji?id=9)")
        #expect(try markdown("a\nb\nc", [E.quote(0, 3), E.quote(4, 1, collapsed: true)]) == ">a\n>b\n**>c||")
        #expect(try markdown("a\n\nb", [E.quote(0, 1), E.spoiler(0, 1)]) == ">||a||\n\nb")
        #expect(try markdown("a\nb", [E.quote(0, 3), E.spoiler(1, 2)]) == ">a||**\n>b||")
        #expect(try markdown("ab", [E.bold(0, 2), E.strike(0, 2), E.italic(0, 1), E.italic(1, 1)]) == "*~_a_``_b_~*")
        // A spoiler opening at a quotation line's end, with a pre at the same offset (generated case 361).
        let spoilerAndPre = FormattedText(text: "x\n\n", entities: [E.quote(0, 3), E.spoiler(1, 2), E.pre(1, 1)])
        #expect(try spoilerAndPre.markdown() == ">x||**```\n\n```\n>||")
        #expect(try FormattedText(markdown: spoilerAndPre.markdown()).records == spoilerAndPre.records)
    }

    /// The example of the Formatted Text article.
    @Test func theArticleExample() throws {
        let message = try FormattedText(html: "<b>Hi</b> <a href=\"tg://user?id=42\">you</a> 😀")
        #expect(message.text == "Hi you 😀")
        #expect(message.records == [E.bold(0, 2), E.mention(3, 3, 42)].map(EntityRecord.init))
        let markdown = try message.markdown()
        #expect(markdown == "*Hi* [you](tg://user?id=42) 😀")
        #expect(try FormattedText(markdown: markdown).records == message.records)
    }

    @Test(arguments: [
        ("ab", [E.bold(0, 2), E.bold(1, 1)], 1, "inside an entity of the same kind"),
        ("ab", [E.url(0, 2, "u"), E.mention(1, 1, 5)], 1, "inside an entity of the same kind"),
        ("ab", [E.code(0, 2), E.bold(1, 1)], 1, "nothing can be inside code or pre"),
        ("ab", [E.quote(1, 1)], 0, "a block quotation must be whole lines, inside no other entity"),
        ("a\nb", [E.bold(0, 3), E.quote(2, 1)], 1, "a block quotation must be whole lines, inside no other entity"),
        ("a\nb", [E.bold(0, 2), E.quote(2, 1)], 1, "a block quotation must be whole lines, inside no other entity"),
        // Found by FuzzHTML: an entity going on past a quotation's end.
        ("ab\nc", [E.quote(0, 2, collapsed: true), E.bold(1, 3)], 0, "a block quotation crossed by another entity"),
        ("x", [E.pre(0, 1, "a b")], 0, "a pre language with spaces, backticks or backslashes"),
        ("x", [E.url(0, 1, "")], 0, "an empty URL"),
    ] as [(String, [Api.MessageEntity], Int, String)])
    func unrepresentableEntitiesAreAnError(text: String, entities: [Api.MessageEntity], index: Int, why: String) {
        #expect(throws: FormattingError(.unrepresentable(entity: index, why), at: Int(entities[index].range.offset))) {
            try FormattedText(text: text, entities: entities).markdown()
        }
    }
}
