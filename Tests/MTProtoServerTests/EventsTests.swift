// Typed events on the test Telegram: Bob's client does something to Alice, and Alice's client receives the typed
// event with Bob as the sender and the right chat, resolved (named by a hash from her peer cache).
import Foundation
import MTProtoClient
import MTProtoServer
import TelegramApi
import TelegramClient
import Testing

/// Alice and Bob signed in, each with the other's peer, Alice's events logged.
struct EventPair {
    let telegram: LocalTelegram
    let alice: TelegramClient
    let bob: TelegramClient
    let log: TypedEventLog
    let aliceID: Int64
    let bobID: Int64
    /// Bob's peer for Alice, and Alice's for Bob.
    let toAlice: Api.InputPeer
    let toBob: Api.InputPeer

    static func start(seed: UInt64, announcesMembers: Bool = false,
                      onEvent: @escaping @Sendable (MTProtoTestServer.ConnectionReport) -> Void = { _ in })
        async throws -> EventPair {
        let telegram = try await LocalTelegram.start(seed: seed, onEvent: onEvent, announcesMembers: announcesMembers)
        let alice = try telegram.client(), bob = try telegram.client()
        let log = TypedEventLog(alice)
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        _ = try await LocalTelegram.signIn(bob, phone: "9996610002")
        let toAlice = try await bob.inputPeer(for: try await bob.resolve(username: "alice_test"))
        let toBob = try await alice.inputPeer(for: try await alice.resolve(username: "bob_test"))
        guard let aliceID = telegram.service.user(phone: "9996620001"), let bobID = telegram.service.user(phone: "9996610002")
        else { throw HarnessFailure(description: "no accounts") }
        return EventPair(telegram: telegram, alice: alice, bob: bob, log: log, aliceID: aliceID, bobID: bobID,
                         toAlice: toAlice, toBob: toBob)
    }

    /// Bob sends `text` to Alice; returns the message's id in Alice's box (from her event).
    func bobSends(_ text: String) async throws -> Int32 {
        _ = try await PeerCacheClientTests.send(bob, to: toAlice, text)
        return try await log.first { event -> Int32? in
            guard case .newMessage(let m) = event, case .message(let message) = m.message, message.message == text
            else { return nil }
            return message.id
        }
    }

    /// Bob's id of the message he sent with `text` (from his history).
    func bobsID(of text: String) async throws -> Int32 {
        for try await message in bob.history(of: toAlice) {
            if case .message(let m) = message, m.message == text { return m.id }
        }
        throw HarnessFailure(description: "Bob has no \(text)")
    }

    /// Checks that `peer` is Bob, resolved with the hash Alice's cache holds.
    func isBob(_ peer: EventPeer?) async throws -> Bool {
        guard let peer, peer.id == .user(bobID), case .inputPeerUser(let input)? = peer.input else { return false }
        guard case .inputPeerUser(let known) = toBob else { return false }
        return input.accessHash == known.accessHash
    }

    func close() async throws {
        for client in [alice, bob] { await client.close() }
        try await telegram.server.shutdown()
    }
}

@Suite struct EventsTests {
    @Test func newMessage() async throws {
        let pair = try await EventPair.start(seed: 321)
        _ = try await PeerCacheClientTests.send(pair.bob, to: pair.toAlice, "new one")
        let event = try await pair.log.first { event -> MessageEvent? in
            guard case .newMessage(let m) = event, !m.outgoing else { return nil }
            return m
        }
        guard case .message(let message) = event.message else { throw HarnessFailure(description: "\(event.message)") }
        #expect(message.message == "new one")
        #expect(try await pair.isBob(event.sender))
        #expect(try await pair.isBob(event.chat))
        // Bob's user came with the update.
        guard case .user(let user)? = event.sender?.user else { throw HarnessFailure(description: "no user") }
        #expect(user.username == "bob_test")
        try await pair.close()
    }

    @Test func editedMessage() async throws {
        let pair = try await EventPair.start(seed: 322)
        let id = try await pair.bobSends("before the edit")
        let bobsID = try await pair.bobsID(of: "before the edit")
        _ = try await pair.bob.invoke(Api.functions.messages.editMessage(peer: pair.toAlice, id: bobsID, message: "after",
                                                                          entities: [.messageEntityBold(.init(offset: 0, length: 5))]))
        let event = try await pair.log.first { event -> MessageEvent? in
            guard case .editedMessage(let m) = event else { return nil }
            return m
        }
        guard case .message(let message) = event.message else { throw HarnessFailure(description: "\(event.message)") }
        #expect(message.id == id)
        #expect(message.message == "after")
        #expect(message.editDate != nil)
        // The entities were stored and came back.
        guard case .messageEntityBold(let bold)? = message.entities?.first else {
            throw HarnessFailure(description: "entities: \(String(describing: message.entities))")
        }
        #expect((bold.offset, bold.length) == (0, 5))
        #expect(try await pair.isBob(event.sender))
        #expect(try await pair.isBob(event.chat))
        try await pair.close()
    }

    @Test func deletedMessages() async throws {
        let pair = try await EventPair.start(seed: 323)
        let id = try await pair.bobSends("to be deleted")
        let bobsID = try await pair.bobsID(of: "to be deleted")
        _ = try await pair.bob.invoke(Api.functions.messages.deleteMessages(revoke: true, id: [bobsID]))
        let ids = try await pair.log.first { event -> [Int32]? in
            guard case .deletedMessages(let d) = event else { return nil }
            return d.ids
        }
        #expect(ids == [id])
        // Gone from Alice's history too.
        var left: [Int32] = []
        for try await message in pair.alice.history(of: pair.toBob) { left.append(message.id) }
        #expect(!left.contains(id))
        try await pair.close()
    }

    @Test func readHistory() async throws {
        let pair = try await EventPair.start(seed: 324)
        _ = try await PeerCacheClientTests.send(pair.alice, to: pair.toBob, "read me")
        _ = try await pair.bob.invoke(Api.functions.messages.readHistory(peer: pair.toAlice, maxId: 0))
        let event = try await pair.log.first { event -> ReadHistoryEvent? in
            guard case .readHistory(let r) = event, r.outbox else { return nil }
            return r
        }
        #expect(try await pair.isBob(event.chat))
        #expect(event.maxID == 1)
        try await pair.close()
    }

    @Test func userStatusAndTyping() async throws {
        let pair = try await EventPair.start(seed: 325)
        // A private chat first: status goes to those who have one with the user.
        _ = try await pair.bobSends("hello")
        _ = try await pair.bob.invoke(Api.functions.account.updateStatus(offline: false))
        let status = try await pair.log.first { event -> UserStatusEvent? in
            guard case .userStatus(let s) = event else { return nil }
            return s
        }
        #expect(try await pair.isBob(status.user))
        guard case .userStatusOnline = status.status else { throw HarnessFailure(description: "\(status.status)") }

        _ = try await pair.bob.invoke(Api.functions.messages.setTyping(peer: pair.toAlice, action: .sendMessageTypingAction))
        let typing = try await pair.log.first { event -> TypingEvent? in
            guard case .typing(let t) = event else { return nil }
            return t
        }
        #expect(try await pair.isBob(typing.sender))
        #expect(try await pair.isBob(typing.chat))
        guard case .sendMessageTypingAction = typing.action else { throw HarnessFailure(description: "\(typing.action)") }
        try await pair.close()
    }

    /// Bob makes a group with Alice in it, then adds Carol: Alice sees Carol join, added by Bob.
    @Test func participantAdded() async throws {
        let pair = try await EventPair.start(seed: 327, announcesMembers: true)
        try pair.telegram.service.addUser(phone: "9996620003", firstName: "Carol", username: "carol_test")
        let carol = try await pair.bob.inputUser(for: try await pair.bob.resolve(username: "carol_test"))
        let created = try await pair.bob.invoke(Api.functions.channels.createChannel(megagroup: true, title: "G", about: ""))
        guard case .updates(let made) = created, case .channel(let group)? = made.chats.first else {
            throw HarnessFailure(description: "\(created)")
        }
        let channel = try await pair.bob.inputChannel(for: .channel(group.id))
        guard case .inputPeerUser(let alice) = pair.toAlice else { throw HarnessFailure(description: "\(pair.toAlice)") }
        _ = try await pair.bob.invoke(Api.functions.channels.inviteToChannel(
            channel: channel, users: [.inputUser(.init(userId: alice.userId, accessHash: alice.accessHash))]))
        _ = try await pair.bob.invoke(Api.functions.channels.inviteToChannel(channel: channel, users: [carol]))
        let event = try await pair.log.first { event -> ParticipantEvent? in
            guard case .participant(let p) = event, p.user.id != .user(pair.aliceID) else { return nil }
            return p
        }
        let carolID = try #require(pair.telegram.service.user(phone: "9996620003"))
        #expect(event.joined)
        #expect(event.user.id == PeerID.user(carolID))
        #expect(event.chat.id == PeerID.channel(group.id))
        guard case .inputPeerChannel? = event.chat.input else { throw HarnessFailure(description: "group not resolved") }
        #expect(event.actor?.id == .user(pair.bobID))
        // Alice's own arrival came first.
        let own = try await pair.log.first { event -> ParticipantEvent? in
            guard case .participant(let p) = event, p.user.id == .user(pair.aliceID) else { return nil }
            return p
        }
        #expect(own.actor?.id == .user(pair.bobID))
        try await pair.close()
    }
}
