// For samples of the sans-IO core: the caller's I/O (`send`, `nextFrame`) and clock.
import MTProto
import MTProtoCrypto
import TelegramApi
import TLRuntime

func sample(serverKey: RSAPublicKey, send: ([UInt8]) -> Void, nextFrame: () throws -> [UInt8],
            clock: () -> Double) async throws {
    // sample
}
