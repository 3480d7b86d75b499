// `tl decode --type` (values whose constructor is not on the wire) and `tl decode --mtproto` (a decrypted payload
// as one tree), on bytes built here with the runtime's own writers.

import MTProtoApi
import TelegramApi
import Testing
import TLJSON
import TLRuntime
import TLSchema
@testable import tl

@Suite struct DecodeTests {
    static let schemas = [Checker.check(file: "api.tl", text: Api.schemaSource),
                          Checker.check(file: "mtproto.tl", text: MT.schemaSource)]
    static let registry = TLRegistry(merging: [Api.registry, MT.registry])

    static func decode(_ type: String, _ bytes: [UInt8], schemas: [Schema] = schemas) throws -> String {
        let parsed = try ValueType.parse(type, schemas: schemas)
        return TLJSONWriter.json(try TypedDecoder(registry: registry).decode(parsed, bytes: bytes)).description
    }

    static func bytes(_ write: (Buffer) -> Void) -> [UInt8] {
        let buffer = Buffer()
        write(buffer)
        return buffer.bytes
    }

    static let peers: [Api.InputPeer] = [.inputPeerUser(.init(userId: 1, accessHash: 2)), .inputPeerSelf]

    @Test func typeExpressions() throws {
        #expect(try ValueType.parse("Vector< InputPeer >", schemas: Self.schemas) == .vector(.boxed("InputPeer"), boxed: true))
        #expect(try ValueType.parse("vector<long>", schemas: Self.schemas) == .vector(.long, boxed: false))
        #expect(try ValueType.parse("%Message", schemas: Self.schemas) == .bare("message", id: CRC32.checksum("message msg_id:long seqno:int bytes:int body:Object = Message")))
        #expect(try ValueType.parse("messages.Messages", schemas: Self.schemas) == .boxed("messages.Messages"))
        for (text, message) in [
            ("Vector<int", "'Vector<int': missing '>'"),
            ("Nope", "no type 'Nope' in the schema"),
            ("nope", "no constructor 'nope' in the schema"),
            ("%User", "'%User': a bare type needs exactly one constructor, User has 2"),
            ("a-b", "'a-b' is not a TL type"),
            ("", "empty type"),
            (String(repeating: "Vector<", count: 20) + "int" + String(repeating: ">", count: 20), "type nested deeper than 16"),
        ] {
            #expect(throws: ValueType.SyntaxError(message: message)) { try ValueType.parse(text, schemas: Self.schemas) }
        }
    }

    @Test func aBoxedVectorOfObjects() throws {
        let bytes = Self.bytes { b in
            b.appendVectorHeader(count: 2, boxed: true)
            for peer in Self.peers { peer.serialize(b, true) }
        }
        let expected = "[" + Self.peers.map { TLJSONWriter.json($0).description }.joined(separator: ", ") + "]"
        #expect(try Self.decode("Vector<InputPeer>", bytes) == expected)
        // The element IDs are checked against the type asked for.
        #expect(throws: TLDecodingError.self) { try Self.decode("Vector<User>", bytes) }
        #expect(throws: TLDecodingError.self) { try Self.decode("Vector<InputPeer>", bytes + [0, 0, 0, 0]) }
        #expect(throws: TLDecodingError.self) { try Self.decode("Vector<InputPeer>", Array(bytes.dropLast())) }
    }

    @Test func bareVectorsAndPrimitives() throws {
        let longs = Self.bytes { b in
            b.appendInt32(2)
            b.appendInt64(7)
            b.appendInt64(-1)
        }
        #expect(try Self.decode("vector<long>", longs) == #"["7", "-1"]"#)
        #expect(try Self.decode("string", Self.bytes { $0.appendTLString("hi") }) == #""hi""#)
        #expect(try Self.decode("Bool", Self.bytes { $0.appendBool(true) }) == "true")
        // A count larger than the bytes could hold is rejected before anything is allocated.
        #expect(throws: TLDecodingError.self) { try Self.decode("vector<long>", Self.bytes { $0.appendInt32(1 << 30) }) }
    }

    @Test func aBareConstructor() throws {
        let body = Self.bytes { MT.Pong.pong(.init(msgId: 5, pingId: 6)).serialize($0, true) }
        let message = Self.bytes { b in
            b.appendInt64(10)
            b.appendInt32(3)
            b.appendInt32(Int32(body.count))
            b.appendRaw(body)
        }
        let json = try Self.decode("%Message", message)
        #expect(json.hasPrefix(##"{"_": "message", "msg_id": "10", "seqno": 3, "bytes": 20, "body": "##), "\(json)")
        // `message` names the API's constructor first (api before mtproto); with the mtproto schema alone it is this one.
        #expect(try Self.decode("message", message, schemas: [Self.schemas[1]]) == json)
        #expect(throws: TLDecodingError.self) { try Self.decode("message", message) }
        // Two bare messages back to back in a bare vector: each one's length comes from parsing it.
        #expect(try Self.decode("vector<%Message>", Self.bytes { b in b.appendInt32(2); b.appendRaw(message); b.appendRaw(message) })
            == "[\(json), \(json)]")
    }

    static func payload(body: [UInt8], padding: Int = 12) -> [UInt8] {
        bytes { b in
            b.appendInt64(0x1111)
            b.appendInt64(0x2222)
            b.appendInt64(0x3333)
            b.appendInt32(7)
            b.appendInt32(Int32(body.count))
            b.appendRaw(body)
            b.appendRaw([UInt8](repeating: 0xAB, count: padding))
        }
    }

    static func message(id: Int64, body: [UInt8]) -> [UInt8] {
        bytes { b in
            b.appendInt64(id)
            b.appendInt32(1)
            b.appendInt32(Int32(body.count))
            b.appendRaw(body)
        }
    }

    @Test func aDecryptedPayloadReadsAsOneTree() throws {
        let peer = Self.bytes { Self.peers[0].serialize($0, true) }
        let gzipped = Self.bytes { GZip.appendPackedObject(peer, to: $0) }
        let rpcResult = Self.bytes { b in
            b.appendUInt32(0xF35C_6D01)
            b.appendInt64(99)
            b.appendRaw(gzipped)
        }
        let longsResult = Self.bytes { b in
            b.appendUInt32(0xF35C_6D01)
            b.appendInt64(100)
            b.appendVectorHeader(count: 2, boxed: true)
            b.appendInt64(1)
            b.appendInt64(2)
        }
        let pong = Self.bytes { MT.Pong.pong(.init(msgId: 5, pingId: 6)).serialize($0, true) }
        let container = Self.bytes { b in
            b.appendUInt32(0x73F1_F8DC)
            b.appendInt32(3)
            b.appendRaw(Self.message(id: 1, body: rpcResult))
            b.appendRaw(Self.message(id: 2, body: longsResult))
            b.appendRaw(Self.message(id: 3, body: pong))
        }
        let decoder = MTProtoPayloadDecoder(registry: Self.registry)
        let tree = try decoder.decode(payload: Self.payload(body: container))
        #expect(tree["_"] == .string("encrypted_data"))
        #expect(tree["session_id"] == .string(String(0x2222)))
        #expect(tree["seq_no"] == .number("7"))
        let messages = try #require(tree["message_data"]?["messages"])
        guard case .array(let items) = messages else { Issue.record("messages: \(messages)"); return }
        #expect(items.count == 3)
        // gzip_packed inside rpc_result is unwrapped: the result is the peer itself.
        #expect(items[0]["body"]?["result"] == TLJSONWriter.json(Self.peers[0]))
        // A boxed vector result: its element type is not on the wire; 8-byte elements read as long.
        #expect(items[1]["body"]?["result"] == .array([.string("1"), .string("2")]))
        #expect(items[2]["body"] == TLJSONWriter.json(MT.Pong.pong(.init(msgId: 5, pingId: 6))))
        #expect(Decode.decode(Hex.encode(Self.payload(body: container))) { try decoder.decode(payload: $0) } == tree.description)
    }

    /// `message` is a constructor of `Message` in both api.tl and mtproto.tl. What `tl decode` writes for mtproto.tl's,
    /// in a container or alone, `tl encode` reads back to the same bytes (it used to take api.tl's and refuse
    /// `msg_id`; found by FuzzTLDecode), and api.tl's `message` still encodes as api.tl's.
    @Test func aNameBothSchemasDefineEncodesAsTheSchemaThatWroteIt() throws {
        let encoder = TLJSONEncoder(schemas: Self.schemas)
        let pong = Self.bytes { MT.Pong.pong(.init(msgId: 5, pingId: 6)).serialize($0, true) }
        for body in [pong, []] {
            let container = Self.bytes { b in
                b.appendUInt32(0x73F1_F8DC)
                b.appendInt32(1)
                b.appendRaw(Self.message(id: -4_819_136_106_315_783_536, body: body))
            }
            let alone = Self.bytes { b in
                b.appendUInt32(CRC32.checksum("message msg_id:long seqno:int bytes:int body:Object = Message"))
                b.appendRaw(Self.message(id: 7, body: body))
            }
            for wire in [container, alone] {
                let json = TLJSONWriter.json(try Self.registry.parse(bytes: wire))
                #expect(try encoder.encode(json) == wire, "\(json)")
            }
        }
        let apiMessage = Api.Message.message(.init(id: 1, peerId: .peerUser(.init(userId: 2)), date: 3, message: "hi"))
        let wire = Self.bytes { apiMessage.serialize($0, true) }
        #expect(try encoder.encode(TLJSONWriter.json(apiMessage)) == wire)
    }

    @Test func malformedPayloadsAreErrorsNotCrashes() throws {
        let decoder = MTProtoPayloadDecoder(registry: Self.registry)
        let pong = Self.bytes { MT.Pong.pong(.init(msgId: 5, pingId: 6)).serialize($0, true) }
        #expect(throws: TLDecodingError.self) { try decoder.decode(payload: Self.payload(body: pong, padding: 4)) }
        #expect(throws: TLDecodingError.self) { try decoder.decode(payload: Array(Self.payload(body: pong).prefix(40))) }
        var badLength = Self.payload(body: pong)
        badLength[28] = 0xFF
        #expect(throws: TLDecodingError.self) { try decoder.decode(payload: badLength) }
        // An Object that does not decode stays as hex, with the reason.
        let odd = Self.bytes { b in
            b.appendUInt32(0xF35C_6D01)
            b.appendInt64(1)
            b.appendRaw([1, 2, 3, 4, 5, 6, 7, 8])
        }
        let tree = try decoder.decode(payload: Self.payload(body: odd))
        #expect(tree["message_data"]?["result"]?["_"] == .string("undecoded"))
    }
}
