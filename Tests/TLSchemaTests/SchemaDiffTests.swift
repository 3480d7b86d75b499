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
        #expect(diff.addedTypes.isEmpty && diff.removedTypes.isEmpty)
        #expect(diff.constructors.redefined[0].fieldChanges == [.added(new.constructors[0].fields[1])])
        #expect(diff.constructors.redefined[1].fieldChanges.map(\.description) == ["~ y: int -> long"])
        #expect(diff.rendered.hasPrefix("""
            layer 1 -> 2
            types: 0 added, 0 removed
            constructors: 1 added, 1 removed, 2 redefined
            functions: 1 added, 0 removed, 0 redefined
            + d#
            """))
        #expect(diff.rendered.contains("\n~ a (same ID #\(String(diff.constructors.redefined[0].new.id, radix: 16)))\n    + quiet:flags.1?true\n"))
        #expect(diff.rendered.contains("\n~ c (ID #"))
        #expect(SchemaDiff(old: new, new: new).isEmpty)
    }

    @Test func fieldChangesOfEachKind() {
        let old = check("a flags:# x:flags.0?int y:int z:string w:long gone:int = A;")
        let new = check("a flags:# x:flags.3?int y:flags.1?int w:long z:string n:bytes = A;")
        let change = SchemaDiff(old: old, new: new).constructors.redefined.first
        #expect(change?.fieldChanges.map(\.description) == [
            "~ x: flags.0 -> flags.3 (moved)",
            "~ y: int -> flags.1?int",
            "+ n:bytes",
            "- gone:int",
            "~ order: flags x y z w -> flags x y w z",
        ])
        #expect(change?.idChanged == true)
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
