// The TL schema parser and checker (what `tlgen lint` runs) on arbitrary text: it returns, and every
// diagnostic and declaration points inside the text.
import TLSchema

public func fuzzSchema(_ data: [UInt8]) throws(Violation) {
    let text = String(decoding: data, as: UTF8.self)
    let file = "fuzz.tl"
    let schema = Checker.check(file: file, text: text)
    // The lexer's lines: split at "\n" (and "\r\n", one Character); columns count Unicode scalars from 1, and
    // may sit one past a line's last scalar (end of line or of file).
    let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    func check(_ location: SourceLocation, _ what: String) throws(Violation) {
        guard location.file == file else { throw Violation("\(what) names file \(location.file)") }
        guard location.line >= 1, location.line <= lines.count else {
            throw Violation("\(what) at line \(location.line), the text has \(lines.count)")
        }
        let width = lines[location.line - 1].unicodeScalars.count
        guard location.column >= 1, location.column <= width + 1 else {
            throw Violation("\(what) at \(location.line):\(location.column), the line has \(width) scalars")
        }
    }
    for diagnostic in schema.diagnostics {
        try check(diagnostic.location, "diagnostic '\(diagnostic.message)'")
        _ = diagnostic.rendered
    }
    // The language-owned constructors (`vector`, `boolTrue`…) are located in no file of ours.
    for combinator in schema.constructors + schema.functions where combinator.location.file == file {
        try check(combinator.location, "declaration \(combinator.name)")
        for field in combinator.fields { try check(field.location, "field \(combinator.name).\(field.name)") }
    }
}
