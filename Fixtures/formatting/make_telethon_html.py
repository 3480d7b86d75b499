#!/usr/bin/env python3
"""Makes the HTML fixtures of Tests/TelegramFormattingTests from Telethon's parser (telethon.extensions.html.parse).

    python3 -m venv .venv-interop && .venv-interop/bin/pip install 'telethon==1.45.*'
    .venv-interop/bin/python Fixtures/formatting/make_telethon_html.py

Writes, next to this script:
  telethon-html.jsonl    COUNT generated inputs (seeded, deterministic) with Telethon's text and entities: the
                         inputs on which both parsers must agree exactly.
  telethon-quirks.jsonl  hand-picked inputs where Telethon does what we deliberately do not, with what it did.
Each line: {"name"?, "html", "text", "entities": [{"type", "offset", "length", ...}]}; entity types are the TL
constructor names, offsets and lengths UTF-16 code units as Telethon reports them.

The generator keeps out of the equality corpus what Telethon handles in ways we do not follow (each is a case in
telethon-quirks.jsonl): leading or trailing whitespace (Telethon strips it), a tag nested in itself (Telethon keeps
only the outer start and the inner end), tags Telethon does not know (tg-spoiler, span, ins, strike: it drops them),
`mailto:` and `tg://user?id=` links, numeric references to astral or C1 code points and named references other
than the five of XML, malformed markup (Telethon never fails).
"""
import json
import os
import random
import sys

import telethon
from telethon.extensions import html as telethon_html
from telethon.helpers import add_surrogate

SEED = 43
COUNT = 2400
HERE = os.path.dirname(os.path.abspath(__file__))

WORDS = ["hello", "world", "Telegram", "swift", "naïve", "café", "Ünïcödé", "a", "bold", "x", "42", "end",
         "a & b", "5 > 3", "\"quoted\"", "it's", "*_~|#+=-.!()[]{}", "tab\there", "non\u00a0breaking"]
EMOJI = ["😀", "🎉", "👍🏽", "👨‍👩‍👧", "🏳️‍🌈", "❤️", "🇺🇦", "1️⃣", "🫠"]
ASTRAL = ["𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𐍈", "𝄞", "🀄", "𠀋", "𝟘𝟙"]
COMBINING = ["e\u0301", "a\u0308\u0323", "Z\u0351\u0367\u0300\u0362", "क्षि", "n\u0303", "\u05e9\u05c1", "o\u0338"]
SCRIPTS = ["漢字", "日本語", "한국어", "مرحبا", "שלום", "Ελληνικά", "кириллица"]
NAMED = ["&lt;", "&gt;", "&amp;", "&quot;", "&apos;"]
SPACES = [" ", "\n", "  ", " \n "]
URLS = ["https://example.com", "https://example.com/path?q=1&amp;r=2", "http://例え.jp/😀", "https://t.me/durov",
        "tg://resolve?domain=telegram", "https://example.com/&quot;quoted&quot;", "https://x.org/a b"]
LANGUAGES = ["python", "swift", "c++", "js", "rust", "objective-c", "x"]
# Tags Telethon knows, by the kind of entity each makes.
SIMPLE = ["b", "strong", "i", "em", "u", "del", "s"]


def numeric_reference(rng):
    """A numeric reference to a BMP scalar that html.unescape maps to itself (no C1, no noncharacter)."""
    while True:
        cp = rng.choice([rng.randint(0x20, 0x7E), rng.randint(0xA0, 0xD7FF), rng.randint(0xE000, 0xFDCF),
                         rng.randint(0xFDF0, 0xFFFD)])
        if cp not in (0x7F,):
            break
    return rng.choice(["&#%d;" % cp, "&#x%x;" % cp, "&#X%X;" % cp])


def text(rng):
    pools = [WORDS, WORDS, EMOJI, ASTRAL, COMBINING, SCRIPTS, NAMED, SPACES]
    parts = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.08:
            parts.append(numeric_reference(rng))
        else:
            parts.append(rng.choice(rng.choice(pools)))
    return "".join(parts)


def cased(rng, name):
    r = rng.random()
    return name.upper() if r < 0.1 else name.title() if r < 0.15 else name


def attribute(rng, name, value):
    """name=value quoted one of the three ways HTML allows (unquoted only where that is valid)."""
    quotes = ['"', "'"]
    if value and not any(c in value for c in " \t\n\"'=<>`"):
        quotes.append("")
    q = rng.choice(quotes)
    if q == "'":
        value = value.replace("'", "&apos;")
    return ' %s=%s%s%s' % (cased(rng, name), q, value, q)


def extra_attributes(rng):
    return rng.choice(["", "", "", ' title="t"', " data-x=1", " hidden"])


def element(rng, depth, open_tags):
    choices = [t for t in SIMPLE + ["blockquote", "code", "pre", "a", "tg-emoji"] if t not in open_tags]
    # `b` and `strong` (and the other pairs) are different tags to Telethon, so both may nest.
    tag = rng.choice(choices)
    attrs = extra_attributes(rng)
    inner_tags = open_tags | {tag}
    if tag == "blockquote" and rng.random() < 0.4:
        attrs += " expandable"
    if tag == "a":
        attrs = attribute(rng, "href", rng.choice(URLS)) + attrs
    if tag == "tg-emoji":
        attrs = attribute(rng, "emoji-id", str(rng.randint(1, 2**62))) + attrs
        return "<%s%s>%s</%s>" % (cased(rng, tag), attrs, rng.choice(EMOJI), cased(rng, tag))
    if tag == "pre" and "code" not in open_tags and rng.random() < 0.6:
        language = rng.choice(LANGUAGES)
        body = children(rng, depth + 1, inner_tags | {"code"})
        return '<pre%s><code class="language-%s">%s</code></pre>' % (attrs, language, body)
    body = "" if rng.random() < 0.04 else children(rng, depth + 1, inner_tags)
    return "<%s%s>%s</%s>" % (cased(rng, tag), attrs, body, cased(rng, tag))


def children(rng, depth, open_tags):
    out = []
    for _ in range(rng.randint(1, 3)):
        if depth < 5 and rng.random() < 0.5:
            out.append(element(rng, depth, open_tags))
        else:
            out.append(text(rng))
    return "".join(out)


def raw_text(html):
    """Telethon's text before it strips whitespace."""
    parser = telethon_html.HTMLToTelegramParser()
    parser.feed(add_surrogate(html))
    return parser.text


def entity_json(entity):
    name = type(entity).__name__
    out = {"type": name[0].lower() + name[1:], "offset": entity.offset, "length": entity.length}
    if hasattr(entity, "url") and name == "MessageEntityTextUrl":
        out["url"] = entity.url
    if name == "MessageEntityPre":
        out["language"] = entity.language
    if name == "MessageEntityCustomEmoji":
        out["documentId"] = str(entity.document_id)
    if name == "MessageEntityBlockquote":
        out["collapsed"] = bool(entity.collapsed)
    return out


def record(html, name=None):
    text, entities = telethon_html.parse(html)
    out = {"html": html, "text": text, "entities": [entity_json(e) for e in entities]}
    if name:
        out = {"name": name, **out}
    return out


# Inputs where Telethon does what we do not (Formatted text article, "Telethon's HTML quirks").
QUIRKS = [
    ("strips-whitespace", "  <b>bold</b> \n"),
    ("tag-nested-in-itself", "<b>a<b>b</b>c</b>"),
    ("unknown-tg-spoiler", "<tg-spoiler>x</tg-spoiler>"),
    ("unknown-span-spoiler", '<span class="tg-spoiler">x</span>'),
    ("unknown-ins", "<ins>x</ins>"),
    ("unknown-strike", "<strike>x</strike>"),
    ("unknown-tag", "<foo>x</foo>"),
    ("mailto-replaces-text", '<a href="mailto:a@b.c">write</a>'),
    ("user-link-stays-url", '<a href="tg://user?id=42">x</a>'),
    ("astral-reference-length", "<b>&#x1F600;</b>x"),
    ("c1-reference", "x&#x80;"),
    ("legacy-reference", "&amp &copy; x"),
    ("unclosed-tag", "<b>x"),
    ("crossed-end-tags", "<b><i>x</b></i>"),
    ("bare-less-than", "a < b"),
    ("link-without-href", "<a>x</a>"),
    ("emoji-id-not-a-number", '<tg-emoji emoji-id="abc">x</tg-emoji>'),
    ("code-class-without-language-prefix", '<pre><code class="lang-python-code">x</code></pre>'),
    ("self-closing", "<b/>x"),
    ("null-reference", "x&#0;"),
    ("line-break-tag", "a<br>b"),
    ("comment", "<!-- c -->x"),
]


def main():
    rng = random.Random(SEED)
    lines = []
    attempts = 0
    while len(lines) < COUNT:
        attempts += 1
        html = children(rng, 0, frozenset())
        raw = raw_text(html)
        # Telethon strips surrounding whitespace; an input that has some is a quirk case, not an equality case.
        if not raw or raw != raw.strip():
            continue
        lines.append(record(html))
    with open(os.path.join(HERE, "telethon-html.jsonl"), "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "telethon-quirks.jsonl"), "w", encoding="utf-8") as f:
        for name, html in QUIRKS:
            f.write(json.dumps(record(html, name), ensure_ascii=False) + "\n")
    print("telethon %s, seed %d: %d inputs (%d generated), %d quirks" %
          (telethon.__version__, SEED, len(lines), attempts, len(QUIRKS)), file=sys.stderr)


if __name__ == "__main__":
    main()
