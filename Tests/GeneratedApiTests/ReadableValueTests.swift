import Testing
import MTProtoApi
import SecretApi
import TLRuntime
import TelegramApi

/// `print(value)` and `"\(value)"` of generated values: the constructor and its fields, nested, sensitive ones
/// redacted (`TLObject.description`).
@Suite struct ReadableValueTests {
    @Test func interpolationNamesNestedConstructorsAndFields() {
        let history = Api.messages.Messages.messages(.init(
            messages: [.messageEmpty(.init(id: 3))], topics: [], chats: [],
            users: [.user(.init(isSelf: true, id: 7, firstName: "Ann", phone: "15550001"))]))
        // Fields in schema order: `flags2` follows the `true` flags of `flags`.
        #expect("\(history)" == "messages.messages(messages: [messageEmpty(flags: 0x0, id: 3)], topics: [], "
            + "chats: [], users: [user(flags: 0x412, self: true, flags2: 0x0, id: 7, first_name: \"Ann\", "
            + "phone: [[redacted]])])")
        #expect(!"\(history)".contains("15550001"))
        #expect(String(describing: history) == "\(history)")
    }

    @Test func redactedFieldsStayRedactedInsideOtherObjects() {
        let update = Api.Update.updateDraftMessage(.init(
            peer: .peerUser(.init(userId: 42)),
            draft: .draftMessage(.init(message: "meet at noon", date: 1_700_000_000))))
        #expect("\(update)" == "updateDraftMessage(flags: 0x0, peer: peerUser(user_id: 42), "
            + "draft: draftMessage(flags: 0x0, message: [[redacted]], date: 1700000000))")
        #expect(!"\(update)".contains("noon"))
    }

    @Test func valuesOfEverySchemaAndTheirCallsDescribeThemselves() {
        let pong = MT.Pong.pong(.init(msgId: 5, pingId: 6))
        #expect("\(pong)" == "pong(msg_id: 5, ping_id: 6)")
        // A type with an `Object` field describes itself (not through the schema): printed the same way.
        let result = MT.RpcResult.rpc_result(.init(reqMsgId: 5, result: [0xb5, 0x75, 0x72, 0x99]))
        #expect("\(result)" == "rpc_result(req_msg_id: 5, result: <4 object b5757299>)")
        let call = Api.functions.messages.sendMessage(
            peer: .inputPeerSelf, message: "hello there", randomId: 9)
        #expect("\(call.0)" == "messages.sendMessage(flags: 0x0, peer: inputPeerSelf(), message: [[redacted]], "
            + "random_id: 9)")
    }

    @Test func existentialsAndGenericValuesPrintTheSame() {
        // `print` finds the conformance at run time: each generated type declares `CustomStringConvertible` itself
        // (`TLObject` does not refine it), and a value seen as `any TLObject` or through a generic prints the same.
        let peer = Api.Peer.peerUser(.init(userId: 42))
        let object: any TLObject = peer
        func interpolated<T: TLObject>(_ value: T) -> String { "\(value)" }
        #expect("\(peer)" == "peerUser(user_id: 42)")
        #expect("\(object)" == "peerUser(user_id: 42)")
        #expect(interpolated(peer) == "peerUser(user_id: 42)")
        #expect(object.description == "peerUser(user_id: 42)")
    }

    @Test func everyRegisteredTypeOfEverySchemaPrintsItsFields() {
        // A type without the conformance would print as `TelegramApi.Api.Peer.peerUser(...)`: the check is on the
        // metatypes of every registry, so a schema or emitter path that forgot it fails here.
        let registries = [Api.registry, MT.registry, SecretApi8.registry, SecretApi46.registry, SecretApi73.registry,
                          SecretApi101.registry, SecretApi144.registry]
        var missing: [String] = []
        for registry in registries {
            for id in registry.ids {
                guard let type = registry.type(for: id) else { continue }
                if !(type is any CustomStringConvertible.Type) { missing.append("\(registry.name) \(type)") }
            }
            #expect(!registry.ids.isEmpty)
        }
        #expect(missing.isEmpty, "\(missing.sorted().prefix(5))")
    }
}
