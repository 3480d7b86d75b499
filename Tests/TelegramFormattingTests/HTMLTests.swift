// HTML by hand, from core.telegram.org/bots/api#html-style: every tag it lists, character references, errors with
// their UTF-16 offsets, limits, and the writer.
import Testing
import TelegramApi
@testable import TelegramFormatting

@Suite struct HTMLTests {
    func error(_ html: String, limits: FormattedText.Limits = .init()) -> FormattingError? {
        do {
            _ = try FormattedText(html: html, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyTagTheBotAPIDefines() throws {
        let html = """
            <b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>n</ins><s>s</s><strike>k</strike><del>d</del>\
            <tg-spoiler>p</tg-spoiler><span class="tg-spoiler">q</span><code>c</code><pre>p</pre>\
            <pre><code class="language-swift">w</code></pre><a href="https://t.me/?a=1&amp;b=2">l</a>\
            <a href="tg://user?id=123456789">m</a><tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>\
            <blockquote>q</blockquote><blockquote expandable>x</blockquote>
            """
        let parsed = try FormattedText(html: html)
        #expect(parsed.text == "bsieunskdpqcpwlm👍qx")
        #expect(parsed.records == [
            E.bold(0, 1), E.bold(1, 1), E.italic(2, 1), E.italic(3, 1), E.underline(4, 1), E.underline(5, 1),
            E.strike(6, 1), E.strike(7, 1), E.strike(8, 1), E.spoiler(9, 1), E.spoiler(10, 1), E.code(11, 1),
            E.pre(12, 1), E.pre(13, 1, "swift"), E.url(14, 1, "https://t.me/?a=1&b=2"), E.mention(15, 1, 123456789),
            E.emoji(16, 2, 5368324170671202286), E.quote(18, 1), E.quote(19, 1, collapsed: true),
        ].map(EntityRecord.init))
    }

    @Test(arguments: [
        ("<b>bold <i>italic bold <s>italic bold strikethrough <span class=\"tg-spoiler\">italic bold strikethrough spoiler</span></s> <u>underline italic bold</u></i> bold</b>",
         "bold italic bold italic bold strikethrough italic bold strikethrough spoiler underline italic bold bold",
         [E.bold(0, 103), E.italic(5, 93), E.strike(17, 59), E.spoiler(43, 33), E.underline(77, 21)]),
        ("&lt;&gt;&amp;&quot;&apos;&#65;&#x42;&#X1F600;", "<>&\"'AB😀", []),
        // A `&` that starts no reference is text, as is `>`.
        ("a & b &unknown; &#; &#xZ; 3 > 2", "a & b &unknown; &#; &#xZ; 3 > 2", []),
        // Tag and attribute names in any case, values quoted either way or not at all, unknown attributes ignored.
        ("<B CLASS=x>a</b><A HREF='https://e.org/?q=&quot;'>b</A><a title=\"t\" href=https://e.org>c</a>", "abc",
         [E.bold(0, 1), E.url(1, 1, "https://e.org/?q=\""), E.url(2, 1, "https://e.org")]),
        ("😀<b>x</b>e\u{301}<i>𝔘</i>", "😀xe\u{301}𝔘", [E.bold(2, 1), E.italic(5, 2)]),
        // Empty elements make nothing; the text is kept as written, whitespace too.
        (" <b></b> <i>\n</i> ", "  \n ", [E.italic(2, 1)]),
        ("<pre><code class=\"language-c++\"><b>x</b></code></pre>", "x", [E.pre(0, 1, "c++"), E.bold(0, 1)]),
        ("<a href=\"tg://user?id=0\">x</a>", "x", [E.url(0, 1, "tg://user?id=0")]),
    ] as [(String, String, [Api.MessageEntity])])
    func parses(html: String, text: String, entities: [Api.MessageEntity]) throws {
        let parsed = try FormattedText(html: html)
        #expect(parsed.text == text)
        #expect(parsed.records == entities.map(EntityRecord.init))
    }

    @Test(arguments: [
        ("a<b>c</i>", FormattingError(.unexpectedEndTag("i", expected: "b"), at: 5)),
        ("</b>", FormattingError(.unexpectedEndTag("b", expected: nil), at: 0)),
        ("x<b", FormattingError(.malformedTag, at: 1)),
        ("<b x=\"1>y</b>", FormattingError(.malformedTag, at: 0)),
        ("😀<b/>", FormattingError(.malformedTag, at: 2)),
        ("😀 < 1", FormattingError(.unescaped("<"), at: 3)),
        ("<blink>x</blink>", FormattingError(.unsupportedTag("blink"), at: 0)),
        ("<b><i>x</i>", FormattingError(.unclosed("<b>"), at: 0)),
        ("<a href=\"\">x</a>", FormattingError(.invalidAttribute(tag: "a", attribute: "href"), at: 0)),
        ("<span>x</span>", FormattingError(.invalidAttribute(tag: "span", attribute: "class"), at: 0)),
        ("<tg-emoji>x</tg-emoji>", FormattingError(.missingAttribute(tag: "tg-emoji", attribute: "emoji-id"), at: 0)),
        ("<tg-emoji emoji-id=\"99999999999999999999\">x</tg-emoji>",
         FormattingError(.invalidAttribute(tag: "tg-emoji", attribute: "emoji-id"), at: 0)),
        ("ab&#xD800;", FormattingError(.invalidCharacterReference, at: 2)),
        ("&#x110000;", FormattingError(.invalidCharacterReference, at: 0)),
        ("<a href=\"&#0;\">x</a>", FormattingError(.invalidCharacterReference, at: 9)),
    ])
    func malformedMarkupIsAnErrorWithItsOffset(html: String, expected: FormattingError) {
        #expect(error(html) == expected)
    }

    @Test func limitsBoundTheWork() throws {
        #expect(error(String(repeating: "<b>", count: 100) + "x" + String(repeating: "</b>", count: 100)) == nil)
        #expect(error(String(repeating: "<i>", count: 101)) == FormattingError(.tooDeep(limit: 100), at: 300))
        #expect(error(String(repeating: "<b>a</b>", count: 6), limits: .init(maxEntities: 5))
                == FormattingError(.tooManyEntities(limit: 5), at: 40))
        // Hostile sizes end in an error at the limit, after one pass.
        #expect(error(String(repeating: "<u>", count: 1_000_000)) == FormattingError(.tooDeep(limit: 100), at: 300))
        #expect(error(String(repeating: "<b></b>", count: 1_000_000))
                == FormattingError(.tooManyEntities(limit: 10_000), at: 70_000))
        // Half a million attributes in one tag: one pass (the last `href` counts).
        let attributes = String(repeating: " x", count: 500_000)
        #expect(try FormattedText(html: "<a href=1\(attributes) href=2>t</a>").records == [EntityRecord(E.url(0, 1, "2"))])
    }

    @Test func writesWhatTheParserReads() throws {
        func html(_ text: String, _ entities: [Api.MessageEntity]) throws -> String {
            try FormattedText(text: text, entities: entities).html()
        }
        #expect(try html("<a & \"b\">", []) == "&lt;a &amp; \"b\"&gt;")
        #expect(try html("x", [E.url(0, 1, "https://e.org/?a=\"1\"&b=<2>")])
                == "<a href=\"https://e.org/?a=&quot;1&quot;&amp;b=&lt;2&gt;\">x</a>")
        #expect(try html("x", [E.pre(0, 1, "c\"")]) == "<pre><code class=\"language-c&quot;\">x</code></pre>")
        #expect(try html("ab", [E.pre(0, 2), E.code(0, 1)]) == "<pre>ab</pre>")
        #expect(try html("👍", [E.emoji(0, 2, 5), E.spoiler(0, 2), E.quote(0, 2, collapsed: true), E.mention(0, 2, 7)])
                == "<tg-emoji emoji-id=\"5\"><tg-spoiler><blockquote expandable><a href=\"tg://user?id=7\">👍</a></blockquote></tg-spoiler></tg-emoji>")
        // Kinds Telegram finds in the text itself are not markup: their text stays.
        #expect(try html("@user #tag", [.messageEntityMention(.init(offset: 0, length: 5)),
                                         .messageEntityHashtag(.init(offset: 6, length: 4))]) == "@user #tag")
    }

    @Test func entitiesOutsideTheTextAreAnError() {
        func error(_ text: String, _ entities: [Api.MessageEntity]) -> FormattingError? {
            do {
                _ = try FormattedText(text: text, entities: entities).html()
                return nil
            } catch {
                return error
            }
        }
        #expect(error("ab", [E.bold(0, 1), E.bold(1, 2)]) == FormattingError(.entityOutOfBounds(entity: 1), at: 1))
        #expect(error("ab", [E.bold(-1, 1)]) == FormattingError(.entityOutOfBounds(entity: 0), at: 0))
        #expect(error("ab", [E.bold(1, -1)]) == FormattingError(.entityOutOfBounds(entity: 0), at: 1))
        #expect(error("ab", [E.bold(Int32.max, Int32.max)]) == FormattingError(.entityOutOfBounds(entity: 0), at: Int(Int32.max)))
        #expect(error("😀", [E.bold(1, 1)]) == FormattingError(.entitySplitsCharacter(entity: 0), at: 1))
        #expect(error("😀", [E.bold(0, 1)]) == FormattingError(.entitySplitsCharacter(entity: 0), at: 1))
        // Crossing entities in a staircase: each is opened again at every end below it, within the limit.
        let staircase = (0..<200).map { E.bold(Int32($0), 200) }
        #expect(error(String(repeating: "x", count: 400), staircase)?.reason == .tooManyEntities(limit: 10_000))
        #expect(error(String(repeating: "x", count: 400), Array(staircase.prefix(100))) == nil)
    }
}
