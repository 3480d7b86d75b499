// How grouped messages become events: two or more that come in one update are one album event; a grouped message
// that comes alone is a new message carrying its grouped_id, never an album of one.
import Foundation
import TelegramApi
import TelegramClient
import Testing

@Suite struct AlbumEventTests {
    @Test func aGroupedMessageThatComesAloneIsANewMessage() async throws {
        let pair = try await EventPair.start(seed: 5207)
        let named = try await pair.bobStoresPhoto(Array(repeating: 0x5A, count: 900))
        func single(_ randomID: Int64, _ caption: String) -> Api.InputSingleMedia {
            .inputSingleMedia(.init(media: named, randomId: randomID, message: caption))
        }
        // An album of one (the raw call allows it; sendAlbum asks for two or more), then one of two.
        _ = try await pair.bob.invoke(Api.functions.messages.sendMultiMedia(peer: pair.toAlice,
                                                                           multiMedia: [single(1, "alone")]))
        _ = try await pair.bob.invoke(Api.functions.messages.sendMultiMedia(
            peer: pair.toAlice, multiMedia: [single(2, "first"), single(3, "second")]))
        // Events come in order: once the album of two is seen, the one before it has been delivered.
        let album = try await pair.log.first { event -> AlbumEvent? in
            if case .album(let a) = event { return a }
            return nil
        }
        #expect(album.chatMessages.map(\.text) == ["first", "second"])
        let events = await pair.log.events
        let alone = events.compactMap { event -> Api.Message? in
            guard case .newMessage(let m) = event, case .message(let message) = m.message, message.message == "alone"
            else { return nil }
            return m.message
        }
        guard case .message(let lone)? = alone.first else { throw HarnessFailure(description: "\(events)") }
        #expect(alone.count == 1 && lone.groupedId != nil && lone.groupedId != album.groupedID)
        let albums = events.filter { if case .album = $0 { true } else { false } }
        #expect(albums.count == 1)
        try await pair.close()
    }
}

extension AlbumEventTests {
    /// An album posted to a supergroup reaches the other members as one album event, as in a private chat.
    @Test func anAlbumInASupergroupIsOneEventForEveryMember() async throws {
        let room = try await ChatRoom.start(seed: 5208)
        let group = try await room.supergroup()
        let bobLog = TypedEventLog(room.bob), carolLog = TypedEventLog(room.carol)
        let items: [MediaFile] = [
            .photo(.bytes(Array(repeating: 0x31, count: 700), name: "a.jpg"), caption: .plain("a")),
            .photo(.bytes(Array(repeating: 0x32, count: 800), name: "b.jpg"), caption: .plain("b")),
            .photo(.bytes(Array(repeating: 0x33, count: 900), name: "c.jpg"), caption: .plain("c")),
        ]
        let sent = try await room.alice.sendAlbum(items, to: group)
        for log in [bobLog, carolLog] {
            let album = try await log.first { event -> AlbumEvent? in
                if case .album(let a) = event { return a }
                return nil
            }
            #expect(album.chat.id == group && album.chatMessages.map(\.text) == ["a", "b", "c"])
            #expect(album.chatMessages.map(\.id) == sent.map(\.id))
            let singles = await log.events.filter { event in
                if case .newMessage(let new) = event, new.chatMessage?.groupedID != nil { return true }
                return false
            }
            #expect(singles.isEmpty)
        }
        try await room.close()
    }
}
