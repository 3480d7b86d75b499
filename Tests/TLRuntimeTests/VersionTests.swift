// The version the tools print is the newest one CHANGELOG.md describes, so a release cannot ship one without the
// other.
import Foundation
import Testing
import TLRuntime

@Suite struct VersionTests {
    @Test func versionIsTheChangelogsNewest() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        let heading = try #require(newest, "CHANGELOG.md has no release heading")
        let version = heading.dropFirst(3).prefix { $0 != " " }
        #expect(String(version) == SwiftMTProto.version)
        let parts = SwiftMTProto.version.split(separator: ".")
        #expect(parts.count == 3 && parts.allSatisfy { Int($0) != nil }, "not MAJOR.MINOR.PATCH: \(SwiftMTProto.version)")
    }
}
