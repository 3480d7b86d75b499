// Must not compile: messages.sendMessage has no field `text` (its text is `message`).
import MTProtoServer
import TelegramApi
import TelegramApiServer

func register(into handlers: inout RPCHandlers) {
    handlers.on(Api.functions.messages.SendMessage.self) { _, request in
        .updateShort(.init(update: .updateMessageID(.init(id: 1, randomId: request.randomId)),
                           date: Int32(request.text.count)))
    }
}
