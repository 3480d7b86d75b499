// What a session keeps while no connection carries it. A server keeps a client's session after its connection
// closes, so a client that comes back finds it (its answers not yet acknowledged, its msg_ids seen); but the tables
// a busy connection grew stay at their peak size unless given back, and the containers it sent stay listed long
// after every message in them was acknowledged. `compact(now:)` keeps what the protocol needs and frees the rest.

extension Session {
    /// Frees what a session left without a connection does not need: ids received before the time window (a copy
    /// of one is refused by the time check anyway), containers none of whose messages is still kept or awaited,
    /// and the spare capacity of every table. What a returning connection relies on stays: the msg_ids inside the
    /// window (duplicates, `msgs_state_req`), the messages kept for resending and the answers not yet
    /// acknowledged, requests in progress, acks still owed, and the queue.
    public mutating func compact(now: Double) {
        received.forget(before: now + (role == .client ? timeOffset : 0) - configuration.pastWindow - 30)
        received.shrinkToFit()
        let kept = retained, awaited = requestByMessageID
        containers.removeAll { _, items in
            !items.contains { kept[$0] != nil || awaited[$0] != nil }
        }
        containerOrder = containerOrder.filter { containers[$0] != nil }
        containers.shrinkToFit()
        retained.shrinkToFit()
        answers.shrinkToFit()
        inProgress.shrinkToFit()
        requests.shrinkToFit()
        requestByMessageID.shrinkToFit()
        queue = Array(fitting: queue)
        pendingAcks = Array(fitting: pendingAcks)
        pendingEvents = Array(fitting: pendingEvents)
        quickAckOrder = Array(fitting: quickAckOrder)
        stateQueries = Dictionary(fitting: stateQueries)
        quickAckTokens = Dictionary(fitting: quickAckTokens)
        bindings = Dictionary(fitting: bindings)
    }

    /// The time (server clock, Unix seconds) from which every message this session received is older than the
    /// time window (`SessionConfiguration.pastWindow`): a copy of any of them is then refused by its msg_id's time
    /// alone (core.telegram.org/mtproto/description, "msg_id"), so forgetting the session cannot let a replayed
    /// request run again. `-infinity` when nothing was received.
    public var replayHorizon: Double {
        received.highest.map { MessageIDGenerator.time(of: $0.id) + configuration.pastWindow } ?? -.infinity
    }
}

extension IDMap {
    /// Removes the entries `shouldRemove` picks.
    mutating func removeAll(where shouldRemove: (Key, Value) -> Bool) {
        for (key, value) in self where shouldRemove(key, value) { removeValue(forKey: key) }
    }
}

extension Dictionary {
    /// The same entries in storage sized for them (a dictionary keeps its peak capacity as entries are removed).
    init(fitting other: Self) {
        guard !other.isEmpty else {
            self.init()
            return
        }
        guard other.capacity > other.count * 2 else {
            self = other
            return
        }
        self.init(minimumCapacity: other.count)
        for (key, value) in other { self[key] = value }
    }
}
