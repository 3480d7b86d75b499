// Entities -> markup -> entities is exact, in both languages, over generated texts and entity sets: nested,
// adjacent, with every style, over text full of markup characters, emoji, astral characters and combining marks.
import Testing
import TelegramApi
@testable import TelegramFormatting

/// Random texts and properly nested entity sets MarkdownV2 can write (so HTML can too).
struct EntityGenerator {
    var rng: SeededGenerator

    static let atoms: [String] = [
        "a", "b", "Z", "0", " ", " ", "_", "*", "[", "]", "(", ")", "~", "`", ">", "#", "+", "-", "=", "|", "{", "}",
        ".", "!", "\\", "<", ">", "&", "\"", "'", "&amp;", "é", "e\u{301}", "\u{308}", "क्षि", "漢", "😀", "👍🏽",
        "👨‍👩‍👧", "𝔘", "𐍈", "\u{200D}", "\t", "||", "__", "```", "tg://user?id=1",
    ]
    static let urls = ["https://example.com", "https://e.org/a)b\\c", "http://例え.jp/😀?q=1&r=\"2\"", "tg://resolve?domain=x"]
    static let languages = ["", "swift", "c++", "objective-c", "日本"]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

    /// Lines of atoms; returns the text and each line's UTF-16 range.
    mutating func lines() -> (String, [Range<Int>]) {
        var text = ""
        var ranges: [Range<Int>] = []
        for index in 0..<int(1...5) {
            if index > 0 { text += "\n" }
            let start = text.utf16.count
            for _ in 0..<int(0...12) { text += Self.atoms[int(0...Self.atoms.count - 1)] }
            ranges.append(start..<text.utf16.count)
        }
        return (text, ranges)
    }

    /// A formatted text whose entities nest properly and that MarkdownV2 can write.
    mutating func formattedText() -> FormattedText {
        let (text, lineRanges) = lines()
        let units = Array(text.utf16)
        // Boundaries an entity may start or end at: not inside a surrogate pair.
        func allowed(_ offset: Int) -> Bool {
            offset == 0 || offset == units.count || !UTF16.isTrailSurrogate(units[offset])
        }
        var entities: [Api.MessageEntity] = []
        // Groups of consecutive lines: a quotation or plain lines; no entity crosses a group.
        var line = 0
        var previousQuoted = false
        while line < lineRanges.count {
            let count = int(1...min(3, lineRanges.count - line))
            let range = lineRanges[line].lowerBound..<lineRanges[line + count - 1].upperBound
            line += count
            var used: [Style] = []
            if !range.isEmpty, chance(previousQuoted ? 0.6 : 0.35) {
                let collapsed = chance(0.4)
                entities.append(E.quote(Int32(range.lowerBound), Int32(range.count), collapsed: collapsed))
                used = [.blockquote(collapsed: collapsed)]
                previousQuoted = true
            } else {
                previousQuoted = false
            }
            nest(in: range, depth: 0, used: used, allowed: allowed, into: &entities)
        }
        // Parsers return entities by offset, an outer one first.
        let order = entities.indices.sorted {
            let a = entities[$0].range, b = entities[$1].range
            return (a.offset, -a.length, $0) < (b.offset, -b.length, $1)
        }
        return FormattedText(text: text, entities: order.map { entities[$0] })
    }

    private mutating func nest(in range: Range<Int>, depth: Int, used: [Style], allowed: (Int) -> Bool,
                               into entities: inout [Api.MessageEntity]) {
        guard depth < 5, range.count > 0 else { return }
        var cursor = range.lowerBound
        while cursor < range.upperBound, chance(0.6) {
            let start = int(cursor...range.upperBound - 1)
            let end = int(start + 1...range.upperBound)
            cursor = end
            guard allowed(start), allowed(end) else { continue }
            let styles: [Style] = [
                .bold, .italic, .underline, .strike, .spoiler, .code,
                .pre(language: Self.languages[int(0...Self.languages.count - 1)]),
                .textURL(Self.urls[int(0...Self.urls.count - 1)]), .mention(userID: Int64(int(1...Int(Int32.max)))),
                .customEmoji(documentID: Int64(int(1...Int(Int32.max))) << 20),
            ].filter { style in !used.contains { MarkdownWriter.Writer.sameKind($0, style) } }
            guard let style = styles.randomElement(using: &rng) else { return }
            entities.append(style.entity(offset: Int32(start), length: Int32(end - start)))
            switch style {
                case .code, .pre: continue  // nothing inside code
                default: nest(in: start..<end, depth: depth + 1, used: used + [style], allowed: allowed, into: &entities)
            }
        }
    }
}

@Suite struct RoundTripTests {
    static let cases = 3_000

    @Test func htmlRoundTripIsExact() throws {
        var generator = EntityGenerator(rng: SeededGenerator(seed: 43))
        for index in 0..<Self.cases {
            let original = generator.formattedText()
            let html = try original.html()
            let back = try FormattedText(html: html)
            #expect(back.text == original.text && back.records == original.records, """
                case \(index): \(original.text.debugDescription) \(original.records)
                  HTML \(html.debugDescription)
                  back \(back.text.debugDescription) \(back.records)
                """)
            if back.records != original.records { return }
        }
    }

    @Test func markdownRoundTripIsExact() throws {
        var generator = EntityGenerator(rng: SeededGenerator(seed: 4343))
        for index in 0..<Self.cases {
            let original = generator.formattedText()
            let markdown = try original.markdown()
            let back: FormattedText
            do {
                back = try FormattedText(markdown: markdown)
            } catch {
                Issue.record("case \(index): \(error) in \(markdown.debugDescription) from \(original.records)")
                return
            }
            #expect(back.text == original.text && back.records == original.records, """
                case \(index): \(original.text.debugDescription) \(original.records)
                  Markdown \(markdown.debugDescription)
                  back \(back.text.debugDescription) \(back.records)
                """)
            if back.text != original.text || back.records != original.records { return }
        }
    }

    /// The generator makes what it should: every style, nesting, adjacency, quotations next to each other.
    @Test func generatorCoversEveryStyle() {
        var generator = EntityGenerator(rng: SeededGenerator(seed: 43))
        var types: Set<String> = []
        var nested = 0, adjacentQuotes = 0
        for _ in 0..<Self.cases {
            let records = generator.formattedText().records
            types.formUnion(records.map(\.type))
            if zip(records, records.dropFirst()).contains(where: { $1.offset < $0.offset + $0.length }) { nested += 1 }
            let quotes = records.filter { $0.type == "messageEntityBlockquote" }
            if zip(quotes, quotes.dropFirst()).contains(where: { $1.offset == $0.offset + $0.length + 1 }) {
                adjacentQuotes += 1
            }
        }
        #expect(types.count == 11)
        #expect(nested > 1_000 && adjacentQuotes > 100)
    }

    /// Entities that cross are written in pieces: the same units keep the same styles.
    @Test func crossingEntitiesAreSplit() throws {
        let original = FormattedText(text: "abcd", entities: [E.bold(0, 3), E.italic(1, 3)])
        let html = try original.html()
        #expect(html == "<b>a<i>bc</i></b><i>d</i>")
        #expect(try FormattedText(html: html).records == [E.bold(0, 3), E.italic(1, 2), E.italic(3, 1)].map(EntityRecord.init))
        let markdown = try original.markdown()
        #expect(markdown == "*a_bc_*_d_")
        #expect(try FormattedText(markdown: markdown).records
                == [E.bold(0, 3), E.italic(1, 2), E.italic(3, 1)].map(EntityRecord.init))
    }
}

/// Markup -> entities -> markup -> entities is exact too: over token soups, whatever parses writes back and
/// re-parses to the same text and entities (the fuzz targets' property, on a fixed seed).
@Suite struct MarkupRoundTripTests {
    static let markdownTokens = [
        "*", "_", "__", "~", "||", "`", "```", "```swift\n", "[", "](https://e.org/\\))", "](tg://user?id=5)", "![",
        "](tg://emoji?id=7)", "\n", ">", "**>", "||\n", "\\", "\\*", "\\`", "a", "b", "😀", "e\u{301}", " ", "\\.",
    ]
    static let htmlTokens = [
        "<b>", "</b>", "<i>", "</i>", "<u>", "</u>", "<s>", "</s>", "<tg-spoiler>", "</tg-spoiler>", "<code>", "</code>",
        "<pre>", "</pre>", "<code class=\"language-x\">", "<a href=\"https://e.org/?a&amp;b\">", "<a href=tg://user?id=5>",
        "</a>", "<tg-emoji emoji-id=\"7\">", "</tg-emoji>", "<blockquote>", "<blockquote expandable>", "</blockquote>",
        "a", "😀", "e\u{301}", " ", "\n", "&lt;", "&amp;", "&#x1F600;", ">", "\"",
    ]

    func soup(_ tokens: [String], _ rng: inout SeededGenerator) -> String {
        (0..<Int.random(in: 1...12, using: &rng)).map { _ in tokens.randomElement(using: &rng) ?? "" }.joined()
    }

    func roundTrips(_ tokens: [String], seed: UInt64, parse: (String) throws -> FormattedText,
                    write: (FormattedText) throws -> String) -> Int {
        var rng = SeededGenerator(seed: seed)
        var parsedCount = 0
        for _ in 0..<40_000 {
            let markup = soup(tokens, &rng)
            guard let parsed = try? parse(markup) else { continue }
            parsedCount += 1
            do {
                let written = try write(parsed)
                let again = try parse(written)
                #expect(again.text == parsed.text && again.records == parsed.records,
                        "\(markup.debugDescription) -> \(written.debugDescription)")
                if again.records != parsed.records { return parsedCount }
            } catch {
                Issue.record("\(markup.debugDescription): \(error)")
                return parsedCount
            }
        }
        return parsedCount
    }

    @Test func markdown() {
        let parsed = roundTrips(Self.markdownTokens, seed: 7, parse: { try FormattedText(markdown: $0) },
                                write: { try $0.markdown() })
        #expect(parsed > 3_000, "only \(parsed) inputs parsed")  // 3,638 of 40,000
    }

    @Test func html() {
        let parsed = roundTrips(Self.htmlTokens, seed: 7, parse: { try FormattedText(html: $0) }, write: { try $0.html() })
        #expect(parsed > 1_500, "only \(parsed) inputs parsed")  // 1,602 of 40,000
    }
}
