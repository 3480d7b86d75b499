// Lexer for the TL schema language as Telegram's schema files use it: identifiers, constructor IDs (`name#1cb5c415`),
// punctuation, `---types---` / `---functions---` section markers, `//` and `/* */` comments, and `// LAYER N`.

struct Token: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case identifier(String)
        case number(String)
        /// `#1cb5c415` written directly after a name.
        case constructorID(String)
        /// `#` on its own: the natural-number type (`flags:#`) or the builtin vector's count.
        case hash
        case punctuation(Character)
        case section(String)
        case endOfFile
    }

    var kind: Kind
    var line: Int
    var column: Int
    /// Length in columns, for the diagnostic caret.
    var length: Int

    var text: String {
        switch kind {
        case .identifier(let s), .number(let s): s
        case .constructorID(let s): "#" + s
        case .hash: "#"
        case .punctuation(let c): String(c)
        case .section(let s): "---\(s)---"
        case .endOfFile: "end of file"
        }
    }
}

struct LexedFile: Sendable {
    var tokens: [Token]
    /// The value of the last `// LAYER N` comment, and where it was.
    var layer: (value: Int, line: Int)?
    var diagnostics: [Diagnostic]
}

struct Lexer {
    let file: String
    let lines: [String]
    private let scalars: [Unicode.Scalar]

    init(file: String, text: String) {
        self.file = file
        self.scalars = Array(text.unicodeScalars)
        // "\r\n" is one Character in Swift, so splitting on "\n" alone would not split CRLF files.
        self.lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
    }

    func sourceLine(_ line: Int) -> String {
        line >= 1 && line <= lines.count ? lines[line - 1] : ""
    }

    func lex() -> LexedFile {
        var tokens: [Token] = []
        var diagnostics: [Diagnostic] = []
        var layer: (value: Int, line: Int)?
        var i = 0
        var line = 1
        var column = 1

        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            i + offset < scalars.count ? scalars[i + offset] : nil
        }
        func advance() {
            if scalars[i] == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
            i += 1
        }

        while let c = peek() {
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                advance()
                continue
            }
            let startLine = line, startColumn = column
            if c == "/" && peek(1) == "/" {
                var text = ""
                while let d = peek(), d != "\n" {
                    text.unicodeScalars.append(d)
                    advance()
                }
                if let value = Self.layerNumber(inComment: text) { layer = (value, startLine) }
                continue
            }
            if c == "/" && peek(1) == "*" {
                advance(); advance()
                var closed = false
                while let d = peek() {
                    if d == "*" && peek(1) == "/" {
                        advance(); advance()
                        closed = true
                        break
                    }
                    advance()
                }
                if !closed {
                    diagnostics.append(Diagnostic(.error, "unterminated '/*' comment",
                                                  at: SourceLocation(file: file, line: startLine, column: startColumn),
                                                  sourceLine: sourceLine(startLine), length: 2))
                }
                continue
            }
            if c == "-" && peek(1) == "-" && peek(2) == "-" {
                var text = ""
                while let d = peek(), d != "\n", d != " ", d != "\t" {
                    text.unicodeScalars.append(d)
                    advance()
                }
                if text == "---types---" || text == "---functions---" {
                    tokens.append(Token(kind: .section(String(text.dropFirst(3).dropLast(3))), line: startLine,
                                        column: startColumn, length: text.unicodeScalars.count))
                } else {
                    diagnostics.append(Diagnostic(.error, "unknown section marker '\(text)'; expected '---types---' or '---functions---'",
                                                  at: SourceLocation(file: file, line: startLine, column: startColumn),
                                                  sourceLine: sourceLine(startLine), length: text.unicodeScalars.count))
                }
                continue
            }
            if Self.isIdentifierStart(c) {
                var text = ""
                while let d = peek(), Self.isIdentifierPart(d) {
                    text.unicodeScalars.append(d)
                    advance()
                }
                tokens.append(Token(kind: .identifier(text), line: startLine, column: startColumn, length: text.count))
                // `name#abcd1234`: an ID only when the '#' touches the name.
                if peek() == "#", let next = peek(1), Self.isHexDigit(next) {
                    let idLine = line, idColumn = column
                    advance()
                    var hex = ""
                    while let d = peek(), Self.isIdentifierPart(d) {
                        hex.unicodeScalars.append(d)
                        advance()
                    }
                    tokens.append(Token(kind: .constructorID(hex), line: idLine, column: idColumn, length: hex.count + 1))
                }
                continue
            }
            if c.properties.numericType != nil, ("0"..."9").contains(c) {
                var text = ""
                while let d = peek(), ("0"..."9").contains(d) {
                    text.unicodeScalars.append(d)
                    advance()
                }
                tokens.append(Token(kind: .number(text), line: startLine, column: startColumn, length: text.count))
                continue
            }
            if c == "#" {
                advance()
                tokens.append(Token(kind: .hash, line: startLine, column: startColumn, length: 1))
                continue
            }
            if ":?.=;{}<>[]!%*,()".unicodeScalars.contains(c) {
                advance()
                tokens.append(Token(kind: .punctuation(Character(c)), line: startLine, column: startColumn, length: 1))
                continue
            }
            diagnostics.append(Diagnostic(.error, "unexpected character '\(c.escaped(asASCII: true))'",
                                          at: SourceLocation(file: file, line: startLine, column: startColumn),
                                          sourceLine: sourceLine(startLine)))
            advance()
        }
        tokens.append(Token(kind: .endOfFile, line: line, column: column, length: 1))
        return LexedFile(tokens: tokens, layer: layer, diagnostics: diagnostics)
    }

    /// `// LAYER 229`: the whole comment is the marker. Prose that mentions a layer does not count.
    static func layerNumber(inComment text: String) -> Int? {
        let body = text.dropFirst(2).trimmingCharacters(in: " \t")
        let parts = body.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0] == "LAYER", let value = Int(parts[1]), value >= 0 else { return nil }
        return value
    }

    static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "_"
    }

    static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        isIdentifierStart(c) || ("0"..."9").contains(c)
    }

    static func isHexDigit(_ c: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(c) || ("a"..."f").contains(c) || ("A"..."F").contains(c)
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}
