import Testing
import TLRuntime
import TelegramApi

@Suite struct SmokeTests {
    @Test func layerIsTheSchemaLayer() {
        #expect(Api.layer == 229)
    }
}
