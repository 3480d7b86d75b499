// `--output text`: the tl-json mtcall prints, as lines a person reads. Constructors become `name(field: value, …)`
// without the flags words, empty and false fields; peers become the `user#ID` form PEER accepts; Unix times in
// date fields become UTC dates. The JSON stays the default: scripts read it, and it round-trips through `tl`.
import ArgumentParser
import Foundation
import TLJSON

/// How mtcall prints results.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case json
    case text
}

enum TextOutput {
    /// One line for `value`.
    static func line(_ value: JSONValue) -> String {
        var out = ""
        write(value, key: nil, to: &out)
        return out
    }

    private static let peers = ["peerUser": ("user", "user_id"), "peerChat": ("chat", "chat_id"),
                                "peerChannel": ("channel", "channel_id")]

    private static func write(_ value: JSONValue, key: String?, to out: inout String) {
        switch value {
            case .object(let members):
                let name = members.first { $0.0 == "_" || $0.0 == "event" }.flatMap { if case .string(let s) = $0.1 { s } else { nil } }
                if let name, let (kind, field) = peers[name], case .string(let id)? = value[field] {
                    out += "\(kind)#\(id)"
                    return
                }
                let fields = members.filter { member in
                    guard member.0 != "_", member.0 != "event", !member.0.hasPrefix("flags") else { return false }
                    switch member.1 {
                        case .null, .bool(false): return false
                        case .array(let items): return !items.isEmpty
                        default: return true
                    }
                }
                out += name ?? ""
                guard !fields.isEmpty else { return }
                out += "("
                for (index, field) in fields.enumerated() {
                    if index > 0 { out += ", " }
                    out += field.0
                    if case .bool(true) = field.1 { continue }
                    out += ": "
                    write(field.1, key: field.0, to: &out)
                }
                out += ")"
            case .array(let items):
                out += "["
                for (index, item) in items.enumerated() {
                    if index > 0 { out += ", " }
                    write(item, key: key, to: &out)
                }
                out += "]"
            case .number(let text):
                if let key, isDate(key), let seconds = Int64(text), seconds > 0 {
                    out += date(seconds)
                } else {
                    out += text
                }
            default:
                out += value.description
        }
    }

    /// TL's dates are `int` Unix times in fields named so (date, edit_date, expires, was_online, until_date, …).
    private static func isDate(_ key: String) -> Bool {
        key == "date" || key.hasSuffix("_date") || key == "expires" || key == "was_online"
    }

    private static func date(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
