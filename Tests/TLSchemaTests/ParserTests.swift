// The parser: every grammar feature Telegram's schemas use, checked through the syntax tree it builds.

import Testing
@testable import TLSchema

private func parse(_ text: String) -> ParsedSchema {
    Parser.parse(file: testFile, text: text)
}

/// `name:cond?Type` for each parameter, as the tests below write them.
private func parameterTexts(_ d: Declaration) -> [String] {
    d.parameters.map { p in
        switch p.kind {
        case .field(let name, let type, let condition):
            "\(name):\(condition.map { "\($0.field).\($0.bit)?" } ?? "")\(type)"
        case .generic(let name, let kind): "{\(name):\(kind)}"
        case .raw(let text): "raw(\(text))"
        }
    }
}

@Suite struct ParserTests {
    @Test func sectionsAssignTypesAndFunctions() {
        let parsed = parse("""
            a = A;
            ---functions---
            f = A;
            ---types---
            b = B;
            ---functions---
            g = B;
            """)
        #expect(parsed.diagnostics.isEmpty)
        #expect(parsed.declarations.map { "\($0.name):\($0.section)" } == ["a:types", "f:functions", "b:types", "g:functions"])
    }

    @Test func declarationsSpanningLinesAndComments() {
        let parsed = parse("""
            // a comment before
            photo#b68c7c64 flags:#
                id:long /* the photo's id */
                caption:flags.0?string // until the end of the line
                = Photo;
            """)
        #expect(parsed.diagnostics.isEmpty)
        let d = try! #require(parsed.declarations.first)
        #expect(d.name == "photo")
        #expect(d.explicitID == 0xB68C_7C64)
        #expect(d.idLocation == SourceLocation(file: testFile, line: 2, column: 6))
        #expect(d.location == SourceLocation(file: testFile, line: 2, column: 1))
        #expect(parameterTexts(d) == ["flags:#", "id:long", "caption:flags.0?string"])
        #expect(d.result.description == "Photo")
        #expect(d.result.location == SourceLocation(file: testFile, line: 5, column: 7))
        #expect(d.computedID == 0xB68C_7C64)
    }

    @Test func flagFieldsOfAnyName() {
        let parsed = parse("m flags:# out:flags.1?true flags2:# offline:flags2.1?true via:flags2.0?long extra:#  e:extra.31?int = M;")
        #expect(parsed.diagnostics.isEmpty)
        let d = try! #require(parsed.declarations.first)
        #expect(parameterTexts(d) == ["flags:#", "out:flags.1?true", "flags2:#", "offline:flags2.1?true",
                                      "via:flags2.0?long", "extra:#", "e:extra.31?int"])
        guard case .field(_, _, let condition?) = d.parameters[4].kind else {
            Issue.record("via has no condition")
            return
        }
        #expect(condition.field == "flags2")
        #expect(condition.bit == 0)
        #expect(condition.location == SourceLocation(file: testFile, line: 1, column: 63))
        #expect(condition.bitLocation == SourceLocation(file: testFile, line: 1, column: 70))
    }

    @Test func genericsAndBang() {
        let parsed = parse("---functions---\ninvokeWithLayer#da9b0d0d {X:Type} layer:int query:!X = X;")
        #expect(parsed.diagnostics.isEmpty)
        let d = try! #require(parsed.declarations.first)
        #expect(d.section == .functions)
        #expect(parameterTexts(d) == ["{X:Type}", "layer:int", "query:!X"])
        guard case .field(_, let query, _) = d.parameters[2].kind else {
            Issue.record("query is not a field")
            return
        }
        #expect(query.isBang && !query.isPercent && query.name == "X")
        #expect(d.normalizedText() == "invokeWithLayer X:Type layer:int query:!X = X")
        #expect(d.computedID == 0xDA9B_0D0D)
    }

    @Test func vectorsBoxedBarePercentAndNested() {
        let parsed = parse("c a:Vector<long> b:vector<future_salt> c:vector<%Message> d:Vector<Vector<int>> = C;")
        #expect(parsed.diagnostics.isEmpty)
        let d = try! #require(parsed.declarations.first)
        #expect(parameterTexts(d) == ["a:Vector<long>", "b:vector<future_salt>", "c:vector<%Message>",
                                      "d:Vector<Vector<int>>"])
        #expect(d.normalizedText() == "c a:Vector long b:vector future_salt c:vector %Message d:Vector Vector int = C")
        guard case .field(_, let c, _) = d.parameters[2].kind else {
            Issue.record("c is not a field")
            return
        }
        #expect(c.name == "vector" && c.arguments.count == 1 && c.arguments[0].isPercent && c.arguments[0].name == "Message")
    }

    @Test func int128AndInt256() {
        let d = try! #require(parse("resPQ#05162463 nonce:int128 server_nonce:int256 = ResPQ;").declarations.first)
        #expect(parameterTexts(d) == ["nonce:int128", "server_nonce:int256"])
        #expect(d.explicitID == 0x0516_2463)
    }

    @Test func namespacedNamesAndTypes() {
        let parsed = parse("---functions---\nmessages.getHistory peer:InputPeer = messages.Messages;")
        let d = try! #require(parsed.declarations.first)
        #expect(d.name == "messages.getHistory")
        #expect(d.result.name == "messages.Messages")
        #expect(d.location == SourceLocation(file: testFile, line: 2, column: 1))
    }

    @Test func builtinVectorDeclaration() {
        let d = try! #require(parse("vector#1cb5c415 {t:Type} # [ t ] = Vector t;").declarations.first)
        #expect(!d.isPrimitiveDeclaration)
        #expect(parameterTexts(d) == ["{t:Type}", "raw(#)", "raw([ t ])"])
        #expect(d.result.description == "Vector t")
        #expect(d.normalizedText() == "vector t:Type # [ t ] = Vector t")
        #expect(d.computedID == 0x1CB5_C415)
    }

    @Test func primitiveDeclarationsAreMarked() {
        let parsed = parse("""
            int ? = Int;
            bytes = Bytes;
            int128 4*[ int ] = Int128;
            int256 8*[ int ] = Int256;
            true#3fedd339 = True;
            """)
        #expect(parsed.diagnostics.isEmpty)
        #expect(parsed.declarations.map(\.isPrimitiveDeclaration) == [true, true, true, true, false])
        #expect(parameterTexts(parsed.declarations[2]) == ["raw(4* [ int ])"])
    }

    @Test func layerIsRecorded() {
        #expect(parse("a = A;\n// LAYER 229\n").layer == 229)
        #expect(parse("a = A;").layer == nil)
    }

    // MARK: Normalization (PROVENANCE.md, "Constructor-ID rule")

    @Test func normalizationDropsBareTrueFlagsButKeepsOtherConditions() {
        let d = try! #require(parse("m flags:# out:flags.1?true id:flags.3?int v:flags.4?Vector<long> = M;").declarations.first)
        #expect(d.normalizedText() == "m flags:# id:flags.3?int v:flags.4?Vector long = M")
    }

    @Test func normalizationWritesWholeBytesFieldsAsString() {
        let d = try! #require(parse("s a:bytes b:flags.0?bytes c:Vector<bytes> flags:# = S;").declarations.first)
        #expect(d.normalizedText() == "s a:string b:flags.0?string c:Vector bytes flags:# = S")
        #expect(d.normalizedText(bytesAsString: false) == "s a:bytes b:flags.0?bytes c:Vector bytes flags:# = S")
    }

    @Test func aTrueTypedFieldWithoutAConditionIsKept() {
        let d = try! #require(parse("t x:true = T;").declarations.first)
        #expect(d.normalizedText() == "t x:true = T")
    }

    // MARK: Syntax errors, each at the offending token

    @Test(arguments: [
        ("a#123456789 = A;", "t.tl:1:2: error: constructor ID '#123456789' is not a 32-bit hexadecimal number"),
        ("a#12g4 = A;", "t.tl:1:2: error: constructor ID '#12g4' is not a 32-bit hexadecimal number"),
        ("a x:int", "t.tl:1:8: error: expected '=' and a result type before the end of the file"),
        ("a x:int;", "t.tl:1:8: error: expected '=' and a result type before ';'"),
        (": = A;", "t.tl:1:1: error: expected a constructor or function name, found ':'"),
        ("f {:Type} = X;", "t.tl:1:4: error: expected a generic parameter name, found ':'"),
        ("f {X Type} = X;", "t.tl:1:6: error: expected ':' in a generic parameter '{X:Type}', found 'Type'"),
        ("f {X:Type = X;", "t.tl:1:11: error: expected '}' closing the generic parameter, found '='"),
        ("a x:int : = A;", "t.tl:1:9: error: expected a field name, '{', or '=', found ':'"),
        ("a x int = A;", "t.tl:1:5: error: expected ':' after field name 'x', found 'int'"),
        ("a x: = A;", "t.tl:1:6: error: expected a type, found '='"),
        ("a x:Vector<int = A;", "t.tl:1:16: error: expected '>' closing the type arguments of 'Vector', found '='"),
        ("a x:int = A", "t.tl:1:12: error: expected ';' after the result type, found 'end of file'"),
        ("a x:int = A:", "t.tl:1:12: error: expected ';' after the result type, found ':'"),
        ("a [ t", "t.tl:1:6: error: expected ']'"),
    ])
    func syntaxError(source: String, expected: String) {
        #expect(parseErrors(source) == [expected])
    }

    @Test func syntaxErrorCaretSpansTheOffendingToken() {
        let diagnostic = try! #require(Parser.parse(file: testFile, text: "a#123456789 x:int = A;").diagnostics.first)
        #expect(diagnostic.length == 10)
        #expect(diagnostic.sourceLine == "a#123456789 x:int = A;")
    }

    @Test func recoveryResumesAfterTheNextSemicolon() {
        let parsed = parse("""
            a x: = A;
            b = B;
            c y int = C;
            d = D;
            ---functions---
            e z:Vector<int = D;
            f = D;
            """)
        #expect(parsed.diagnostics.map(\.description) == [
            "t.tl:1:6: error: expected a type, found '='",
            "t.tl:3:5: error: expected ':' after field name 'y', found 'int'",
            "t.tl:6:16: error: expected '>' closing the type arguments of 'Vector', found '='",
        ])
        #expect(parsed.declarations.map(\.name) == ["b", "d", "f"])
        #expect(parsed.declarations.last?.section == .functions)
    }

    @Test func recoveryStopsAtASectionMarker() {
        // The broken declaration has no `;`: the section marker still switches sections, and what follows parses.
        let parsed = parse("a x: \n---functions---\nf = A;")
        #expect(parsed.diagnostics.map(\.description) == ["t.tl:2:1: error: expected a type, found '---functions---'"])
        #expect(parsed.declarations.map { "\($0.name):\($0.section)" } == ["f:functions"])
    }

    @Test func lexicalAndSyntaxErrorsComeTogetherInPositionOrder() {
        #expect(parseErrors("a x: = A;\nb = B$;\n/* open") == [
            "t.tl:1:6: error: expected a type, found '='",
            "t.tl:2:6: error: unexpected character '$'",
            "t.tl:3:1: error: unterminated '/*' comment",
        ])
    }
}
