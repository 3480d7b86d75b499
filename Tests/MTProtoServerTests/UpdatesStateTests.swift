// The update sequence's rules on hand-built updates (core.telegram.org/api/updates): pts applied in order, duplicates
// dropped, a gap waited for and filled by a late update or by getDifference, the seq rule of `updates` and
// `updatesCombined`, qts, channel updates kept out of the common box, difference slices, empty and too-long
// differences, getState first without a box, and the box's stored form.
import TelegramApi
import TelegramClient
import TelegramSession
import Testing

@Suite struct UpdatesStateTests {
    static func message(_ text: String, id: Int32 = 1) -> Api.Message {
        .message(.init(id: id, peerId: .peerUser(.init(userId: 7)), date: 100, message: text))
    }

    /// `updates` with one `updateNewMessage` at `pts`; seq 0 unless given.
    static func pushed(_ pts: Int32, seq: Int32 = 0, count: Int32 = 1) -> Api.Updates {
        .updates(.init(updates: [.updateNewMessage(.init(message: message("m\(pts)", id: pts), pts: pts, ptsCount: count))],
                       users: [], chats: [], date: 100 + pts, seq: seq))
    }

    /// The texts of the messages delivered, in order.
    static func texts(_ actions: [UpdatesAction]) -> [String] {
        actions.flatMap { action -> [String] in
            guard case .deliver(let updates) = action else { return [] }
            return texts(updates)
        }
    }

    static func texts(_ updates: Api.Updates) -> [String] {
        let list: [Api.Update]
        switch updates {
            case .updates(let c): list = c.updates
            case .updatesCombined(let c): list = c.updates
            case .updateShort(let s): list = [s.update]
            case .updateShortMessage(let m): return [m.message]
            default: return []
        }
        return list.compactMap { update in
            if case .updateNewMessage(let new) = update, case .message(let m) = new.message { return m.message }
            if case .updateNewChannelMessage(let new) = update, case .message(let m) = new.message { return m.message }
            return nil
        }
    }

    static func fetches(_ actions: [UpdatesAction]) -> [String] {
        actions.compactMap { action in
            switch action {
                case .getState: "getState"
                case .getDifference(let box): "getDifference(\(box.pts),\(box.qts),\(box.seq))"
                case .differenceTooLong(let pts): "tooLong(\(pts))"
                case .deliver(.updatesTooLong): "updatesTooLong"
                case .deliver: nil
                case .getChannelDifference(let id, let hash, let pts): "getChannelDifference(\(id),\(hash),\(pts))"
                case .channelDifferenceTooLong(let id, let pts): "channelTooLong(\(id),\(pts.map { "\($0)" } ?? "nil"))"
            }
        }
    }

    static func state(_ pts: Int32, qts: Int32 = 0, seq: Int32 = 0, date: Int32 = 100) -> Api.updates.State {
        .state(.init(pts: pts, qts: qts, date: date, seq: seq, unreadCount: 0))
    }

    @Test func updatesInOrderAreAppliedAndMoveTheBox() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 5))
        var actions = machine.receive(Self.pushed(11, seq: 6), now: 0)
        actions += machine.receive(Self.pushed(12, seq: 7), now: 0)
        #expect(Self.texts(actions) == ["m11", "m12"])
        #expect(Self.fetches(actions).isEmpty)
        #expect(machine.box == UpdateBox(pts: 12, qts: 0, date: 112, seq: 7))
        #expect(machine.gapDeadline == nil && !machine.isFetching)
    }

    @Test func duplicatesAreDropped() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 5))
        #expect(Self.texts(machine.receive(Self.pushed(11, seq: 6), now: 0)) == ["m11"])
        // The same again, the same pts without seq, and an older one: nothing.
        #expect(machine.receive(Self.pushed(11, seq: 6), now: 0).isEmpty)
        #expect(machine.receive(Self.pushed(11), now: 0).isEmpty)
        #expect(machine.receive(Self.pushed(9), now: 0).isEmpty)
        let short = Api.Updates.updateShortMessage(.init(id: 1, userId: 7, message: "short", pts: 11, ptsCount: 1, date: 1))
        #expect(machine.receive(short, now: 0).isEmpty)
        // A container holding one applied and one new update keeps only the new one.
        let mixed = Api.Updates.updates(.init(updates: [
            .updateNewMessage(.init(message: Self.message("m11"), pts: 11, ptsCount: 1)),
            .updateNewMessage(.init(message: Self.message("m12"), pts: 12, ptsCount: 1)),
        ], users: [], chats: [], date: 1, seq: 0))
        #expect(Self.texts(machine.receive(mixed, now: 0)) == ["m12"])
        #expect(machine.box?.pts == 12 && machine.gapDeadline == nil)
    }

    @Test func aGapWaitsAndALateUpdateFillsIt() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 0))
        #expect(machine.receive(Self.pushed(12), now: 3).isEmpty)
        #expect(machine.receive(Self.pushed(13), now: 3.1).isEmpty)
        #expect(machine.gapDeadline == 3.5)
        #expect(machine.tick(now: 3.4).isEmpty)
        let filled = machine.receive(Self.pushed(11), now: 3.45)
        #expect(Self.texts(filled) == ["m11", "m12", "m13"])
        #expect(Self.fetches(filled).isEmpty)
        #expect(machine.box?.pts == 13 && machine.gapDeadline == nil)
        #expect(machine.tick(now: 10).isEmpty)
    }

    @Test func aGapStillOpenAtItsDeadlineIsFilledByGetDifference() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 2, date: 50, seq: 4))
        #expect(machine.receive(Self.pushed(13), now: 0).isEmpty)
        let asked = machine.tick(now: 0.5)
        #expect(Self.fetches(asked) == ["getDifference(10,2,4)"])
        #expect(machine.isFetching)
        // Pushed while the difference is out: held, then applied after it if new.
        #expect(machine.receive(Self.pushed(14), now: 0.6).isEmpty)
        #expect(machine.receive(Self.pushed(12), now: 0.6).isEmpty)
        let difference = Api.updates.Difference.difference(.init(
            newMessages: [Self.message("m11"), Self.message("m12"), Self.message("m13")], newEncryptedMessages: [],
            otherUpdates: [], chats: [], users: [], state: Self.state(13, qts: 2, seq: 4, date: 200)))
        let filled = machine.receiveDifference(difference, now: 0.7)
        #expect(Self.texts(filled) == ["m11", "m12", "m13", "m14"])
        #expect(!machine.isFetching && machine.gapDeadline == nil)
        #expect(machine.box == UpdateBox(pts: 14, qts: 2, date: 200, seq: 4))
        // Recovered messages come as one `updates`, at the reached box.
        guard case .deliver(.updates(let recovered))? = filled.first else {
            Issue.record("\(filled)")
            return
        }
        #expect(recovered.seq == 4 && recovered.date == 200 && recovered.updates.count == 3)
    }

    @Test func theSeqRuleOrdersContainers() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 5))
        let status = { (seq: Int32) in
            Api.Updates.updates(.init(updates: [.updateUserStatus(.init(userId: 7, status: .userStatusEmpty))],
                                      users: [], chats: [], date: 60 + seq, seq: seq))
        }
        #expect(machine.receive(status(7), now: 0).isEmpty)  // seq 6 is missing
        #expect(machine.gapDeadline == 0.5)
        let filled = machine.receive(status(6), now: 0.1)
        #expect(filled.count == 2 && machine.box?.seq == 7 && machine.gapDeadline == nil)
        #expect(machine.receive(status(7), now: 0.2).isEmpty)  // already applied
        let combined = Api.Updates.updatesCombined(.init(
            updates: [.updateNewMessage(.init(message: Self.message("m11"), pts: 11, ptsCount: 1))], users: [], chats: [],
            date: 90, seqStart: 8, seq: 9))
        #expect(Self.texts(machine.receive(combined, now: 0.3)) == ["m11"])
        #expect(machine.box == UpdateBox(pts: 11, qts: 0, date: 90, seq: 9))
        #expect(machine.receive(combined, now: 0.4).isEmpty)
        // A seq gap that never fills is a getDifference.
        #expect(machine.receive(status(12), now: 1).isEmpty)
        #expect(Self.fetches(machine.tick(now: 1.5)) == ["getDifference(11,0,9)"])
    }

    @Test func qtsUpdatesFollowTheQtsRule() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 3, date: 50, seq: 0))
        let encrypted = { (qts: Int32) in
            Api.Updates.updates(.init(updates: [.updateNewEncryptedMessage(.init(
                message: .encryptedMessage(.init(randomId: Int64(qts), chatId: 1, date: 1, bytes: [1],
                                                 file: .encryptedFileEmpty)), qts: qts))],
                                      users: [], chats: [], date: 1, seq: 0))
        }
        #expect(machine.receive(encrypted(4), now: 0).count == 1)
        #expect(machine.receive(encrypted(4), now: 0).isEmpty)
        #expect(machine.receive(encrypted(6), now: 0).isEmpty)
        #expect(machine.box?.qts == 4 && machine.box?.pts == 10 && machine.gapDeadline != nil)
        #expect(machine.receive(encrypted(5), now: 0.1).count == 2)
        #expect(machine.box?.qts == 6 && machine.gapDeadline == nil)
    }

    @Test func channelUpdatesPassWithoutMovingTheCommonBox() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 0))
        let channel = Api.Updates.updates(.init(updates: [.updateNewChannelMessage(.init(
            message: Self.message("c1"), pts: 999, ptsCount: 1))], users: [], chats: [], date: 1, seq: 0))
        #expect(Self.texts(machine.receive(channel, now: 0)) == ["c1"])
        #expect(machine.box?.pts == 10 && machine.gapDeadline == nil)
        #expect(Self.texts(machine.receive(Self.pushed(11), now: 0)) == ["m11"])
    }

    @Test func slicesContinueAndTooLongEnds() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 3))
        #expect(Self.fetches(machine.catchUp()) == ["getDifference(10,0,3)"])
        let slice = Api.updates.Difference.differenceSlice(.init(
            newMessages: [Self.message("m11")], newEncryptedMessages: [], otherUpdates: [], chats: [], users: [],
            intermediateState: Self.state(11, seq: 3, date: 60)))
        let first = machine.receiveDifference(slice, now: 0)
        #expect(Self.texts(first) == ["m11"] && Self.fetches(first) == ["getDifference(11,0,3)"])
        #expect(machine.isFetching)
        let tooLong = machine.receiveDifference(.differenceTooLong(.init(pts: 500)), now: 0)
        #expect(Self.fetches(tooLong) == ["tooLong(500)", "updatesTooLong"])
        #expect(machine.box == UpdateBox(pts: 500, qts: 0, date: 60, seq: 3) && !machine.isFetching)
        // After it, updates continue from the new pts.
        #expect(Self.texts(machine.receive(Self.pushed(501), now: 1)) == ["m501"])
        // An empty difference sets date and seq.
        _ = machine.catchUp()
        #expect(machine.receiveDifference(.differenceEmpty(.init(date: 900, seq: 8)), now: 2).isEmpty)
        #expect(machine.box == UpdateBox(pts: 501, qts: 0, date: 900, seq: 8))
        // A slice that does not move the box ends the fetch instead of asking forever.
        _ = machine.catchUp()
        let stuck = Api.updates.Difference.differenceSlice(.init(
            newMessages: [], newEncryptedMessages: [], otherUpdates: [], chats: [], users: [],
            intermediateState: Self.state(501, seq: 8, date: 900)))
        #expect(Self.fetches(machine.receiveDifference(stuck, now: 3)).isEmpty && !machine.isFetching)
    }

    @Test func withoutABoxTheStateComesFirst() {
        var machine = UpdatesState()
        #expect(Self.texts(machine.receive(Self.pushed(5), now: 0)) == ["m5"])  // nothing to check against yet
        #expect(Self.fetches(machine.catchUp()) == ["getState"])
        #expect(machine.catchUp().isEmpty)  // once
        #expect(machine.receive(Self.pushed(21), now: 0).isEmpty)  // held until the state comes
        let after = machine.receiveState(Self.state(20, qts: 1, seq: 2), now: 0)
        #expect(Self.texts(after) == ["m21"])
        #expect(Self.fetches(after) == ["getDifference(21,1,2)"])  // the second catchUp, asked meanwhile
        #expect(machine.box?.pts == 21)
    }

    @Test func aFailedFetchIsRetriedAfterAWait() {
        var machine = UpdatesState(box: UpdateBox(pts: 1, qts: 0, date: 0, seq: 0))
        _ = machine.catchUp()
        #expect(machine.fetchFailed(now: 10).isEmpty)
        #expect(!machine.isFetching && machine.gapDeadline == 11)
        #expect(Self.fetches(machine.tick(now: 11)) == ["getDifference(1,0,0)"])
        // Failures in a row wait longer each time; an answer resets the wait.
        _ = machine.fetchFailed(now: 20)
        #expect(machine.gapDeadline == 22)
        _ = machine.tick(now: 22)
        _ = machine.fetchFailed(now: 30)
        #expect(machine.gapDeadline == 34)
        _ = machine.tick(now: 34)
        _ = machine.receiveDifference(.differenceEmpty(.init(date: 1, seq: 0)), now: 35)
        _ = machine.catchUp()
        _ = machine.fetchFailed(now: 40)
        #expect(machine.gapDeadline == 41)
        // Without a box, updates held during getState go out unchecked when it fails.
        var fresh = UpdatesState()
        _ = fresh.catchUp()
        _ = fresh.receive(Self.pushed(3), now: 0)
        #expect(Self.texts(fresh.fetchFailed(now: 0)) == ["m3"])
    }

    @Test func callResultsMovePtsAndHostileNumbersDoNotTrap() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 0, seq: 0))
        #expect(machine.receive(pts: 12, ptsCount: 2, now: 0).isEmpty)
        #expect(machine.box?.pts == 12)
        #expect(Self.texts(machine.receive(Self.pushed(13), now: 0)) == ["m13"])
        var edge = UpdatesState(box: UpdateBox(pts: .max, qts: .max, date: 0, seq: .max))
        #expect(edge.receive(Self.pushed(.min, seq: .max, count: .max), now: 0).isEmpty)
        #expect(edge.receive(pts: .min, ptsCount: .min, now: 0).isEmpty)
        #expect(edge.box?.pts == .max)
    }

    @Test func anUpdateNoDifferenceLeadsToIsDroppedAfterTwo() {
        var machine = UpdatesState(box: UpdateBox(pts: 10, qts: 0, date: 0, seq: 0))
        #expect(machine.receive(Self.pushed(500), now: 0).isEmpty)
        #expect(Self.fetches(machine.tick(now: 0.5)) == ["getDifference(10,0,0)"])
        #expect(machine.receiveDifference(.differenceEmpty(.init(date: 1, seq: 0)), now: 0.6).isEmpty)
        #expect(machine.gapDeadline == 1.1)  // still held: one more wait and difference
        #expect(Self.fetches(machine.tick(now: 1.1)) == ["getDifference(10,0,0)"])
        #expect(machine.receiveDifference(.differenceEmpty(.init(date: 2, seq: 0)), now: 1.2).isEmpty)
        #expect(machine.gapDeadline == nil && machine.tick(now: 100).isEmpty)
        #expect(Self.texts(machine.receive(Self.pushed(11), now: 101)) == ["m11"])
    }

    @Test func heldUpdatesAreBounded() {
        var machine = UpdatesState(box: UpdateBox(pts: 0, qts: 0, date: 0, seq: 0), maxPending: 4)
        var actions: [UpdatesAction] = []
        for pts in Int32(2)...5 { actions += machine.receive(Self.pushed(pts), now: 0) }
        #expect(Self.fetches(actions) == ["getDifference(0,0,0)"])  // full: asked at once, not after the wait
    }
}
