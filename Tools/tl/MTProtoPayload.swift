// `tl decode --mtproto`: a decrypted MTProto payload as one tree. The header fields of the encrypted data
// (core.telegram.org/mtproto/description, "Encrypted Message: encrypted data"), then the message body, with every
// `message.body` and `rpc_result.result` (MTProto `Object`s the generated types keep as bytes) decoded in place;
// `gzip_packed` is unwrapped by the registry on the way.

import TLJSON
import TLRuntime

struct MTProtoPayloadDecoder {
    let registry: TLRegistry
    /// Nested `Object`s decoded at most this deep (a container in a message in a container...).
    static let maxNesting = 16

    /// `salt:long session_id:long message_id:long seq_no:int message_data_length:int message_data:bytes padding`.
    func decode(payload bytes: [UInt8]) throws(TLDecodingError) -> JSONValue {
        var reader = BufferReader(bytes: bytes)
        let salt = try reader.readInt64()
        let session = try reader.readInt64()
        let messageID = try reader.readInt64()
        let seqNo = try reader.readInt32()
        let lengthAt = reader.offset
        let length = Int(try reader.readInt32())
        guard length >= 0, length % 4 == 0, length <= reader.remaining else {
            throw TLDecodingError(.invalidLength(length), offset: lengthAt)
        }
        let body = try reader.readRaw(count: length)
        let padding = reader.readRemaining()
        // MTProto 2.0 pads with 12...1024 bytes (the "padding" paragraph of the same section).
        guard (12...1024).contains(padding.count) else {
            throw TLDecodingError(.invalidValue("padding of \(padding.count) bytes; MTProto 2.0 pads with 12 to 1024"),
                                  offset: 32 + length)
        }
        return .object([
            ("_", .string("encrypted_data")),
            ("salt", TLJSONWriter.json(.long(salt))),
            ("session_id", TLJSONWriter.json(.long(session))),
            ("message_id", TLJSONWriter.json(.long(messageID))),
            ("seq_no", TLJSONWriter.json(.int(seqNo))),
            ("message_data_length", TLJSONWriter.json(.int(Int32(length)))),
            ("message_data", try object(bytes: body, depth: 0)),
            ("padding", TLJSONWriter.json(.bytes(padding))),
        ])
    }

    /// One boxed object from `bytes`, its embedded objects decoded too.
    func object(bytes: [UInt8], depth: Int) throws(TLDecodingError) -> JSONValue {
        json(try registry.parse(bytes: bytes), depth: depth)
    }

    func json(_ object: any TypeConstructorDescription, depth: Int) -> JSONValue {
        let (name, fields) = object.descriptionFields()
        var members: [(String, JSONValue)] = [("_", .string(name))]
        for (key, value) in fields {
            if case .raw(let bytes) = value, (name == "message" && key == "body") || (name == "rpc_result" && key == "result") {
                members.append((key, embedded(bytes, depth: depth + 1)))
            } else {
                members.append((key, json(value, depth: depth)))
            }
        }
        return .object(members)
    }

    func json(_ value: TLValue, depth: Int) -> JSONValue {
        switch value {
        case .object(let object): json(object, depth: depth)
        case .vector(let items): .array(items.map { json($0, depth: depth) })
        default: TLJSONWriter.json(value)
        }
    }

    /// An `Object` field: a boxed value, or a boxed vector (a result such as `Vector<long>`, whose element type is not
    /// on the wire: objects are recognized by their IDs, otherwise 8-byte elements read as `long`, 4-byte as `int`;
    /// `tl decode --type` reads one exactly). Left as hex, with the reason, when neither reads.
    func embedded(_ bytes: [UInt8], depth: Int) -> JSONValue {
        guard depth <= Self.maxNesting else { return TLJSONWriter.json(.raw(bytes)) }
        let failure: TLDecodingError
        do {
            return try object(bytes: bytes, depth: depth)
        } catch {
            failure = error
        }
        if bytes.count >= 8, Array(bytes.prefix(4)) == [0x15, 0xC4, 0xB5, 0x1C] {
            let count = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
            let decoder = TypedDecoder(registry: registry)
            let element: ValueType? = if count > 0, bytes.count >= 12,
                registry.contains(UInt32(bytes[8]) | UInt32(bytes[9]) << 8 | UInt32(bytes[10]) << 16 | UInt32(bytes[11]) << 24) {
                .object
            } else if bytes.count - 8 == 8 * count {
                .long
            } else if bytes.count - 8 == 4 * count {
                .int
            } else {
                nil
            }
            if let element, let value = try? decoder.decode(.vector(element, boxed: true), bytes: bytes) {
                return json(value, depth: depth)
            }
        }
        return .object([("_", .string("undecoded")), ("error", .string("\(failure)")),
                        ("bytes", TLJSONWriter.json(.raw(bytes)))])
    }
}
