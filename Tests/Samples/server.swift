// For samples that run the test Telegram in process: `serverKey` (also `key`) is its RSA key.
import MTProtoCrypto
import MTProtoServer
import TelegramApi
import TestTelegram
import TLRuntime

func sample(serverKey: RSAPrivateKey, key: RSAPrivateKey) async throws {
    // sample
}
