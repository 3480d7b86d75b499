// Channels on the test Telegram (core.telegram.org/api/channel, /api/updates): a supergroup's members get each
// message pushed with the channel's consecutive pts; `updates.getChannelDifference` answers empty, with the messages
// after a pts (sliced by its limit), or too long past the channel's log, and each of its errors; a broadcast channel
// lets only its creator post; a withheld push leaves a gap that getChannelDifference fills; the common
// `updates.getDifference` names a channel a member is behind in until it catches up; `messages.getDialogs` lists a
// member's channels with their pts; and the bounds answer errors.
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

/// Alice, Bob and Carol signed in on DC 2 of a `ServiceHarness`. There is no server, so nothing is pushed: a member
/// learns of a message another sent only by asking.
struct ChannelHarness {
    var h: ServiceHarness
    let alice: Api.User, bob: Api.User, carol: Api.User
    static let alice: UInt64 = 1, bob: UInt64 = 2, carol: UInt64 = 3

    init(limits: TestTelegramService.Limits = .init()) throws {
        h = ServiceHarness(limits: limits)
        alice = try h.login("9996620001", dc: 2, key: Self.alice, signUpAs: "Alice")
        bob = try h.login("9996620002", dc: 2, key: Self.bob, signUpAs: "Bob")
        carol = try h.login("9996620003", dc: 2, key: Self.carol, signUpAs: "Carol")
    }

    func call<T>(_ function: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>), as key: UInt64) throws -> T {
        try h.call(function, dc: 2, key: key)
    }

    func error<T>(_ function: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>), as key: UInt64) -> RPCError? {
        h.error(function, dc: 2, key: key)
    }

    /// A supergroup (or broadcast channel) made by `key`'s user, as that user sees it.
    func create(broadcast: Bool = false, as key: UInt64 = alice) throws -> Api.Chat.Cons_channel {
        let made = try call(Api.functions.channels.createChannel(broadcast: broadcast, megagroup: !broadcast, title: "Club",
                                                                 about: "a test"), as: key)
        guard case .updates(let updates) = made, case .updateChannel(let update)? = updates.updates.first,
              case .channel(let channel)? = updates.chats.first, update.channelId == channel.id, updates.seq == 0
        else { throw HarnessFailure(description: "\(made)") }
        return channel
    }

    func invite(_ users: [Api.User], to channel: Api.Chat.Cons_channel, as key: UInt64 = alice) throws -> Api.Chat.Cons_channel {
        let invited = try call(Api.functions.channels.inviteToChannel(channel: channel.input, users: users.map(\.inputUser)),
                               as: key)
        guard case .invitedUsers(let result) = invited, result.missingInvitees.isEmpty,
              case .updates(let updates) = result.updates, case .channel(let after)? = updates.chats.first
        else { throw HarnessFailure(description: "\(invited)") }
        return after
    }

    /// Sends `text`; returns the message id and the pts the sender's result carries.
    @discardableResult
    func send(_ text: String, to channel: Api.Chat.Cons_channel, as key: UInt64 = alice,
              randomID: Int64? = nil) throws -> (id: Int32, pts: Int32, message: Api.Message.Cons_message) {
        let randomID = randomID ?? text.utf8.reduce(Int64(17)) { $0 &* 31 &+ Int64($1) }
        let sent = try call(Api.functions.messages.sendMessage(peer: channel.peer, message: text, randomId: randomID), as: key)
        guard case .updates(let updates) = sent, updates.updates.count == 2, updates.seq == 0,
              case .updateMessageID(let id) = updates.updates[0], id.randomId == randomID,
              case .updateNewChannelMessage(let new) = updates.updates[1], new.ptsCount == 1,
              case .message(let message) = new.message, message.id == id.id
        else { throw HarnessFailure(description: "\(sent)") }
        return (id.id, new.pts, message)
    }

    func difference(_ channel: Api.Chat.Cons_channel, pts: Int32, limit: Int32 = 100,
                    as key: UInt64 = bob) throws -> Api.updates.ChannelDifference {
        try call(Api.functions.updates.getChannelDifference(channel: channel.input, filter: .channelMessagesFilterEmpty,
                                                            pts: pts, limit: limit), as: key)
    }

    func state(_ key: UInt64) throws -> Api.updates.State.Cons_state {
        guard case .state(let state) = try call(Api.functions.updates.getState(), as: key) else {
            throw HarnessFailure(description: "no state")
        }
        return state
    }

    func commonDifference(from state: Api.updates.State.Cons_state, as key: UInt64) throws -> Api.updates.Difference {
        try call(Api.functions.updates.getDifference(pts: state.pts, date: state.date, qts: state.qts), as: key)
    }

    func history(_ channel: Api.Chat.Cons_channel, offsetID: Int32 = 0, limit: Int32 = 100,
                 as key: UInt64 = bob) throws -> Api.messages.Messages.Cons_channelMessages {
        let page = try call(Api.functions.messages.getHistory(peer: channel.peer, offsetId: offsetID, offsetDate: 0,
                                                              addOffset: 0, limit: limit, maxId: 0, minId: 0, hash: 0),
                            as: key)
        guard case .channelMessages(let messages) = page else { throw HarnessFailure(description: "\(page)") }
        return messages
    }
}

extension Api.Chat.Cons_channel {
    var input: Api.InputChannel { .inputChannel(.init(channelId: id, accessHash: accessHash ?? 0)) }
    var peer: Api.InputPeer { .inputPeerChannel(.init(channelId: id, accessHash: accessHash ?? 0)) }
}

extension Api.Message {
    var text: String? {
        guard case .message(let message) = self else { return nil }
        return message.message
    }

    var id: Int32 {
        switch self {
        case .message(let message): message.id
        case .messageService(let message): message.id
        case .messageEmpty(let message): message.id
        }
    }
}

extension Api.Peer {
    var userID: Int64? { if case .peerUser(let peer) = self { peer.userId } else { nil } }
    var channelID: Int64? { if case .peerChannel(let peer) = self { peer.channelId } else { nil } }
}

extension Api.Chat {
    var channelID: Int64? {
        switch self {
        case .channel(let channel): channel.id
        case .channelForbidden(let channel): channel.id
        default: nil
        }
    }
}

/// The updates pushed to a client's connection, decoded, in order.
actor PushLog {
    private var updates: [Api.Update] = []

    init(_ client: MTProtoClient) {
        let stream = client.updates
        Task { for await bytes in stream { await self.append(bytes) } }
    }

    private func append(_ bytes: [UInt8]) {
        var reader = BufferReader(bytes: bytes)
        if case .updates(let container)? = try? Api.Updates.parse(&reader) { updates += container.updates }
    }

    /// Waits (at most 10 s) until `pick` chose `count` updates, and returns those.
    func first<T: Sendable>(_ count: Int, _ pick: @Sendable (Api.Update) -> T?) async throws -> [T] {
        for _ in 0..<1_000 {
            let picked = updates.compactMap(pick)
            if picked.count >= count { return picked }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "only \(updates) pushed")
    }

    static func newChannelMessage(_ update: Api.Update) -> (pts: Int32, text: String, from: Int64?)? {
        guard case .updateNewChannelMessage(let new) = update, new.ptsCount == 1, case .message(let message) = new.message
        else { return nil }
        guard case .peerUser(let user)? = message.fromId else { return (new.pts, message.message, nil) }
        return (new.pts, message.message, user.userId)
    }
}

@Suite struct TestTelegramChannelTests {
    /// Over sockets: Alice (DC 2) makes a supergroup and invites Bob (DC 1), who gets `updateChannel`; her messages
    /// reach him pushed with pts 2 and 3; his common getDifference names the channel until his getChannelDifference.
    @Test func membersGetEachMessagePushedWithConsecutivePts() async throws {
        let (server, alice, bob, bobUser) = try await TestTelegramLoopbackTests.startPair(seed: 61)
        let pushed = PushLog(bob)
        guard case .updates(let made) = try await alice.invoke(Api.functions.channels.createChannel(
            megagroup: true, title: "Club", about: "a test")), case .channel(let channel)? = made.chats.first
        else { throw HarnessFailure(description: "no channel") }
        #expect(channel.megagroup && !channel.broadcast && channel.creator && channel.participantsCount == 1)
        #expect(channel.title == "Club" && channel.id > 2_000_000_000)
        guard case .invitedUsers(let invited) = try await alice.invoke(Api.functions.channels.inviteToChannel(
            channel: channel.input, users: [bobUser.inputUser])), case .updates(let result) = invited.updates,
            case .channel(let after)? = result.chats.first
        else { throw HarnessFailure(description: "not invited") }
        #expect(invited.missingInvitees.isEmpty && after.participantsCount == 2)
        #expect(result.users.map(\.userID) == [bobUser.userID])
        let announced = try await pushed.first(1) { update -> Int64? in
            if case .updateChannel(let u) = update { return u.channelId }
            return nil
        }
        #expect(announced == [channel.id])

        var results: [[Int32]] = []
        for (index, text) in ["one", "two"].enumerated() {
            guard case .updates(let sent) = try await alice.invoke(Api.functions.messages.sendMessage(
                peer: channel.peer, message: text, randomId: Int64(index + 1))),
                case .updateMessageID(let id)? = sent.updates.first,
                case .updateNewChannelMessage(let new)? = sent.updates.last
            else { throw HarnessFailure(description: "not sent") }
            results.append([id.id, new.pts, new.ptsCount])
        }
        #expect(results == [[1, 2, 1], [2, 3, 1]])
        guard case .user(let aliceInfo) = try await alice.invoke(Api.functions.users.getUsers(id: [.inputUserSelf])).first
        else { throw HarnessFailure(description: "no self") }
        let messages = try await pushed.first(2, PushLog.newChannelMessage)
        #expect(messages.map(\.pts) == [2, 3] && messages.map(\.text) == ["one", "two"])
        #expect(messages.allSatisfy { $0.from == aliceInfo.id })

        guard case .chats(let chats) = try await bob.invoke(Api.functions.channels.getChannels(id: [channel.input])),
              case .channel(let seen)? = chats.chats.first
        else { throw HarnessFailure(description: "no chats") }
        #expect(!seen.creator && seen.participantsCount == 2)
        // A push proves nothing about what Bob's client has (it may have no connection), so his common difference
        // names the channel until his own getChannelDifference reaches its pts; the common state stays.
        guard case .state(let state) = try await bob.invoke(Api.functions.updates.getState()) else { return }
        let common = try await bob.invoke(Api.functions.updates.getDifference(pts: state.pts, date: state.date, qts: 0))
        guard case .difference(let named) = common, case .state(let unchanged) = named.state,
              case .updateChannelTooLong(let tooLong)? = named.otherUpdates.first
        else { throw HarnessFailure(description: "\(common)") }
        #expect(named.otherUpdates.count == 1 && tooLong.channelId == channel.id && tooLong.pts == 3)
        #expect(named.newMessages.isEmpty && unchanged.pts == state.pts && unchanged.seq == state.seq)
        let caughtUp = try await bob.invoke(Api.functions.updates.getChannelDifference(
            channel: channel.input, filter: .channelMessagesFilterEmpty, pts: 3, limit: 10))
        guard case .channelDifferenceEmpty(let empty) = caughtUp else { throw HarnessFailure(description: "\(caughtUp)") }
        #expect(empty.pts == 3 && empty.final && empty.timeout == 30)
        let again = try await bob.invoke(Api.functions.updates.getDifference(pts: state.pts, date: state.date, qts: 0))
        guard case .differenceEmpty = again else { throw HarnessFailure(description: "\(again)") }
        await alice.close()
        await bob.close()
        try await server.shutdown()
    }

    @Test func getChannelDifferenceIsEmptyOrTheMessagesAfterAPtsSlicedByTheLimit() throws {
        let c = try ChannelHarness()
        let channel = try c.create()
        #expect(try c.invite([c.bob], to: channel).participantsCount == 2)
        var sent: [[Int32]] = []
        for text in ["m1", "m2", "m3", "m4", "m5"] {
            let result = try c.send(text, to: channel)
            sent.append([result.id, result.pts])
            #expect(result.message.out && result.message.fromId?.userID == c.alice.userID)
        }
        #expect(sent == [[1, 2], [2, 3], [3, 4], [4, 5], [5, 6]])
        #expect(try c.send("m6", to: channel, randomID: 6).pts == 7)
        // A resent random_id is refused and moves nothing.
        #expect(c.error(Api.functions.messages.sendMessage(peer: channel.peer, message: "m6", randomId: 6),
                        as: ChannelHarness.alice)?.message == "RANDOM_ID_DUPLICATE")

        guard case .channelDifferenceEmpty(let empty) = try c.difference(channel, pts: 7) else {
            Issue.record("expected channelDifferenceEmpty")
            return
        }
        #expect(empty.pts == 7 && empty.final && empty.timeout == 30)

        guard case .channelDifference(let all) = try c.difference(channel, pts: 1) else { Issue.record("no difference"); return }
        #expect(all.newMessages.compactMap(\.text) == ["m1", "m2", "m3", "m4", "m5", "m6"])
        #expect(all.pts == 7 && all.final && all.timeout == 30 && all.otherUpdates.isEmpty)
        #expect(all.chats.compactMap(\.channelID) == [channel.id] && all.users.map(\.userID) == [c.alice.userID])
        #expect(all.newMessages.allSatisfy { message in
            guard case .message(let m) = message else { return false }
            return !m.out && m.peerId.channelID == channel.id && m.fromId?.userID == c.alice.userID
        })

        // Sliced: final only once the channel's pts is reached, and the timeout only then.
        var slices: [[String]] = [], reached: [Int32] = [], finals: [Bool] = []
        var pts: Int32 = 1
        while finals.last != true {
            guard case .channelDifference(let slice) = try c.difference(channel, pts: pts, limit: 2) else {
                Issue.record("no slice from \(pts)")
                return
            }
            slices.append(slice.newMessages.compactMap(\.text))
            reached.append(slice.pts)
            finals.append(slice.final)
            #expect(slice.timeout == (slice.final ? 30 : nil))
            pts = slice.pts
        }
        #expect(slices == [["m1", "m2"], ["m3", "m4"], ["m5", "m6"]] && reached == [3, 5, 7] && finals == [false, false, true])
        // A limit of 0 counts as 1; the sender sees its own messages as outgoing.
        guard case .channelDifference(let one) = try c.difference(channel, pts: 1, limit: 0) else { return }
        #expect(one.newMessages.compactMap(\.text) == ["m1"] && one.pts == 2 && !one.final)
        guard case .channelDifference(let own) = try c.difference(channel, pts: 5, as: ChannelHarness.alice) else { return }
        #expect(own.newMessages.map(\.id) == [5, 6])
        #expect(own.newMessages.allSatisfy { if case .message(let m) = $0 { m.out } else { false } })
    }

    @Test func aLimitAbove100Gives100() throws {
        let c = try ChannelHarness()
        let channel = try c.create()
        _ = try c.invite([c.bob], to: channel)
        for index in 1...120 { try c.send("n\(index)", to: channel) }
        guard case .channelDifference(let page) = try c.difference(channel, pts: 1, limit: 1_000) else {
            Issue.record("no difference")
            return
        }
        #expect(page.newMessages.count == 100 && page.newMessages.last?.text == "n100" && page.pts == 101 && !page.final)
    }

    @Test func getHistoryPagesAChannelNewestFirstForMembers() throws {
        let c = try ChannelHarness()
        let channel = try c.create()
        _ = try c.invite([c.bob], to: channel)
        for text in ["a", "b", "c", "d", "e"] { try c.send(text, to: channel) }
        try c.send("f", to: channel, as: ChannelHarness.bob)
        let all = try c.history(channel)
        #expect(all.messages.compactMap(\.text) == ["f", "e", "d", "c", "b", "a"] && all.count == 6 && all.pts == 7)
        #expect(Set(all.users.map(\.userID)) == [c.alice.userID, c.bob.userID])
        guard case .message(let newest)? = all.messages.first else { return }
        #expect(newest.out && newest.fromId?.userID == c.bob.userID)
        let page = try c.history(channel, offsetID: 4, limit: 2)
        #expect(page.messages.map(\.id) == [3, 2] && page.count == 6)
        #expect(c.error(Api.functions.messages.getHistory(peer: channel.peer, offsetId: 0, offsetDate: 0, addOffset: 0,
                                                          limit: 10, maxId: 0, minId: 0, hash: 0), as: ChannelHarness.carol)
                == RPCError(code: 406, message: "CHANNEL_PRIVATE"))
    }

    /// A log of 3 and 4 kept messages: from pts 4 the log still has every update after it; from pts 3 it does not.
    @Test func aMemberPastTheLogGetsChannelDifferenceTooLong() throws {
        var limits = TestTelegramService.Limits()
        limits.maxChannelLog = 3
        limits.maxChannelMessages = 4
        let c = try ChannelHarness(limits: limits)
        let channel = try c.create()
        _ = try c.invite([c.bob], to: channel)
        for index in 1...6 { try c.send("t\(index)", to: channel) }
        guard case .channelDifference(let recent) = try c.difference(channel, pts: 4) else { Issue.record("no difference"); return }
        #expect(recent.newMessages.compactMap(\.text) == ["t4", "t5", "t6"] && recent.pts == 7 && recent.final)

        guard case .channelDifferenceTooLong(let long) = try c.difference(channel, pts: 3),
              case .dialog(let dialog) = long.dialog
        else { Issue.record("expected channelDifferenceTooLong"); return }
        #expect(long.final && long.timeout == 30 && dialog.pts == 7 && dialog.topMessage == 6)
        #expect(dialog.peer.channelID == channel.id)
        #expect(long.messages.map(\.id) == [6, 5, 4, 3] && long.users.map(\.userID) == [c.alice.userID])
        #expect(long.chats.compactMap(\.channelID) == [channel.id])
        guard case .channelDifferenceTooLong(let short) = try c.difference(channel, pts: 2, limit: 2) else { return }
        #expect(short.messages.compactMap(\.text) == ["t6", "t5"])
        // The dialog's pts is where Bob now is: the common getDifference has no channel to name.
        guard case .differenceEmpty = try c.commonDifference(from: try c.state(ChannelHarness.bob), as: ChannelHarness.bob)
        else { Issue.record("expected differenceEmpty"); return }
    }

    /// `channels.deleteMessages`: own messages (the creator's: any), pts moved by how many went, the result a
    /// channel `affectedMessages`; the deletion comes after the new messages in getChannelDifference.
    @Test func deletionsMoveTheChannelsPtsByTheirCount() throws {
        let c = try ChannelHarness()
        let channel = try c.invite([c.bob], to: c.create())
        for text in ["one", "two", "three"] { try c.send(text, to: channel) }
        let bobs = try c.send("bob's", to: channel, as: ChannelHarness.bob)
        #expect(bobs.id == 4 && bobs.pts == 5)
        let delete = { (ids: [Int32], key: UInt64) in Api.functions.channels.deleteMessages(channel: channel.input, id: ids) }
        #expect(c.error(delete([1], ChannelHarness.bob), as: ChannelHarness.bob)
                == RPCError(code: 403, message: "MESSAGE_DELETE_FORBIDDEN"))
        guard case .affectedMessages(let affected) = try c.call(delete([2, 4, 99, 2], ChannelHarness.alice),
                                                               as: ChannelHarness.alice)
        else { throw HarnessFailure(description: "no affectedMessages") }
        #expect(affected.pts == 7 && affected.ptsCount == 2)
        // Nothing left to delete: the pts as it is, pts_count 0.
        guard case .affectedMessages(let none) = try c.call(delete([2], ChannelHarness.alice), as: ChannelHarness.alice)
        else { throw HarnessFailure(description: "no affectedMessages") }
        #expect(none.pts == 7 && none.ptsCount == 0)
        #expect(try c.history(channel).messages.compactMap(\.text) == ["three", "one"])

        guard case .channelDifference(let recent) = try c.difference(channel, pts: 5) else {
            throw HarnessFailure(description: "no difference")
        }
        guard case .updateDeleteChannelMessages(let deleted)? = recent.otherUpdates.first else {
            throw HarnessFailure(description: "\(recent.otherUpdates)")
        }
        #expect(recent.newMessages.isEmpty && recent.pts == 7 && recent.final && recent.otherUpdates.count == 1)
        #expect(deleted.channelId == channel.id && deleted.messages == [2, 4] && deleted.pts == 7 && deleted.ptsCount == 2)
        guard case .channelDifference(let all) = try c.difference(channel, pts: 1) else {
            throw HarnessFailure(description: "no difference")
        }
        #expect(all.newMessages.compactMap(\.text) == ["one", "two", "three", "bob's"] && all.otherUpdates.count == 1)
        // A limit that ends inside the log still ends on an entry: the deletion's two pts go together.
        guard case .channelDifference(let sliced) = try c.difference(channel, pts: 1, limit: 4) else {
            throw HarnessFailure(description: "no difference")
        }
        #expect(sliced.pts == 5 && !sliced.final && sliced.otherUpdates.isEmpty)
        #expect(c.error(Api.functions.channels.deleteMessages(channel: channel.input, id: [1]), as: ChannelHarness.carol)
                == RPCError(code: 406, message: "CHANNEL_PRIVATE"))
    }

    /// `channels.leaveChannel`: the member is out (its answer shows the channel as `channelForbidden`), gets no more
    /// of it and may not read it; the creator cannot leave.
    @Test func aMemberLeavesAndIsOut() throws {
        let c = try ChannelHarness()
        let channel = try c.invite([c.bob], to: c.create())
        try c.send("before", to: channel)
        let left = try c.call(Api.functions.channels.leaveChannel(channel: channel.input), as: ChannelHarness.bob)
        guard case .updates(let updates) = left, case .updateChannel(let update)? = updates.updates.first,
              case .channelForbidden(let forbidden)? = updates.chats.first
        else { throw HarnessFailure(description: "\(left)") }
        #expect(update.channelId == channel.id && forbidden.id == channel.id && updates.seq == 0)
        let isPrivate = RPCError(code: 406, message: "CHANNEL_PRIVATE")
        #expect(c.error(Api.functions.channels.leaveChannel(channel: channel.input), as: ChannelHarness.bob) == isPrivate)
        #expect(c.error(Api.functions.updates.getChannelDifference(channel: channel.input, filter: .channelMessagesFilterEmpty,
                                                                   pts: 1, limit: 10), as: ChannelHarness.bob) == isPrivate)
        #expect(c.error(Api.functions.channels.leaveChannel(channel: channel.input), as: ChannelHarness.alice)
                == RPCError(code: 400, message: "USER_CREATOR"))
        guard case .chats(let chats) = try c.call(Api.functions.channels.getChannels(id: [channel.input]), as: ChannelHarness.alice),
              case .channel(let after)? = chats.chats.first
        else { throw HarnessFailure(description: "no channel") }
        #expect(after.participantsCount == 1)
    }

    @Test func eachErrorOfTheChannelCalls() throws {
        let c = try ChannelHarness()
        let channel = try c.create()
        try c.send("x", to: channel)
        let bob = ChannelHarness.bob, alice = ChannelHarness.alice, carol = ChannelHarness.carol
        let unknown = Api.InputChannel.inputChannel(.init(channelId: channel.id + 1, accessHash: channel.accessHash ?? 0))
        let wrongHash = Api.InputChannel.inputChannel(.init(channelId: channel.id, accessHash: (channel.accessHash ?? 0) &+ 1))
        func difference(_ input: Api.InputChannel, pts: Int32, filter: Api.ChannelMessagesFilter = .channelMessagesFilterEmpty,
                        as key: UInt64 = alice) -> RPCError? {
            c.error(Api.functions.updates.getChannelDifference(channel: input, filter: filter, pts: pts, limit: 10), as: key)
        }
        let invalid = RPCError(code: 400, message: "CHANNEL_INVALID"), isPrivate = RPCError(code: 406, message: "CHANNEL_PRIVATE")
        #expect(difference(unknown, pts: 1) == invalid && difference(wrongHash, pts: 1) == invalid)
        #expect(difference(.inputChannelEmpty, pts: 1) == invalid)
        #expect(difference(channel.input, pts: 1, as: bob) == isPrivate)
        #expect(difference(channel.input, pts: 0)?.message == "PERSISTENT_TIMESTAMP_EMPTY")
        #expect(difference(channel.input, pts: -5)?.message == "PERSISTENT_TIMESTAMP_EMPTY")
        #expect(difference(channel.input, pts: 3)?.message == "PERSISTENT_TIMESTAMP_INVALID")
        #expect(difference(channel.input, pts: 1, filter: .channelMessagesFilter(.init(ranges: [.messageRange(.init(
            minId: 1, maxId: 2))])))?.message == "FILTER_NOT_SUPPORTED")
        #expect(c.error(Api.functions.channels.createChannel(megagroup: true, title: "", about: ""), as: alice)?.message
                == "CHAT_TITLE_EMPTY")
        #expect(c.error(Api.functions.channels.createChannel(megagroup: true, title: " \n", about: ""), as: alice)?.message
                == "CHAT_TITLE_EMPTY")
        #expect(c.error(Api.functions.messages.sendMessage(peer: channel.peer, message: "in?", randomId: 1), as: bob)
                == isPrivate)
        #expect(c.error(Api.functions.messages.sendMessage(
            peer: .inputPeerChannel(.init(channelId: channel.id, accessHash: 1)), message: "x", randomId: 2), as: alice)
                == invalid)
        #expect(c.error(Api.functions.channels.inviteToChannel(channel: channel.input, users: [c.carol.inputUser]), as: bob)
                == isPrivate)
        #expect(c.error(Api.functions.channels.inviteToChannel(
            channel: channel.input, users: [.inputUser(.init(userId: c.bob.userID, accessHash: 1))]), as: alice)?.message
                == "USER_ID_INVALID")
        // getChannels: a channel one is not in is `channelForbidden`; a wrong hash is an error.
        guard case .chats(let chats) = try c.call(Api.functions.channels.getChannels(id: [channel.input]), as: carol),
              case .channelForbidden(let forbidden)? = chats.chats.first
        else { Issue.record("expected channelForbidden"); return }
        #expect(forbidden.id == channel.id && forbidden.title == "Club" && forbidden.megagroup)
        #expect(c.error(Api.functions.channels.getChannels(id: [wrongHash]), as: alice) == invalid)
        // Nothing moved: Alice's one message is still the channel's pts 2.
        guard case .channelDifferenceEmpty(let empty) = try c.difference(channel, pts: 2, as: alice) else { return }
        #expect(empty.pts == 2)
    }

    @Test func onlyTheCreatorPostsInABroadcastChannel() throws {
        let c = try ChannelHarness()
        let channel = try c.create(broadcast: true)
        #expect(channel.broadcast && !channel.megagroup)
        _ = try c.invite([c.bob], to: channel)
        #expect(c.error(Api.functions.messages.sendMessage(peer: channel.peer, message: "me too", randomId: 1),
                        as: ChannelHarness.bob) == RPCError(code: 403, message: "CHAT_WRITE_FORBIDDEN"))
        #expect(c.error(Api.functions.channels.inviteToChannel(channel: channel.input, users: [c.carol.inputUser]),
                        as: ChannelHarness.bob)?.message == "CHAT_ADMIN_REQUIRED")
        let posted = try c.send("news", to: channel)
        #expect(posted.id == 1 && posted.pts == 2 && posted.message.post && posted.message.out && posted.message.fromId == nil)
        let seen = try c.history(channel)
        guard case .message(let post)? = seen.messages.first else { Issue.record("no post"); return }
        #expect(post.message == "news" && post.post && !post.out && post.fromId == nil && seen.users.isEmpty)
        #expect(seen.pts == 2 && seen.count == 1)
    }

    /// Over sockets, with the second message's push withheld: Bob gets pts 2 and 4, the common getDifference names
    /// the channel (a later push does not make up for the missed one), and getChannelDifference from 2 fills the gap.
    @Test func aWithheldPushLeavesAGapThatGetChannelDifferenceFills() async throws {
        let (server, alice, bob, bobUser) = try await TestTelegramLoopbackTests.startPair(seed: 62)
        server.faults.withholdMessagePush = 2
        let pushed = PushLog(bob)
        guard case .updates(let made) = try await alice.invoke(Api.functions.channels.createChannel(
            megagroup: true, title: "Gaps", about: "")), case .channel(let channel)? = made.chats.first
        else { throw HarnessFailure(description: "no channel") }
        _ = try await alice.invoke(Api.functions.channels.inviteToChannel(channel: channel.input, users: [bobUser.inputUser]))
        guard case .state(let before) = try await bob.invoke(Api.functions.updates.getState()) else { return }
        for (index, text) in ["one", "two", "three"].enumerated() {
            _ = try await alice.invoke(Api.functions.messages.sendMessage(peer: channel.peer, message: text,
                                                                          randomId: Int64(index + 1)))
        }
        let messages = try await pushed.first(2, PushLog.newChannelMessage)
        #expect(messages.map(\.pts) == [2, 4] && messages.map(\.text) == ["one", "three"])

        let named = try await bob.invoke(Api.functions.updates.getDifference(pts: before.pts, date: before.date, qts: 0))
        guard case .difference(let difference) = named, case .state(let state) = difference.state,
              case .updateChannelTooLong(let tooLong)? = difference.otherUpdates.first
        else { throw HarnessFailure(description: "\(named)") }
        #expect(tooLong.channelId == channel.id && tooLong.pts == 4 && difference.otherUpdates.count == 1)
        #expect(difference.newMessages.isEmpty && difference.chats.compactMap(\.channelID) == [channel.id])
        #expect(state.pts == before.pts && state.seq == before.seq)

        let filled = try await bob.invoke(Api.functions.updates.getChannelDifference(
            channel: channel.input, filter: .channelMessagesFilterEmpty, pts: 2, limit: 10))
        guard case .channelDifference(let gap) = filled else { throw HarnessFailure(description: "\(filled)") }
        #expect(gap.newMessages.compactMap(\.text) == ["two", "three"] && gap.pts == 4 && gap.final)
        let after = try await bob.invoke(Api.functions.updates.getDifference(pts: before.pts, date: before.date, qts: 0))
        guard case .differenceEmpty = after else { throw HarnessFailure(description: "\(after)") }
        await alice.close()
        await bob.close()
        try await server.shutdown()
    }

    /// Without a server nothing reaches Bob, so after each message the common getDifference names the channel with
    /// its pts (beside his private messages, and with his state unchanged when that is all), until he calls
    /// getChannelDifference. Alice, whose call results carried the messages, is never told.
    @Test func getDifferenceNamesAChannelAMemberIsBehindInUntilItCatchesUp() throws {
        let c = try ChannelHarness()
        let bob = ChannelHarness.bob, alice = ChannelHarness.alice
        let start = try c.state(bob)
        let channel = try c.create()
        _ = try c.invite([c.bob], to: channel)
        guard case .differenceEmpty = try c.commonDifference(from: start, as: bob) else {
            Issue.record("an invite alone is nothing new")
            return
        }
        try c.send("hi", to: channel)
        _ = try c.call(Api.functions.messages.sendMessage(peer: c.bob.inputPeer, message: "direct", randomId: 99), as: alice)
        guard case .difference(let both) = try c.commonDifference(from: start, as: bob),
              case .state(let reached) = both.state,
              case .updateChannelTooLong(let tooLong)? = both.otherUpdates.last
        else { Issue.record("expected a difference"); return }
        #expect(both.newMessages.compactMap(\.text) == ["direct"] && reached.pts == start.pts + 1)
        #expect(tooLong.channelId == channel.id && tooLong.pts == 2 && both.chats.compactMap(\.channelID) == [channel.id])
        guard case .differenceEmpty = try c.commonDifference(from: try c.state(alice), as: alice) else {
            Issue.record("the sender is not behind")
            return
        }

        guard case .channelDifference(let caught) = try c.difference(channel, pts: 1) else { Issue.record("no difference"); return }
        #expect(caught.newMessages.compactMap(\.text) == ["hi"] && caught.pts == 2)
        guard case .differenceEmpty = try c.commonDifference(from: reached, as: bob) else {
            Issue.record("caught up, yet named")
            return
        }
        guard case .difference(let direct) = try c.commonDifference(from: start, as: bob) else { return }
        #expect(direct.newMessages.compactMap(\.text) == ["direct"] && direct.otherUpdates.isEmpty && direct.chats.isEmpty)

        // Only the channel is new: a `difference` whose state is the one Bob already has.
        try c.send("again", to: channel)
        guard case .difference(let only) = try c.commonDifference(from: reached, as: bob),
              case .state(let same) = only.state,
              case .updateChannelTooLong(let again)? = only.otherUpdates.first
        else { Issue.record("expected a difference"); return }
        #expect(only.newMessages.isEmpty && only.otherUpdates.count == 1 && again.pts == 3)
        #expect(same.pts == reached.pts && same.seq == reached.seq && same.qts == reached.qts)
    }

    /// Bob's dialogs, newest first: a broadcast channel without messages (dated by its creation), the supergroup
    /// with Alice's message, the private chat; each channel's dialog carries its pts.
    @Test func getDialogsListsAMembersChannelsWithTheirPts() throws {
        var c = try ChannelHarness()
        _ = try c.call(Api.functions.messages.sendMessage(peer: c.bob.inputPeer, message: "direct", randomId: 1),
                       as: ChannelHarness.alice)
        c.h.now += 10
        let club = try c.create()
        _ = try c.invite([c.bob], to: club)
        c.h.now += 10
        try c.send("in club", to: club)
        c.h.now += 10
        let quiet = try c.create(broadcast: true, as: ChannelHarness.bob)
        func dialogs(offsetDate: Int32 = 0, as key: UInt64 = ChannelHarness.bob) throws
            -> (dialogs: [Api.Dialog], messages: [Api.Message], chats: [Api.Chat], users: [Api.User], count: Int32?) {
            let answer = try c.call(Api.functions.messages.getDialogs(offsetDate: offsetDate, offsetId: 0,
                                                                      offsetPeer: .inputPeerEmpty, limit: 10, hash: 0),
                                    as: key)
            switch answer {
            case .dialogs(let all): return (all.dialogs, all.messages, all.chats, all.users, nil)
            case .dialogsSlice(let slice): return (slice.dialogs, slice.messages, slice.chats, slice.users, slice.count)
            case .dialogsNotModified: throw HarnessFailure(description: "\(answer)")
            }
        }
        let list = try dialogs()
        let shown = list.dialogs.map { dialog -> [Int64] in
            guard case .dialog(let d) = dialog else { return [] }
            return [d.peer.channelID ?? d.peer.userID ?? 0, Int64(d.topMessage), Int64(d.pts ?? -1)]
        }
        #expect(shown == [[quiet.id, 0, 1], [club.id, 1, 2], [c.alice.userID, 1, -1]])
        #expect(list.messages.compactMap(\.text) == ["in club", "direct"])
        #expect(list.chats.compactMap(\.channelID) == [quiet.id, club.id])
        #expect(Set(list.users.map(\.userID)) == [c.alice.userID, c.bob.userID])
        let older = try dialogs(offsetDate: Int32(c.h.now))
        #expect(older.chats.compactMap(\.channelID) == [club.id] && older.dialogs.count == 2 && older.count == 3)
        #expect(list.count == nil)
        #expect(try dialogs(as: ChannelHarness.carol).dialogs.isEmpty)
    }

    @Test func theBoundsAnswerRPCErrors() throws {
        var limits = TestTelegramService.Limits()
        limits.maxChannels = 2
        limits.maxChannelMembers = 2
        limits.maxChannelMessages = 3
        let c = try ChannelHarness(limits: limits)
        let channel = try c.create()
        let second = try c.create(as: ChannelHarness.bob)
        #expect(second.id == channel.id + 1)
        #expect(c.error(Api.functions.channels.createChannel(megagroup: true, title: "Third", about: ""),
                        as: ChannelHarness.carol) == RPCError(code: 400, message: "CHANNELS_TOO_MUCH"))
        // Two invitees would make three members: refused whole.
        #expect(c.error(Api.functions.channels.inviteToChannel(channel: channel.input,
                                                               users: [c.bob.inputUser, c.carol.inputUser]),
                        as: ChannelHarness.alice)?.message == "USERS_TOO_MUCH")
        guard case .chats(let chats) = try c.call(Api.functions.channels.getChannels(id: [channel.input]),
                                                  as: ChannelHarness.alice),
              case .channel(let unchanged)? = chats.chats.first
        else { Issue.record("no channel"); return }
        #expect(unchanged.participantsCount == 1)
        #expect(try c.invite([c.bob], to: channel).participantsCount == 2)
        #expect(c.error(Api.functions.channels.inviteToChannel(channel: channel.input, users: [c.carol.inputUser]),
                        as: ChannelHarness.alice)?.message == "USERS_TOO_MUCH")
        // Past the kept messages the oldest are forgotten; ids and pts go on.
        for index in 1...5 { try c.send("k\(index)", to: channel) }
        let kept = try c.history(channel)
        #expect(kept.messages.map(\.id) == [5, 4, 3] && kept.count == 3 && kept.pts == 6)
        #expect(kept.messages.compactMap(\.text) == ["k5", "k4", "k3"])
    }
}
