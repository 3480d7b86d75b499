// Cases where a mistake on one line must not hide or swallow what follows. Each pins behaviour the front end is
// meant to have (ARCHITECTURE.md: "every error carries file, line, column"; one run reports everything).

import Testing
@testable import TLSchema

@Suite struct RecoveryTests {
    /// A missing `;` must be reported on its own line, and must not swallow the next declaration (the next line's
    /// name must not be read as a juxtaposed type argument, `= A b`).
    @Test func aMissingSemicolonDoesNotSwallowTheNextLine() {
        let diagnostics = reported("a x:int = A\nb y:Missing = B;")
        #expect(diagnostics.first?.hasPrefix("t.tl:1:") == true, "\(diagnostics)")
        #expect(diagnostics.contains("t.tl:2:5: error: unknown type 'Missing'"), "\(diagnostics)")
    }

    /// `user # id:long = User;` (a stray `#` with a space) must not turn a constructor into a silently dropped
    /// "primitive declaration" with no constructor and no diagnostic.
    @Test func aStrayHashDoesNotSilentlyDropAConstructor() {
        let schema = check("user # id:long = User;")
        #expect(!schema.diagnostics.isEmpty || schema.constructors.map(\.name) == ["user"],
                "no diagnostic, constructors: \(schema.constructors.map(\.name))")
    }

    /// The builtin forms stay accepted.
    @Test func builtinFormsStillParse() {
        let schema = check("int ? = Int;\nint128 4*[ int ] = Int128;\nvector#1cb5c415 {t:Type} # [ t ] = Vector t;")
        #expect(schema.diagnostics.isEmpty)
        #expect(schema.constructors.map(\.name) == ["vector"])
    }
}
