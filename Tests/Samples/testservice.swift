// For samples that change a running test Telegram's answers: `service` is the TestTelegramService it was started with.
import TestTelegram

func sample(service: TestTelegramService) async throws {
    // sample
}
