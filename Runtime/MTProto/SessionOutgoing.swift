// The sending half of a session: the requests a client hands in, the answers a server hands in, and `outgoing(now:)`,
// which assigns msg_ids and seq_nos, adds acks, salt and state requests, packs containers and encrypts.
import MTProtoCrypto
import TLRuntime

extension Session {
    // MARK: Client requests

    /// Queues an RPC request (a serialized function call, e.g. the `Buffer` of a generated triple).
    /// - Returns: the id its result, error or failure will be reported under.
    public mutating func send(_ body: [UInt8]) throws(SessionError) -> RequestID {
        try track(.rpc, body: packed(body))
    }

    /// Queues a generated call: `session.send(Api.functions.help.getConfig())`.
    public mutating func send<T>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>))
        throws(SessionError) -> RequestID
    {
        try send(call.1.bytes)
    }

    /// Queues `auth.bindTempAuthKey`, binding this session's key (a temporary one) to `permanentKey` until
    /// `expiresAt`, server time (core.telegram.org/api/pfs). The binding names the msg_id and session_id it travels
    /// under, so its body is written when a msg_id is given, and again for every resend under a new one. It is
    /// answered like a call: `.result` with the boxed `Bool`, or `.rpcError`.
    public mutating func bindTemporaryKey(to permanentKey: AuthKey, expiresAt: Int32) throws(SessionError) -> RequestID {
        let body = bindingBody(permanentKey: permanentKey, expiresAt: expiresAt, messageID: 0) ?? []
        let request = try track(.bindTemporaryKey, body: body)
        bindings[request] = (permanentKey, expiresAt)
        return request
    }

    /// The `auth.bindTempAuthKey` body of binding request `request` for `messageID`; nil for other requests, or if
    /// the binding could not be encrypted (a 256-byte key always can).
    func bindingBody(_ request: RequestID, messageID: Int64) -> [UInt8]? {
        guard let (permanentKey, expiresAt) = bindings[request] else { return nil }
        return bindingBody(permanentKey: permanentKey, expiresAt: expiresAt, messageID: messageID)
    }

    func bindingBody(permanentKey: AuthKey, expiresAt: Int32, messageID: Int64) -> [UInt8]? {
        try? TemporaryKeyBinding(permanentKey: permanentKey, temporaryKey: authKey, temporarySessionID: sessionID,
                                 expiresAt: expiresAt, messageID: messageID, random: random).requestBody
    }

    /// Queues `ping` (answered by `.pong`).
    public mutating func ping(id pingID: Int64) throws(SessionError) -> RequestID {
        try track(.ping(pingID), body: ServiceWriter.words(WireID.ping) { $0.appendInt64(pingID) })
    }

    /// Queues `ping_delay_disconnect`: the server closes the connection `delay` seconds after it unless pinged again.
    public mutating func ping(id pingID: Int64, disconnectDelay delay: Int32) throws(SessionError) -> RequestID {
        try track(.ping(pingID), body: ServiceWriter.words(WireID.pingDelayDisconnect) {
            $0.appendInt64(pingID)
            $0.appendInt32(delay)
        })
    }

    /// Queues `http_wait` (core.telegram.org/mtproto/service_messages, "Request to Send Messages"): over the HTTP
    /// transport it asks the server to hold the request carrying it until it has messages for this session, or
    /// `maxWait` milliseconds pass. It is not content-related and has no answer.
    public mutating func httpWait(maxDelay: Int32, waitAfter: Int32, maxWait: Int32) {
        queue.append(Outgoing(kind: .message(body: ServiceWriter.words(WireID.httpWait) {
            $0.appendInt32(maxDelay)
            $0.appendInt32(waitAfter)
            $0.appendInt32(maxWait)
        }, contentRelated: false, isResponse: false, answers: nil)))
    }

    /// Queues `destroy_session` for another session of this key (answered by `.sessionDestroyed`).
    public mutating func destroySession(_ id: Int64) throws(SessionError) -> RequestID {
        try track(.destroySession(id), body: ServiceWriter.words(WireID.destroySession) { $0.appendInt64(id) })
    }

    /// Queues `destroy_auth_key` (answered by `.authKeyDestroyed`).
    public mutating func destroyAuthKey() throws(SessionError) -> RequestID {
        try track(.destroyAuthKey, body: ServiceWriter.words(WireID.destroyAuthKey) { _ in })
    }

    /// Call when a new connection carries the session on after the last one was lost. What was in flight on the
    /// lost connection may or may not have reached the server, and answers may have died with it; so every request
    /// sent and not answered goes out again first, in order, under its own msg_id and seq_no. The server runs one it
    /// never received and answers one it did from what it kept, never running it twice: a message re-sent keeps its
    /// msg_id, and a duplicate msg_id is not handled again (core.telegram.org/mtproto/service_messages_about_messages,
    /// "Explicit Request to Re-Send Messages"; core.telegram.org/mtproto/description, "Message Identifier").
    /// Those still unanswered after that are asked about with `msgs_state_req` as usual.
    public mutating func resendUnanswered(now: Double) {
        var again: [Outgoing] = []
        for (request, record) in requests.sorted(by: { $0.key < $1.key }) where !record.queued {
            guard !record.messageIDs.isEmpty else { continue }
            requests.modify(request) { record in
                record.queued = true
                record.reuseID = true
                record.lastProgress = now
                record.acknowledged = false
                record.unansweredStateQueries = 0
            }
            again.append(Outgoing(kind: .request(request)))
        }
        queue.insert(contentsOf: again, at: 0)
        resendCredit = again.isEmpty ? .max : configuration.resendWindow
        resendHeldUntil = now + configuration.stateRequestAfter
        // Queries sent on the lost connection will not be answered.
        stateQueries.removeAll()
    }

    /// Gives up on a request. If it was sent, `rpc_drop_answer` asks the server to drop its answer (reported as
    /// `.answerDropped`); a late answer is then ignored. Returns false for an unknown or finished request.
    @discardableResult
    public mutating func cancel(_ request: RequestID) -> Bool {
        guard let record = finish(request) else { return false }
        if let last = record.messageIDs.last {
            _ = try? track(.dropAnswer(request), body: ServiceWriter.words(WireID.rpcDropAnswer) { $0.appendInt64(last) })
        }
        return true
    }

    mutating func track(_ kind: TrackedRequest.Kind, body: [UInt8]) throws(SessionError) -> RequestID {
        guard requests.count < configuration.maxPendingRequests else {
            throw .tooManyPendingRequests(limit: configuration.maxPendingRequests)
        }
        let id = RequestID(nextRequestNumber)
        nextRequestNumber += 1
        requests[id] = TrackedRequest(kind: kind, body: body)
        queue.append(Outgoing(kind: .request(id)))
        return id
    }

    /// Removes a request and every msg_id mapping to it; returns its record.
    @discardableResult
    mutating func finish(_ request: RequestID) -> TrackedRequest? {
        guard let record = requests.removeValue(forKey: request) else { return nil }
        if record.kind == .bindTemporaryKey { bindings[request] = nil }
        for id in record.messageIDs {
            requestByMessageID[id] = nil
            retained.remove(id)
        }
        return record
    }

    /// `gzip_packed` when it is smaller, for bodies above the threshold. A large body is looked at first: if its
    /// first 4 KiB look random (equal byte pairs under 1.1 × 1/256; random samples measure 0.98–1.03 ×, a random
    /// 1 KiB pattern repeated 1.14–1.24 ×), it is sent as it is. File parts and media are already compressed or
    /// random, and deflating 512 KiB of them costs more than encrypting them; even a 4 KiB trial deflate (the
    /// earlier probe) cost a tenth of a file part's encryption.
    func packed(_ body: [UInt8]) -> [UInt8] {
        guard body.count >= configuration.gzipThreshold else { return body }
        let probe = 4096
        if body.count > 4 * probe,
           body.withUnsafeBytes({ GZip.byteCollisionRate(UnsafeRawBufferPointer(rebasing: $0[..<probe])) }) * 256 < 1.1 {
            return body
        }
        let packed = GZip.packedObject(body)
        return packed.count < body.count ? packed : body
    }

    // MARK: Sending

    /// Everything ready to go at `now`, as encrypted frames in order: queued messages, acks due, salt and state
    /// requests due. Call it after handing in requests or answers, after `receive`, and at `nextDeadline`.
    ///
    /// `holdingLast` is for a sender that knows it will call again at once with more to send (a server answering
    /// several file-part requests, one per call so each goes out while the next is made): a last frame of at least
    /// `heldFrameBytes` is hashed while the one before it is encrypted but kept back, and goes out first from the
    /// next call, encrypted while that call's first frame is hashed. MTProto 2.0 derives a message's key from its
    /// hash, so a frame sent alone is hashed and encrypted in two passes; kept back, every frame but the first of a
    /// run takes one. The last call of a run must pass false (as every other caller does).
    public mutating func outgoing(now: Double, holdingLast: Bool = false) -> [OutgoingFrame] {
        if role == .client {
            scheduleStateQueries(now: now)
            if !queue.isEmpty { requestSaltsIfNeeded(now: now) }
        }
        var messages = queue
        queue.removeAll(keepingCapacity: true)
        if resendCredit != .max { holdResends(&messages, now: now) }
        if !pendingAcks.isEmpty, !messages.isEmpty || pendingAcks.count >= configuration.maxPendingAcks
            || now - (oldestPendingAck ?? now) >= configuration.ackDelay
        {
            for chunk in idLists(pendingAcks) {
                messages.insert(Outgoing(kind: .message(body: ServiceWriter.ids(WireID.msgsAck, chunk),
                                                        contentRelated: false, isResponse: false, answers: nil)),
                                at: 0)
            }
            pendingAcks.removeAll(keepingCapacity: true)
            oldestPendingAck = nil
        }
        guard !messages.isEmpty else { return holdingLast ? [] : seal([]) }
        if role == .client { chooseSalt(now: now) } else { salt = saltSchedule.current(at: now) ?? salt }

        // Ids are assigned in order and each frame is laid out as soon as it is full, so a container's id (taken
        // then) is above its items' and frames go out in increasing msg_id order. They are encrypted together at
        // the end: each while the next is hashed (see `MTProto2Cipher.seal(all:direction:)`).
        var frames: [AssembledFrame] = []
        var group: [WireMessage] = []
        var groupBytes = 0
        func flush(_ session: inout Session) {
            if !group.isEmpty { frames.append(session.assemble(group, now: now)) }
            group.removeAll(keepingCapacity: true)
            groupBytes = 0
        }
        for message in messages {
            // Decide the frame before the id is taken, so an open container is sealed (taking its id) first.
            guard let (size, solo) = footprint(of: message) else { continue }
            if solo || size >= configuration.soloMessageBytes {
                flush(&self)
                if let item = prepare(message, now: now) {
                    group = [item]
                    flush(&self)
                }
                continue
            }
            if group.count >= configuration.maxContainerItems || groupBytes + size > configuration.maxContainerBytes {
                flush(&self)
            }
            if let item = prepare(message, now: now) {
                group.append(item)
                groupBytes += size
            }
        }
        flush(&self)
        // Moved out of the captured variable, so each frame's bytes have one reference when they are encrypted.
        var assembled: [AssembledFrame] = []
        swap(&assembled, &frames)
        return seal(consume assembled, holdingLast: holdingLast)
    }

    /// Keeps in the queue the requests after the first `resendCredit` re-sent ones (later requests too, so the
    /// session's order stays), until the window opens or its time passes.
    mutating func holdResends(_ messages: inout [Outgoing], now: Double) {
        guard now < resendHeldUntil else {
            resendCredit = .max
            return
        }
        var held: [Outgoing] = []
        var kept: [Outgoing] = []
        var again = 0
        for message in messages {
            guard case .request(let request) = message.kind else {
                kept.append(message)
                continue
            }
            if !held.isEmpty {
                held.append(message)
                continue
            }
            if requests.modify(request, { $0.reuseID && $0.queued }) == true {
                if again == resendCredit {
                    held.append(message)
                    continue
                }
                again += 1
            }
            kept.append(message)
        }
        resendCredit -= again
        if held.isEmpty { resendCredit = .max }
        messages = kept
        queue = held + queue
    }

    /// The smallest frame `outgoing(now:holdingLast:)` keeps back: below it the hash saved is not worth the wait.
    public static let heldFrameBytes = 64 << 10

    /// The earliest time `outgoing(now:)` has something timed to do (an ack delay, a state query), or nil.
    public var nextDeadline: Double? {
        var deadline = Double.infinity
        if let oldestPendingAck { deadline = oldestPendingAck + configuration.ackDelay }
        if role == .client { deadline = min(deadline, nextStateScan) }
        if resendCredit != .max { deadline = min(deadline, resendHeldUntil) }
        return deadline.isFinite ? deadline : nil
    }

    struct WireMessage {
        let id: Int64
        let seqNo: Int32
        let body: MessageBody
        let solo: Bool
        let isResponse: Bool
        let request: RequestID?
    }

    mutating func nextSeqNo(contentRelated: Bool) -> Int32 {
        if contentRelated {
            contentMessagesSent &+= 1
            return contentMessagesSent &* 2 &- 1
        }
        return contentMessagesSent &* 2
    }

    /// A queued message's size in a container and whether it must go alone; nil if it is no longer to be sent.
    mutating func footprint(of message: Outgoing) -> (Int, Bool)? {
        switch message.kind {
            case .request(let request):
                // Read in place (`modify` moves the record out and back; a read through the subscript copied it).
                guard let (queued, count, solo) = requests.modify(request, { ($0.queued, $0.body.count, $0.solo) }),
                      queued else { return nil }
                return (count + 16, solo)
            case .message(let body, _, _, _): return (body.count + 16, false)
            case .stateQuery(let ids): return (8 * ids.count + 24, false)
            case .again(_, let kept): return (kept.body.count + 16, false)
        }
    }

    /// Gives a queued message its msg_id and seq_no and records what is needed to match, resend or answer it.
    mutating func prepare(_ message: Outgoing, now: Double) -> WireMessage? {
        switch message.kind {
            case .request(let request):
                guard let (queued, binds, reuse) = requests.modify(request, {
                    ($0.queued, $0.kind == .bindTemporaryKey, $0.reuseID)
                }), queued else { return nil }
                if reuse { return prepareAgain(request, now: now) }
                let id = messageIDs.next(now: now)
                let seqNo = nextSeqNo(contentRelated: true)
                let binding = binds ? bindingBody(request, messageID: id) : nil
                // Changed in place: a copy taken out and stored back copied its msg_id list on every send.
                guard let (body, solo, gone) = requests.modify(request, { record in
                    if let binding { record.body = binding }
                    record.queued = false
                    record.seqNo = seqNo
                    record.messageIDs.append(id)
                    let gone = record.messageIDs.count > 16 ? record.messageIDs.removeFirst() : nil
                    record.lastProgress = now
                    return (record.body, record.solo, gone)
                }) else { return nil }
                if let gone { requestByMessageID[gone] = nil }
                requestByMessageID[id] = request
                retained.insert(id, .init(seqNo: seqNo, body: MessageBody(body), isResponse: false, answers: nil),
                                now: now)
                nextStateScan = min(nextStateScan, now + configuration.stateRequestAfter)
                return WireMessage(id: id, seqNo: seqNo, body: MessageBody(body), solo: solo, isResponse: false,
                                   request: request)
            case let .message(body, contentRelated, isResponse, answers):
                let id = messageIDs.next(now: now, isResponse: isResponse)
                let seqNo = nextSeqNo(contentRelated: contentRelated)
                if contentRelated {
                    for (dropped, kept) in retained.insert(id, .init(seqNo: seqNo, body: body, isResponse: isResponse,
                                                                     answers: answers), now: now) {
                        if let request = kept.answers, self.answers[request] == dropped { self.answers[request] = nil }
                    }
                }
                if let answers { self.answers[answers] = id }
                return WireMessage(id: id, seqNo: seqNo, body: body, solo: false, isResponse: isResponse, request: nil)
            case .stateQuery(let ids):
                let id = messageIDs.next(now: now)
                stateQueries[id] = (ids, now)
                return WireMessage(id: id, seqNo: nextSeqNo(contentRelated: true),
                                   body: MessageBody(ServiceWriter.ids(WireID.msgsStateReq, ids)), solo: false,
                                   isResponse: false, request: nil)
            case let .again(id, kept):
                return WireMessage(id: id, seqNo: kept.seqNo, body: kept.body, solo: false,
                                   isResponse: kept.isResponse, request: nil)
        }
    }

    /// A request queued by `resendUnanswered(now:)`: the same message again, under its newest msg_id and seq_no.
    mutating func prepareAgain(_ request: RequestID, now: Double) -> WireMessage? {
        guard let (id, seqNo, body, solo) = requests.modify(request, { record -> (Int64, Int32, [UInt8], Bool)? in
            guard let id = record.messageIDs.last else { return nil }
            record.queued = false
            record.reuseID = false
            record.lastProgress = now
            return (id, record.seqNo, record.body, record.solo)
        }) ?? nil else { return nil }
        retained.insert(id, .init(seqNo: seqNo, body: MessageBody(body), isResponse: false, answers: nil), now: now)
        nextStateScan = min(nextStateScan, now + configuration.stateRequestAfter)
        return WireMessage(id: id, seqNo: seqNo, body: MessageBody(body), solo: solo, isResponse: false,
                           request: request)
    }

    /// A frame laid out for sealing: 24 bytes of room, then the plaintext with its padding.
    struct AssembledFrame {
        var bytes: [UInt8]
        let messageID: Int64
        let messageIDs: [Int64]
        /// The requests it carries (a quick ack for the frame acknowledges them).
        let requests: [RequestID]
    }

    /// Lays out one message, or a container of several, as a frame to seal.
    mutating func assemble(_ group: [WireMessage], now: Double) -> AssembledFrame {
        let topID: Int64
        let topSeqNo: Int32
        let body: MessageBody
        var ids = group.map(\.id)
        if group.count == 1 {
            topID = group[0].id
            topSeqNo = group[0].seqNo
            body = group[0].body
        } else {
            topID = messageIDs.next(now: now, isResponse: group.contains { $0.isResponse })
            topSeqNo = nextSeqNo(contentRelated: false)
            body = MessageBody(ServiceWriter.container(group.map { ($0.id, $0.seqNo, $0.body) }))
            containers[topID] = ids
            containerOrder.append(topID)
            if containerOrder.count > 4096 {
                for old in containerOrder.prefix(2048) { containers[old] = nil }
                containerOrder.removeFirst(2048)
            }
            ids.append(topID)
        }
        let carried = group.compactMap(\.request)
        for request in carried { requests[request]?.topLevelID = topID }
        // One allocation for the whole frame: room for auth_key_id and msg_key, the header, the body and the
        // padding, encrypted where it lies (a 512 KiB answer is not copied again on its way out).
        let unpadded = MTProto2Cipher.headerLength + body.count
        let padding = 12 + (16 - (unpadded + 12) % 16) % 16
        var frame = [UInt8]()
        frame.reserveCapacity(MTProto2Cipher.prefixLength + unpadded + padding)
        frame += repeatElement(0, count: MTProto2Cipher.prefixLength)
        frame.appendLE(salt)
        frame.appendLE(sessionID)
        frame.appendLE(topID)
        frame.appendLE(topSeqNo)
        frame.appendLE(Int32(truncatingIfNeeded: body.count))
        body.write(to: &frame)
        frame += random.bytes(padding)
        return AssembledFrame(bytes: frame, messageID: topID, messageIDs: ids, requests: carried)
    }

    /// Encrypts assembled frames in one batch, after the frame held back by the last call if any, and notes their
    /// quick-ack tokens; with `holdingLast`, a large last frame is hashed and kept back instead (see `outgoing`).
    mutating func seal(_ assembled: consuming [AssembledFrame], holdingLast: Bool = false) -> [OutgoingFrame] {
        var assembled = assembled
        var firstKeyLarge: [UInt8]?
        if let held {
            assembled.insert(held.frame, at: 0)
            firstKeyLarge = held.large
            self.held = nil
        }
        // Only the count is read: a copy of the last frame held here would make its encryption copy the bytes.
        guard let lastCount = assembled.last?.bytes.count else { return [] }
        let leavingLast = holdingLast && lastCount >= Self.heldFrameBytes
        // Each frame's bytes move out (one reference each), so they are encrypted where they lie, not copied first.
        var frames: [[UInt8]] = []
        frames.reserveCapacity(assembled.count)
        for index in assembled.indices {
            frames.append(assembled[index].bytes)
            assembled[index].bytes = []
        }
        // Sealing cannot fail: every plaintext is block-aligned, the key is 256 bytes, a held hash 32 bytes.
        var larges = (try? cipher.seal(all: &frames, direction: role.outgoing, firstKeyLarge: firstKeyLarge,
                                       leavingLast: leavingLast)) ?? []
        if leavingLast, larges.count == frames.count {
            var kept = assembled.removeLast()
            kept.bytes = frames.removeLast()
            held = (kept, larges.removeLast())
        }
        var out: [OutgoingFrame] = []
        out.reserveCapacity(assembled.count)
        for (index, frame) in assembled.enumerated() {
            let large = index < larges.count ? larges[index] : []
            var token: UInt32?
            if configuration.quickAcks, role == .client, !frame.requests.isEmpty, large.count >= 4 {
                let value = large.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) } | 0x8000_0000
                token = value
                quickAckTokens[value] = frame.requests
                quickAckOrder.append(value)
                if quickAckOrder.count > 1024 {
                    quickAckTokens[quickAckOrder.removeFirst()] = nil
                }
            }
            out.append(OutgoingFrame(bytes: large.isEmpty ? [] : frames[index], messageID: frame.messageID,
                                     messageIDs: frame.messageIDs, quickAckToken: token))
        }
        return out
    }

    /// A quick ack arrived from the transport: the frame with this token reached the server.
    public mutating func receiveQuickAck(_ token: UInt32) -> [SessionEvent] {
        guard let acked = quickAckTokens.removeValue(forKey: token) else { return [] }
        var done: [RequestID] = []
        for request in acked where requests[request] != nil {
            requests[request]?.acknowledged = true
            done.append(request)
        }
        return done.isEmpty ? [] : [.acknowledged(done)]
    }

    // MARK: Salts (client)

    /// The newest salt valid at the server's time now, else the last one known.
    mutating func chooseSalt(now: Double) {
        let serverNow = now + timeOffset
        futureSalts.removeAll { Double($0.validUntil) <= serverNow }
        if let best = futureSalts.last(where: { $0.isValid(at: serverNow) }) { salt = best.salt }
    }

    /// Asks for future salts when none known stays valid past the refresh margin and no request is out.
    mutating func requestSaltsIfNeeded(now: Double) {
        let horizon = now + timeOffset + configuration.saltRefreshMargin
        guard !futureSalts.contains(where: { Double($0.validUntil) > horizon }),
              !requests.values.contains(where: { $0.kind == .futureSalts }) else { return }
        if let id = try? track(.futureSalts, body: ServiceWriter.words(WireID.getFutureSalts) {
            $0.appendInt32(configuration.futureSaltCount)
        }) {
            ownRequests.insert(id)
        }
    }

    // MARK: State queries (client)

    /// Asks `msgs_state_req` about requests that have gone quiet: unacknowledged for `stateRequestAfter`, or
    /// acknowledged but unanswered for `answerTimeout`. A request asked about `maxStateQueries` times in a row
    /// without any news fails with `.noAnswer`.
    mutating func scheduleStateQueries(now: Double) {
        
        guard now >= nextStateScan else { return }
        let staleQueries = stateQueries.filter { now - $0.value.sentAt > 4 * configuration.answerTimeout }.keys
        for key in staleQueries { stateQueries[key] = nil }
        var ask: [Int64] = []
        var next = Double.infinity
        var failed: [RequestID] = []
        for (request, record) in requests where !record.queued {
            guard let last = record.messageIDs.last else { continue }
            let wait = record.acknowledged ? configuration.answerTimeout : configuration.stateRequestAfter
            let due = max(record.lastProgress + wait, record.lastStateQuery + configuration.stateRequestAfter)
            if due > now {
                next = min(next, due)
                continue
            }
            if record.unansweredStateQueries >= configuration.maxStateQueries {
                failed.append(request)
                continue
            }
            requests[request]?.unansweredStateQueries += 1
            requests[request]?.lastStateQuery = now
            next = min(next, now + configuration.stateRequestAfter)
            ask.append(last)
        }
        for request in failed {
            if let record = finish(request) {
                pendingEvents.append(.failed(request, .noAnswer(stateQueries: record.unansweredStateQueries)))
            }
        }
        nextStateScan = next
        for chunk in idLists(ask) { queue.append(Outgoing(kind: .stateQuery(chunk))) }
    }

    /// `ids` in pieces of at most `maxIDsPerAck`, the most one msg_id vector may carry.
    func idLists(_ ids: [Int64]) -> [[Int64]] {
        stride(from: 0, to: ids.count, by: max(1, configuration.maxIDsPerAck)).map {
            Array(ids[$0..<min(ids.count, $0 + max(1, configuration.maxIDsPerAck))])
        }
    }
}

extension [UInt8] {
    /// Appends an integer's little-endian bytes.
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
