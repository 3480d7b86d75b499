// The real schemas: every file the project generates from lints clean with the counts PROVENANCE.md records, and
// the historical TDLib/tdesktop files fail only where PROVENANCE.md says they must.

import Foundation
import Testing
@testable import TLSchema

@Suite struct RealSchemaTests {
    @Test func apiSchema() throws {
        let schema = try checkFile(Paths.schema("api.tl"))
        #expect(schema.errors.map(\.description) == [])
        #expect(schema.layer == 229)
        #expect(schema.constructors.count == 1658)
        #expect(schema.functions.count == 813)
    }

    @Test(arguments: [(8, 15), (46, 49), (73, 49), (101, 52), (144, 54)])
    func secretSchema(layer: Int, constructors: Int) throws {
        let schema = try checkFile(Paths.schema("secret/layer\(layer).tl"))
        #expect(schema.errors.map(\.description) == [])
        #expect(schema.layer == layer)
        #expect(schema.constructors.count == constructors)
        #expect(schema.functions.isEmpty)
    }

    @Test func mtprotoSchema() throws {
        let schema = try checkFile(Paths.schema("mtproto.tl"))
        #expect(schema.errors.map(\.description) == [])
        #expect(schema.constructors.count == 53)
        #expect(schema.functions.count == 10)
        // `message` and the 8 tls* lines have no written ID: theirs is computed by the rule.
        let computed = schema.constructors.filter { !$0.hasExplicitID }
        #expect(computed.map(\.name) == ["message", "tlsClientHello", "tlsBlockString", "tlsBlockRandom", "tlsBlockZero",
                                          "tlsBlockDomain", "tlsBlockGrease", "tlsBlockPublicKey", "tlsBlockScope"])
        #expect(computed.first?.id == 0x5BB8_E511) // message#5bb8e511 in the official schema
        #expect(schema.constructor(named: "msg_container")?.fields.first?.type == .vector(.bare("message"), boxed: false))
        #expect(schema.constructor(named: "future_salts")?.fields.last?.type == .vector(.bare("future_salt"), boxed: false))
        #expect(schema.constructor(named: "resPQ")?.fields.prefix(2).map(\.type) == [.int128, .int128])
        #expect(schema.constructor(named: "p_q_inner_data")?.fields.last?.type == .int256)
    }

    @Test func tdlibLayer228FailsOnlyOnItsHelperEntries() throws {
        let schema = try checkFile(Paths.history("api228_tdlib.tl"))
        #expect(schema.layer == nil) // TDLib's file has no `// LAYER` line
        let names = schema.errors.map { diagnostic in
            diagnostic.message.split(separator: "'").dropFirst().first.map(String.init) ?? diagnostic.message
        }
        #expect(names == [
            "inputPeerPhotoFileLocationLegacy", "inputStickerSetThumbLegacy",
            "invokeWithBusinessConnectionPrefix", "invokeWithGooglePlayIntegrityPrefix",
            "invokeWithApnsSecretPrefix", "invokeWithReCaptchaPrefix",
        ])
        #expect(schema.errors.allSatisfy { $0.message.contains("does not match CRC32 of its normalized definition") })
        #expect(schema.errors.map(\.location.line) == [23, 24, 31, 32, 33, 34])
    }

    @Test func tdesktopLayer214IsClean() throws {
        let schema = try checkFile(Paths.history("api214_tdesktop.tl"))
        #expect(schema.errors.map(\.description) == [])
        #expect(schema.layer == 214)
    }

    // MARK: The model of the real API

    static let api: Schema? = try? checkFile(Paths.schema("api.tl"))

    @Test func apiTypesAndConstructorsInOrder() throws {
        let api = try #require(Self.api)
        #expect(api.types.first?.name == "Bool")
        #expect(api.type(named: "Bool")?.constructors == ["boolFalse", "boolTrue"])
        #expect(api.type(named: "InputPeer")?.constructors == [
            "inputPeerEmpty", "inputPeerSelf", "inputPeerChat", "inputPeerUser", "inputPeerChannel",
            "inputPeerUserFromMessage", "inputPeerChannelFromMessage",
        ])
        #expect(api.type(named: "messages.Messages")?.namespace == "messages")
        #expect(api.types.reduce(0) { $0 + $1.constructors.count } == 1657) // every constructor but `vector`
    }

    @Test func apiRecursion() throws {
        let api = try #require(Self.api)
        func recursive(_ name: String) -> Bool? { api.type(named: name)?.isRecursive }
        #expect(recursive("InputPeer") == true) // inputPeerUserFromMessage peer:InputPeer
        #expect(recursive("PageBlock") == true)
        #expect(recursive("RichText") == true)
        #expect(recursive("InputUser") == false) // refers to InputPeer, which never leads back
        #expect(recursive("Bool") == false)
        #expect(recursive("InputFile") == false)
    }

    @Test func apiFunctions() throws {
        let api = try #require(Self.api)
        func function(_ name: String) -> Combinator? { api.functions.first { $0.name == name } }
        #expect(function("users.getUsers")?.result == .vector(.boxed("User"), boxed: true))
        #expect(function("messages.getHistory")?.result == .boxed("messages.Messages"))
        #expect(function("messages.getHistory")?.namespace == "messages")
        #expect(function("invokeWithLayer")?.result == .generic("X"))
        #expect(function("invokeWithLayer")?.generics == ["X"])
        #expect(function("invokeWithLayer")?.id == 0xDA9B_0D0D)
        #expect(function("initConnection")?.fields.last?.type == .generic("X"))
        #expect(function("help.getConfig")?.result == .boxed("Config"))
    }

    @Test func apiFlags2() throws {
        let api = try #require(Self.api)
        let user = try #require(api.constructor(named: "user"))
        let flags2 = try #require(user.fields.first { $0.name == "usernames" })
        #expect(flags2.condition?.flagsField == "flags2")
        #expect(flags2.condition?.bit == 0)
        #expect(flags2.type == .vector(.boxed("Username"), boxed: true))
        #expect(user.fields.filter { $0.type == .nat }.map(\.name) == ["flags", "flags2"])
        #expect(user.fields.first { $0.name == "self" }?.type == .trueFlag)
    }
}
