// `tlgen diff`: the field-level report and its Swift source classification, pinned by golden files (text and
// Markdown) for real layer bumps and for a hand-made schema pair with one change of each kind.

import Foundation
import Testing
import TLSchema
@testable import TLSwiftGen

struct DiffGolden: Sendable, CustomTestStringConvertible {
    var name: String
    var old: URL
    var new: URL
    var testDescription: String { name }

    static let all: [DiffGolden] = [
        DiffGolden(name: "breaks", old: Paths.diffFixtures.appendingPathComponent("breaks-old.tl"),
                   new: Paths.diffFixtures.appendingPathComponent("breaks-new.tl")),
        DiffGolden(name: "api228-to-current", old: Paths.history("api228_tdlib.tl"), new: Paths.schema("api.tl")),
        DiffGolden(name: "api214-to-current", old: Paths.history("api214_tdesktop.tl"), new: Paths.schema("api.tl")),
    ]

    func report() throws -> DiffReport {
        // TDLib's file has six preamble entries whose IDs the checker rejects; entries still compare by name and ID.
        let old = Checker.check(file: old.lastPathComponent, text: try readText(old))
        let new = Checker.check(file: new.lastPathComponent, text: try readText(new))
        return DiffReport(old: old, new: new, namespace: "Api")
    }
}

@Suite struct DiffReportTests {
    static var updating: Bool { ProcessInfo.processInfo.environment["TLGEN_UPDATE_GOLDEN"] == "1" }

    @Test(arguments: DiffGolden.all)
    func reportsMatchTheCommittedGoldens(_ golden: DiffGolden) throws {
        let report = try golden.report()
        for format in DiffReport.Format.allCases {
            let url = Paths.diffFixtures.appendingPathComponent("\(golden.name).\(format == .text ? "txt" : "md")")
            let actual = report.rendered(format) + "\n"
            if Self.updating { try Data(actual.utf8).write(to: url) }
            let expected = try readText(url)
            #expect(firstDifference(expected: expected, actual: actual).isEmpty,
                    "\(url.lastPathComponent): \(firstDifference(expected: expected, actual: actual))\nrun `TLGEN_UPDATE_GOLDEN=1 swift test --filter DiffReportTests` and review the diff")
        }
    }

    @Test func eachKindOfChangeIsClassified() throws {
        let report = try #require(DiffGolden.all.first).report()
        let breaking = Set(report.compatibility.breaking.map(\.description))
        let compatible = Set(report.compatibility.compatible.map(\.description))
        for expected in [
            "! Api.Peer: new case .peerChannel breaks exhaustive `switch`es",
            "! Api.Peer: case .peerChat removed",
            "! Api.Gone: type removed",
            "! Api.legacy: namespace removed (renamed?): every use breaks",
            "! Api.Photo.Cons_photo: new required parameter `dc: Int32`",
            "! Api.Photo.Cons_photo: `date` is now Int64, was Int32",
            "! Api.Photo.Cons_photo: parameter and property `size` removed",
            "! Api.Point.Cons_point: `long` is now Int32?, was Int32",
            "! Api.Status.status: the case gained a payload (Cons_status)",
            "! Api.Status.stray: moved from Api.Stray to Api.Status",
            "! Api.Pair.Cons_pair: parameter order changed: labelled arguments must follow it",
            "! Api.functions.oldCall: function removed",
            "! Api.functions.search: new required parameter `offset: Int32`",
            "! Api.functions.getPoint: result is now Api.Status, was Api.Point",
        ] { #expect(breaking.contains(expected), "\(expected)") }
        for expected in [
            "  Api.Fresh: new type",
            "  Api.modern: new namespace",
            "  Api.functions.newCall: new function",
            "  Api.Photo.Cons_photo: new parameter `thumb: String?` with a default",
            "  Api.Photo.Cons_photo: new parameter `video: Bool` with a default",
            "  Api.functions.getPhoto: new parameter `small: Bool` with a default",
        ] { #expect(compatible.contains(expected), "\(expected)") }
        // A field moved to another bit is a wire change: listed in the schema diff, no Swift impact of its own.
        let photo = try #require(report.diff.constructors.redefined.first { $0.new.name == "photo" })
        #expect(photo.fieldChanges.map(\.description).contains("~ caption: flags.0 -> flags.3 (moved)"))
        #expect(!(breaking.union(compatible)).contains { $0.contains("caption") })
        #expect(photo.idChanged)
    }

    @Test func onlyWireChangesAreCompatible() {
        let old = Checker.check(file: "a.tl", text: "u flags:# a:flags.0?int b:int = U;\n---functions---\nf x:int = U;")
        let new = Checker.check(file: "b.tl", text: "u flags:# a:flags.5?int b:int q:flags.1?true = U;\n---functions---\nf x:int = U;")
        let report = DiffReport(old: old, new: new, namespace: "X")
        #expect(report.compatibility.breaking.isEmpty)
        #expect(report.compatibility.compatible.map(\.description) == ["  X.U.Cons_u: new parameter `q: Bool` with a default"])
        #expect(DiffReport(old: old, new: old, namespace: "X").compatibility.impacts.isEmpty)
    }

    @Test func aTrueFlagSharingABitWithAValueFieldIsNoParameter() {
        // `bot` is computed from `botInfoVersion` (same bit): no init parameter, so adding it breaks nothing.
        let old = Checker.check(file: "a.tl", text: "u flags:# bot_info_version:flags.14?int = U;")
        let new = Checker.check(file: "b.tl", text: "u flags:# bot:flags.14?true bot_info_version:flags.14?int = U;")
        let report = DiffReport(old: old, new: new, namespace: "X")
        #expect(report.compatibility.impacts.map(\.description) == ["  X.U.Cons_u: wire only (same Swift signature)"])
    }
}
