// tl-json -> wire bytes, driven by the schema: JSON alone cannot tell `long` from `string` or `bytes`, so every
// field's type comes from its constructor's definition (Fixtures/corpus/README.md).

import TLRuntime
import TLSchema

/// tl-json that does not fit the schemas: an unknown constructor, a missing or mistyped field.
public struct TLJSONError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Where in the JSON value: `$.messages[3].media`.
    public var path: String
    /// What was wrong.
    public var message: String
    /// The path and the message, in one line.
    public var description: String { "\(path): \(message)" }
}

/// Writes tl-json values as TL bytes, checked against the schemas it was made with.
public struct TLJSONEncoder: Sendable {
    /// Every schema's constructors and functions by name. Schemas may share a name for different combinators
    /// (`message` is a constructor of `Message` in api.tl and in mtproto.tl), so each name keeps all of them.
    private var byName: [String: [Candidate]] = [:]

    private struct Candidate: Sendable {
        var combinator: Combinator
        /// The index of the schema that defines it.
        var schema: Int
        /// Its boxed result type, to check a nested object has a constructor of the field's type.
        var type: String?
    }

    /// Builds the encoder from checked schemas. A name several schemas define means the one of the schema whose
    /// combinator holds the object (`msg_container`'s `message` is mtproto.tl's), then the first schema whose
    /// combinator has every field the object gives, then the first schema.
    public init(schemas: [Schema]) {
        for (index, schema) in schemas.enumerated() {
            for c in schema.constructors + schema.functions {
                var type: String? = nil
                if c.kind == .constructor, case .boxed(let name) = c.result { type = name }
                byName[c.name, default: []].append(Candidate(combinator: c, schema: index, type: type))
            }
        }
    }

    /// Parses and checks schema texts (such as the generated modules' `schemaSource`).
    public init(schemaSources: [(name: String, text: String)]) throws(TLJSONError) {
        var schemas: [Schema] = []
        for source in schemaSources {
            let schema = Checker.check(file: source.name, text: source.text)
            if let first = schema.errors.first {
                throw TLJSONError(path: source.name, message: "schema has errors: \(first)")
            }
            schemas.append(schema)
        }
        self.init(schemas: schemas)
    }

    /// Encodes one boxed constructor or function value.
    public func encode(_ json: JSONValue) throws(TLJSONError) -> [UInt8] {
        let buffer = Buffer(capacity: 256)
        try encodeObject(json, expected: nil, boxed: true, inSchema: nil, path: "$", into: buffer)
        return buffer.bytes
    }

    /// Parses `jsonText` and encodes it as ``encode(_:)`` does; a syntax error is a ``TLJSONError`` at `$`.
    public func encode(jsonText: String) throws(TLJSONError) -> [UInt8] {
        let value: JSONValue
        do {
            value = try JSONParser.parse(jsonText)
        } catch {
            throw TLJSONError(path: "$", message: error.description)
        }
        return try encode(value)
    }

    /// The combinator a JSON object names in `"_"`, read as `init(schemas:)` says when schemas share the name.
    private func candidate(of json: JSONValue, inSchema schema: Int?, path: String) throws(TLJSONError) -> Candidate {
        guard case .object(let members) = json else {
            throw TLJSONError(path: path, message: "expected an object with \"_\", found \(kind(json))")
        }
        guard case .string(let name)? = json["_"] else {
            throw TLJSONError(path: path, message: "missing \"_\" (the constructor or function name)")
        }
        guard let all = byName[name], let first = all.first else {
            throw TLJSONError(path: path, message: "unknown constructor or function '\(name)'")
        }
        if all.count == 1 { return first }
        if let own = all.first(where: { $0.schema == schema }) { return own }
        return all.first { strayMember(members, of: $0.combinator) == nil } ?? first
    }

    /// The first member of a JSON object that is neither `"_"` nor a field of `c`.
    private func strayMember(_ members: [(String, JSONValue)], of c: Combinator) -> String? {
        members.first { key, _ in key != "_" && !c.fields.contains { $0.name == key } }?.0
    }

    private enum Expectation {
        case boxedType(String)
        case bareConstructor(String)
        case function
    }

    private func encodeObject(_ json: JSONValue, expected: Expectation?, boxed: Bool, inSchema outer: Int?, path: String,
                              into buffer: Buffer) throws(TLJSONError) {
        let found = try candidate(of: json, inSchema: outer, path: path)
        let c = found.combinator
        switch expected {
        case .boxedType(let type)?:
            guard c.kind == .constructor, found.type == type else {
                throw TLJSONError(path: path, message: "'\(c.name)' is not a constructor of \(type)")
            }
        case .bareConstructor(let name)?:
            guard c.name == name else { throw TLJSONError(path: path, message: "expected '\(name)', found '\(c.name)'") }
        case .function?:
            guard c.kind == .function else { throw TLJSONError(path: path, message: "expected a function, found constructor '\(c.name)'") }
        case nil:
            break
        }
        guard case .object(let members) = json else { return }
        if let stray = strayMember(members, of: c) {
            throw TLJSONError(path: path, message: "'\(c.name)' has no field '\(stray)'")
        }
        if boxed { buffer.appendUInt32(c.id) }

        // Flags words follow from which optional fields are present; a given value must agree.
        var flags: [String: UInt32] = [:]
        for field in c.fields {
            guard let cond = field.condition, let value = json[field.name] else { continue }
            if field.type == .trueFlag, value != .bool(true) {
                throw TLJSONError(path: "\(path).\(field.name)", message: "a true flag is `true` when set and omitted otherwise")
            }
            flags[cond.flagsField, default: 0] |= 1 << UInt32(cond.bit)
        }
        for field in c.fields {
            let fieldPath = "\(path).\(field.name)"
            if field.type == .nat {
                let computed = flags[field.name] ?? 0
                if let given = json[field.name] {
                    guard case .number(let text) = given, let value = UInt32(text) else {
                        throw TLJSONError(path: fieldPath, message: "expected an unsigned 32-bit number")
                    }
                    guard value == computed else {
                        throw TLJSONError(path: fieldPath, message: "flags \(value) disagree with the fields present (\(computed))")
                    }
                }
                buffer.appendUInt32(computed)
                continue
            }
            if field.type == .trueFlag { continue }
            guard let value = json[field.name] else {
                if field.condition != nil { continue }
                throw TLJSONError(path: fieldPath, message: "missing field of type \(field.type)")
            }
            if let cond = field.condition, (flags[cond.flagsField] ?? 0) & (1 << UInt32(cond.bit)) == 0 { continue }
            // `message.body`: an embedded object whose length precedes it; tl-json writes it as hex.
            try encodeValue(value, type: field.type, inSchema: found.schema, path: fieldPath, into: buffer)
        }
    }

    private func encodeValue(_ json: JSONValue, type: TLType, inSchema schema: Int, path: String,
                             into buffer: Buffer) throws(TLJSONError) {
        switch type {
        case .int, .nat:
            guard case .number(let text) = json, let v = Int32(text) else {
                throw TLJSONError(path: path, message: "expected a 32-bit integer, found \(kind(json))")
            }
            buffer.appendInt32(v)
        case .long:
            let text: String
            switch json {
            case .string(let s), .number(let s): text = s
            default: throw TLJSONError(path: path, message: "expected a decimal string (long), found \(kind(json))")
            }
            guard let v = Int64(text) else { throw TLJSONError(path: path, message: "'\(text)' is not a 64-bit integer") }
            buffer.appendInt64(v)
        case .double:
            let v: Double
            switch json {
            case .number(let text) where Double(text) != nil: v = Double(text) ?? 0
            // TLJSONWriter's spelling of what JSON numbers cannot hold; a NaN's payload bits are not kept.
            case .string("NaN"): v = .nan
            case .string("Infinity"): v = .infinity
            case .string("-Infinity"): v = -.infinity
            default: throw TLJSONError(path: path, message: "expected a number, found \(kind(json))")
            }
            buffer.appendDouble(v)
        case .string:
            guard case .string(let s) = json else { throw TLJSONError(path: path, message: "expected a string, found \(kind(json))") }
            guard s.utf8.count < 1 << 24 else {
                throw TLJSONError(path: path, message: "\(s.utf8.count) bytes of UTF-8 is over TL's limit of 16 MiB - 1")
            }
            buffer.appendTLString(s)
        case .bytes, .anyObject:
            buffer.appendTLBytesOrRaw(try hexBytes(json, path: path), raw: type == .anyObject)
        case .int128:
            let bytes = try hexBytes(json, path: path)
            guard let v = try? TLInt128(wireBytes: bytes) else {
                throw TLJSONError(path: path, message: "int128 needs 16 bytes of hex, found \(bytes.count)")
            }
            buffer.appendInt128(v)
        case .int256:
            let bytes = try hexBytes(json, path: path)
            guard let v = try? TLInt256(wireBytes: bytes) else {
                throw TLJSONError(path: path, message: "int256 needs 32 bytes of hex, found \(bytes.count)")
            }
            buffer.appendInt256(v)
        case .bool:
            guard case .bool(let b) = json else { throw TLJSONError(path: path, message: "expected true or false, found \(kind(json))") }
            buffer.appendBool(b)
        case .trueFlag:
            break
        case .vector(let element, let boxed):
            guard case .array(let items) = json else { throw TLJSONError(path: path, message: "expected an array, found \(kind(json))") }
            buffer.appendVectorHeader(count: items.count, boxed: boxed)
            for (i, item) in items.enumerated() {
                try encodeValue(item, type: element, inSchema: schema, path: "\(path)[\(i)]", into: buffer)
            }
        case .boxed(let name):
            try encodeObject(json, expected: .boxedType(name), boxed: true, inSchema: schema, path: path, into: buffer)
        case .bare(let constructor):
            try encodeObject(json, expected: .bareConstructor(constructor), boxed: false, inSchema: schema, path: path,
                             into: buffer)
        case .generic:
            try encodeObject(json, expected: .function, boxed: true, inSchema: schema, path: path, into: buffer)
        }
    }

    private func hexBytes(_ json: JSONValue, path: String) throws(TLJSONError) -> [UInt8] {
        guard case .string(let s) = json else { throw TLJSONError(path: path, message: "expected a hex string, found \(kind(json))") }
        guard let bytes = Hex.decode(s) else { throw TLJSONError(path: path, message: "'\(s.prefix(40))' is not hex") }
        // TL's 3-byte length prefix cannot express 16 MiB or more (the buffer would refuse to write it).
        guard bytes.count < 1 << 24 else {
            throw TLJSONError(path: path, message: "\(bytes.count) bytes is over TL's limit of 16 MiB - 1")
        }
        return bytes
    }

    private func kind(_ json: JSONValue) -> String {
        switch json {
        case .null: "null"
        case .bool: "a boolean"
        case .number(let n): "the number \(n)"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension Buffer {
    fileprivate func appendTLBytesOrRaw(_ bytes: [UInt8], raw: Bool) {
        if raw { appendRaw(bytes) } else { appendTLBytes(bytes) }
    }
}
