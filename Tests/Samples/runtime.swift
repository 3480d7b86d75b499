// For samples of the runtime and the generated API: bytes from the wire.
import TelegramApi
import TLRuntime

func sample(someBytes: [UInt8], replyBytes: [UInt8], request: Buffer) async throws {
    // sample
}
