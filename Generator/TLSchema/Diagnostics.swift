// Diagnostics: every problem the front end finds, with the file, line and column of the offending token.
// They are collected, never printed from deep inside, so `tlgen lint` can report all of them in one run.

/// A position in a schema file. Lines and columns count from 1; columns count Unicode scalars.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The file's path, as given to the parser.
    public var file: String
    /// The line, from 1.
    public var line: Int
    /// The column, from 1, in Unicode scalars.
    public var column: Int

    /// A location.
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `FILE:LINE:COLUMN`.
    public var description: String { "\(file):\(line):\(column)" }

    /// Orders by file, then line, then column.
    public static func < (a: SourceLocation, b: SourceLocation) -> Bool {
        (a.file, a.line, a.column) < (b.file, b.line, b.column)
    }
}

/// A problem found in a schema, with where it is and the source line for a caret display.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How serious a diagnostic is.
    public enum Severity: String, Sendable, Hashable {
        /// The schema is wrong; nothing is generated from it.
        case error
        /// Suspicious, but the schema can be used.
        case warning
        /// Extra information attached to another diagnostic.
        case note
    }

    /// How serious the problem is.
    public var severity: Severity
    /// What is wrong, in a sentence.
    public var message: String
    /// Where.
    public var location: SourceLocation
    /// The whole source line the location points into, for the caret display.
    public var sourceLine: String
    /// How many columns the caret underline spans (the offending token's length).
    public var length: Int

    /// A diagnostic; `length` is how many columns the caret underline spans.
    public init(_ severity: Severity, _ message: String, at location: SourceLocation, sourceLine: String, length: Int = 1) {
        self.severity = severity
        self.message = message
        self.location = location
        self.sourceLine = sourceLine
        self.length = max(1, length)
    }

    /// `FILE:LINE:COLUMN: error: MESSAGE`, the form editors and CI log parsers recognise.
    public var description: String { "\(location): \(severity.rawValue): \(message)" }

    /// The one-line form followed by the source line and a caret under the offending token.
    public var rendered: String {
        let pad = String(repeating: " ", count: max(0, location.column - 1))
        let underline = "^" + String(repeating: "~", count: max(0, length - 1))
        return "\(description)\n\(sourceLine)\n\(pad)\(underline)"
    }
}

/// Thrown by entry points that need a clean schema (such as the emitter) when checking found errors.
public struct SchemaErrors: Error, Sendable, CustomStringConvertible {
    /// The diagnostics, errors among them.
    public var diagnostics: [Diagnostic]
    /// Errors from `diagnostics`.
    public init(_ diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }
    /// Every diagnostic rendered, one after another.
    public var description: String { diagnostics.map(\.rendered).joined(separator: "\n") }
}
