// Channel boxes on hand-built updates (core.telegram.org/api/updates): each channel's pts checked on its own, a
// channel's gap waited for and filled by a late update or by getChannelDifference without holding up the common box
// or another channel, slices and too-long differences, updateChannelTooLong, failures, access hashes, the bound on
// channels, and the boxes' stored form.
import TLRuntime
import TelegramApi
import TelegramClient
import TelegramSession
import Testing

@Suite struct ChannelUpdatesStateTests {
    static let hash: Int64 = 5_550_001

    static func message(_ text: String, channel: Int64, id: Int32) -> Api.Message {
        .message(.init(id: id, peerId: .peerChannel(.init(channelId: channel)), date: 100, message: text))
    }

    static func channel(_ id: Int64, hash: Int64? = ChannelUpdatesStateTests.hash, min: Bool = false) -> Api.Chat {
        .channel(.init(megagroup: true, min: min, id: id, accessHash: hash, title: "c\(id)", photo: .chatPhotoEmpty, date: 1))
    }

    /// `updates` (seq 0) with one `updateNewChannelMessage` of channel `id` at `pts`, text "c<id>.<pts>", and the
    /// channel in `chats` (with its access hash unless `hash` is nil).
    static func pushed(_ pts: Int32, channel id: Int64 = 77, count: Int32 = 1, hash: Int64? = ChannelUpdatesStateTests.hash)
        -> Api.Updates
    {
        .updates(.init(updates: [.updateNewChannelMessage(.init(message: message("c\(id).\(pts)", channel: id, id: pts),
                                                                pts: pts, ptsCount: count))],
                       users: [], chats: hash.map { [channel(id, hash: $0)] } ?? [], date: 100, seq: 0))
    }

    /// The fetches asked, as `UpdatesStateTests` names them.
    static func fetches(_ actions: [UpdatesAction]) -> [String] { UpdatesStateTests.fetches(actions) }

    static func texts(_ actions: [UpdatesAction]) -> [String] { UpdatesStateTests.texts(actions) }

    /// A machine with a common box at pts 10 and channel 77 at pts 5 (hash known).
    static func machine(maxPending: Int = 512, maxChannels: Int = 10_000) -> UpdatesState {
        UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 5),
                     channels: [77: ChannelBox(pts: 5, accessHash: hash)], maxPending: maxPending, maxChannels: maxChannels)
    }

    @Test func channelUpdatesMoveTheirOwnBoxOnly() {
        var machine = Self.machine()
        var actions = machine.receive(Self.pushed(6), now: 0)
        actions += machine.receive(Self.pushed(7), now: 0)
        // A channel never seen starts its box at its first update.
        actions += machine.receive(Self.pushed(40, channel: 88), now: 0)
        actions += machine.receive(Self.pushed(41, channel: 88), now: 0)
        #expect(Self.texts(actions) == ["c77.6", "c77.7", "c88.40", "c88.41"])
        #expect(Self.fetches(actions).isEmpty)
        #expect(machine.channels == [77: ChannelBox(pts: 7, accessHash: Self.hash), 88: ChannelBox(pts: 41, accessHash: Self.hash)])
        #expect(machine.box == UpdateBox(pts: 10, qts: 0, date: 50, seq: 5))
        #expect(machine.gapDeadline == nil && !machine.isFetching)
        // Duplicates: the same, and older.
        #expect(machine.receive(Self.pushed(7), now: 0).isEmpty)
        #expect(machine.receive(Self.pushed(3), now: 0).isEmpty)
    }

    @Test func aGapIsHeldAndFilledByTheLateUpdate() {
        var machine = Self.machine()
        #expect(machine.receive(Self.pushed(7), now: 1).isEmpty)
        #expect(machine.gapDeadline == 1.5)
        #expect(machine.channels[77]?.pts == 5)
        let actions = machine.receive(Self.pushed(6), now: 1.2)
        #expect(Self.texts(actions) == ["c77.6", "c77.7"])
        #expect(machine.channels[77]?.pts == 7)
        #expect(machine.gapDeadline == nil)
        #expect(machine.tick(now: 2).isEmpty)
    }

    @Test func aGapNotFilledInTimeIsFetchedWithGetChannelDifference() {
        var machine = Self.machine()
        _ = machine.receive(Self.pushed(8), now: 0)
        #expect(machine.tick(now: 0.4).isEmpty)
        let asked = machine.tick(now: 0.5)
        #expect(Self.fetches(asked) == ["getChannelDifference(77,\(Self.hash),5)"])
        #expect(machine.isFetching && machine.gapDeadline == nil)
        // While it is out, the channel's updates are held.
        #expect(machine.receive(Self.pushed(9), now: 0.6).isEmpty)
        let difference = Api.updates.ChannelDifference.channelDifference(.init(
            final: true, pts: 8, newMessages: [Self.message("c77.6", channel: 77, id: 6), Self.message("c77.7", channel: 77, id: 7),
                                                Self.message("c77.8", channel: 77, id: 8)],
            otherUpdates: [], chats: [Self.channel(77)], users: []))
        let actions = machine.receiveChannelDifference(difference, channelID: 77, now: 0.7)
        // The held pts 8 is a duplicate now; 9 applies after the difference.
        #expect(Self.texts(actions) == ["c77.6", "c77.7", "c77.8", "c77.9"])
        #expect(machine.channels[77]?.pts == 9)
        #expect(!machine.isFetching && machine.gapDeadline == nil)
        // An answer nobody asked for is ignored.
        #expect(machine.receiveChannelDifference(difference, channelID: 77, now: 1).isEmpty)
    }

    @Test func aDifferenceThatIsNotFinalIsAskedAgainFromWhereItEnded() {
        var machine = Self.machine()
        _ = machine.receive(Self.pushed(9), now: 0)
        _ = machine.tick(now: 1)
        let first = machine.receiveChannelDifference(.channelDifference(.init(
            pts: 7, newMessages: [Self.message("c77.6", channel: 77, id: 6), Self.message("c77.7", channel: 77, id: 7)],
            otherUpdates: [], chats: [], users: [])), channelID: 77, now: 1.1)
        #expect(Self.texts(first) == ["c77.6", "c77.7"])
        #expect(Self.fetches(first) == ["getChannelDifference(77,\(Self.hash),7)"])
        #expect(machine.isFetching)
        let last = machine.receiveChannelDifference(.channelDifference(.init(
            final: true, pts: 8, newMessages: [Self.message("c77.8", channel: 77, id: 8)], otherUpdates: [], chats: [],
            users: [])), channelID: 77, now: 1.2)
        #expect(Self.texts(last) == ["c77.8", "c77.9"])
        #expect(machine.channels[77]?.pts == 9 && !machine.isFetching)
    }

    @Test func aSliceThatDoesNotMoveTheBoxEndsTheFetch() {
        var machine = Self.machine()
        _ = machine.receive(Self.pushed(9), now: 0)
        _ = machine.tick(now: 1)
        let stuck = machine.receiveChannelDifference(.channelDifference(.init(
            pts: 5, newMessages: [], otherUpdates: [], chats: [], users: [])), channelID: 77, now: 1.1)
        #expect(Self.fetches(stuck).isEmpty)
        #expect(!machine.isFetching)
        // Still a gap: asked again after the wait, and dropped after two differences that do not reach it.
        #expect(machine.gapDeadline == 1.6)
        _ = machine.tick(now: 2)
        _ = machine.receiveChannelDifference(.channelDifferenceEmpty(.init(final: true, pts: 5)), channelID: 77, now: 2.1)
        #expect(machine.gapDeadline == nil && !machine.isFetching)
        #expect(machine.channels[77]?.pts == 5)
    }

    @Test func aTooLongDifferenceMovesTheBoxAndTellsTheApp() {
        var machine = Self.machine()
        _ = machine.receive(Self.pushed(9), now: 0)
        _ = machine.tick(now: 1)
        let dialog = Api.Dialog.dialog(.init(peer: .peerChannel(.init(channelId: 77)), topMessage: 500, readInboxMaxId: 0,
                                             readOutboxMaxId: 0, unreadCount: 0, unreadMentionsCount: 0,
                                             unreadReactionsCount: 0, unreadPollVotesCount: 0,
                                             notifySettings: .peerNotifySettings(.init()), pts: 900))
        let actions = machine.receiveChannelDifference(.channelDifferenceTooLong(.init(
            final: true, dialog: dialog, messages: [Self.message("c77.newest", channel: 77, id: 500)], chats: [], users: [])),
            channelID: 77, now: 1.1)
        #expect(Self.fetches(actions) == ["channelTooLong(77,900)"])
        #expect(Self.texts(actions) == ["c77.newest"])
        let delivered = actions.compactMap { action -> [Api.Update]? in
            if case .deliver(.updates(let c)) = action { return c.updates } else { return nil }
        }.flatMap { $0 }
        guard case .updateChannelTooLong(let tooLong)? = delivered.first else {
            Issue.record("no updateChannelTooLong first: \(delivered)")
            return
        }
        #expect(tooLong.channelId == 77 && tooLong.pts == 900)
        #expect(machine.channels[77]?.pts == 900)
        #expect(!machine.isFetching && machine.gapDeadline == nil)
        // The held pts 9 went with the refetch.
        #expect(machine.receive(Self.pushed(901), now: 2).count == 1)
    }

    @Test func updateChannelTooLongAsksAtOnceOrStartsABox() {
        var machine = Self.machine()
        let known = Api.Updates.updates(.init(updates: [.updateChannelTooLong(.init(channelId: 77, pts: 20))], users: [],
                                              chats: [], date: 100, seq: 0))
        let actions = machine.receive(known, now: 0)
        #expect(Self.fetches(actions) == ["getChannelDifference(77,\(Self.hash),5)"])
        #expect(Self.texts(actions).isEmpty && actions.count == 1)
        // Another while it is out: nothing more.
        #expect(machine.receive(known, now: 0.1).isEmpty)
        // A channel never followed starts at the given pts, with nothing to fetch.
        let unknown = Api.Updates.updates(.init(updates: [.updateChannelTooLong(.init(channelId: 99, pts: 30))], users: [],
                                                chats: [Self.channel(99)], date: 100, seq: 0))
        #expect(machine.receive(unknown, now: 0.2).isEmpty)
        #expect(machine.channels[99] == ChannelBox(pts: 30, accessHash: Self.hash))
        // Without a pts it goes to the app as it came.
        let bare = Api.Updates.updates(.init(updates: [.updateChannelTooLong(.init(channelId: 98))], users: [], chats: [],
                                             date: 100, seq: 0))
        let passed = machine.receive(bare, now: 0.3)
        guard case .deliver(.updates(let c))? = passed.first, case .updateChannelTooLong? = c.updates.first else {
            Issue.record("not delivered: \(passed)")
            return
        }
        #expect(machine.channels[98] == nil)
    }

    @Test func theCommonDifferenceCarriesUpdateChannelTooLong() {
        var machine = Self.machine()
        _ = machine.receive(UpdatesStateTests.pushed(12, seq: 6), now: 0)
        let asked = machine.tick(now: 1)
        #expect(Self.fetches(asked) == ["getDifference(10,0,5)"])
        let difference = Api.updates.Difference.difference(.init(
            newMessages: [UpdatesStateTests.message("m11", id: 11), UpdatesStateTests.message("m12", id: 12)],
            newEncryptedMessages: [], otherUpdates: [.updateChannelTooLong(.init(channelId: 77, pts: 9))],
            chats: [Self.channel(77, hash: 4242)], users: [],
            state: UpdatesStateTests.state(12, seq: 6)))
        let actions = machine.receiveDifference(difference, now: 1.1)
        #expect(Self.texts(actions) == ["m11", "m12"])
        // The channel's hash came with the difference's chats.
        #expect(Self.fetches(actions) == ["getChannelDifference(77,4242,5)"])
    }

    @Test func oneChannelsGapHoldsUpNeitherTheCommonBoxNorAnotherChannel() {
        var machine = Self.machine()
        #expect(machine.receive(Self.pushed(8), now: 0).isEmpty)
        let mixed = Api.Updates.updates(.init(updates: [
            .updateNewMessage(.init(message: UpdatesStateTests.message("m11", id: 11), pts: 11, ptsCount: 1)),
            .updateNewChannelMessage(.init(message: Self.message("c77.7", channel: 77, id: 7), pts: 7, ptsCount: 1)),
            .updateNewChannelMessage(.init(message: Self.message("c88.3", channel: 88, id: 3), pts: 3, ptsCount: 1)),
        ], users: [], chats: [], date: 120, seq: 6))
        let actions = machine.receive(mixed, now: 0.1)
        // m11 and channel 88 go at once; channel 77's pts 7 is still a gap (6 is missing), so it waits with 8.
        #expect(Self.texts(actions) == ["m11", "c88.3"])
        #expect(machine.box == UpdateBox(pts: 11, qts: 0, date: 120, seq: 6))
        #expect(machine.channels[77]?.pts == 5 && machine.channels[88]?.pts == 3)
        #expect(machine.gapDeadline == 0.5)
        #expect(Self.texts(machine.receive(Self.pushed(6), now: 0.2)) == ["c77.6", "c77.7", "c77.8"])
    }

    @Test func failuresWaitLongerEachTimeAndAChannelErrorForgetsTheBox() {
        var machine = Self.machine()
        _ = machine.receive(Self.pushed(8), now: 0)
        _ = machine.tick(now: 0.5)
        #expect(machine.channelFetchFailed(channelID: 77, now: 1).isEmpty)
        #expect(machine.gapDeadline == 2)
        #expect(Self.fetches(machine.tick(now: 2)).count == 1)
        #expect(machine.channelFetchFailed(channelID: 77, now: 3).isEmpty)
        #expect(machine.gapDeadline == 5)
        _ = machine.tick(now: 5)
        let forgotten = machine.channelFetchFailed(channelID: 77, permanent: true, now: 6)
        #expect(Self.texts(forgotten) == ["c77.8"])
        #expect(machine.channels[77] == nil && machine.gapDeadline == nil && !machine.isFetching)
    }

    @Test func withoutAnAccessHashAGapIsDeliveredAsItCame() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 5), channels: [77: ChannelBox(pts: 5)])
        _ = machine.receive(Self.pushed(9, hash: nil), now: 0)
        _ = machine.receive(Self.pushed(8, hash: nil), now: 0.1)
        let actions = machine.tick(now: 0.5)
        #expect(Self.fetches(actions).isEmpty)
        #expect(Self.texts(actions) == ["c77.8", "c77.9"])
        #expect(machine.channels[77] == ChannelBox(pts: 9))
        // A min channel's hash is not the account's: still none.
        _ = machine.receive(.updates(.init(updates: [], users: [], chats: [Self.channel(77, min: true)], date: 1, seq: 0)),
                            now: 1)
        #expect(machine.channels[77]?.accessHash == nil)
        // A full one is learned.
        _ = machine.receive(Self.pushed(10), now: 1)
        #expect(machine.channels[77] == ChannelBox(pts: 10, accessHash: Self.hash))
    }

    @Test func pastMaxPendingTheDifferenceIsAskedAtOnce() {
        var machine = Self.machine(maxPending: 3)
        #expect(machine.receive(Self.pushed(10), now: 0).isEmpty)
        #expect(machine.receive(Self.pushed(11), now: 0).isEmpty)
        let asked = machine.receive(Self.pushed(12), now: 0)
        #expect(Self.fetches(asked) == ["getChannelDifference(77,\(Self.hash),5)"])
    }

    @Test func channelsPastTheBoundPassUnchecked() {
        var machine = Self.machine(maxChannels: 1)
        #expect(Self.texts(machine.receive(Self.pushed(3, channel: 88), now: 0)) == ["c88.3"])
        #expect(Self.texts(machine.receive(Self.pushed(3, channel: 88), now: 0)) == ["c88.3"])
        #expect(machine.channels.keys.sorted() == [77])
        #expect(machine.gapDeadline == nil)
    }

    @Test func aChannelCallsPtsMovesThatChannelsBox() {
        var machine = Self.machine()
        // channels.deleteMessages of two messages: pts 7, pts_count 2, on channel 77; the common box stays.
        #expect(machine.receive(pts: 7, ptsCount: 2, channelID: 77, now: 0).isEmpty)
        #expect(machine.channels[77]?.pts == 7 && machine.box?.pts == 10)
        #expect(machine.receive(pts: 7, ptsCount: 2, channelID: 77, now: 0).isEmpty)
        #expect(machine.channels[77]?.pts == 7)
        // A gap: nothing to hold, so the difference is asked at once.
        let asked = machine.receive(pts: 12, ptsCount: 1, channelID: 77, now: 0)
        #expect(Self.fetches(asked) == ["getChannelDifference(77,\(Self.hash),7)"])
        // The common one is unchanged by all of it, and still takes its own.
        #expect(UpdatesStateTests.fetches(machine.receive(pts: 11, ptsCount: 1, now: 0)).isEmpty)
        #expect(machine.box?.pts == 11)
    }

    @Test func theChannelOfACallComesFromItsChannelOrPeer() {
        let channel = Api.InputChannel.inputChannel(.init(channelId: 77, accessHash: 1))
        #expect(TelegramClient.channelID(of: Api.functions.channels.deleteMessages(channel: channel, id: [1, 2]).0) == 77)
        let peer = Api.InputPeer.inputPeerChannel(.init(channelId: 78, accessHash: 1))
        #expect(TelegramClient.channelID(of: Api.functions.messages.readMentions(peer: peer).0) == 78)
        let user = Api.InputPeer.inputPeerUser(.init(userId: 5, accessHash: 1))
        #expect(TelegramClient.channelID(of: Api.functions.messages.readMentions(peer: user).0) == nil)
        #expect(TelegramClient.channelID(of: Api.functions.messages.deleteMessages(id: [1]).0) == nil)
    }

    /// The target is what the builder was given, not read back from the bytes: a description of the same bytes
    /// made without one has none, though its parameters name the channel; one made from the request value reads
    /// it from the value's fields.
    @Test func aCallsTargetIsRecordedWhenTheCallIsBuilt() {
        let channel = Api.InputChannel.inputChannel(.init(channelId: 77, accessHash: 1))
        let call = Api.functions.channels.deleteMessages(channel: channel, id: [1, 2])
        #expect(call.0.target is Api.InputChannel)
        let unrecorded = FunctionDescription(serialized: call.1, registry: Api.registry)
        #expect(unrecorded.target == nil)
        #expect(unrecorded.parameters.contains { $0.0 == "channel" })
        #expect(TelegramClient.channelID(of: unrecorded) == nil)
        #expect(TelegramClient.channelID(of: FunctionDescription(call.0.function)) == 77)
    }

    @Test func aChannelTheAccountIsOutOfIsNoLongerFollowed() {
        var machine = Self.machine()
        _ = machine.receive(Self.pushed(30, channel: 88), now: 0)
        #expect(machine.receive(Self.pushed(8), now: 0).isEmpty)  // held for a gap in 77
        // A min channel says nothing about the account: still followed.
        let minLeft = Api.Chat.channel(.init(left: true, megagroup: true, min: true, id: 77, title: "c", photo: .chatPhotoEmpty,
                                             date: 1))
        _ = machine.receive(.updates(.init(updates: [.updateChannel(.init(channelId: 77))], users: [], chats: [minLeft],
                                           date: 1, seq: 0)), now: 0.1)
        #expect(machine.channels[77] != nil)
        // Out of 77 (forbidden): its box goes, and what was held comes out as it came.
        let forbidden = Api.Chat.channelForbidden(.init(megagroup: true, id: 77, accessHash: Self.hash, title: "c"))
        let out = machine.receive(.updates(.init(updates: [.updateChannel(.init(channelId: 77))], users: [],
                                                 chats: [forbidden], date: 1, seq: 0)), now: 0.2)
        #expect(Self.texts(out) == ["c77.8"])
        #expect(machine.channels[77] == nil && machine.gapDeadline == nil)
        // Out of 88 (left): the same.
        let left = Api.Chat.channel(.init(left: true, megagroup: true, id: 88, accessHash: Self.hash, title: "c",
                                          photo: .chatPhotoEmpty, date: 1))
        _ = machine.receive(.updates(.init(updates: [], users: [], chats: [left], date: 1, seq: 0)), now: 0.3)
        #expect(machine.channels.isEmpty)
    }
}
