// Channel boxes (core.telegram.org/api/updates#update-handling): every channel and supergroup numbers its updates
// with a pts of its own, under the same rule as the common box (local_pts + pts_count == pts applies, a greater sum
// was applied, a smaller one is a gap). A channel's gap is waited for on its own and filled by
// `updates.getChannelDifference`, so one channel's gap holds up neither the common box nor another channel.
// `updateChannelTooLong` (pushed, or among a difference's other updates) asks for that difference at once.
import TelegramApi
import TelegramSession

/// A channel's fetch and held updates.
struct ChannelSync {
    /// Whether its `getChannelDifference` is out.
    var fetching = false
    /// When its open gap is filled (nil: none open, or fetching).
    var deadline: Double?
    /// Fetches failed in a row, for the wait before the next.
    var failures = 0
    /// Updates held for a gap or during the fetch, with the users and chats of the container they came in.
    var pending: [(update: Api.Update, context: Context, fetches: Int)] = []

    struct Context {
        var users: [Api.User]
        var chats: [Api.Chat]
        var date: Int32
    }

    var isIdle: Bool { !fetching && deadline == nil && pending.isEmpty && failures == 0 }
}

extension UpdatesState {
    // MARK: Input

    /// The answer to a `.getChannelDifference` for `channelID`: its messages and updates are delivered as one
    /// `updates`, the box moves to the server's pts, and a difference that is not `final` is asked again from there.
    public mutating func receiveChannelDifference(_ difference: Api.updates.ChannelDifference, channelID: Int64,
                                                  now: Double) -> [UpdatesAction] {
        guard channelSync[channelID]?.fetching == true, channels[channelID] != nil else { return [] }
        let left: [UpdatesAction] = switch difference {
            case .channelDifferenceEmpty: []
            case .channelDifference(let d): learnChannels(d.chats)
            case .channelDifferenceTooLong(let d): learnChannels(d.chats)
        }
        guard var box = channels[channelID] else { return left }
        // Channel boxes keep no date: what a difference delivers carries the common box's.
        let date = self.box?.date ?? 0
        switch difference {
            case .channelDifferenceEmpty(let empty):
                box.pts = empty.pts
                channels[channelID] = box
                return finishChannelFetch(channelID, now: now)
            case .channelDifference(let d):
                let before = box.pts
                box.pts = d.pts
                channels[channelID] = box
                // Each message's own pts is not sent: they carry the reached pts and pts_count 0.
                let list = d.newMessages.map { Api.Update.updateNewChannelMessage(.init(message: $0, pts: d.pts, ptsCount: 0)) }
                    + d.otherUpdates
                let delivered: [UpdatesAction] = list.isEmpty ? [] : [.deliver(.updates(.init(
                    updates: list, users: d.users, chats: d.chats, date: date, seq: 0)))]
                // A difference that is not final but does not move the box would be asked for again forever.
                if !d.final, d.pts > before, let hash = box.accessHash {
                    return delivered + [.getChannelDifference(channelID: channelID, accessHash: hash, pts: d.pts)]
                }
                return delivered + finishChannelFetch(channelID, now: now)
            case .channelDifferenceTooLong(let tooLong):
                let pts: Int32? = if case .dialog(let dialog) = tooLong.dialog { dialog.pts } else { nil }
                if let pts { box.pts = pts }
                channels[channelID] = box
                // What was held is older than the history the app now refetches.
                channelSync[channelID]?.pending.removeAll()
                let list = [Api.Update.updateChannelTooLong(.init(channelId: channelID, pts: pts))]
                    + tooLong.messages.map { .updateNewChannelMessage(.init(message: $0, pts: box.pts, ptsCount: 0)) }
                return [.channelDifferenceTooLong(channelID: channelID, pts: pts),
                        .deliver(.updates(.init(updates: list, users: tooLong.users, chats: tooLong.chats, date: date,
                                                seq: 0)))]
                    + finishChannelFetch(channelID, now: now)
        }
    }

    /// The `getChannelDifference` for `channelID` failed. `permanent` (the channel is gone or no longer ours:
    /// `CHANNEL_PRIVATE`, `CHANNEL_INVALID`) forgets its box and delivers what was held as it came; otherwise the
    /// difference is asked again after a wait that doubles with each failure in a row (1 s, 2 s, … 64 s).
    public mutating func channelFetchFailed(channelID: Int64, permanent: Bool = false, now: Double) -> [UpdatesAction] {
        guard var sync = channelSync[channelID], sync.fetching else { return [] }
        sync.fetching = false
        sync.failures += 1
        guard !permanent else {
            channels[channelID] = nil
            channelSync[channelID] = nil
            return Self.deliveries(sync.pending)
        }
        sync.deadline = now + Self.retryWait(gapWait, failures: sync.failures)
        channelSync[channelID] = sync
        return []
    }

    /// A channel call's pts: moves the box when it fits; a gap is fetched at once (there is no update to hold).
    mutating func receiveChannel(pts: Int32, ptsCount: Int32, channelID id: Int64, now: Double) -> [UpdatesAction] {
        // A difference out reaches past it (or the next update shows the gap).
        if channelSync[id]?.fetching == true { return [] }
        guard var box = channels[id] else {
            _ = startBox(id, at: pts)
            return []
        }
        switch Self.order(box.pts, ptsCount, pts) {
            case .apply:
                box.pts = pts
                channels[id] = box
                return drainChannel(id, now: now)
            case .duplicate: return []
            case .gap: return startChannelFetch(id, now: now)
        }
    }

    /// Channel gaps due by `now` are fetched, in channel id order.
    mutating func tickChannels(now: Double) -> [UpdatesAction] {
        let due = channelSync.filter { !$0.value.fetching && ($0.value.deadline.map { now >= $0 } ?? false) }
        return due.keys.sorted().flatMap { startChannelFetch($0, now: now) }
    }

    // MARK: Rules

    /// Access hashes of the non-`min` channels in `chats` (a `min` channel's hash is not valid for the account); a
    /// channel the account is out of (`channelForbidden`, or `left`) is no longer followed: its box goes, and what
    /// was held for it is returned for delivery as it came.
    mutating func learnChannels(_ chats: [Api.Chat]) -> [UpdatesAction] {
        var actions: [UpdatesAction] = []
        for chat in chats {
            switch chat {
                case .channel(let channel) where !channel.min:
                    if channel.left {
                        actions += forgetChannel(channel.id)
                        continue
                    }
                    guard let hash = channel.accessHash else { continue }
                    if channels[channel.id] != nil {
                        channels[channel.id]?.accessHash = hash
                    } else if accessHashes[channel.id] != nil || accessHashes.count + channels.count < maxChannels {
                        accessHashes[channel.id] = hash
                    }
                case .channelForbidden(let channel):
                    actions += forgetChannel(channel.id)
                default:
                    continue
            }
        }
        return actions
    }

    /// Starts following channel `id` at `pts`, with the access hash seen for it; false past `maxChannels`, where a
    /// channel's updates pass unchecked.
    private mutating func startBox(_ id: Int64, at pts: Int32) -> Bool {
        guard channels.count < maxChannels else { return false }
        channels[id] = ChannelBox(pts: pts, accessHash: accessHashes.removeValue(forKey: id))
        return true
    }

    /// Stops following channel `id`: its box and hash go; what was held for it comes back as it came.
    private mutating func forgetChannel(_ id: Int64) -> [UpdatesAction] {
        channels[id] = nil
        accessHashes[id] = nil
        guard let sync = channelSync.removeValue(forKey: id) else { return [] }
        return Self.deliveries(sync.pending)
    }

    /// `updates` (already applied to the common box) with its channel updates checked against their channels'
    /// boxes: applied ones stay, duplicates go, a gap is held for its channel, and `updateChannelTooLong` starts its
    /// channel's difference. Returns the delivery of what is left, then what the channels ask.
    mutating func checkChannels(_ updates: Api.Updates, now: Double) -> [UpdatesAction] {
        let list: [Api.Update]
        let context: ChannelSync.Context
        switch updates {
            case .updates(let c):
                (list, context) = (c.updates, .init(users: c.users, chats: c.chats, date: c.date))
            case .updatesCombined(let c):
                (list, context) = (c.updates, .init(users: c.users, chats: c.chats, date: c.date))
            case .updateShort(let short):
                (list, context) = ([short.update], .init(users: [], chats: [], date: short.date))
            default:
                return [.deliver(updates)]
        }
        var after = learnChannels(context.chats)
        var kept: [Api.Update] = []
        for update in list {
            let (keep, actions) = checkChannel(update, context: context, now: now)
            if keep { kept.append(update) }
            after += actions
        }
        if kept.count == list.count { return [.deliver(updates)] + after }
        if kept.isEmpty { return after }
        let rebuilt: Api.Updates = switch updates {
            case .updatesCombined(let c):
                .updatesCombined(.init(updates: kept, users: c.users, chats: c.chats, date: c.date, seqStart: c.seqStart,
                                       seq: c.seq))
            case .updates(let c):
                .updates(.init(updates: kept, users: c.users, chats: c.chats, date: c.date, seq: c.seq))
            default:
                .updates(.init(updates: kept, users: context.users, chats: context.chats, date: context.date, seq: 0))
        }
        return [.deliver(rebuilt)] + after
    }

    /// One update against its channel's box: whether it is delivered where it stands, and what follows it (held
    /// updates it let through, or a fetch).
    private mutating func checkChannel(_ update: Api.Update, context: ChannelSync.Context,
                                       now: Double) -> (Bool, [UpdatesAction]) {
        if case .updateChannelTooLong(let tooLong) = update { return channelTooLong(tooLong, now: now) }
        guard let (id, pts, count) = Self.channelPts(update) else { return (true, []) }
        if channelSync[id]?.fetching == true {
            // Checked against the box the difference leaves.
            _ = holdChannel(id, update, context: context, now: now, wait: false)
            return (false, [])
        }
        guard var box = channels[id] else {
            // The channel's first update starts its box (its earlier updates were never ours to check).
            _ = startBox(id, at: pts)
            return (true, [])
        }
        switch Self.order(box.pts, count, pts) {
            case .apply:
                box.pts = pts
                channels[id] = box
                return (true, drainChannel(id, now: now))
            case .duplicate:
                return (false, [])
            case .gap:
                return (false, holdChannel(id, update, context: context, now: now, wait: true))
        }
    }

    /// `updateChannelTooLong`: the channel's difference from its box, at once. Without a box, its pts starts one
    /// (there is nothing older to fetch for a channel never followed); without a pts or an access hash the update
    /// goes to the app as it came.
    private mutating func channelTooLong(_ tooLong: Api.Update.Cons_updateChannelTooLong,
                                         now: Double) -> (Bool, [UpdatesAction]) {
        let id = tooLong.channelId
        if channels[id] == nil {
            guard let pts = tooLong.pts, startBox(id, at: pts) else { return (true, []) }
            return (false, [])
        }
        guard channels[id]?.accessHash != nil else { return (true, []) }
        if channelSync[id]?.fetching == true { return (false, []) }
        return (false, startChannelFetch(id, now: now))
    }

    /// Holds `update` for channel `id`; with `wait`, its gap's wait starts if none is running, and past
    /// `maxPending` held updates the oldest goes and the difference is asked at once.
    private mutating func holdChannel(_ id: Int64, _ update: Api.Update, context: ChannelSync.Context, now: Double,
                                      wait: Bool) -> [UpdatesAction] {
        var sync = channelSync[id] ?? ChannelSync()
        if sync.pending.count >= maxPending { sync.pending.removeFirst() }
        sync.pending.append((update, context, 0))
        if wait, !sync.fetching, sync.deadline == nil { sync.deadline = now + gapWait }
        channelSync[id] = sync
        if wait, !sync.fetching, sync.pending.count >= maxPending { return startChannelFetch(id, now: now) }
        return []
    }

    /// Delivers the held updates of channel `id` that now fit its box, until none does; drops those applied
    /// already. A gap left open keeps (or starts) its wait.
    private mutating func drainChannel(_ id: Int64, now: Double) -> [UpdatesAction] {
        guard var sync = channelSync[id], var box = channels[id] else { return [] }
        var delivered: [(update: Api.Update, context: ChannelSync.Context, fetches: Int)] = []
        var progress = true
        while progress, !sync.pending.isEmpty {
            progress = false
            var index = 0
            while index < sync.pending.count {
                guard let (_, pts, count) = Self.channelPts(sync.pending[index].update) else {
                    delivered.append(sync.pending.remove(at: index))
                    continue
                }
                switch Self.order(box.pts, count, pts) {
                    case .apply:
                        box.pts = pts
                        delivered.append(sync.pending.remove(at: index))
                        progress = true
                    case .duplicate:
                        sync.pending.remove(at: index)
                    case .gap:
                        index += 1
                }
            }
        }
        channels[id] = box
        if sync.pending.isEmpty {
            sync.deadline = nil
        } else if sync.deadline == nil, !sync.fetching {
            sync.deadline = now + gapWait
        }
        channelSync[id] = sync.isIdle ? nil : sync
        return Self.deliveries(delivered)
    }

    /// Asks channel `id`'s difference from its box. Without an access hash there is no asking: what is held is
    /// delivered as it came, in pts order, and the box moves past it (the gap stays a gap).
    private mutating func startChannelFetch(_ id: Int64, now: Double) -> [UpdatesAction] {
        var sync = channelSync[id] ?? ChannelSync()
        guard var box = channels[id] else {
            channelSync[id] = nil
            return Self.deliveries(sync.pending)
        }
        sync.deadline = nil
        guard let hash = box.accessHash else {
            let held = sync.pending.sorted { (Self.channelPts($0.update)?.1 ?? 0) < (Self.channelPts($1.update)?.1 ?? 0) }
            if let last = held.compactMap({ Self.channelPts($0.update)?.1 }).max() { box.pts = max(box.pts, last) }
            channels[id] = box
            channelSync[id] = nil
            return Self.deliveries(held)
        }
        sync.fetching = true
        channelSync[id] = sync
        return [.getChannelDifference(channelID: id, accessHash: hash, pts: box.pts)]
    }

    /// The channel's difference ended with its box where the server says: held updates are checked against it
    /// again (those it covered are duplicates now); one still a gap after two differences is dropped.
    private mutating func finishChannelFetch(_ id: Int64, now: Double) -> [UpdatesAction] {
        guard var sync = channelSync[id] else { return [] }
        sync.fetching = false
        sync.failures = 0
        sync.deadline = nil
        channelSync[id] = sync
        let actions = drainChannel(id, now: now)
        guard var left = channelSync[id] else { return actions }
        for index in left.pending.indices { left.pending[index].fetches += 1 }
        left.pending.removeAll { $0.fetches >= Self.fetchesBeforeDrop }
        if left.pending.isEmpty { left.deadline = nil }
        channelSync[id] = left.isIdle ? nil : left
        return actions
    }

    /// Held channel updates as deliveries, each in an `updates` of its own with its container's users and chats.
    private static func deliveries(_ held: [(update: Api.Update, context: ChannelSync.Context, fetches: Int)])
        -> [UpdatesAction]
    {
        held.map { .deliver(.updates(.init(updates: [$0.update], users: $0.context.users, chats: $0.context.chats,
                                               date: $0.context.date, seq: 0))) }
    }

    /// The channel, pts and pts_count of an update of a channel's box (core.telegram.org/api/updates#pts).
    static func channelPts(_ update: Api.Update) -> (Int64, Int32, Int32)? {
        switch update {
            case .updateNewChannelMessage(let u): channelID(of: u.message).map { ($0, u.pts, u.ptsCount) }
            case .updateEditChannelMessage(let u): channelID(of: u.message).map { ($0, u.pts, u.ptsCount) }
            case .updateDeleteChannelMessages(let u): (u.channelId, u.pts, u.ptsCount)
            case .updateChannelWebPage(let u): (u.channelId, u.pts, u.ptsCount)
            case .updatePinnedChannelMessages(let u): (u.channelId, u.pts, u.ptsCount)
            default: nil
        }
    }

    private static func channelID(of message: Api.Message) -> Int64? {
        let peer: Api.Peer? = switch message {
            case .message(let m): m.peerId
            case .messageService(let m): m.peerId
            case .messageEmpty(let m): m.peerId
        }
        guard case .peerChannel(let channel)? = peer else { return nil }
        return channel.channelId
    }
}
