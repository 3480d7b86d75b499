// A tiny schema written by hand the way the generator emits code (final class payloads, throwing per-type parse,
// raw-integer flag tests, error frames added only on the error path), so the tests exercise the runtime through the
// same calls generated code makes.
//
//   user#20b1422e flags:# id:long phone:flags.0?string photo:flags.1?Photo = User;
//   userEmpty#d3bc4b7a id:long = User;
//   photo#7d6b1d03 id:long bytes:bytes = Photo;
//   photoEmpty#2331b22d = Photo;
//   node#5a3c8e01 flags:# child:flags.0?Node = Node;
//   message#38116ee0 id:int message:string = Message;
//   ---functions---
//   messages.sendMessage#983f9745 peer:long message:string random_id:long = Vector<long>;
import TLRuntime

enum TestApi {
    final class Cons_user: Sendable {
        let id: Int64
        let phone: String?
        let photo: Photo?
        init(id: Int64, phone: String?, photo: Photo?) {
            self.id = id
            self.phone = phone
            self.photo = photo
        }
    }

    enum User: TLRegistrable, TLParsable, CustomStringConvertible {
        case user(Cons_user)
        case userEmpty(id: Int64)

        static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> User {
            let id = try reader.readUInt32()
            return try parse(&reader, constructor: id)
        }

        static var tlTypeName: String { "User" }

        static func parse(_ reader: inout BufferReader, constructor id: UInt32) throws(TLDecodingError) -> User {
            try reader.enterObject()
            defer { reader.leaveObject() }
            switch id {
            case 0x20b1_422e:
                var index = 0
                do {
                    let flags = try reader.readInt32()
                    index = 1
                    let id = try reader.readInt64()
                    index = 2
                    let phone: String? = if flags & 0x1 != 0 { try reader.readTLString() } else { nil }
                    index = 3
                    let photo: Photo? = if flags & 0x2 != 0 { try Photo.parse(&reader) } else { nil }
                    return .user(Cons_user(id: id, phone: phone, photo: photo))
                } catch {
                    throw error.inside(constructor: "user", fields: "flags,id,phone,photo", index: index)
                }
            case 0xd3bc_4b7a:
                do {
                    return .userEmpty(id: try reader.readInt64())
                } catch {
                    throw error.inside(constructor: "userEmpty", fields: "id", index: 0)
                }
            default:
                throw TLDecodingError(.unknownConstructor(id, type: "User"), offset: reader.offset - 4)
            }
        }

        func serialize(_ buffer: Buffer, _ boxed: Bool) {
            switch self {
            case let .user(c):
                if boxed { buffer.appendUInt32(0x20b1_422e) }
                var flags: Int32 = 0
                if c.phone != nil { flags |= 0x1 }
                if c.photo != nil { flags |= 0x2 }
                buffer.appendInt32(flags)
                buffer.appendInt64(c.id)
                if let phone = c.phone { buffer.appendTLString(phone) }
                if let photo = c.photo { photo.serialize(buffer, true) }
            case let .userEmpty(id):
                if boxed { buffer.appendUInt32(0xd3bc_4b7a) }
                buffer.appendInt64(id)
            }
        }

        func descriptionFields() -> (String, [(String, TLValue)]) {
            switch self {
            case let .user(c):
                var fields: [(String, TLValue)] = [
                    ("flags", .flags((c.phone != nil ? 1 : 0) | (c.photo != nil ? 2 : 0))), ("id", .long(c.id)),
                ]
                if let phone = c.phone { fields.append(("phone", .string(phone))) }
                if let photo = c.photo { fields.append(("photo", .object(photo))) }
                return ("user", fields)
            case let .userEmpty(id):
                return ("userEmpty", [("id", .long(id))])
            }
        }
    }

    enum Photo: TLRegistrable, TLParsable, CustomStringConvertible {
        case photo(id: Int64, bytes: [UInt8])
        case photoEmpty

        static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> Photo {
            let id = try reader.readUInt32()
            return try parse(&reader, constructor: id)
        }

        static var tlTypeName: String { "Photo" }

        static func parse(_ reader: inout BufferReader, constructor id: UInt32) throws(TLDecodingError) -> Photo {
            try reader.enterObject()
            defer { reader.leaveObject() }
            switch id {
            case 0x7d6b_1d03:
                var index = 0
                do {
                    let id = try reader.readInt64()
                    index = 1
                    let bytes = try reader.readTLBytes()
                    return .photo(id: id, bytes: bytes)
                } catch {
                    throw error.inside(constructor: "photo", fields: "id,bytes", index: index)
                }
            case 0x2331_b22d:
                return .photoEmpty
            default:
                throw TLDecodingError(.unknownConstructor(id, type: "Photo"), offset: reader.offset - 4)
            }
        }

        func serialize(_ buffer: Buffer, _ boxed: Bool) {
            switch self {
            case let .photo(id, bytes):
                if boxed { buffer.appendUInt32(0x7d6b_1d03) }
                buffer.appendInt64(id)
                buffer.appendTLBytes(bytes)
            case .photoEmpty:
                if boxed { buffer.appendUInt32(0x2331_b22d) }
            }
        }

        func descriptionFields() -> (String, [(String, TLValue)]) {
            switch self {
            case let .photo(id, bytes): ("photo", [("id", .long(id)), ("bytes", .bytes(bytes))])
            case .photoEmpty: ("photoEmpty", [])
            }
        }
    }

    /// A recursive type, for the depth limit.
    final class Node: TLRegistrable, TLParsable {
        let child: Node?
        init(child: Node?) { self.child = child }

        /// A chain of `depth` nodes.
        static func chain(_ depth: Int) -> Node {
            var node = Node(child: nil)
            for _ in 1..<depth { node = Node(child: node) }
            return node
        }

        static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> Node {
            let id = try reader.readUInt32()
            return try parse(&reader, constructor: id)
        }

        static var tlTypeName: String { "Node" }

        static func parse(_ reader: inout BufferReader, constructor id: UInt32) throws(TLDecodingError) -> Node {
            try reader.enterObject()
            defer { reader.leaveObject() }
            guard id == 0x5a3c_8e01 else {
                throw TLDecodingError(.unknownConstructor(id, type: "Node"), offset: reader.offset - 4)
            }
            var index = 0
            do {
                let flags = try reader.readInt32()
                index = 1
                let child: Node? = if flags & 0x1 != 0 { try Node.parse(&reader) } else { nil }
                return Node(child: child)
            } catch {
                throw error.inside(constructor: "node", fields: "flags,child", index: index)
            }
        }

        func serialize(_ buffer: Buffer, _ boxed: Bool) {
            // Iterative, so building a deep chain for a test cannot overflow the stack either.
            var node: Node? = self
            while let current = node {
                buffer.appendUInt32(0x5a3c_8e01)
                buffer.appendInt32(current.child == nil ? 0 : 1)
                node = current.child
            }
        }

        func descriptionFields() -> (String, [(String, TLValue)]) {
            var fields: [(String, TLValue)] = [("flags", .flags(child == nil ? 0 : 1))]
            if let child { fields.append(("child", .object(child))) }
            return ("node", fields)
        }
    }

    struct Message: TLRegistrable {
        let id: Int32
        let message: String

        static var tlTypeName: String { "Message" }

        static func parse(_ reader: inout BufferReader, constructor id: UInt32) throws(TLDecodingError) -> Message {
            try reader.enterObject()
            defer { reader.leaveObject() }
            var index = 0
            do {
                let id = try reader.readInt32()
                index = 1
                return Message(id: id, message: try reader.readTLString())
            } catch {
                throw error.inside(constructor: "message", fields: "id,message", index: index)
            }
        }

        func serialize(_ buffer: Buffer, _ boxed: Bool) {
            if boxed { buffer.appendUInt32(0x3811_6ee0) }
            buffer.appendInt32(id)
            buffer.appendTLString(message)
        }

        func descriptionFields() -> (String, [(String, TLValue)]) {
            ("message", [("id", .int(id)), ("message", .string(message))])
        }
    }

    enum functions {
        enum messages {
            struct SendMessage: TLFunction {
                let peer: Int64
                let message: String
                let randomID: Int64

                func serialize(_ buffer: Buffer, _ boxed: Bool) {
                    if boxed { buffer.appendUInt32(0x983f_9745) }
                    buffer.appendInt64(peer)
                    buffer.appendTLString(message)
                    buffer.appendInt64(randomID)
                }

                func descriptionFields() -> (String, [(String, TLValue)]) {
                    ("messages.sendMessage", [("peer", .long(peer)), ("message", .string(message)),
                                              ("random_id", .long(randomID))])
                }
            }

            static func sendMessage(peer: Int64, message: String, randomID: Int64)
                -> (FunctionDescription, Buffer, DeserializeFunctionResponse<[Int64]>) {
                SendMessage(peer: peer, message: message, randomID: randomID).call(.vector(of: Int64.self))
            }
        }
    }

    static let registry = TLRegistry(name: "TestApi", entries: [
        (0x20b1_422e, User.self), (0xd3bc_4b7a, User.self), (0x7d6b_1d03, Photo.self), (0x2331_b22d, Photo.self),
        (0x5a3c_8e01, Node.self),
    ])
    static let messageRegistry = TLRegistry(name: "MessageApi", entries: [(0x3811_6ee0, Message.self)])
}

/// Hex of bytes, for readable expectations.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// Bytes from hex, ignoring spaces.
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.filter { $0 != " " })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0 }
}

/// Serializes a value boxed.
func encode(_ value: some TLSerializable, boxed: Bool = true) -> [UInt8] {
    let buffer = Buffer()
    value.serialize(buffer, boxed)
    return buffer.bytes
}

/// A deterministic generator for the robustness tests (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
