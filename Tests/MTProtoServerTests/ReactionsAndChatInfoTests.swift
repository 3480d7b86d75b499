// Reactions and a chat's title, about and photo end to end on the test Telegram: a reaction set, changed and taken
// back in a private chat and in a supergroup, each change reaching the other side as a typed event with the counts
// and who reacted; the errors Telegram gives for a message that does not exist, a reaction it does not offer and a
// member without the right, each leaving the reactions as they were; a chat photo uploaded and posted as a service
// message, refused to a member without change_info; and the participant updates a bot admin gets.
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import TelegramApi
import TelegramClient
import TestTelegram
import Testing

@Suite struct ReactionsAndChatInfoTests {
    /// The first reactions event for message `id` whose reactions `match` accepts.
    static func reactions(_ log: TypedEventLog, id: Int32,
                          _ match: @escaping @Sendable (MessageReactions) -> Bool) async throws -> MessageReactionsEvent {
        try await log.first { event -> MessageReactionsEvent? in
            guard case .messageReactions(let r) = event, r.messageID == id, match(r.reactions) else { return nil }
            return r
        }
    }

    /// Each count as "REACTION COUNT[ mine]".
    static func summary(_ reactions: MessageReactions) -> [String] {
        reactions.counts.map { "\($0.reaction) \($0.count)" + ($0.chosenOrder == nil ? "" : " mine") }
    }

    @Test func aReactionIsSetChangedAndTakenBackInAPrivateChat() async throws {
        let pair = try await EventPair.start(seed: 541)
        let bobLog = TypedEventLog(pair.bob)
        let sent = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("react to me"))
        let hers = try await pair.aliceReceives("react to me")

        let mine = try #require(try await pair.alice.react(to: hers.id, in: pair.bobPeer, with: .emoji("👍")))
        #expect(Self.summary(mine) == ["👍 1 mine"] && mine.mine == [.emoji("👍")])
        // Bob, the author, sees it on his own id of the message, with Alice as who reacted.
        let seen = try await Self.reactions(bobLog, id: sent.id) { $0.count(of: .emoji("👍")) == 1 }
        #expect(seen.chat.id == pair.alicePeer && seen.reactions.mine.isEmpty && seen.reactions.canSeeList)
        #expect(seen.reactions.recent.map(\.peer) == [pair.alicePeer] && seen.reactions.recent.first?.isMine == false)

        // Changed: the heart with its variation selector is Telegram's "❤".
        try await pair.alice.react(to: hers.id, in: pair.bobPeer, with: .emoji("❤️"))
        let changed = try await Self.reactions(bobLog, id: sent.id) { $0.count(of: .emoji("❤")) == 1 }
        #expect(changed.reactions.count(of: .emoji("👍")) == 0 && changed.reactions.counts.count == 1)
        // Bob adds a custom emoji: both count, each side sees its own.
        let both = try #require(try await pair.bob.react(to: sent.id, in: pair.alicePeer,
                                                         with: .customEmoji(documentID: 5_368_324_170_671_202_286)))
        #expect(both.counts.count == 2 && both.mine == [.customEmoji(documentID: 5_368_324_170_671_202_286)])
        let herView = try await Self.reactions(pair.log, id: hers.id) { $0.counts.count == 2 }
        #expect(herView.reactions.mine == [.emoji("❤")])
        // Read back with messages.getMessagesReactions; a message the chat lacks is left out.
        let read = try await pair.alice.reactions(on: [hers.id, 424_242], in: pair.bobPeer)
        #expect(read.keys.sorted() == [hers.id] && read[hers.id]?.counts.count == 2)

        // Taken back.
        try await pair.alice.removeReaction(from: hers.id, in: pair.bobPeer)
        // Only the custom emoji is left: no earlier event matches that.
        let removed = try await Self.reactions(bobLog, id: sent.id) {
            $0.count(of: .emoji("❤")) == 0 && $0.count(of: .customEmoji(documentID: 5_368_324_170_671_202_286)) == 1
        }
        #expect(removed.reactions.counts.map(\.reaction) == [.customEmoji(documentID: 5_368_324_170_671_202_286)])
        try await pair.close()
    }

    @Test func badReactionsAreTypedErrorsAndChangeNothing() async throws {
        let pair = try await EventPair.start(seed: 542)
        _ = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("keep"))
        let hers = try await pair.aliceReceives("keep")
        try await pair.alice.react(to: hers.id, in: pair.bobPeer, with: .emoji("🔥"))

        await #expect(throws: ChatError.messageNotFound) {
            try await pair.alice.react(to: 424_242, in: pair.bobPeer, with: .emoji("👍"))
        }
        await #expect(throws: ChatError.reactionInvalid) {
            try await pair.alice.react(to: hers.id, in: pair.bobPeer, with: .emoji("🦖"))
        }
        await #expect(throws: ChatError.reactionsTooMany) {
            try await pair.alice.setReactions([.emoji("👍"), .emoji("👎")], on: hers.id, in: pair.bobPeer)
        }
        await #expect(throws: ChatError.reactionInvalid) {
            try await pair.alice.react(to: hers.id, in: pair.bobPeer, with: .paid)
        }
        let raw = await rpcError {
            _ = try await pair.alice.invoke(Api.functions.messages.sendReaction(
                peer: try await pair.alice.inputPeer(for: pair.bobPeer), msgId: hers.id, reaction: [.reactionEmpty]))
        }
        #expect(raw?.message == "REACTION_EMPTY")
        let now = try await pair.alice.reactions(on: [hers.id], in: pair.bobPeer)
        #expect(now[hers.id].map(Self.summary) == ["🔥 1 mine"])
        try await pair.close()
    }

    @Test func reactionsInASupergroupReachEveryMember() async throws {
        let room = try await ChatRoom.start(seed: 543)
        let group = try await room.supergroup()
        let aliceLog = TypedEventLog(room.alice), carolLog = TypedEventLog(room.carol)
        let post = try await room.alice.sendMessage(to: group, formatted: .plain("vote"))

        try await room.bob.react(to: post.id, in: group, with: .emoji("🎉"))
        let author = try await Self.reactions(aliceLog, id: post.id) { $0.count(of: .emoji("🎉")) == 1 }
        let member = try await Self.reactions(carolLog, id: post.id) { $0.count(of: .emoji("🎉")) == 1 }
        #expect(author.chat.id == group && member.chat.id == group)
        #expect(author.reactions.recent.map(\.peer) == [.user(room.ids.bob)] && author.reactions.mine.isEmpty)
        // Who reacted reaches the peer cache through the update's users.
        #expect(try await room.carol.cachedPeer(.user(room.ids.bob)) != nil)

        try await room.carol.react(to: post.id, in: group, with: .emoji("🎉"))
        let two = try await Self.reactions(aliceLog, id: post.id) { $0.count(of: .emoji("🎉")) == 2 }
        #expect(two.reactions.recent.count == 2)

        // Carol without send_reactions is refused; the reactions stay as they were.
        try await room.alice.restrict(.user(room.ids.carol), in: group, Restriction(denying: [.sendReactions]))
        await #expect(throws: ChatError.forbidden("CHAT_SEND_REACTIONS_FORBIDDEN")) {
            try await room.carol.removeReaction(from: post.id, in: group)
        }
        await #expect(throws: ChatError.messageNotFound) {
            try await room.bob.react(to: 9_999, in: group, with: .emoji("👍"))
        }
        #expect(try await room.alice.reactions(on: [post.id], in: group)[post.id]?.count(of: .emoji("🎉")) == 2)

        // A broadcast channel counts reactions but shows nobody who sent them.
        let news = try await room.alice.createChannel(title: "News")
        _ = try await room.alice.invoke(Api.functions.channels.inviteToChannel(
            channel: try await room.alice.inputChannel(for: news),
            users: [try await room.alice.inputUser(for: .user(room.ids.bob))]))
        for try await _ in room.bob.dialogs() {}
        let story = try await room.alice.sendMessage(to: news, formatted: .plain("story"))
        let counted = try #require(try await room.bob.react(to: story.id, in: news, with: .emoji("👍")))
        #expect(counted.count(of: .emoji("👍")) == 1 && counted.recent.isEmpty && !counted.canSeeList)
        try await room.close()
    }

    /// A tiny JPEG: what the test Telegram checks is the file's signature.
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x42, count: 2_000) + [0xFF, 0xD9]

    @Test func aPhotoIsKeptAndPostedAndRefusedWithoutTheRight() async throws {
        let room = try await ChatRoom.start(seed: 544)
        let group = try await room.supergroup()
        try await room.alice.setPhoto(try await room.alice.upload(bytes: Self.jpeg, name: "photo.jpg"), of: group)
        let full = try await room.alice.invoke(Api.functions.channels.getFullChannel(
            channel: try await room.alice.inputChannel(for: group)))
        guard case .chatFull(let f) = full, case .channelFull(let c) = f.fullChat, case .photo(let photo) = c.chatPhoto,
              case .channel(let chat)? = f.chats.first, case .chatPhoto(let small) = chat.photo
        else { throw HarnessFailure(description: "no photo: \(full)") }
        #expect(small.photoId == photo.id)
        // Bob finds the service message Telegram posts in the chat's history (the client's events carry only member
        // changes among service messages).
        var notice: Api.Photo?
        for try await message in room.bob.history(of: try await room.bob.inputPeer(for: group)) {
            guard case .messageService(let s) = message, case .messageActionChatEditPhoto(let edit) = s.action
            else { continue }
            notice = edit.photo
            break
        }
        guard case .photo(let posted)? = notice else { throw HarnessFailure(description: "\(String(describing: notice))") }
        #expect(posted.id == photo.id)

        // Bob has no change_info: refused, and nothing changes.
        await #expect(throws: ChatError.adminRequired) {
            try await room.bob.setPhoto(try await room.bob.upload(bytes: Self.jpeg, name: "mine.jpg"), of: group)
        }
        await #expect(throws: ChatError.adminRequired) { try await room.bob.setTitle("Bob's", of: group) }
        await #expect(throws: ChatError.adminRequired) { try await room.bob.removePhoto(of: group) }
        await #expect(throws: ChatError.photoInvalid("IMAGE_PROCESS_FAILED")) {
            try await room.alice.setPhoto(try await room.alice.upload(bytes: Array("not a photo".utf8), name: "x.txt"),
                                          of: group)
        }
        let after = try await room.bob.invoke(Api.functions.channels.getChannels(
            id: [try await room.bob.inputChannel(for: group)]))
        guard case .chats(let list) = after, case .channel(let still)? = list.chats.first,
              case .chatPhoto(let kept) = still.photo else { throw HarnessFailure(description: "\(after)") }
        #expect(kept.photoId == photo.id && still.title == "Moderated")

        try await room.alice.removePhoto(of: group)
        await #expect(throws: ChatError.notModified) { try await room.alice.removePhoto(of: group) }
        // A basic group's photo.
        let small2 = try await room.alice.createGroup(title: "Small", members: [.user(room.ids.bob)])
        try await room.alice.setPhoto(try await room.alice.upload(bytes: Self.jpeg, name: "g.jpg"), of: small2)
        let groupFull = try await room.alice.invoke(Api.functions.messages.getFullChat(chatId: small2.id))
        guard case .chatFull(let g) = groupFull, case .chatFull(let info) = g.fullChat, case .photo? = info.chatPhoto
        else { throw HarnessFailure(description: "\(groupFull)") }
        try await room.close()
    }

    @Test func aBotAdminIsToldOfEveryMemberChange() async throws {
        let room = try await ChatRoom.start(seed: 545)
        let token = "424242:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
        try room.telegram.service.addBot(token: token, firstName: "Warden", username: "warden_bot")
        let bot = try room.telegram.client()
        guard case .user(let me) = try await bot.signIn(botToken: token) else { throw HarnessFailure(description: "bot") }
        try await LocalTelegram.followingUpdates(bot)
        let botLog = TypedEventLog(bot)
        let group = try await room.alice.createSupergroup(title: "Watched")
        let warden = try await room.alice.resolve(username: "warden_bot")
        _ = try await room.alice.invoke(Api.functions.channels.inviteToChannel(
            channel: try await room.alice.inputChannel(for: group), users: [try await room.alice.inputUser(for: warden)]))
        try await room.alice.promote(warden, in: group, rights: [.banUsers, .inviteUsers])
        #expect(warden == .user(me.id))

        _ = try await room.alice.invoke(Api.functions.channels.inviteToChannel(
            channel: try await room.alice.inputChannel(for: group),
            users: [try await room.alice.inputUser(for: .user(room.ids.bob))]))
        func change(_ wanted: ParticipantEvent.Change) async throws -> ParticipantEvent {
            try await botLog.first { event -> ParticipantEvent? in
                guard case .participant(let p) = event, p.user.id == .user(room.ids.bob), p.change == wanted else {
                    return nil
                }
                return p
            }
        }
        let joined = try await change(.joined)
        #expect(joined.joined && joined.previous == nil && joined.current?.role == .member)
        #expect(joined.actor?.id == .user(room.ids.alice) && joined.chat.id == group)
        // The bot's peer cache learned Bob from the update.
        #expect(try await bot.cachedPeer(.user(room.ids.bob))?.accessHash != nil)

        try await room.alice.promote(.user(room.ids.bob), in: group, rights: [.pinMessages], title: "Pins")
        let promoted = try await change(.promoted)
        #expect(promoted.previous?.role == .member && promoted.current?.role == .admin([.pinMessages]))
        try await room.alice.ban(.user(room.ids.bob), from: group)
        let banned = try await change(.banned)
        #expect(!banned.joined && banned.current.map { if case .banned = $0.role { true } else { false } } == true)
        await bot.close()
        try await room.close()
    }
}
