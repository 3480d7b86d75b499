// Channel updates end to end on the test Telegram: Alice makes a supergroup and invites Bob; what she posts reaches
// Bob's `updates` stream once and in order when a push goes missing (a pts gap in the channel's box, filled with
// `updates.getChannelDifference`) and while Bob's client is closed (the common difference carries
// `updateChannelTooLong`, and the channel's box comes back from the store) (core.telegram.org/api/updates).
import Foundation
import MTProtoClient
import MTProtoServer
import TelegramApi
import TelegramClient
import TelegramSession
import Testing

/// A conversation with a supergroup Alice made and invited Bob to.
struct ChannelChat {
    let chat: Conversation
    let channel: Api.InputChannel
    let channelID: Int64

    static func start(seed: UInt64, sqlitePath: String? = nil) async throws -> ChannelChat {
        let chat = try await Conversation.start(seed: seed, sqlitePath: sqlitePath)
        let created = try await chat.alice.invoke(Api.functions.channels.createChannel(
            megagroup: true, title: "Test group", about: ""))
        guard case .updates(let c) = created, case .channel(let made)? = c.chats.first, let hash = made.accessHash else {
            throw HarnessFailure(description: "createChannel gave \(created)")
        }
        let channel = Api.InputChannel.inputChannel(.init(channelId: made.id, accessHash: hash))
        guard case .inputPeerUser(let bob) = chat.peer else { throw HarnessFailure(description: "\(chat.peer)") }
        _ = try await chat.alice.invoke(Api.functions.channels.inviteToChannel(
            channel: channel, users: [.inputUser(.init(userId: bob.userId, accessHash: bob.accessHash))]))
        return ChannelChat(chat: chat, channel: channel, channelID: made.id)
    }

    /// Alice posts each text in the group.
    func post(_ texts: [String]) async throws {
        guard case .inputChannel(let c) = channel else { return }
        for text in texts {
            let randomID = text.utf8.reduce(Int64(29)) { $0 &* 31 &+ Int64($1) }
            _ = try await chat.alice.invoke(Api.functions.messages.sendMessage(
                peer: .inputPeerChannel(.init(channelId: c.channelId, accessHash: c.accessHash)), message: text,
                randomId: randomID))
        }
    }

    /// Waits until the channel's box saved in Bob's store has reached `pts` (at most 10 s).
    func savedChannelBox(atLeast pts: Int32) async throws -> ChannelBox {
        for _ in 0..<1_000 {
            if let box = try await chat.bobStore.load().channelBoxes[channelID], box.pts >= pts { return box }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "no channel box at pts \(pts) saved")
    }
}

@Suite struct TelegramClientChannelTests {
    @Test func aMissingChannelPushIsFilledByGetChannelDifference() async throws {
        let group = try await ChannelChat.start(seed: 101)
        let reader = MessageReader(group.chat.bob)
        try await group.post(["first"])
        #expect(try await reader.first(1) == ["first"])
        let box = try await group.savedChannelBox(atLeast: 1)
        // Messages sent so far: the channel post above; the next one is withheld from Bob.
        group.chat.telegram.server.faults.withholdMessagePush = 2
        try await group.post(["withheld", "after"])
        #expect(try await reader.first(3) == ["first", "withheld", "after"])
        try await group.post(["last"])
        try await Conversation.nothingMore(reader, than: ["first", "withheld", "after", "last"])
        #expect(try await group.savedChannelBox(atLeast: box.pts + 3).pts == box.pts + 3)
        #expect(await group.chat.bob.channelBoxes[group.channelID]?.pts == box.pts + 3)
        // The common box did not move for any of it.
        #expect(await group.chat.bob.updateBox?.pts == group.chat.box.pts)
        try await group.chat.close()
    }

    /// A deletion's `messages.affectedMessages` carries the channel's pts: Alice's client moves her channel box with
    /// it (`TelegramClient.channelID(of:)`), and Bob's moves with the pushed `updateDeleteChannelMessages`, so the
    /// next post applies at once in both.
    @Test func aChannelDeletionMovesTheChannelBoxes() async throws {
        let group = try await ChannelChat.start(seed: 104)
        let alice = group.chat.alice, bob = group.chat.bob
        let reader = MessageReader(bob)
        try await group.post(["one", "two", "three"])
        #expect(try await reader.first(3) == ["one", "two", "three"])
        #expect(await alice.channelBoxes[group.channelID]?.pts == 4)
        let common = await alice.updateBox
        guard case .affectedMessages(let affected) = try await alice.invoke(Api.functions.channels.deleteMessages(
            channel: group.channel, id: [2])) else { throw HarnessFailure(description: "no affectedMessages") }
        #expect(affected.pts == 5 && affected.ptsCount == 1)
        #expect(await alice.channelBoxes[group.channelID]?.pts == 5)
        #expect(await alice.updateBox == common)
        for _ in 0..<1_000 where await bob.channelBoxes[group.channelID]?.pts != 5 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await bob.channelBoxes[group.channelID]?.pts == 5)
        try await group.post(["four"])
        try await Conversation.nothingMore(reader, than: ["one", "two", "three", "four"])
        #expect(await bob.channelBoxes[group.channelID]?.pts == 6)
        #expect(await alice.channelBoxes[group.channelID]?.pts == 6)
        try await group.chat.close()
    }

    /// Bob leaves: his client stops following the channel (the answer shows it `channelForbidden`) and gets none
    /// of what is posted after.
    @Test func aLeftChannelIsNoLongerFollowed() async throws {
        let group = try await ChannelChat.start(seed: 105)
        let bob = group.chat.bob
        let reader = MessageReader(bob)
        try await group.post(["one"])
        #expect(try await reader.first(1) == ["one"])
        #expect(await bob.channelBoxes[group.channelID]?.pts == 2)
        _ = try await bob.invoke(Api.functions.channels.leaveChannel(channel: try await bob.inputChannel(for: .channel(group.channelID))))
        #expect(await bob.channelBoxes[group.channelID] == nil)
        try await group.post(["after"])
        try await Conversation.nothingMore(reader, than: ["one"])
        #expect(await bob.channelBoxes.isEmpty)
        try await group.chat.close()
    }

    /// In memory and in an SQLite file.
    @Test(arguments: [false, true])
    func aReopenedClientCatchesUpOnTheChannel(sqlite: Bool) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ch-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let group = try await ChannelChat.start(seed: sqlite ? 103 : 102, sqlitePath: sqlite ? path : nil)
        let before = MessageReader(group.chat.bob)
        try await group.post(["one"])
        #expect(try await before.first(1) == ["one"])
        await before.stop()
        let closedAt = try await group.savedChannelBox(atLeast: 1)
        #expect(closedAt.accessHash != nil)
        await group.chat.bob.close()

        try await group.post(["two", "three", "four"])
        let reopened = try group.chat.telegram.client(store: group.chat.bobStore)
        let states = StateLog(reopened)
        let reader = MessageReader(reopened)
        try await reopened.connect()
        #expect(try await reader.first(3) == ["two", "three", "four"])
        _ = try await states.caughtUp()
        try await group.post(["five"])
        try await Conversation.nothingMore(reader, than: ["two", "three", "four", "five"])
        #expect(try await group.savedChannelBox(atLeast: closedAt.pts + 4).pts == closedAt.pts + 4)
        await reopened.close()
        try await group.chat.close()
    }
}
