// Decoded values -> tl-json. Generated types describe themselves through `descriptionFields()` with typed
// values (`TLValue`), so one writer serves every schema.

import TLRuntime

/// Decoded TL values as tl-json.
public enum TLJSONWriter {
    /// `{"_": "name", field: value, …}` in schema order.
    public static func json(_ object: any TypeConstructorDescription) -> JSONValue {
        let (name, fields) = object.descriptionFields()
        var members: [(String, JSONValue)] = [("_", .string(name))]
        members.reserveCapacity(fields.count + 1)
        for (key, value) in fields { members.append((key, json(value))) }
        return .object(members)
    }

    /// A value as its description holds it (a ``TypedDecoder``'s result, a request's parameters), as tl-json.
    public static func json(_ value: TLValue) -> JSONValue {
        switch value {
        case .int(let v): return .number(String(v))
        case .flags(let v): return .number(String(v))
        case .long(let v): return .string(String(v))
        case .double(let v): return double(v)
        case .int128(let v): return .string(Hex.encode(v.wireBytes))
        case .int256(let v): return .string(Hex.encode(v.wireBytes))
        case .string(let v): return .string(v)
        case .bytes(let v), .raw(let v): return .string(Hex.encode(v))
        case .bool(let v): return .bool(v)
        case .trueFlag: return .bool(true)
        case .vector(let items): return .array(items.map(json))
        case .object(let object): return json(object)
        }
    }

    /// Shortest digits that read back to the same binary64 (Swift's `description` guarantees this).
    /// JSON has no NaN or infinity; those are written as strings so the output stays valid JSON.
    static func double(_ v: Double) -> JSONValue {
        guard v.isFinite else { return .string(v.isNaN ? "NaN" : (v < 0 ? "-Infinity" : "Infinity")) }
        return .number(v.description)
    }
}
