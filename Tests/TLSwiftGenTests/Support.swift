// Helpers for the emitter tests: fixture locations, and a readable report of where two texts first differ.

import Foundation

enum Paths {
    /// The repository root: Tests/TLSwiftGenTests/<this file> is three levels below it.
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let emitterFixtures: URL = repositoryRoot.appendingPathComponent("Fixtures/emitter")

    static let diffFixtures: URL = repositoryRoot.appendingPathComponent("Fixtures/diff")

    /// `Schemas/history/<name>`: older API layers, for the diff tests (provenance in Schemas/PROVENANCE.md).
    static func history(_ name: String) -> URL {
        repositoryRoot.appendingPathComponent("Schemas/history").appendingPathComponent(name)
    }

    static func schema(_ relativePath: String) -> URL {
        repositoryRoot.appendingPathComponent("Schemas").appendingPathComponent(relativePath)
    }
}

struct MissingFile: Error, CustomStringConvertible {
    var path: String
    var description: String { "cannot read \(path)" }
}

func readText(_ url: URL) throws -> String {
    guard let data = FileManager.default.contents(atPath: url.path) else { throw MissingFile(path: url.path) }
    return String(decoding: data, as: UTF8.self)
}

/// Where `actual` first departs from `expected`: the line number, a few lines of context from each, and the sizes.
/// Empty when the texts are equal.
func firstDifference(expected: String, actual: String, context: Int = 3) -> String {
    guard expected != actual else { return "" }
    let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
    let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
    var line = 0
    while line < min(e.count, a.count), e[line] == a[line] { line += 1 }
    let from = max(0, line - context)
    func excerpt(_ lines: [Substring], marker: String) -> String {
        guard from < lines.count else { return "  (the text ends before line \(line + 1))" }
        return lines[from..<min(lines.count, line + context + 1)].enumerated().map { offset, text in
            let number = from + offset + 1
            return "\(number == line + 1 ? marker : " ") \(String(number).leftPadded(to: 5)) | \(text)"
        }.joined(separator: "\n")
    }
    return """
        first difference at line \(line + 1) (expected \(e.count) lines, generated \(a.count)):
        --- expected
        \(excerpt(e, marker: "-"))
        +++ generated
        \(excerpt(a, marker: "+"))
        """
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
