import TelegramFormatting

func sample() throws {
    // sample
}
