// The version the tools print is the newest one CHANGELOG.md describes, so a release cannot ship one without the
// other; the generator's copy (tlgen does not link the runtime) is the same.
import Foundation
import Testing
import TLRuntime
import TLSwiftGen

@Suite struct VersionTests {
    @Test func versionIsTheChangelogsNewest() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        // "## Unreleased" collects what the next release will carry; releases are "## MAJOR.MINOR.PATCH (date)".
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") && $0.dropFirst(3).first?.isNumber == true }
        let heading = try #require(newest, "CHANGELOG.md has no release heading")
        let version = heading.dropFirst(3).prefix { $0 != " " }
        #expect(String(version) == SwiftMTProto.version)
        #expect(GeneratorPipeline.version == SwiftMTProto.version)
        let parts = SwiftMTProto.version.split(separator: ".")
        #expect(parts.count == 3 && parts.allSatisfy { Int($0) != nil }, "not MAJOR.MINOR.PATCH: \(SwiftMTProto.version)")
    }
}
