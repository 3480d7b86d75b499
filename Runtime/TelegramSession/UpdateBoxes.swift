// Where the update sequences stand (core.telegram.org/api/updates#update-handling): the account's common box and one
// box per channel. TelegramClient's `UpdatesState` moves them; a session store keeps them.

/// The common box: where the account's update sequence stands (core.telegram.org/api/updates#update-handling).
public struct UpdateBox: Sendable, Hashable {
    /// The last applied pts: the account's message box (messages, deletions, reads).
    public var pts: Int32
    /// The last applied qts: encrypted messages and some bot updates.
    public var qts: Int32
    /// The date of the last applied update, Unix seconds, sent with `updates.getDifference`.
    public var date: Int32
    /// The last applied seq, of `updates` and `updatesCombined`.
    public var seq: Int32

    /// A box at the given positions.
    public init(pts: Int32, qts: Int32, date: Int32, seq: Int32) {
        self.pts = pts
        self.qts = qts
        self.date = date
        self.seq = seq
    }
}

/// Where one channel's update sequence stands.
public struct ChannelBox: Sendable, Hashable {
    /// The channel's last applied pts.
    public var pts: Int32
    /// The access hash `getChannelDifference` needs: from the last non-`min` `channel` an update or difference
    /// carried. nil until one came; a gap in a channel without one cannot be fetched.
    public var accessHash: Int64?

    /// A box at `pts`, with the channel's access hash when one is known.
    public init(pts: Int32, accessHash: Int64? = nil) {
        self.pts = pts
        self.accessHash = accessHash
    }
}
