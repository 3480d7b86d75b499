// For samples that make their own client: what they import is all they get. `ask` and `askSecret` stand for an
// app's UI; `port` and `serverKeyPEM` for a test Telegram's address and key.
func sample(port: Int, serverKeyPEM: String, phone: String, apiID: Int32, apiHash: String,
            ask: @escaping @Sendable (String) async throws -> String,
            askSecret: @escaping @Sendable (String) async throws -> String) async throws {
    // sample
}
