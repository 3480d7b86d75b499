// Bounded bookkeeping a session keeps: the msg_ids it received (duplicates, msgs_state_info, seq_no checks) and the
// content messages it sent and may be asked to send again (msg_resend_req, msg_resend_ans_req, rpc_drop_answer).

/// Received msg_ids with what the session knows about each, forgotten by age and by count.
struct ReceivedIDs: Sendable {
    struct Entry: Sendable {
        var seqNo: Int32
        var isRequest: Bool
        var answered: Bool
    }

    private(set) var entries: [Int64: Entry] = [:]
    /// Insertion order, for forgetting the oldest first; `head` is the first live index.
    private var order: [Int64] = []
    private var head = 0
    /// Every id at or below it may have been forgotten.
    private(set) var floor: Int64 = 0
    /// The highest id received and its seq_no (for the 32/33 seq_no checks).
    private(set) var highest: (id: Int64, seqNo: Int32)?
    let capacity: Int

    init(capacity: Int) { self.capacity = max(16, capacity) }

    var count: Int { entries.count }
    func contains(_ id: Int64) -> Bool { entries[id] != nil }
    subscript(id: Int64) -> Entry? {
        get { entries[id] }
        set { if let newValue, entries[id] != nil { entries[id] = newValue } }
    }

    mutating func insert(_ id: Int64, seqNo: Int32, isRequest: Bool) {
        guard entries.updateValue(Entry(seqNo: seqNo, isRequest: isRequest, answered: false), forKey: id) == nil else { return }
        order.append(id)
        if highest.map({ id > $0.id }) ?? true { highest = (id, seqNo) }
        while entries.count > capacity { evictOldest() }
    }

    /// Forgets ids whose time is before `cutoff` (they are outside the time window anyway).
    mutating func forget(before cutoff: Double) {
        while head < order.count, MessageIDGenerator.time(of: order[head]) < cutoff { evictOldest() }
    }

    private mutating func evictOldest() {
        guard head < order.count else { return }
        let id = order[head]
        head += 1
        entries[id] = nil
        floor = max(floor, id)
        if head > 4096, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    /// One `msgs_state_info` status byte (service_messages_about_messages): 1 = nothing known (forgotten),
    /// 2 = not received though within the stored range, 3 = not received (above everything received),
    /// 4 = received, +16 = does not need an ack, +32 = an RPC query being processed or done, +64 = answered.
    func status(of id: Int64) -> UInt8 {
        if let entry = entries[id] {
            var status: UInt8 = 4
            if entry.seqNo & 1 == 0 { status += 16 }
            if entry.isRequest { status += 32 }
            if entry.answered { status += 64 }
            return status
        }
        if let highest, id > highest.id { return 3 }
        return id > floor ? 2 : 1
    }
}

/// Sent content messages kept until acknowledged, within a byte budget (oldest dropped first).
struct RetainedMessages: Sendable {
    struct Message: Sendable {
        let seqNo: Int32
        let body: MessageBody
        let isResponse: Bool
        /// Server role: the client msg_id this message answers.
        let answers: Int64?
    }

    private(set) var messages: [Int64: Message] = [:]
    private var order: [Int64] = []
    private var head = 0
    private(set) var bytes = 0
    let budget: Int

    init(budget: Int) { self.budget = max(0, budget) }

    subscript(id: Int64) -> Message? { messages[id] }

    /// Keeps `message`; returns the messages dropped to stay within the budget.
    @discardableResult
    mutating func insert(_ id: Int64, _ message: Message) -> [(Int64, Message)] {
        if let old = messages.updateValue(message, forKey: id) { bytes -= old.body.count } else { order.append(id) }
        bytes += message.body.count
        var dropped: [(Int64, Message)] = []
        while bytes > budget, head < order.count {
            let oldest = order[head]
            head += 1
            if let gone = messages.removeValue(forKey: oldest) {
                bytes -= gone.body.count
                dropped.append((oldest, gone))
            }
        }
        compact()
        return dropped
    }

    @discardableResult
    mutating func remove(_ id: Int64) -> Message? {
        guard let gone = messages.removeValue(forKey: id) else { return nil }
        bytes -= gone.body.count
        compact()
        return gone
    }

    mutating func removeAll() {
        messages.removeAll()
        order.removeAll()
        head = 0
        bytes = 0
    }

    private mutating func compact() {
        // Drop dead ids from the front, and rebuild the order once it is mostly dead.
        while head < order.count, messages[order[head]] == nil { head += 1 }
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
        if order.count > 4 * messages.count + 1024 {
            order = order[head...].filter { messages[$0] != nil }
            head = 0
        }
    }
}
