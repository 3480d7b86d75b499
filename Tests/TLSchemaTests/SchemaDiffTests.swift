// `tlgen diff`: what a layer bump adds, removes and redefines.

import Testing
@testable import TLSchema

@Suite struct SchemaDiffTests {
    @Test func addedRemovedAndRedefinedEntries() {
        let old = check("""
            a flags:# x:flags.0?int = A;
            b = B;
            c y:int = C;
            ---functions---
            f = A;
            // LAYER 1
            """)
        let new = check("""
            a flags:# quiet:flags.1?true x:flags.0?int = A;
            c y:long = C;
            d = B;
            ---functions---
            f = A;
            g = B;
            // LAYER 2
            """)
        let diff = SchemaDiff(old: old, new: new)
        #expect(diff.oldLayer == 1 && diff.newLayer == 2)
        #expect(diff.constructors.added.map(\.name) == ["d"])
        #expect(diff.constructors.removed.map(\.name) == ["b"])
        #expect(diff.constructors.redefined.map(\.new.name) == ["a", "c"])
        // A new `true` flag keeps the ID (it does not count in the CRC); a new field type does not.
        #expect(diff.constructors.redefined[0].old.id == diff.constructors.redefined[0].new.id)
        #expect(diff.constructors.redefined[1].old.id != diff.constructors.redefined[1].new.id)
        #expect(diff.functions.added.map(\.name) == ["g"])
        #expect(diff.functions.removed.isEmpty && diff.functions.redefined.isEmpty)
        #expect(diff.rendered.hasPrefix("layer 1 -> 2\nconstructors: 1 added, 1 removed, 2 redefined\n+ d#"))
        #expect(diff.rendered.contains("~ a (same ID)"))
        #expect(diff.rendered.contains("~ c (new ID)"))
        #expect(SchemaDiff(old: new, new: new).isEmpty)
    }

    @Test func theLayer228To229Bump() throws {
        let old = try checkFile(Paths.history("api228_tdlib.tl"))
        let new = try checkFile(Paths.schema("api.tl"))
        let diff = SchemaDiff(old: old, new: new)
        let redefined = Dictionary(uniqueKeysWithValues: diff.constructors.redefined.map { ($0.new.name, $0) })
        // From PROVENANCE.md's list of 228 -> 229 changes.
        #expect(redefined["replyInlineMarkup"].map { $0.new.id } == 0xb2b1_5770)
        #expect(redefined["chatFull"].map { $0.old.id == $0.new.id } == true)
        #expect(diff.constructors.added.contains { $0.name == "pageBlockButtonRow" })
        #expect(diff.functions.added.contains { $0.name == "auth.initFirebasePnvLogin" })
        #expect(diff.constructors.removed.contains { $0.name == "keyboardButtonUrl" })
    }
}
