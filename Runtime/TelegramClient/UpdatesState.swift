// The account's update sequence (core.telegram.org/api/updates), sans-IO: the common box (pts, qts, date, seq) fed
// with the `Api.Updates` the server pushes or a call returns and with the answers of `updates.getState` and
// `updates.getDifference`; it answers with what to deliver, in order and once, and what to ask the server. A gap is
// waited for (the missing update may still come) and then filled by `updates.getDifference`, as is whatever was
// missed while the connection was down. Each channel has a box of its own (its pts), kept by the same rules and
// filled with `updates.getChannelDifference` (ChannelUpdates.swift); channel updates never move the common box.
import TelegramApi
import TelegramSession

extension UpdateBox {
    /// The box `updates.getState` answered.
    init(_ state: Api.updates.State) {
        guard case .state(let s) = state else { self.init(pts: 0, qts: 0, date: 0, seq: 0); return }
        self.init(pts: s.pts, qts: s.qts, date: s.date, seq: s.seq)
    }
}

/// What an `UpdatesState` asks its driver to do.
public enum UpdatesAction: Sendable {
    /// Hand these updates to the app (pushed ones as they came, less duplicates; recovered ones as one `updates`).
    case deliver(Api.Updates)
    /// Call `updates.getState` and pass the answer to `receiveState` (or report a failure with `fetchFailed`).
    case getState
    /// Call `updates.getDifference(pts, date, qts)` from this box and pass the answer to `receiveDifference`.
    case getDifference(UpdateBox)
    /// The server had too much to send (`updates.differenceTooLong`): pts moved to this value and what was missed
    /// must be fetched some other way (dialogs, history). `.deliver(.updatesTooLong)` comes with it.
    case differenceTooLong(pts: Int32)
    /// Call `updates.getChannelDifference(channel: inputChannel(channelID, accessHash), filter:
    /// channelMessagesFilterEmpty, pts, limit)` and pass the answer to `receiveChannelDifference` (or report a
    /// failure with `channelFetchFailed`).
    case getChannelDifference(channelID: Int64, accessHash: Int64, pts: Int32)
    /// The channel had too much to send (`updates.channelDifferenceTooLong`): its box moved to `pts` (nil when the
    /// server sent no dialog pts) and its history must be fetched again; a delivered `updateChannelTooLong` with
    /// the channel's newest messages comes with it.
    case channelDifferenceTooLong(channelID: Int64, pts: Int32?)
}

/// The account's update sequence, sans-IO (core.telegram.org/api/updates): feed it what the server sends and the
/// time, and it answers with ``UpdatesAction``s: what to deliver, in order and once, and what to ask the server.
///
/// Times are seconds on any monotonic clock the driver keeps; ``gapDeadline`` says when to call ``tick(now:)``.
/// ``TelegramClient/TelegramClient`` drives one; a driver of your own can too.
public struct UpdatesState: Sendable {
    /// The box; nil until `updates.getState` answered (or one was restored).
    public private(set) var box: UpdateBox?
    /// Each channel's box, by channel id: made by the first update of the channel that comes (or restored).
    public internal(set) var channels: [Int64: ChannelBox]
    /// The earliest moment a gap still open is filled by a difference, the common box's or a channel's (nil: no gap
    /// open); `tick` at that time asks for it.
    public var gapDeadline: Double? {
        channelSync.values.reduce(commonDeadline) { earliest, sync in
            guard let deadline = sync.deadline, !sync.fetching else { return earliest }
            return earliest.map { min($0, deadline) } ?? deadline
        }
    }
    /// Whether a `getState`, `getDifference` or `getChannelDifference` is out (the client is "updating").
    public var isFetching: Bool { fetch != .idle || channelSync.values.contains { $0.fetching } }
    /// When the common box's open gap is filled by `updates.getDifference`.
    private var commonDeadline: Double?
    /// How long a gap is given to fill itself: 0.5 s in the spec (core.telegram.org/api/updates#recovering-gaps).
    public let gapWait: Double
    /// Updates held for a gap or during a fetch (per box); past this many the difference is asked at once and the
    /// oldest dropped.
    public let maxPending: Int
    /// Channel boxes and access hashes kept at most: updates of channels past this many pass unchecked.
    public let maxChannels: Int
    /// Fetch state and held updates of each channel with either (ChannelUpdates.swift).
    var channelSync: [Int64: ChannelSync] = [:]
    /// Access hashes of channels without a box yet, from the `channel`s that updates and differences carry.
    var accessHashes: [Int64: Int64] = [:]

    private enum Fetch { case idle, state, difference }
    private var fetch = Fetch.idle
    /// Held updates, in arrival order, with how many differences each outlived.
    private var pending: [(unit: Unit, fetches: Int)] = []
    /// A held update still a gap after this many differences is dropped: the server's state does not lead to it
    /// (otherwise a bad push would ask a difference every `gapWait` forever).
    static let fetchesBeforeDrop = 2
    /// A catch-up was asked while a fetch was out: one more difference once it ends.
    private var catchUpAgain = false
    /// Fetches failed in a row, for the wait before the next.
    private var failures = 0

    /// One thing received: updates, or a pts change a call's result reports (`messages.affectedMessages`).
    private enum Unit {
        case updates(Api.Updates)
        case pts(Int32, count: Int32)
    }

    /// A sequence starting from a saved box and channel boxes (or none: it asks `updates.getState` on ``catchUp()``).
    ///
    /// - Parameters:
    ///   - box: The saved common box, or nil.
    ///   - channels: The saved channel boxes, by channel id.
    ///   - gapWait: Seconds a gap may fill itself before a difference is asked (0.5 s, as the spec says).
    ///   - maxPending: Updates held per box while a gap is open, at least 1.
    ///   - maxChannels: Channels followed at most; past it the lowest ids are kept.
    public init(box: UpdateBox? = nil, channels: [Int64: ChannelBox] = [:], gapWait: Double = 0.5,
                maxPending: Int = 512, maxChannels: Int = 10_000) {
        self.box = box
        self.gapWait = gapWait
        self.maxPending = max(1, maxPending)
        self.maxChannels = max(0, maxChannels)
        // Past the bound, the lowest ids are kept (any choice would do; this one is the same every time).
        self.channels = channels.count <= self.maxChannels ? channels : Dictionary(
            uniqueKeysWithValues: channels.sorted { $0.key < $1.key }.prefix(self.maxChannels).map { ($0.key, $0.value) })
    }

    // MARK: Input

    /// The home DC's connection (re)opened, or the account just logged in: ask what was missed, or the state when
    /// there is no box yet (core.telegram.org/api/updates#recovering-gaps).
    public mutating func catchUp() -> [UpdatesAction] {
        guard fetch == .idle else {
            catchUpAgain = true
            return []
        }
        return startFetch()
    }

    /// Updates pushed by the server or returned by a call.
    public mutating func receive(_ updates: Api.Updates, now: Double) -> [UpdatesAction] {
        if case .updatesTooLong = updates { return catchUp() }
        return receive(.updates(updates), now: now)
    }

    /// A call's `pts`/`pts_count` (`messages.affectedMessages`, `affectedHistory`, `affectedFoundMessages`). A call
    /// on a channel (`channels.deleteMessages`, or a `messages.…` call whose peer is a channel) reports that
    /// channel's pts: give its id as `channelID`.
    public mutating func receive(pts: Int32, ptsCount: Int32, channelID: Int64? = nil, now: Double) -> [UpdatesAction] {
        if let channelID { return receiveChannel(pts: pts, ptsCount: ptsCount, channelID: channelID, now: now) }
        return receive(.pts(pts, count: ptsCount), now: now)
    }

    /// The answer to `updates.getState` that the last ``UpdatesAction`` asked for; an answer nobody asked for is ignored.
    public mutating func receiveState(_ state: Api.updates.State, now: Double) -> [UpdatesAction] {
        guard fetch == .state else { return [] }
        box = UpdateBox(state)
        return finishFetch(now: now)
    }

    /// The answer to `updates.getDifference` that the last ``UpdatesAction`` asked for: delivers what it brought and
    /// what was held, and asks again for a `differenceSlice`.
    public mutating func receiveDifference(_ difference: Api.updates.Difference, now: Double) -> [UpdatesAction] {
        guard fetch == .difference, var box else { return [] }
        switch difference {
            case .differenceEmpty(let empty):
                box.date = empty.date
                box.seq = empty.seq
                self.box = box
                return finishFetch(now: now)
            case .difference(let d):
                self.box = UpdateBox(d.state)
                let delivered = recovered(d.newMessages, d.newEncryptedMessages, d.otherUpdates, d.users, d.chats,
                                          at: UpdateBox(d.state), now: now)
                return delivered + finishFetch(now: now)
            case .differenceSlice(let d):
                let reached = UpdateBox(d.intermediateState)
                self.box = reached
                let delivered = recovered(d.newMessages, d.newEncryptedMessages, d.otherUpdates, d.users, d.chats,
                                          at: reached, now: now)
                // A slice that does not move the box would be asked for again forever: stop there.
                guard reached.pts > box.pts || reached.qts > box.qts || reached.date > box.date else {
                    return delivered + finishFetch(now: now)
                }
                return delivered + [.getDifference(reached)]
            case .differenceTooLong(let tooLong):
                box.pts = tooLong.pts
                self.box = box
                return [.differenceTooLong(pts: tooLong.pts), .deliver(.updatesTooLong)] + finishFetch(now: now)
        }
    }

    /// The `getState`/`getDifference` failed: without a box, held updates go out unchecked; with one, the
    /// difference is asked again after a wait that doubles with each failure in a row (1 s, 2 s, … 64 s).
    public mutating func fetchFailed(now: Double) -> [UpdatesAction] {
        guard fetch != .idle else { return [] }
        fetch = .idle
        catchUpAgain = false
        failures += 1
        guard box != nil else {
            let held = pending
            pending.removeAll()
            commonDeadline = nil
            return held.compactMap { if case .updates(let u) = $0.unit { .deliver(u) } else { nil } }
        }
        commonDeadline = now + Self.retryWait(gapWait, failures: failures)
        return []
    }

    /// The wait before asking again after `failures` failed fetches in a row: 1 s, 2 s, … 64 s.
    static func retryWait(_ gapWait: Double, failures: Int) -> Double {
        max(gapWait, 1) * Double(1 << min(max(failures, 1) - 1, 6))
    }

    /// Time passed: a gap that is still open at its deadline is filled by `getDifference`, or by
    /// `getChannelDifference` for a channel's.
    public mutating func tick(now: Double) -> [UpdatesAction] {
        var actions: [UpdatesAction] = []
        if let deadline = commonDeadline, now >= deadline, fetch == .idle { actions += startFetch() }
        return actions + tickChannels(now: now)
    }

    // MARK: Rules

    private mutating func receive(_ unit: Unit, now: Double) -> [UpdatesAction] {
        guard fetch == .idle, box != nil else {
            if fetch == .idle {
                // No box yet (not logged in, or getState failed): nothing to check against.
                if case .updates(let updates) = unit { return [.deliver(updates)] }
                return []
            }
            hold(unit)
            return []
        }
        guard let applied = apply(unit, now: now) else {
            hold(unit)
            if commonDeadline == nil { commonDeadline = now + gapWait }
            if pending.count >= maxPending { return startFetch() }
            return []
        }
        return applied + drainPending(now: now)
    }

    private mutating func hold(_ unit: Unit) {
        if pending.count >= maxPending {
            pending.removeFirst()
            // What was dropped is fetched again by a difference after the one under way.
            if fetch != .idle { catchUpAgain = true }
        }
        pending.append((unit, 0))
    }

    /// Applies `unit` if it fits the box: the box moves, and what is new is returned for delivery (nothing for a
    /// duplicate), its channel updates checked against their channels' boxes. nil for a gap.
    private mutating func apply(_ unit: Unit, now: Double) -> [UpdatesAction]? {
        switch verdict(unit) {
            case .gap: return nil
            case .duplicate: return []
            case .apply(let updates, let moved):
                box = moved
                guard let updates else { return [] }
                return checkChannels(updates, now: now)
        }
    }

    private enum Verdict {
        case apply(Api.Updates?, UpdateBox)
        case duplicate
        case gap
    }

    /// Where `unit` stands against the box. The pts rule (core.telegram.org/api/updates#pts): local_pts + pts_count
    /// == pts applies, a greater sum was applied already, a smaller one is a gap; qts the same with a count of 1;
    /// seq for `updates`/`updatesCombined` (#seq): local_seq + 1 == seq_start applies, greater was applied, smaller
    /// is a gap, and seq 0 is not checked.
    private func verdict(_ unit: Unit) -> Verdict {
        guard var box else { return .gap }
        switch unit {
            case .pts(let pts, let count):
                switch Self.order(box.pts, count, pts) {
                    case .apply:
                        box.pts = pts
                        return .apply(nil, box)
                    case .duplicate: return .duplicate
                    case .gap: return .gap
                }
            case .updates(let updates):
                switch updates {
                    case .updatesTooLong:
                        return .gap
                    case .updateShortMessage(let m):
                        return Self.ptsVerdict(&box, pts: m.pts, count: m.ptsCount, date: m.date, updates)
                    case .updateShortChatMessage(let m):
                        return Self.ptsVerdict(&box, pts: m.pts, count: m.ptsCount, date: m.date, updates)
                    case .updateShortSentMessage(let m):
                        return Self.ptsVerdict(&box, pts: m.pts, count: m.ptsCount, date: m.date, updates)
                    case .updateShort(let short):
                        switch Self.check(short.update, &box) {
                            case .gap: return .gap
                            case .duplicate: return .duplicate
                            case .apply: return .apply(updates, box)
                        }
                    case .updates(let c):
                        return Self.containerVerdict(&box, c.updates, seqStart: c.seq, seq: c.seq, date: c.date) {
                            .updates(.init(updates: $0, users: c.users, chats: c.chats, date: c.date, seq: c.seq))
                        }
                    case .updatesCombined(let c):
                        return Self.containerVerdict(&box, c.updates, seqStart: c.seqStart, seq: c.seq, date: c.date) {
                            .updatesCombined(.init(updates: $0, users: c.users, chats: c.chats, date: c.date,
                                                   seqStart: c.seqStart, seq: c.seq))
                        }
                }
        }
    }

    /// local + count against remote, in 64 bits (hostile values must not overflow): equal applies, greater was
    /// applied already, smaller leaves a gap.
    static func order(_ local: Int32, _ count: Int32, _ remote: Int32) -> Check {
        let sum = Int64(local) + Int64(count)
        return sum == Int64(remote) ? .apply : sum > Int64(remote) ? .duplicate : .gap
    }

    private static func ptsVerdict(_ box: inout UpdateBox, pts: Int32, count: Int32, date: Int32,
                                   _ updates: Api.Updates) -> Verdict {
        switch order(box.pts, count, pts) {
            case .apply:
                box.pts = pts
                box.date = max(box.date, date)
                return .apply(updates, box)
            case .duplicate: return .duplicate
            case .gap: return .gap
        }
    }

    enum Check { case apply, duplicate, gap }

    /// One update against the box, moving it when the update applies. Updates without a common pts or qts apply
    /// as they are (channel updates among them).
    private static func check(_ update: Api.Update, _ box: inout UpdateBox) -> Check {
        if let (pts, count) = commonPts(update) {
            let check = order(box.pts, count, pts)
            if check == .apply { box.pts = pts }
            return check
        }
        if let qts = qts(update) {
            let check = order(box.qts, 1, qts)
            if check == .apply { box.qts = qts }
            return check
        }
        return .apply
    }

    private static func containerVerdict(_ box: inout UpdateBox, _ list: [Api.Update], seqStart: Int32, seq: Int32,
                                         date: Int32, rebuild: ([Api.Update]) -> Api.Updates) -> Verdict {
        if seq != 0 {
            switch order(box.seq, 1, seqStart) {
                case .apply: break
                case .duplicate: return .duplicate
                case .gap: return .gap
            }
        }
        var kept: [Api.Update] = []
        for update in list {
            switch check(update, &box) {
                case .apply: kept.append(update)
                case .duplicate: continue
                case .gap: return .gap
            }
        }
        if seq != 0 {
            box.seq = seq
            box.date = max(box.date, date)
        }
        if kept.isEmpty, !list.isEmpty { return .apply(nil, box) }
        return .apply(kept.count == list.count ? rebuild(list) : rebuild(kept), box)
    }

    /// The pts and pts_count of an update of the common box (not a channel's).
    static func commonPts(_ update: Api.Update) -> (Int32, Int32)? {
        switch update {
            case .updateNewMessage(let u): (u.pts, u.ptsCount)
            case .updateDeleteMessages(let u): (u.pts, u.ptsCount)
            case .updateReadHistoryInbox(let u): (u.pts, u.ptsCount)
            case .updateReadHistoryOutbox(let u): (u.pts, u.ptsCount)
            case .updateWebPage(let u): (u.pts, u.ptsCount)
            case .updateReadMessagesContents(let u): (u.pts, u.ptsCount)
            case .updateEditMessage(let u): (u.pts, u.ptsCount)
            case .updateFolderPeers(let u): (u.pts, u.ptsCount)
            case .updatePinnedMessages(let u): (u.pts, u.ptsCount)
            default: nil
        }
    }

    /// The qts of a secondary-sequence update (encrypted messages, and bots' participant and reaction updates).
    static func qts(_ update: Api.Update) -> Int32? {
        switch update {
            case .updateNewEncryptedMessage(let u): u.qts
            case .updateMessagePollVote(let u): u.qts
            case .updateChatParticipant(let u): u.qts
            case .updateChannelParticipant(let u): u.qts
            case .updateBotStopped(let u): u.qts
            case .updateBotChatInviteRequester(let u): u.qts
            case .updateBotChatBoost(let u): u.qts
            case .updateBotMessageReaction(let u): u.qts
            case .updateBotMessageReactions(let u): u.qts
            case .updateBotBusinessConnect(let u): u.qts
            case .updateBotNewBusinessMessage(let u): u.qts
            case .updateBotEditBusinessMessage(let u): u.qts
            case .updateBotDeleteBusinessMessage(let u): u.qts
            case .updateBotPurchasedPaidMedia(let u): u.qts
            default: nil
        }
    }

    // MARK: Fetching

    private mutating func startFetch() -> [UpdatesAction] {
        commonDeadline = nil
        catchUpAgain = false
        guard let box else {
            fetch = .state
            return [.getState]
        }
        fetch = .difference
        return [.getDifference(box)]
    }

    /// A fetch ended with the box where the server says: held updates are checked against it again (those it
    /// covered are duplicates now), and a catch-up asked meanwhile starts.
    private mutating func finishFetch(now: Double) -> [UpdatesAction] {
        fetch = .idle
        failures = 0
        commonDeadline = nil
        let actions = drainPending(now: now)
        for index in pending.indices { pending[index].fetches += 1 }
        pending.removeAll { $0.fetches >= Self.fetchesBeforeDrop }
        if pending.isEmpty { commonDeadline = nil }
        if catchUpAgain { return actions + startFetch() }
        return actions
    }

    /// Applies held updates that now fit, until none does; drops those already applied. A gap left open keeps
    /// (or starts) its wait.
    private mutating func drainPending(now: Double) -> [UpdatesAction] {
        var actions: [UpdatesAction] = []
        var progress = true
        while progress, !pending.isEmpty {
            progress = false
            var index = 0
            while index < pending.count {
                if let applied = apply(pending[index].unit, now: now) {
                    pending.remove(at: index)
                    actions += applied
                    progress = true
                } else {
                    index += 1
                }
            }
        }
        if pending.isEmpty {
            commonDeadline = nil
        } else if commonDeadline == nil {
            commonDeadline = now + gapWait
        }
        return actions
    }

    /// What a difference recovered, as one `updates` in the server's order: new messages (as `updateNewMessage`
    /// with the reached pts and pts_count 0, since each one's own pts is not sent), new encrypted messages (as
    /// `updateNewEncryptedMessage` with the reached qts), then the other updates. Channel updates among them are
    /// checked against their channels' boxes, and an `updateChannelTooLong` starts that channel's difference.
    private mutating func recovered(_ messages: [Api.Message], _ encrypted: [Api.EncryptedMessage],
                                    _ others: [Api.Update], _ users: [Api.User], _ chats: [Api.Chat],
                                    at box: UpdateBox, now: Double) -> [UpdatesAction] {
        let list = messages.map { Api.Update.updateNewMessage(.init(message: $0, pts: box.pts, ptsCount: 0)) }
            + encrypted.map { Api.Update.updateNewEncryptedMessage(.init(message: $0, qts: box.qts)) } + others
        guard !list.isEmpty else { return learnChannels(chats) }
        return checkChannels(.updates(.init(updates: list, users: users, chats: chats, date: box.date, seq: box.seq)),
                             now: now)
    }
}
