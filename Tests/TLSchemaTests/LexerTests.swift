// The lexer: tokens, positions, comments, section markers, `// LAYER N`, and the lexical errors.

import Testing
@testable import TLSchema

@Suite struct LexerTests {
    @Test func constructorIDTouchingTheNameIsOneToken() {
        #expect(kinds("user#74e5ad7d id:long = User;") == [
            .identifier("user"), .constructorID("74e5ad7d"), .identifier("id"), .punctuation(":"),
            .identifier("long"), .punctuation("="), .identifier("User"), .punctuation(";"),
        ])
    }

    @Test func hashAfterColonIsTheNatType() {
        #expect(kinds("flags:# flags2:#") == [
            .identifier("flags"), .punctuation(":"), .hash, .identifier("flags2"), .punctuation(":"), .hash,
        ])
    }

    @Test func hashSeparatedFromTheNameIsNotAnID() {
        #expect(kinds("vector {t:Type} # [ t ]") == [
            .identifier("vector"), .punctuation("{"), .identifier("t"), .punctuation(":"), .identifier("Type"),
            .punctuation("}"), .hash, .punctuation("["), .identifier("t"), .punctuation("]"),
        ])
    }

    @Test func flagConditionTokens() {
        #expect(kinds("x:flags2.31?Vector<%T>") == [
            .identifier("x"), .punctuation(":"), .identifier("flags2"), .punctuation("."), .number("31"),
            .punctuation("?"), .identifier("Vector"), .punctuation("<"), .punctuation("%"), .identifier("T"),
            .punctuation(">"),
        ])
    }

    @Test func sectionMarkers() {
        #expect(kinds("---types---\n---functions---\n") == [.section("types"), .section("functions")])
    }

    @Test func commentsProduceNoTokens() {
        #expect(kinds("// line comment = X;\n/* block\n comment; */ a /* inline */ = A; // trailing") == [
            .identifier("a"), .punctuation("="), .identifier("A"), .punctuation(";"),
        ])
    }

    @Test func positionsCountLinesAndColumnsFromOne() {
        let tokens = lex("/* one\ntwo */  a#7aae25b9\n\t= A;").tokens
        let positions = tokens.map { "\($0.text)@\($0.line):\($0.column)+\($0.length)" }
        #expect(positions == ["a@2:9+1", "#7aae25b9@2:10+9", "=@3:2+1", "A@3:4+1", ";@3:5+1", "end of file@3:6+1"])
    }

    @Test func carriageReturnsAreWhitespaceAndStrippedFromSourceLines() {
        let lexer = Lexer(file: testFile, text: "a = A;\r\nb = B;\r\n")
        let tokens = lexer.lex().tokens
        #expect(tokens.map(\.text) == ["a", "=", "A", ";", "b", "=", "B", ";", "end of file"])
        #expect(tokens[4].line == 2 && tokens[4].column == 1)
        #expect(lexer.sourceLine(1) == "a = A;")
        #expect(lexer.sourceLine(3) == "")
        #expect(lexer.sourceLine(0) == "")
    }

    @Test func layerComment() {
        #expect(lex("a = A;\n// LAYER 229\n").layer?.value == 229)
        #expect(lex("a = A;\n// LAYER 229\n").layer?.line == 2)
        #expect(lex("//LAYER 8").layer?.value == 8)
        #expect(lex("  //   LAYER   46  ").layer?.value == 46)
    }

    @Test func theLastLayerCommentWins() {
        let lexed = lex("// LAYER 8\na = A;\n// LAYER 144\n")
        #expect(lexed.layer?.value == 144)
        #expect(lexed.layer?.line == 3)
    }

    @Test func proseMentioningALayerIsNotAMarker() {
        #expect(lex("// LAYER 229 was the last one").layer == nil)
        #expect(lex("// since layer 17").layer == nil)
        #expect(lex("// layer 17").layer == nil)
        #expect(lex("// LAYER x").layer == nil)
        #expect(lex("/* LAYER 5 */").layer == nil)
        #expect(lex("a = A;").layer == nil)
    }

    @Test func unterminatedBlockComment() {
        let lexed = lex("a = A;\n  /* never closed\nb = B;")
        #expect(lexed.diagnostics.map(\.description) == ["t.tl:2:3: error: unterminated '/*' comment"])
        #expect(lexed.diagnostics.first?.length == 2)
        #expect(lexed.tokens.map(\.text) == ["a", "=", "A", ";", "end of file"])
    }

    @Test func unknownSectionMarker() {
        let lexed = lex("a = A;\n---funcs---\nb = B;")
        #expect(lexed.diagnostics.map(\.description)
            == ["t.tl:2:1: error: unknown section marker '---funcs---'; expected '---types---' or '---functions---'"])
        #expect(lexed.diagnostics.first?.length == 11)
        #expect(lexed.tokens.map(\.text) == ["a", "=", "A", ";", "b", "=", "B", ";", "end of file"])
    }

    @Test func unexpectedCharacters() {
        let lexed = lex("a x:int$ = A;\nb y:é = B;")
        #expect(lexed.diagnostics.map(\.description) == [
            "t.tl:1:8: error: unexpected character '$'",
            "t.tl:2:5: error: unexpected character '\\u{00E9}'",
        ])
    }
}
