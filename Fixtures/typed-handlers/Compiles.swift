// Compiles: the control for the fixtures beside it, so that they fail for their own error and not for the setup.
import MTProtoServer
import TelegramApi
import TelegramApiServer

func register(into handlers: inout RPCHandlers) {
    handlers.on(Api.functions.messages.SendMessage.self) { _, request in
        .updateShort(.init(update: .updateMessageID(.init(id: 1, randomId: request.randomId)),
                           date: Int32(request.message.count)))
    }
}
