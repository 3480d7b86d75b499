// `TelegramClient.sendMessage(to:formatted:)`: the request it makes (text, entities, mentions resolved), and a
// formatted message from Alice reaching Bob on the test Telegram.
import Foundation
import MTProtoClient
import TelegramApi
@testable import TelegramClient
import TelegramFormatting
import Testing

@Suite struct FormattedMessageTests {
    @Test func theCallCarriesTheParsedTextAndEntities() async throws {
        let peer = Api.InputPeer.inputPeerUser(.init(userId: 5, accessHash: 6))
        let parsed = try FormattedText(html: "<b>hi</b> <a href=\"tg://user?id=7\">you</a> 😀<i>x</i>")
        let entities = try await TelegramClient.inputEntities(parsed.entities) { id in
            id == 7 ? .inputUser(.init(userId: 7, accessHash: 77)) : nil
        }
        let call = TelegramClient.sendMessageCall(to: peer, text: parsed.text, entities: entities, randomID: 99,
                                                  silent: true, noWebpage: false, replyTo: nil)
        let expected = Api.functions.messages.sendMessage(
            silent: true, peer: peer, message: "hi you 😀x", randomId: 99,
            entities: [.messageEntityBold(.init(offset: 0, length: 2)),
                       .inputMessageEntityMentionName(.init(offset: 3, length: 3,
                                                            userId: .inputUser(.init(userId: 7, accessHash: 77)))),
                       .messageEntityItalic(.init(offset: 9, length: 1))])
        #expect(call.1.bytes == expected.1.bytes)
        // Without a resolver the mention stays as parsed; without entities the field is absent.
        let unresolved = try await TelegramClient.inputEntities(parsed.entities) { _ in nil }
        #expect(TelegramClient.sendMessageCall(to: peer, text: parsed.text, entities: unresolved, randomID: 99,
                                               silent: true, noWebpage: false, replyTo: nil).1.bytes
                == Api.functions.messages.sendMessage(silent: true, peer: peer, message: "hi you 😀x", randomId: 99,
                                                      entities: parsed.entities).1.bytes)
        #expect(TelegramClient.sendMessageCall(to: peer, text: "x", entities: [], randomID: 1, silent: false,
                                               noWebpage: false, replyTo: nil).1.bytes
                == Api.functions.messages.sendMessage(peer: peer, message: "x", randomId: 1).1.bytes)
    }

    @Test func aFormattedMessageReachesThePeer() async throws {
        let chat = try await Conversation.start(seed: 143)
        let reader = MessageReader(chat.bob)
        try await chat.bob.connect()
        _ = try await chat.alice.sendMessage(to: chat.peer, formatted: .html("<b>bold</b> &amp; <i>italic</i>"))
        _ = try await chat.alice.sendMessage(to: chat.peer, formatted: .markdown("*two* \\& _more_"))
        // Malformed markup is refused before anything is sent.
        await #expect(throws: FormattingError(.unclosed("<b>"), at: 0)) {
            try await chat.alice.sendMessage(to: chat.peer, formatted: .html("<b>never"))
        }
        _ = try await chat.alice.sendMessage(to: chat.peer, formatted: .plain("<b>plain</b>"))
        try await Conversation.nothingMore(reader, than: ["bold & italic", "two & more", "<b>plain</b>"])
        try await chat.close()
    }
}
