// Must not compile: messages.sendMessage is answered with Updates, and this handler returns a Bool.
import MTProtoServer
import TelegramApi
import TelegramApiServer

func register(into handlers: inout RPCHandlers) {
    handlers.on(Api.functions.messages.SendMessage.self) { _, _ in
        true
    }
}
