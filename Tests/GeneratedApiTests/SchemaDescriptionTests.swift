import Testing
import MTProtoApi
import SecretApi
import TLRuntime
import TelegramApi

/// Descriptions read from the schema (`TLSchemaDescribed`): the golden corpus pins every constructor of the API
/// (`GoldenCorpusTests`); these pin the MTProto and secret schemas' shapes and the failure paths.
@Suite struct SchemaDescriptionTests {
    /// `name(field: value, …)`, nested objects described the same way, for exact comparisons.
    func render(_ object: any TLObject) -> String {
        let (name, fields) = object.descriptionFields()
        return name + "(" + fields.map { "\($0.0): \(render($0.1))" }.joined(separator: ", ") + ")"
    }

    func render(_ value: TLValue) -> String {
        switch value {
        case .int(let v): "\(v)"
        case .long(let v): "\(v)L"
        case .double(let v): "\(v)"
        case .int128, .int256: "intN"
        case .string(let v): "\"\(v)\""
        case .bytes(let v): "bytes\(v)"
        case .bool(let v): "\(v)"
        case .flags(let v): "#\(String(v, radix: 16))"
        case .trueFlag: "true"
        case .vector(let items): "[" + items.map(render).joined(separator: ", ") + "]"
        case .object(let object): render(object)
        case .raw(let v): "raw\(v)"
        }
    }

    @Test func secretLayerValuesWithFlagsVectorsAndNestedObjects() {
        let message = SecretApi144.DecryptedMessage.decryptedMessage(.init(
            silent: true, randomId: 77, ttl: 5, message: "hi",
            media: .decryptedMessageMediaGeoPoint(.init(lat: 1.5, long: -2.0)),
            entities: [.messageEntityBold(.init(offset: 0, length: 2))], groupedId: 9))
        #expect(render(message) == "decryptedMessage(flags: #202a0, silent: true, random_id: 77L, ttl: 5, message: \"hi\", "
            + "media: decryptedMessageMediaGeoPoint(lat: 1.5, long: -2.0), "
            + "entities: [messageEntityBold(offset: 0, length: 2)], grouped_id: 9L)")
    }

    @Test func bareConstructorsByNameAndByType() {
        // `salts:vector<future_salt>`: a bare constructor named directly.
        let salts = MT.FutureSalts.future_salts(.init(
            reqMsgId: 8, now: 9, salts: [.future_salt(.init(validSince: 1, validUntil: 2, salt: 3))]))
        #expect(render(salts) == "future_salts(req_msg_id: 8L, now: 9, salts: [future_salt(valid_since: 1, valid_until: 2, salt: 3L)])")
        // `messages:vector<%Message>`: the only constructor of `Message`, whose `Object` body it describes itself.
        let body: [UInt8] = [0xec, 0x77, 0xbe, 0x7a, 1, 0, 0, 0, 0, 0, 0, 0]  // ping#7abe77ec ping_id:1
        let container = MT.MessageContainer.msg_container(.init(messages: [
            .message(.init(msgId: 4, seqno: 1, bytes: Int32(body.count), body: body)),
        ]))
        #expect(render(container) == "msg_container(messages: [message(msg_id: 4L, seqno: 1, bytes: 12, body: raw\(body))])")
    }

    @Test func typesHoldingAnObjectDescribeThemselves() {
        let types: [any TLRegistrable.Type] = [MT.RpcResult.self, MT.Message.self, MT.MessageContainer.self]
        #expect(types.map { $0 is any TLSchemaDescribed.Type } == [false, false, true])
        let result = MT.RpcResult.rpc_result(.init(reqMsgId: 5, result: [0xb5, 0x75, 0x72, 0x99]))
        #expect(render(result) == "rpc_result(req_msg_id: 5L, result: raw[181, 117, 114, 153])")
    }

    @Test func apiValueListsFlagsTrueFlagsAndPresentFieldsOnly() {
        // `bot:flags.14?true` shares its bit with `bot_info_version:flags.14?int`.
        let user = Api.User.user(.init(isSelf: true, id: 42, firstName: "Ann", botInfoVersion: 3))
        #expect(render(user) == "user(flags: #4402, self: true, bot: true, flags2: #0, id: 42L, first_name: \"Ann\", "
            + "bot_info_version: 3)")
    }

    /// A value whose bytes do not follow the definition the registry has.
    struct Written: TLSerializable {
        var bytes: [UInt8]
        func serialize(_ buffer: Buffer, _ boxed: Bool) { buffer.appendRaw(bytes) }
    }

    @Test func whatCannotBeDescribedSaysWhy() {
        let registry = TLRegistry(name: "Test", entries: [],
                                  constructors: [(0x1122_3344, "thing#11223344 a:int b:long = Thing;")])
        // Cut short: the error names the constructor and the field.
        let short = registry.descriptionFields(of: Written(bytes: [0x44, 0x33, 0x22, 0x11, 1, 0, 0, 0]))
        #expect(short.0 == "thing")
        #expect(short.1.map(\.0) == ["description error"])
        guard case .string(let text)? = short.1.first?.1 else { Issue.record("no error text"); return }
        #expect(text == "truncated at byte 8: needed 8 bytes, 0 available (in thing.b)")
        // Bytes left over are an error too.
        let long = registry.descriptionFields(of: Written(bytes: [0x44, 0x33, 0x22, 0x11] + [UInt8](repeating: 0, count: 16)))
        #expect(long.1.map(\.0) == ["description error"])
        // A constructor the registry has no definition for.
        let unknown = TLRegistry(name: "Empty", entries: []).descriptionFields(of: Api.InputPeer.inputPeerSelf)
        #expect(unknown.0 == "unknown")
        guard case .string(let why)? = unknown.1.first?.1 else { Issue.record("no error text"); return }
        #expect(why.contains("7da07ec9") && why.contains("Empty"), "\(why)")
    }
}
