// One-line log rendering of TL objects and requests, with sensitive fields redacted.
//
// Logs must not carry message text or phone numbers, so the formatter replaces listed (constructor or function, field)
// pairs with `[[redacted]]`. The list is a public value: apps add their own pairs or start from an empty set. Output
// stays short enough for a log line: bytes as a hex prefix with their length, long strings and vectors elided.

/// A field whose value logs must not show: `constructor` is a constructor or function TL name with its namespace.
public struct RedactedField: Hashable, Sendable {
    /// The constructor or function, with its namespace (`auth.sendCode`).
    public var constructor: String
    /// The field's TL name (`phone_number`).
    public var field: String

    /// The field `field` of `constructor`.
    public init(_ constructor: String, _ field: String) {
        self.constructor = constructor
        self.field = field
    }
}

/// Renders TL objects as `user(id: 1, phone: [[redacted]], …)`.
public struct TLLogFormatter: Sendable {
    /// Fields shown as `[[redacted]]`.
    public var redactedFields: Set<RedactedField>
    /// Vectors longer than this show their first elements and how many more there are.
    public var maxVectorElements: Int
    /// Bytes values show at most this many leading bytes in hex.
    public var maxBytesShown: Int
    /// Strings longer than this many characters are cut, with their full length.
    public var maxStringLength: Int

    /// What `telegram` redacts: message texts (sent, received, drafts) and phone numbers.
    public static let defaultRedactedFields: Set<RedactedField> = [
        RedactedField("message", "message"),
        RedactedField("user", "phone"),
        RedactedField("inputPhoneContact", "phone"),
        RedactedField("draftMessage", "message"),
        RedactedField("messages.sendMessage", "message"),
        RedactedField("messages.sendMedia", "message"),
        RedactedField("messages.saveDraft", "message"),
    ]

    /// The default: Telegram's sensitive fields redacted.
    public static let telegram = TLLogFormatter(redactedFields: defaultRedactedFields)

    /// A formatter that redacts `redactedFields` and elides what is long: vectors past `maxVectorElements`
    /// elements, bytes past `maxBytesShown` bytes (shown as a hex prefix and the length), strings past
    /// `maxStringLength` characters.
    public init(redactedFields: Set<RedactedField>, maxVectorElements: Int = 8, maxBytesShown: Int = 16,
                maxStringLength: Int = 256) {
        self.redactedFields = redactedFields
        self.maxVectorElements = maxVectorElements
        self.maxBytesShown = maxBytesShown
        self.maxStringLength = maxStringLength
    }

    /// One line for an object or function value.
    public func format(_ object: any TypeConstructorDescription) -> String {
        var out = ""
        write(object, to: &out)
        return out
    }

    /// One line for a request.
    public func format(_ description: FunctionDescription) -> String {
        format(description.function)
    }

    /// One line for a field value (not redacted: redaction needs the owning constructor).
    public func format(_ value: TLValue) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    func write(_ object: any TypeConstructorDescription, to out: inout String) {
        let (name, fields) = object.descriptionFields()
        out += name
        out += "("
        for (i, (field, value)) in fields.enumerated() {
            if i > 0 { out += ", " }
            out += field
            out += ": "
            if redactedFields.contains(RedactedField(name, field)) {
                out += "[[redacted]]"
            } else {
                write(value, to: &out)
            }
        }
        out += ")"
    }

    func write(_ value: TLValue, to out: inout String) {
        switch value {
        case let .int(v): out += String(v)
        case let .long(v): out += String(v)
        case let .double(v): out += v.description
        case let .int128(v): out += v.description
        case let .int256(v): out += v.description
        case let .string(v): writeString(v, to: &out)
        case let .bytes(v): writeBytes(v, label: "bytes", to: &out)
        case let .bool(v): out += v ? "true" : "false"
        case let .flags(v): out += "0x" + String(v, radix: 16)
        case .trueFlag: out += "true"
        case let .vector(elements):
            out += "["
            for (i, element) in elements.prefix(maxVectorElements).enumerated() {
                if i > 0 { out += ", " }
                write(element, to: &out)
            }
            if elements.count > maxVectorElements {
                out += (maxVectorElements > 0 ? ", " : "") + "… \(elements.count - maxVectorElements) more"
            }
            out += "]"
        case let .object(object): write(object, to: &out)
        case let .raw(v): writeBytes(v, label: "object", to: &out)
        }
    }

    /// Quoted, with quotes, backslashes and control characters escaped so a value cannot break the log line.
    func writeString(_ v: String, to out: inout String) {
        out += "\""
        var shown = 0
        for scalar in v.unicodeScalars {
            if shown == maxStringLength {
                out += "…\" (\(v.utf8.count) bytes)"
                return
            }
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
            shown += 1
        }
        out += "\""
    }

    func writeBytes(_ v: [UInt8], label: String, to out: inout String) {
        out += "<\(v.count) \(label == "bytes" && v.count == 1 ? "byte" : label)"
        if !v.isEmpty && maxBytesShown > 0 {
            out += " " + Hex.short(v, limit: maxBytesShown)
        }
        out += ">"
    }
}
