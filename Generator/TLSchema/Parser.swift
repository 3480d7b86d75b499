// Parser: tokens -> declarations. One declaration ends at `;`. On a syntax error the parser reports it at the
// offending token and resumes after the next `;`, so one run finds every broken line.

/// The declarations of one schema file, as written, with the problems the parser found.
public struct ParsedSchema: Sendable {
    /// The file's path.
    public var file: String
    /// The declarations, in file order.
    public var declarations: [Declaration]
    /// `// LAYER N`, if the file has one.
    public var layer: Int?
    /// Syntax errors; the parser resumes after the next `;`, so every broken line is reported.
    public var diagnostics: [Diagnostic]
    /// The source lines, for diagnostics raised by later stages.
    public var lines: [String]

    /// Source line `line` (from 1), or an empty string outside the file.
    public func sourceLine(_ line: Int) -> String { line >= 1 && line <= lines.count ? lines[line - 1] : "" }
}

/// Reads TL text into declarations.
public enum Parser {
    /// Parses `text`; `file` names it in locations.
    public static func parse(file: String, text: String) -> ParsedSchema {
        let lexer = Lexer(file: file, text: text)
        let lexed = lexer.lex()
        var state = State(file: file, tokens: lexed.tokens, lexer: lexer)
        state.diagnostics = lexed.diagnostics
        state.run()
        let all = state.diagnostics.sorted { $0.location < $1.location }
        return ParsedSchema(file: file, declarations: state.declarations, layer: lexed.layer?.value,
                            diagnostics: all, lines: lexer.lines)
    }
}

private struct SyntaxError: Error {
    var message: String
    var token: Token
}

private struct State {
    let file: String
    let tokens: [Token]
    let lexer: Lexer
    var index = 0
    var section: Declaration.Section = .types
    var declarations: [Declaration] = []
    var diagnostics: [Diagnostic] = []

    init(file: String, tokens: [Token], lexer: Lexer) {
        self.file = file
        self.tokens = tokens
        self.lexer = lexer
    }

    var current: Token { tokens[index] }

    func location(_ token: Token) -> SourceLocation {
        SourceLocation(file: file, line: token.line, column: token.column)
    }

    mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    mutating func run() {
        while true {
            switch current.kind {
            case .endOfFile:
                return
            case .section(let name):
                section = name == "functions" ? .functions : .types
                advance()
            default:
                do {
                    let declaration = try parseDeclaration()
                    declarations.append(declaration)
                } catch {
                    diagnostics.append(Diagnostic(.error, error.message, at: location(error.token),
                                                  sourceLine: lexer.sourceLine(error.token.line),
                                                  length: error.token.length))
                    recover()
                }
            }
        }
    }

    /// Skip to just after the next `;` (or to a section marker), so the next declaration parses cleanly.
    mutating func recover() {
        while true {
            switch current.kind {
            case .endOfFile, .section:
                return
            case .punctuation(";"):
                advance()
                return
            default:
                advance()
            }
        }
    }

    func isPunct(_ c: Character, _ token: Token? = nil) -> Bool {
        if case .punctuation(let p) = (token ?? current).kind { return p == c }
        return false
    }

    func peekToken(_ offset: Int) -> Token {
        tokens[max(0, min(index + offset, tokens.count - 1))]
    }

    mutating func expect(_ c: Character, _ what: String) throws(SyntaxError) {
        guard isPunct(c) else { throw SyntaxError(message: "expected \(what), found '\(current.text)'", token: current) }
        advance()
    }

    mutating func identifier(_ what: String) throws(SyntaxError) -> (String, Token) {
        guard case .identifier(let name) = current.kind else {
            throw SyntaxError(message: "expected \(what), found '\(current.text)'", token: current)
        }
        let token = current
        advance()
        return (name, token)
    }

    /// `a.b.c` (namespaces), without swallowing the `.` of a flag condition such as `flags.0`.
    mutating func qualifiedName(_ what: String) throws(SyntaxError) -> (String, Token) {
        var (name, first) = try identifier(what)
        while isPunct("."), case .identifier(let part) = peekToken(1).kind {
            advance()
            advance()
            name += "." + part
        }
        return (name, first)
    }

    mutating func parseDeclaration() throws(SyntaxError) -> Declaration {
        let (name, nameToken) = try qualifiedName("a constructor or function name")
        var explicitID: UInt32?
        var idLocation: SourceLocation?
        var idLength = 9
        if case .constructorID(let hex) = current.kind {
            guard hex.count <= 8, let value = UInt32(hex, radix: 16) else {
                throw SyntaxError(message: "constructor ID '#\(hex)' is not a 32-bit hexadecimal number", token: current)
            }
            explicitID = value
            idLocation = location(current)
            idLength = current.length
            advance()
        }
        var parameters: [Parameter] = []
        var isPrimitive = false
        // `int ? = Int;`: a builtin primitive declaration.
        if isPunct("?") {
            isPrimitive = true
            advance()
        }
        while !isPunct("=") {
            if case .endOfFile = current.kind {
                throw SyntaxError(message: "expected '=' and a result type before the end of the file", token: current)
            }
            if isPunct(";") {
                throw SyntaxError(message: "expected '=' and a result type before ';'", token: current)
            }
            let parameterStart = current
            let (parameter, builtinOnly) = try parseParameter()
            if builtinOnly {
                // `#` and `[ … ]` belong to the language's own declarations (`vector`, `int128 4*[ int ]`).
                guard name == "vector" || Checker.primitiveNames.contains(name) else {
                    throw SyntaxError(message: "'\(parameterStart.text)' is only allowed in the builtin vector and primitive declarations; "
                                      + "did you mean a field such as 'flags:#'?", token: parameterStart)
                }
                isPrimitive = isPrimitive || name != "vector"
            }
            parameters.append(parameter)
        }
        advance() // '='
        let result = try parseResultType()
        if !isPunct(";"), case .endOfFile = current.kind {} else if !isPunct(";"), current.line > peekToken(-1).line {
            // A missing `;` at the end of a line: report it there and go on with the next line as a new declaration.
            let last = peekToken(-1)
            diagnostics.append(Diagnostic(.error, "expected ';' after the result type '\(result)'",
                                          at: SourceLocation(file: file, line: last.line, column: last.column + last.length),
                                          sourceLine: lexer.sourceLine(last.line)))
            return Declaration(name: name, explicitID: explicitID, idLocation: idLocation, idLength: idLength,
                               parameters: parameters, result: result, section: section, location: location(nameToken),
                               isPrimitiveDeclaration: isPrimitive)
        }
        try expect(";", "';' after the result type")
        // `bytes = Bytes;` (TDLib's preamble): a primitive re-declared, no ID, no fields.
        if explicitID == nil, parameters.isEmpty, Checker.primitiveNames.contains(name) { isPrimitive = true }
        return Declaration(name: name, explicitID: explicitID, idLocation: idLocation, idLength: idLength,
                           parameters: parameters, result: result, section: section, location: location(nameToken),
                           isPrimitiveDeclaration: isPrimitive)
    }

    /// Returns the parameter and whether it used builtin-only syntax (`#`, `[ ... ]`, `n*[ ... ]`).
    mutating func parseParameter() throws(SyntaxError) -> (Parameter, Bool) {
        let start = current
        if isPunct("{") {
            advance()
            let (name, _) = try identifier("a generic parameter name")
            try expect(":", "':' in a generic parameter '{X:Type}'")
            let kind = try parseType()
            try expect("}", "'}' closing the generic parameter")
            return (Parameter(kind: .generic(name: name, kind: kind), location: location(start)), false)
        }
        if case .hash = current.kind {
            advance()
            return (Parameter(kind: .raw("#"), location: location(start)), true)
        }
        if isPunct("[") || (current.kind.isNumber && isPunct("*", peekToken(1))) {
            var words: [String] = []
            if case .number(let n) = current.kind {
                words.append(n + "*")
                advance()
                advance()
            }
            advance() // '['
            words.append("[")
            while !isPunct("]") {
                if case .endOfFile = current.kind { throw SyntaxError(message: "expected ']'", token: current) }
                words.append(current.text)
                advance()
            }
            advance()
            words.append("]")
            return (Parameter(kind: .raw(words.joined(separator: " ")), location: location(start)), true)
        }
        let (name, _) = try identifier("a field name, '{', or '='")
        try expect(":", "':' after field name '\(name)'")
        var condition: FlagCondition?
        // `flags.3?Type`
        if case .identifier(let flagsField) = current.kind, isPunct(".", peekToken(1)),
           case .number(let bitText) = peekToken(2).kind, isPunct("?", peekToken(3)) {
            let fieldToken = current
            let bitToken = peekToken(2)
            advance(); advance(); advance(); advance()
            condition = FlagCondition(field: flagsField, bit: Int(bitText) ?? Int.max, location: location(fieldToken),
                                      bitLocation: location(bitToken))
        }
        let type = try parseType()
        return (Parameter(kind: .field(name: name, type: type, condition: condition), location: location(start)), false)
    }

    mutating func parseType() throws(SyntaxError) -> TypeExpression {
        let start = current
        if case .hash = current.kind {
            advance()
            return TypeExpression(name: "#", location: location(start))
        }
        var isBang = false, isPercent = false
        if isPunct("!") {
            isBang = true
            advance()
        } else if isPunct("%") {
            isPercent = true
            advance()
        }
        let (name, _) = try qualifiedName("a type")
        var arguments: [TypeExpression] = []
        if isPunct("<") {
            advance()
            arguments.append(try parseType())
            while isPunct(",") {
                advance()
                arguments.append(try parseType())
            }
            try expect(">", "'>' closing the type arguments of '\(name)'")
        }
        return TypeExpression(name: name, arguments: arguments, isBang: isBang, isPercent: isPercent,
                              location: location(start))
    }

    /// Result types also allow juxtaposition: `= Vector t;`, on the same line (so a missing `;` does not swallow
    /// the next declaration).
    mutating func parseResultType() throws(SyntaxError) -> TypeExpression {
        var type = try parseType()
        var arguments: [TypeExpression] = []
        while case .identifier = current.kind, current.line == peekToken(-1).line {
            arguments.append(try parseType())
        }
        if !arguments.isEmpty {
            type.arguments += arguments
            type.angleBrackets = false
        }
        return type
    }
}

extension Token.Kind {
    var isNumber: Bool {
        if case .number = self { return true }
        return false
    }
}
