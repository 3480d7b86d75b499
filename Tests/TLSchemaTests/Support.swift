// Helpers shared by the schema tests: run the front end on inline text, and find the repository's schema files.

import Foundation
@testable import TLSchema

/// The file name every inline test schema is reported under.
let testFile = "t.tl"

/// Parse and check `text` as if it were the file `t.tl`.
func check(_ text: String) -> Schema {
    Checker.check(file: testFile, text: text)
}

/// `FILE:LINE:COLUMN: error: MESSAGE` for every diagnostic, in the order reported.
func reported(_ text: String) -> [String] {
    check(text).diagnostics.map(\.description)
}

/// `FILE:LINE:COLUMN: error: MESSAGE` for every diagnostic the parser (lexer included) reports.
func parseErrors(_ text: String) -> [String] {
    Parser.parse(file: testFile, text: text).diagnostics.map(\.description)
}

func lex(_ text: String) -> LexedFile {
    Lexer(file: testFile, text: text).lex()
}

/// The token kinds of `text`, without the final end-of-file token.
func kinds(_ text: String) -> [Token.Kind] {
    Array(lex(text).tokens.dropLast().map(\.kind))
}

enum Paths {
    /// The repository root: Tests/TLSchemaTests/<this file> is three levels below it.
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func schema(_ relativePath: String) -> URL {
        repositoryRoot.appendingPathComponent("Schemas").appendingPathComponent(relativePath)
    }

    /// Older API layers (provenance in Schemas/PROVENANCE.md).
    static func history(_ name: String) -> URL {
        repositoryRoot.appendingPathComponent("Schemas/history").appendingPathComponent(name)
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

/// Checks a schema file from disk, reported under its name relative to its folder (e.g. `api.tl`).
func checkFile(_ url: URL) throws -> Schema {
    Checker.check(file: url.lastPathComponent, text: try readText(url))
}
