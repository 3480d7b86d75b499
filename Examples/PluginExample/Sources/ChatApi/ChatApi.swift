// Hand-written next to the generated `Chat` namespace (from chat.tl, by the build-tool plugin at build time).
import TLRuntime

extension Chat.ChatMessage {
    /// The message text, whichever constructor.
    public var text: String {
        switch self {
        case .chatMessage(let message): message.text
        }
    }
}
