import Testing
@testable import TLSwiftGen

@Suite struct NamingTests {
    @Test func snakeCaseBecomesLowerCamelCase() {
        #expect(Naming.fieldName("access_hash") == "accessHash")
        #expect(Naming.fieldName("bot_inline_geo") == "botInlineGeo")
        #expect(Naming.fieldName("id") == "id")
    }

    @Test func namesSwiftGivesMeaningToAreRenamed() {
        #expect(Naming.fieldName("self") == "isSelf")
        #expect(Naming.escaped("default") == "`default`")
        #expect(Naming.escaped("peer") == "peer")
    }
}
