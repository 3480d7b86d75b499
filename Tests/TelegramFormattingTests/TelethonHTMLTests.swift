// Our HTML parser against Telethon 1.45's (telethon.extensions.html.parse) on the generated corpus of
// Fixtures/formatting/telethon-html.jsonl, and the cases where Telethon does what we deliberately do not
// (telethon-quirks.jsonl), each with what we do instead.
import Testing
import TelegramApi
@testable import TelegramFormatting

@Suite struct TelethonHTMLTests {
    @Test func parsesTheCorpusAsTelethonDoes() throws {
        let corpus = Fixtures.lines("telethon-html.jsonl")
        #expect(corpus.count >= 2_000)
        var agreed = 0
        for (line, record) in corpus.enumerated() {
            let html = try #require(record["html"] as? String)
            let text = try #require(record["text"] as? String)
            let entities = try #require(record["entities"] as? [[String: Any]]).compactMap(EntityRecord.init(json:))
            let ours: FormattedText
            do {
                ours = try FormattedText(html: html)
            } catch {
                Issue.record("line \(line + 1): \(error) in \(html.debugDescription)")
                continue
            }
            guard ours.text == text, ours.records == entities else {
                Issue.record("""
                    line \(line + 1): \(html.debugDescription)
                      Telethon: \(text.debugDescription) \(entities)
                      ours:     \(ours.text.debugDescription) \(ours.records)
                    """)
                continue
            }
            agreed += 1
        }
        #expect(agreed == corpus.count)
    }

    /// The corpus exercises what it claims: nesting, astral characters, combining marks, every tag Telethon knows.
    @Test func theCorpusCoversWhatItClaims() throws {
        let corpus = Fixtures.lines("telethon-html.jsonl")
        var types: Set<String> = []
        var astral = 0, combining = 0, nested = 0
        for record in corpus {
            let text = try #require(record["text"] as? String)
            let entities = try #require(record["entities"] as? [[String: Any]]).compactMap(EntityRecord.init(json:))
            types.formUnion(entities.map(\.type))
            if text.unicodeScalars.contains(where: { $0.value > 0xFFFF }) { astral += 1 }
            if text.unicodeScalars.contains(where: { (0x300...0x36F).contains($0.value) }) { combining += 1 }
            if entities.contains(where: { a in
                entities.contains { b in a != b && a.offset <= b.offset && b.offset + b.length <= a.offset + a.length }
            }) { nested += 1 }
        }
        #expect(types == ["messageEntityBold", "messageEntityItalic", "messageEntityUnderline", "messageEntityStrike",
                          "messageEntityCode", "messageEntityPre", "messageEntityTextUrl", "messageEntityCustomEmoji",
                          "messageEntityBlockquote"])
        #expect(astral > 500 && combining > 500 && nested > 500)
    }

    /// What we do for each input of telethon-quirks.jsonl: an error, or a text and entities that are not Telethon's.
    enum Expectation {
        case parses(String, [EntityRecord])
        case fails(FormattingError.Reason)
    }

    static let quirks: [String: Expectation] = [
        "strips-whitespace": .parses("  bold \n", [EntityRecord(E.bold(2, 4))]),
        "tag-nested-in-itself": .parses("abc", [EntityRecord(E.bold(0, 3)), EntityRecord(E.bold(1, 1))]),
        "unknown-tg-spoiler": .parses("x", [EntityRecord(E.spoiler(0, 1))]),
        "unknown-span-spoiler": .parses("x", [EntityRecord(E.spoiler(0, 1))]),
        "unknown-ins": .parses("x", [EntityRecord(E.underline(0, 1))]),
        "unknown-strike": .parses("x", [EntityRecord(E.strike(0, 1))]),
        "unknown-tag": .fails(.unsupportedTag("foo")),
        "mailto-replaces-text": .parses("write", [EntityRecord(E.url(0, 5, "mailto:a@b.c"))]),
        "user-link-stays-url": .parses("x", [EntityRecord(E.mention(0, 1, 42))]),
        "astral-reference-length": .parses("😀x", [EntityRecord(E.bold(0, 2))]),
        "c1-reference": .parses("x\u{80}", []),
        "legacy-reference": .parses("&amp &copy; x", []),
        "unclosed-tag": .fails(.unclosed("<b>")),
        "crossed-end-tags": .fails(.unexpectedEndTag("b", expected: "i")),
        "bare-less-than": .fails(.unescaped("<")),
        "link-without-href": .fails(.missingAttribute(tag: "a", attribute: "href")),
        "emoji-id-not-a-number": .fails(.invalidAttribute(tag: "tg-emoji", attribute: "emoji-id")),
        "code-class-without-language-prefix": .parses("x", [EntityRecord(E.pre(0, 1))]),
        "self-closing": .fails(.malformedTag),
        "null-reference": .fails(.invalidCharacterReference),
        "line-break-tag": .fails(.unsupportedTag("br")),
        "comment": .fails(.unescaped("<")),
    ]

    @Test func documentedQuirksStillDifferFromTelethon() throws {
        let cases = Fixtures.lines("telethon-quirks.jsonl")
        #expect(cases.count == Self.quirks.count)
        for record in cases {
            let name = try #require(record["name"] as? String)
            let html = try #require(record["html"] as? String)
            let telethonText = try #require(record["text"] as? String)
            let telethonEntities = try #require(record["entities"] as? [[String: Any]])
                .compactMap(EntityRecord.init(json:))
            let expected = try #require(Self.quirks[name], "no expectation for quirk \(name)")
            let ours: Result<FormattedText, FormattingError>
            do {
                ours = .success(try FormattedText(html: html))
            } catch {
                ours = .failure(error)
            }
            switch (expected, ours) {
                case (.parses(let text, let entities), .success(let ours)):
                    #expect(ours.text == text && ours.records == entities, "\(name): \(ours.text) \(ours.records)")
                    #expect(ours.text != telethonText || ours.records != telethonEntities,
                            "\(name): Telethon now agrees with us")
                case (.fails(let reason), .failure(let error)):
                    #expect(error.reason == reason, "\(name): \(error)")
                default:
                    Issue.record("\(name): expected \(expected), got \(ours)")
            }
        }
    }
}
