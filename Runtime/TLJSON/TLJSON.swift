// JSON as tl-json needs it: object keys keep their order (schema order), and numbers keep their text, so a `long`
// never passes through a Double and `-0.0` keeps its sign (Fixtures/corpus/README.md, "tl-json").

/// A JSON value as tl-json needs it: numbers keep their text and objects their key order.
public indirect enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// The number as written.
    case number(String)
    /// A string, unescaped.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, its keys in the order written.
    case object([(String, JSONValue)])

    /// Equal values: objects key by key in order; integers exactly, other numbers by their IEEE-754 bits.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return JSONValue.sameNumber(x, y)
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Integers compare exactly; other numbers by their IEEE-754 bit pattern (so `-0.0` differs from `0.0`).
    static func sameNumber(_ x: String, _ y: String) -> Bool {
        if x == y { return true }
        if let a = Int64(x), let b = Int64(y) { return a == b }
        guard let a = Double(x), let b = Double(y) else { return false }
        return a.bitPattern == b.bitPattern
    }

    /// An object's value for `key`; nil for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// Compact JSON text.
    public var description: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the compact JSON text of this value to `out`.
    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += ", " }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += ", " }
                JSONValue.writeString(key, to: &out)
                out += ": "
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// Non-ASCII stays raw UTF-8; quotes, backslashes and control characters are escaped. Runs that need no
    /// escaping are appended whole.
    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        let utf8 = s.utf8
        var runStart = utf8.startIndex
        var index = runStart
        while index != utf8.endIndex {
            let byte = utf8[index]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F else {
                utf8.formIndex(after: &index)
                continue
            }
            out += s[runStart..<index]
            switch byte {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            default:
                let hex = String(byte, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
            utf8.formIndex(after: &index)
            runStart = index
        }
        out += s[runStart..<index]
        out += "\""
    }
}

/// Text that is not JSON, or nests deeper than ``JSONParser/maxDepth``.
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What was wrong.
    public var message: String
    /// Byte offset into the UTF-8 text.
    public var offset: Int
    /// The offset and the message, in one line.
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

/// A strict JSON parser (RFC 8259) that keeps key order and number text. Nesting is bounded.
public struct JSONParser {
    private let bytes: [UInt8]
    private var i = 0
    private var depth = 0
    /// The deepest nesting of arrays and objects accepted.
    public static let maxDepth = 512

    /// Parses one JSON value filling the whole of `text` (white space around it allowed).
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8))
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.i == parser.bytes.count else { throw parser.error("unexpected text after the value") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ message: String) -> JSONSyntaxError { JSONSyntaxError(message: message, offset: i) }

    private mutating func skipWhitespace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func expectLiteral(_ word: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw error("expected '\(word)'") }
        i += w.count
        return value
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard i < bytes.count else { throw error("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expectLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try expectLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try expectLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(bytes[i])))'")
        }
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maxDepth { throw error("nesting deeper than \(Self.maxDepth)") }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var members: [(String, JSONValue)] = []
        if opensEmpty(closing: "}") { return .object(members) }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
            i += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            if try endsAfterItem(closing: "}", of: "object") { return .object(members) }
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var items: [JSONValue] = []
        if opensEmpty(closing: "]") { return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            if try endsAfterItem(closing: "]", of: "array") { return .array(items) }
        }
    }

    /// Past an object's or an array's opening bracket: whether the `closing` one follows at once.
    private mutating func opensEmpty(closing: Unicode.Scalar) -> Bool {
        i += 1
        skipWhitespace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: closing) else { return false }
        i += 1
        return true
    }

    /// After an object's member or an array's item: reads the `,` before the next (false) or the `closing` bracket
    /// that ends it (true).
    private mutating func endsAfterItem(closing: Unicode.Scalar, of what: String) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard i < bytes.count else { throw error("unterminated \(what)") }
        if bytes[i] == UInt8(ascii: ",") {
            i += 1
            return false
        }
        if bytes[i] == UInt8(ascii: closing) {
            i += 1
            return true
        }
        throw error("expected ',' or '\(closing)'")
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        func digits(_ i: inout Int, _ bytes: [UInt8]) -> Int {
            let s = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            return i - s
        }
        guard digits(&i, bytes) > 0 else { throw error("expected digits") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits(&i, bytes) > 0 else { throw error("expected digits after '.'") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits(&i, bytes) > 0 else { throw error("expected exponent digits") }
        }
        return .number(String(decoding: bytes[start..<i], as: UTF8.self))
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        i += 1
        var scalars = String.UnicodeScalarView()
        var run = i
        func flush(_ scalars: inout String.UnicodeScalarView, _ from: Int, _ to: Int, _ bytes: [UInt8]) {
            if to > from { scalars.append(contentsOf: String(decoding: bytes[from..<to], as: UTF8.self).unicodeScalars) }
        }
        while true {
            guard i < bytes.count else { throw error("unterminated string") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                flush(&scalars, run, i, bytes)
                i += 1
                return String(scalars)
            }
            if b < 0x20 { throw error("control character in a string") }
            if b != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            flush(&scalars, run, i, bytes)
            i += 1
            guard i < bytes.count else { throw error("unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw error("unpaired surrogate")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                scalars.append(scalar)
            default:
                throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'")
            }
            run = i
        }
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}
