// The checker: every diagnostic it raises, each with its exact position and message; all of them in one run.

import Foundation
import Testing
@testable import TLSchema

@Suite struct CheckerDiagnosticTests {
    // MARK: Type references

    @Test(arguments: [
        ("a x:Foo = A;", "t.tl:1:5: error: unknown type 'Foo'"),
        ("a x:help.Foo = A;", "t.tl:1:5: error: unknown type 'help.Foo'"),
        ("a x:Vector<Foo> = A;", "t.tl:1:12: error: unknown type 'Foo'"),
        ("a flags:# x:flags.0?Foo = A;", "t.tl:1:21: error: unknown type 'Foo'"),
        ("a = A;\n---functions---\nf = Nope;", "t.tl:3:5: error: unknown type 'Nope'"),
        ("a = A;\n---functions---\nf = Vector<Nope>;", "t.tl:3:12: error: unknown type 'Nope'"),
        ("a x:Vector<true> = A;", "t.tl:1:12: error: unknown type 'true'"),
        ("a x:Vector = A;", "t.tl:1:5: error: 'Vector' takes exactly one type argument, as in 'Vector<long>'"),
        ("a x:vector<int,long> = A;", "t.tl:1:5: error: 'vector' takes exactly one type argument, as in 'vector<long>'"),
        ("a x:int<long> = A;", "t.tl:1:5: error: type 'int' does not take type arguments"),
        ("a x:%Foo = A;", "t.tl:1:5: error: unknown type 'Foo' in '%Foo'"),
        ("b = B;\nc = B;\na x:%B = A;", "t.tl:3:5: error: '%B' needs a type with exactly one constructor; 'B' has 2"),
        ("a = int;", "t.tl:1:5: error: constructor 'a' must build a boxed type, found 'int'"),
        ("a = Vector<int>;", "t.tl:1:5: error: constructor 'a' must build a boxed type, found 'Vector<int>'"),
    ])
    func typeReference(source: String, expected: String) {
        #expect(reported(source) == [expected])
    }

    @Test func everyKnownTypeFormResolves() {
        let schema = check("""
            boolTrue#997275b5 = Bool;
            future_salt valid_since:int = FutureSalt;
            message msg_id:long body:Object = Message;
            a i:int l:long d:double s:string b:bytes i1:int128 i2:int256 t:Bool f:flags.0?true flags:# = A;
            c b:future_salt v:vector<future_salt> p:%Message q:Vector<%Message> m:messages.Msgs = C;
            messages.msgs = messages.Msgs;
            """)
        // The `#` field comes after its use on purpose in `a`: that is the only error.
        #expect(schema.diagnostics.map(\.description)
            == ["t.tl:4:71: error: flag field 'flags' is declared after the field that uses it; a '#' field must come first"])
    }

    // MARK: Flags

    @Test(arguments: [
        ("a x:fl.0?int = A;", "t.tl:1:5: error: unknown flag field 'fl'; declare it first as 'fl:#'"),
        ("a x:flags.0?int flags:# = A;",
         "t.tl:1:5: error: flag field 'flags' is declared after the field that uses it; a '#' field must come first"),
        ("a flags:# y:flags2.0?int flags2:# = A;",
         "t.tl:1:13: error: flag field 'flags2' is declared after the field that uses it; a '#' field must come first"),
        ("a n:int x:n.0?int = A;", "t.tl:1:11: error: 'n' is not a '#' field, so it cannot hold flags"),
        ("a flags:# x:flags.32?int = A;", "t.tl:1:19: error: flag bit 32 is outside 0...31"),
        ("a flags:# x:flags.100?true = A;", "t.tl:1:19: error: flag bit 100 is outside 0...31"),
        ("a flags:# x:flags.99999999999999999999?int = A;", "t.tl:1:19: error: flag bit out of range is outside 0...31"),
    ])
    func flagReference(source: String, expected: String) {
        #expect(reported(source) == [expected])
    }

    @Test func bitsZeroAndThirtyOneAreAccepted() {
        #expect(reported("a flags:# x:flags.0?int y:flags.31?int flags2:# z:flags2.31?true = A;").isEmpty)
    }

    @Test func aFlagFieldMayBeUsedByManyFields() {
        #expect(reported("a flags:# x:flags.1?int y:flags.1?long z:flags.1?true = A;").isEmpty)
    }

    @Test func unknownFlagFieldAndBadBitAreBothReported() {
        #expect(reported("a x:fl.40?int = A;") == [
            "t.tl:1:5: error: unknown flag field 'fl'; declare it first as 'fl:#'",
            "t.tl:1:8: error: flag bit 40 is outside 0...31",
        ])
    }

    // MARK: Generics

    @Test func genericUsedButNotDeclared() {
        #expect(reported("---functions---\nf query:!X = X;") == [
            "t.tl:2:9: error: generic 'X' is used but not declared; add '{X:Type}' before it",
            "t.tl:2:14: error: unknown type 'X'",
        ])
    }

    @Test func genericDeclaredAfterItsUse() {
        #expect(reported("---functions---\nf query:!X {X:Type} = X;")
            == ["t.tl:2:9: error: generic 'X' is used but not declared; add '{X:Type}' before it"])
    }

    @Test func genericOfAnotherKind() {
        #expect(reported("---functions---\nf {X:Int} query:!X = X;")
            == ["t.tl:2:6: error: generic parameter 'X' must be of kind 'Type', found 'Int'"])
    }

    @Test func declaredGenericsResolve() {
        #expect(reported("---functions---\ninvokeWithLayer#da9b0d0d {X:Type} layer:int query:!X = X;").isEmpty)
    }

    // MARK: Names and IDs

    @Test func duplicateConstructorName() {
        #expect(reported("a = A;\na x:int = A;")
            == ["t.tl:2:1: error: duplicate constructor name 'a' (first declared at t.tl:1:1)"])
    }

    @Test func duplicateFunctionName() {
        #expect(reported("a = A;\n---functions---\nf = A;\nf x:int = A;")
            == ["t.tl:4:1: error: duplicate function name 'f' (first declared at t.tl:3:1)"])
    }

    @Test func aConstructorAndAFunctionMayShareANameButNotAnID() {
        #expect(reported("a = A;\n---functions---\na x:int = A;").isEmpty)
        #expect(reported("a#7aae25b9 = A;\n---functions---\na#7aae25b9 = A;")
            == ["t.tl:3:2: error: duplicate constructor ID #7aae25b9 of 'a': already used by 'a' at t.tl:1:1"])
    }

    @Test func duplicateComputedID() {
        #expect(reported("a = A;\n---functions---\na = A;")
            == ["t.tl:3:1: error: duplicate constructor ID #7aae25b9 of 'a': already used by 'a' at t.tl:1:1"])
    }

    @Test func aRepeatedLineIsBothADuplicateNameAndADuplicateID() {
        #expect(reported("a#7aae25b9 = A;\na#7aae25b9 = A;") == [
            "t.tl:2:1: error: duplicate constructor name 'a' (first declared at t.tl:1:1)",
            "t.tl:2:2: error: duplicate constructor ID #7aae25b9 of 'a': already used by 'a' at t.tl:1:1",
        ])
    }

    @Test func idMismatch() {
        #expect(reported("user#74e5ad7e id:long = User;") == [
            "t.tl:1:5: error: constructor ID #74e5ad7e of 'user' does not match CRC32 of its normalized definition, #74e5ad7d (\"user id:long = User\")",
        ])
    }

    @Test func idMismatchOnAFunction() {
        #expect(reported("user id:long = User;\n---functions---\ngetUser#686d73ce id:long = User;") == [
            "t.tl:3:8: error: constructor ID #686d73ce of 'getUser' does not match CRC32 of its normalized definition, #686d73cf (\"getUser id:long = User\")",
        ])
    }

    @Test func idsWithFewerThanEightDigitsAreCompared() {
        // `#5162463` is `#05162463`.
        #expect(reported("resPQ#5162463 nonce:int128 server_nonce:int128 pq:bytes server_public_key_fingerprints:Vector<long> = ResPQ;").isEmpty)
    }

    @Test func aReusedIDIsReportedOnceWhenOneSideFailsItsCRC() {
        // TDLib's `…Prefix` helpers: reported as a mismatch, not also as a duplicate.
        #expect(reported("ipPort#d433ad73 ipv4:int port:int = IpPort;\nother#d433ad73 = IpPort;") == [
            "t.tl:2:6: error: constructor ID #d433ad73 of 'other' does not match CRC32 of its normalized definition, #cc384a35 (\"other = IpPort\")",
        ])
    }

    @Test func missingIDsAreComputedByTheSameRule() {
        let schema = check("""
            ipPort ipv4:int port:int = IpPort;
            vector {t:Type} # [ t ] = Vector t;
            photo flags:# id:long big:flags.2?true caption:flags.1?string = Photo;
            ---functions---
            invokeWithLayer {X:Type} layer:int query:!X = X;
            """)
        #expect(schema.diagnostics.isEmpty)
        #expect(schema.constructors.map(\.id) == [0xD433_AD73, 0x1CB5_C415, 0x18E4_EDF5])
        #expect(schema.constructors.map(\.hasExplicitID) == [false, false, false])
        #expect(schema.functions.map(\.id) == [0xDA9B_0D0D])
    }

    @Test func explicitIDsAreKeptAndMarked() {
        let schema = check("ipPort#d433ad73 ipv4:int port:int = IpPort;")
        #expect(schema.constructors.first?.id == 0xD433_AD73)
        #expect(schema.constructors.first?.hasExplicitID == true)
        #expect(schema.constructors.first?.definition == "ipPort#d433ad73 ipv4:int port:int = IpPort;")
    }

    // MARK: Known exceptions (PROVENANCE.md)

    static let ipPortSecret = "ipPortSecret#37982646 ipv4:int port:int secret:bytes = IpPort;"

    @Test func ipPortSecretIsAcceptedWithItsOwnID() {
        #expect(reported(Self.ipPortSecret).isEmpty)
    }

    @Test func ipPortSecretWithATypoedIDIsStillAnError() {
        #expect(reported("ipPortSecret#37982647 ipv4:int port:int secret:bytes = IpPort;") == [
            "t.tl:1:13: error: constructor ID #37982647 of 'ipPortSecret' does not match CRC32 of its normalized definition, #402d9b47 (\"ipPortSecret ipv4:int port:int secret:string = IpPort\")",
        ])
    }

    @Test func ipPortSecretWithAnotherDefinitionIsAnError() {
        // Same name and ID, but the variant of the rule no longer reproduces the ID.
        #expect(reported("ipPortSecret#37982646 ipv4:int port:long secret:bytes = IpPort;").count == 1)
    }

    @Test func anExceptionIDUnderAnotherNameIsAnError() {
        #expect(reported("ipPortSecret2#37982646 ipv4:int port:int secret:bytes = IpPort;").count == 1)
    }

    @Test func acceptedExceptionsNeedTheirExactID() {
        let rule = "accessPointRule#4679b65f phone_prefix_rules:string dc_id:int ips:vector<IpPort> = AccessPointRule;"
        let base = "ipPort#d433ad73 ipv4:int port:int = IpPort;\n"
        #expect(reported(base + rule).isEmpty)
        let typo = reported(base + rule.replacingOccurrences(of: "4679b65f", with: "4679b65e"))
        #expect(typo.count == 1)
        #expect(typo.first?.hasPrefix("t.tl:2:16: error: constructor ID #4679b65e of 'accessPointRule' does not match") == true)
    }

    @Test func msgContainerIsAcceptedUnderItsOlderSpelling() {
        #expect(reported("""
            message msg_id:long seqno:int bytes:int body:Object = Message;
            msg_container#73f1f8dc messages:vector<%Message> = MessageContainer;
            """).isEmpty)
    }

    @Test func withoutTheExceptionListTheyAreErrors() {
        let schema = Checker.check(file: testFile, text: Self.ipPortSecret, exceptions: [])
        #expect(schema.diagnostics.map(\.location.description) == ["t.tl:1:13"])
    }

    @Test func theExceptionListIsTheOneProvenanceDocuments() {
        #expect(KnownIDException.all.map { "\($0.name)#\(String($0.id, radix: 16))" } == [
            "ipPortSecret#37982646", "decryptedMessageMediaDocument#6abd9782", "msg_container#73f1f8dc",
            "accessPointRule#4679b65f", "help.configSimple#5a592a6c",
        ])
    }

    // MARK: Everything in one run

    @Test func severalErrorsAreAllReportedInPositionOrder() {
        let schema = check("""
            ---functions---
            f query:!X = Vector<Nope>;
            ---types---
            a x:Foo = A;
            b flags:# y:flags.40?int = B;
            c y:fl.0?int = C;
            user#74e5ad7e id:long = User;
            a z:int = A;
            d q: = D;
            e = E$;
            """)
        #expect(schema.diagnostics.map(\.description) == [
            "t.tl:2:9: error: generic 'X' is used but not declared; add '{X:Type}' before it",
            "t.tl:2:21: error: unknown type 'Nope'",
            "t.tl:4:5: error: unknown type 'Foo'",
            "t.tl:5:19: error: flag bit 40 is outside 0...31",
            "t.tl:6:5: error: unknown flag field 'fl'; declare it first as 'fl:#'",
            "t.tl:7:5: error: constructor ID #74e5ad7e of 'user' does not match CRC32 of its normalized definition, #74e5ad7d (\"user id:long = User\")",
            "t.tl:8:1: error: duplicate constructor name 'a' (first declared at t.tl:4:1)",
            "t.tl:9:6: error: expected a type, found '='",
            "t.tl:10:6: error: unexpected character '$'",
        ])
        #expect(schema.errors.count == 9)
        #expect(schema.diagnostics.allSatisfy { $0.severity == .error })
    }

    @Test func aBrokenLineDoesNotHideErrorsOnLaterLines() {
        #expect(reported("a x:int = ;\nb y:Missing = B;\nc#1 = C;") == [
            "t.tl:1:11: error: expected a type, found ';'",
            "t.tl:2:5: error: unknown type 'Missing'",
            "t.tl:3:2: error: constructor ID #00000001 of 'c' does not match CRC32 of its normalized definition, #ee6017f5 (\"c = C\")",
        ])
    }

    @Test func theSameMistakeIsReportedOncePerUse() {
        #expect(reported("a x:Foo y:Vector<Foo> = A;\nb z:Foo = B;") == [
            "t.tl:1:5: error: unknown type 'Foo'",
            "t.tl:1:18: error: unknown type 'Foo'",
            "t.tl:2:5: error: unknown type 'Foo'",
        ])
    }
}

@Suite struct DiagnosticRenderingTests {
    @Test func renderedShowsTheLineAndACaretUnderTheToken() throws {
        let diagnostic = try #require(check("a = A;\nb   x:Foo = B;").diagnostics.first)
        #expect(diagnostic.rendered == """
            t.tl:2:7: error: unknown type 'Foo'
            b   x:Foo = B;
                  ^~~
            """)
    }

    @Test func caretAtColumnOne() throws {
        let diagnostic = try #require(check("a = A;\na x:int = A;").diagnostics.first)
        #expect(diagnostic.rendered == """
            t.tl:2:1: error: duplicate constructor name 'a' (first declared at t.tl:1:1)
            a x:int = A;
            ^
            """)
    }

    @Test func caretSpansAnEightDigitID() throws {
        let diagnostic = try #require(check("user#74e5ad7e id:long = User;").diagnostics.first)
        #expect(diagnostic.rendered.split(separator: "\n").dropFirst().joined(separator: "\n") == """
            user#74e5ad7e id:long = User;
                ^~~~~~~~~
            """)
    }

    @Test func caretSpansAShortID() throws {
        // `#dbaeae9` is 8 columns wide (TDLib writes inputStickerSetThumbLegacy's ID this way).
        let diagnostic = try #require(check("user#74e5ad7 id:long = User;").diagnostics.first)
        #expect(diagnostic.location.column == 5)
        #expect(diagnostic.length == 8)
    }

    @Test func sourceLinesOfACRLFFile() throws {
        let diagnostic = try #require(check("a = A;\r\nb x:Foo = B;\r\n").diagnostics.first)
        #expect(diagnostic.description == "t.tl:2:5: error: unknown type 'Foo'")
        #expect(diagnostic.sourceLine == "b x:Foo = B;")
    }

    @Test func caretForASyntaxErrorAtTheEndOfTheFile() throws {
        let diagnostic = try #require(check("a x:int").diagnostics.first)
        #expect(diagnostic.rendered == """
            t.tl:1:8: error: expected '=' and a result type before the end of the file
            a x:int
                   ^
            """)
    }

    @Test func descriptionIsTheCompilerForm() {
        let d = Diagnostic(.warning, "something", at: SourceLocation(file: "x.tl", line: 3, column: 4), sourceLine: "abc",
                           length: 0)
        #expect(d.description == "x.tl:3:4: warning: something")
        #expect(d.length == 1)
    }

    @Test func locationsOrderByFileThenLineThenColumn() {
        let a = SourceLocation(file: "a.tl", line: 9, column: 9)
        let b1 = SourceLocation(file: "b.tl", line: 1, column: 5)
        let b2 = SourceLocation(file: "b.tl", line: 2, column: 1)
        let b3 = SourceLocation(file: "b.tl", line: 2, column: 3)
        #expect([b3, b2, a, b1].sorted() == [a, b1, b2, b3])
    }

    @Test func schemaErrorsRenderEveryDiagnostic() {
        let schema = check("a x:Foo = A;\nb y:Bar = B;")
        let text = SchemaErrors(schema.errors).description
        #expect(text == """
            t.tl:1:5: error: unknown type 'Foo'
            a x:Foo = A;
                ^~~
            t.tl:2:5: error: unknown type 'Bar'
            b y:Bar = B;
                ^~~
            """)
    }
}
