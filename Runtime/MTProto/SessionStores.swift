// Bounded bookkeeping a session keeps: the msg_ids it received (duplicates, msgs_state_info, seq_no checks) and the
// content messages it sent and may be asked to send again (msg_resend_req, msg_resend_ans_req, rpc_drop_answer).

/// Received msg_ids with what the session knows about each, forgotten by age and by count, oldest id first.
///
/// Kept sorted in an array: msg_ids arrive nearly in increasing order, so a new id is appended after one compare and
/// a duplicate or a recent id is found near the end. (In a hash table of 65,536 ids every lookup was a cache miss:
/// 2–3 % of a pipelining client's and of the test server's time.)
struct ReceivedIDs: Sendable {
    struct Entry: Sendable {
        var seqNo: Int32
        var isRequest: Bool
        var answered: Bool
    }

    /// Ascending from `head`; `entries` runs beside it.
    private var ids: [Int64] = []
    private var entries: [Entry] = []
    private var head = 0
    /// Every id at or below it may have been forgotten.
    private(set) var floor: Int64 = 0
    /// The highest id received and its seq_no (for the 32/33 seq_no checks).
    private(set) var highest: (id: Int64, seqNo: Int32)?
    let capacity: Int

    init(capacity: Int) { self.capacity = max(16, capacity) }

    var count: Int { ids.count - head }

    /// Ids more than this many places behind the newest are treated as forgotten, like those at or below `floor`:
    /// taking one in moves everything after it, so a peer sending ids in decreasing order would otherwise make every
    /// message cost a shift of up to `capacity` entries. Honest reordering (a container's items, a resend) is a few
    /// places.
    static let maxLateness = 4096

    /// At or below `floor`, or too far behind the newest id to be taken in (`maxLateness`).
    func isTooOld(_ id: Int64) -> Bool {
        if id <= floor { return true }
        return ids.count - head > Self.maxLateness && id < ids[ids.count - Self.maxLateness]
    }

    func contains(_ id: Int64) -> Bool { index(of: id).found }
    subscript(id: Int64) -> Entry? {
        get {
            let (index, found) = index(of: id)
            return found ? entries[index] : nil
        }
        set {
            let (index, found) = index(of: id)
            if let newValue, found { entries[index] = newValue }
        }
    }

    /// Where `id` is, or where it would go: searched back from the end in doubling steps (ids looked up are
    /// mostly recent), then by halving within the last step.
    private func index(of id: Int64) -> (index: Int, found: Bool) {
        guard let last = ids.last, id <= last else { return (ids.count, false) }
        var high = ids.count - 1  // ids[high] >= id
        var step = 1
        var low = high - step
        while low > head, ids[low] >= id {
            high = low
            step *= 2
            low = high - step
        }
        low = max(low, head)
        // Now ids[low] < id (or low == head) and ids[high] >= id: the first index in low...high holding >= id.
        var upper = high + 1
        while low < upper {
            let middle = low + (upper - low) / 2
            if ids[middle] < id { low = middle + 1 } else { upper = middle }
        }
        return (low, ids[low] == id)
    }

    /// Marks a received request answered (a status of +64 in `msgs_state_info`).
    mutating func markAnswered(_ id: Int64) {
        let (index, found) = index(of: id)
        if found { entries[index].answered = true }
    }

    mutating func insert(_ id: Int64, seqNo: Int32, isRequest: Bool) {
        let entry = Entry(seqNo: seqNo, isRequest: isRequest, answered: false)
        let (index, found) = index(of: id)
        if found {
            entries[index] = entry
            return
        }
        if index == ids.count {
            ids.append(id)
            entries.append(entry)
        } else {
            ids.insert(id, at: index)
            entries.insert(entry, at: index)
        }
        if highest.map({ id > $0.id }) ?? true { highest = (id, seqNo) }
        while count > capacity { evictOldest() }
    }

    /// Forgets ids whose time is before `cutoff` (they are outside the time window anyway).
    mutating func forget(before cutoff: Double) {
        while head < ids.count, MessageIDGenerator.time(of: ids[head]) < cutoff { evictOldest() }
    }

    private mutating func evictOldest() {
        guard head < ids.count else { return }
        floor = max(floor, ids[head])
        head += 1
        if head == ids.count {
            ids.removeAll(keepingCapacity: true)
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096, head * 2 > ids.count {
            ids.removeFirst(head)
            entries.removeFirst(head)
            head = 0
        }
    }

    /// Drops the forgotten front and gives back spare capacity (a session left without a connection).
    mutating func shrinkToFit() {
        ids = Array(fitting: ids[head...])
        entries = Array(fitting: entries[head...])
        head = 0
    }

    /// One `msgs_state_info` status byte (service_messages_about_messages): 1 = nothing known (forgotten),
    /// 2 = not received though within the stored range, 3 = not received (above everything received),
    /// 4 = received, +16 = does not need an ack, +32 = an RPC query being processed or done, +64 = answered.
    func status(of id: Int64) -> UInt8 {
        if let entry = self[id] {
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

/// Sent content messages kept until acknowledged, within a byte budget, a count and an age (oldest dropped first).
struct RetainedMessages: Sendable {
    struct Message: Sendable {
        let seqNo: Int32
        let body: MessageBody
        let isResponse: Bool
        /// Server role: the client msg_id this message answers.
        let answers: Int64?
        /// When it was first sent (local time).
        var sentAt: Double = 0
    }

    private(set) var messages = IDMap<Int64, Message>()
    private var order: [Int64] = []
    private var head = 0
    private(set) var bytes = 0
    let budget: Int
    let maxCount: Int
    let maxAge: Double

    init(budget: Int, maxCount: Int = .max, maxAge: Double = .infinity) {
        self.budget = max(0, budget)
        self.maxCount = max(1, maxCount)
        self.maxAge = maxAge
    }

    subscript(id: Int64) -> Message? { messages[id] }

    /// The ids kept, oldest first.
    var ids: [Int64] { order[head...].filter { messages[$0] != nil } }

    /// Keeps `message`, sent at `now` (a message kept already keeps its first time); returns the messages dropped
    /// to stay within the bounds.
    @discardableResult
    mutating func insert(_ id: Int64, _ message: Message, now: Double = 0) -> [(Int64, Message)] {
        var message = message
        message.sentAt = now
        if let old = messages.updateValue(message, forKey: id) {
            bytes -= old.body.count
            messages[id]?.sentAt = old.sentAt
        } else {
            order.append(id)
        }
        bytes += message.body.count
        var dropped: [(Int64, Message)] = []
        while head < order.count {
            let oldest = order[head]
            guard let kept = messages[oldest] else {
                head += 1
                continue
            }
            guard bytes > budget || messages.count > maxCount || now - kept.sentAt > maxAge else { break }
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

    /// Gives back the spare capacity of the table and the order (a session left without a connection).
    mutating func shrinkToFit() {
        messages.shrinkToFit()
        order = Array(fitting: ids)
        head = 0
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

extension Array {
    /// The elements in a buffer of their own sized to them: `Array(slice)` of a whole array shares its buffer, so
    /// its spare capacity stays.
    init(fitting elements: some Collection<Element>) {
        self.init()
        guard !elements.isEmpty else { return }
        reserveCapacity(elements.count)
        append(contentsOf: elements)
    }
}
