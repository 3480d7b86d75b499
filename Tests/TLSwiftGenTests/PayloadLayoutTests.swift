// Which payloads are structs: fixed-size fields within one word (`SwiftEmitter.inlinePayloadLimit`), by the emitter's
// model of Swift's layout. GeneratedApiTests checks the same constructors' `MemoryLayout` sizes against the same
// numbers, so the model and the compiler cannot drift apart unnoticed.

import Testing
@testable import TLSchema
@testable import TLSwiftGen

@Suite struct PayloadLayoutTests {
    static let boundary = """
        oneLong a:long = T;
        boolThenInt flags:# f:flags.0?true a:int = T;
        sharedBit flags:# f:flags.0?true a:flags.0?int = T;
        manyFlags flags:# a:flags.0?true b:flags.1?true c:flags.2?true d:flags.3?true e:flags.4?true x:int = T;
        intThenOptionalInt flags:# a:int b:flags.0?int = T;
        optionalLong flags:# a:flags.0?long = T;
        twoLongs a:long b:long = T;
        withString a:int s:string = T;
        withObject a:int t:T = T;
        empty = T;
        ---functions---
        getT = T;
        """

    static func emitted(_ text: String) throws -> String {
        try GeneratorPipeline.emit(schemaText: text, displayName: "layout.tl", namespace: "L", fileCount: 1,
                                   embedSchema: false).map(\.contents).joined()
    }

    @Test func fixedSizePayloadsWithinOneWordAreStructs() throws {
        let text = try Self.emitted(Self.boundary)
        // `true` flags are bits of the stored `#` word; an optional number keeps its own tag beside it.
        for name in ["oneLong", "boolThenInt", "manyFlags"] {
            #expect(text.contains("public struct Cons_\(name): Sendable {"), "\(name)")
        }
        for name in ["sharedBit", "intThenOptionalInt", "optionalLong", "twoLongs", "withString", "withObject"] {
            #expect(text.contains("public final class Cons_\(name): Sendable {"), "\(name)")
        }
        #expect(!text.contains("Cons_empty"))
    }

    /// The layer's constructors whose sizes GeneratedApiTests reads back from the compiler.
    static let apiSizes: [(constructor: String, size: Int?)] = [
        ("peerUser", 8), ("encryptedChatDiscarded", 8), ("userStatusOffline", 4), ("replyKeyboardHide", 4),
        ("chatBannedRights", 8), ("recentStory", 9), ("starsAmount", 12), ("inputPeerUser", 16), ("peerColor", 25),
        ("user", nil),
    ]

    @Test func theLayoutModelOnTheLayer() throws {
        let emitter = try GeneratorPipeline.emitter(
            schemaText: try readText(Paths.schema("api.tl")), displayName: "api.tl", namespace: "Api", fileCount: 40,
            embedSchema: false, layer: nil, exceptions: KnownIDException.all)
        for (name, size) in Self.apiSizes {
            let constructor = try #require(emitter.schema.constructor(named: name))
            #expect(emitter.fixedPayloadSize(constructor) == size, "\(name)")
            #expect(emitter.payloadIsInline(constructor) == (size.map { $0 <= 8 } ?? false), "\(name)")
        }
    }
}
