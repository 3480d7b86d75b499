// A layer bump's generated diff holds only what changed: editing one definition of the real `api.tl` rewrites the
// file holding that type (or request) and the namespace file with the registry and the schema facts, nothing else.

import Foundation
import Testing
@testable import TLSchema
@testable import TLSwiftGen

@Suite struct MinimalDiffTests {
    struct Edit: Sendable, CustomTestStringConvertible {
        var testDescription: String
        /// Replaces the first occurrence of `old` (which must be in the schema) by `new`.
        var old: String
        var new: String
        /// The declaration whose file must change: a type (`InputPeer`) or `functions.<name>`.
        var owner: String
    }

    static let edits: [Edit] = [
        Edit(testDescription: "add a constructor",
             old: "inputPeerEmpty#7f3b18ea = InputPeer;\n",
             new: "inputPeerEmpty#7f3b18ea = InputPeer;\ninputPeerTest flags:# id:long title:flags.0?string = InputPeer;\n",
             owner: "InputPeer"),
        Edit(testDescription: "change a constructor (a new true flag, same ID)",
             old: "chatPhoto#1c6e1c11 flags:# has_video:flags.0?true ",
             new: "chatPhoto#1c6e1c11 flags:# has_video:flags.0?true is_test:flags.2?true ",
             owner: "ChatPhoto"),
        Edit(testDescription: "remove a constructor",
             old: "inputMessagesFilterPoll#fa2bc90a = MessagesFilter;\n", new: "", owner: "MessagesFilter"),
        Edit(testDescription: "add a function",
             old: "---functions---\n", new: "---functions---\nmessages.getTest peer:InputPeer = Bool;\n",
             owner: "functions.messages.getTest"),
    ]

    static let files = 40
    static let schema: String = (try? readText(Paths.schema("api.tl"))) ?? ""
    static let baseline: [String: String] = emit(schema)

    static func emit(_ text: String) -> [String: String] {
        let files = (try? GeneratorPipeline.emit(schemaText: text, displayName: "api.tl", namespace: "Api",
                                                 fileCount: files, embedSchema: true)) ?? []
        return Dictionary(files.map { ($0.name, $0.contents) }, uniquingKeysWith: { first, _ in first })
    }

    @Test(arguments: edits)
    func anEditTouchesItsOwnFileAndTheNamespaceFileOnly(_ edit: Edit) throws {
        #expect(Self.baseline.count == Self.files + 1)
        let range = try #require(Self.schema.range(of: edit.old))
        let edited = Self.emit(Self.schema.replacingCharacters(in: range, with: edit.new))
        #expect(Set(edited.keys) == Set(Self.baseline.keys))
        let changed = Set(edited.keys.filter { edited[$0] != Self.baseline[$0] })
        let owner = "Api\(String(format: "%02d", SwiftEmitter.fileIndex(edit.owner, of: Self.files))).swift"
        #expect(changed == [owner, "Api.swift"])
        // Within the owner's file the diff is the edited declaration's few dozen lines.
        let before = Self.baseline[owner]?.split(separator: "\n") ?? []
        let after = edited[owner]?.split(separator: "\n") ?? []
        let differing = try #require(changedLineCount(before, after))
        #expect(differing > 0 && differing <= 80, "\(differing) lines differ in \(owner) (of \(after.count))")
    }
}

/// The size of a shortest line diff (lines removed plus lines added), by Myers' O(ND) walk; nil past `limit`.
func changedLineCount(_ a: [Substring], _ b: [Substring], limit: Int = 2_000) -> Int? {
    let n = a.count, m = b.count, offset = limit + 1
    var furthest = [Int](repeating: 0, count: 2 * limit + 3)
    for d in 0...limit {
        for k in stride(from: -d, through: d, by: 2) {
            var x = (k == -d || (k != d && furthest[offset + k - 1] < furthest[offset + k + 1]))
                ? furthest[offset + k + 1] : furthest[offset + k - 1] + 1
            var y = x - k
            while x < n, y < m, a[x] == b[y] { x += 1; y += 1 }
            furthest[offset + k] = x
            if x >= n && y >= m { return d }
        }
    }
    return nil
}
