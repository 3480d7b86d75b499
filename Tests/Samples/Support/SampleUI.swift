// What the client samples' `ui` stands for: an app's prompts and screens.
import TelegramApi
import TelegramClient

protocol SampleUI: Sendable {
    func askCode(_ sent: SentCode, error: SignInError?) async throws -> String
    func askPassword(hint: String?, error: SignInError?) async throws -> String
    func askName(showing terms: Api.help.TermsOfService?) async throws -> SignUpDetails?
    func show(_ code: QRCode)
}
