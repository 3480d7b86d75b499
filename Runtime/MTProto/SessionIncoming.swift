// The receiving half of a session: decrypt and check a frame, walk containers, copies and gzip, and react to each
// message as the table on `Session` says.
import MTProtoCrypto
import TLRuntime

extension Session {
    /// Decrypts and handles one frame. A frame that fails decryption or names another session throws and changes
    /// nothing; problems with single messages inside it are reported as `.ignored` events and the rest is handled.
    public mutating func receive(frame: consuming [UInt8], now: Double) throws(SessionError) -> [SessionEvent] {
        let message: DecryptedMessage
        do {
            message = try cipher.decrypt(frame, direction: role.incoming)
        } catch {
            throw .decryption(error)
        }
        return try receive(consume message, now: now)
    }

    /// Handles a frame already decrypted (a server decrypts first to find the session by its id).
    public mutating func receive(_ message: consuming DecryptedMessage, now: Double) throws(SessionError) -> [SessionEvent] {
        var events = try takeEvents(before: message)
        let (id, seqNo, salt) = (message.messageID, message.seqNo, message.saltValue)
        // An answer (the common frame, and the large one: file parts) becomes its result in the frame's own
        // storage; anything else is copied out as a body and decoded.
        if let request = message.withMessageData({ ServiceMessage.rpcResultRequest(in: $0) }) {
            let result = ServiceMessage.rpcResult(requestMessageID: request, result: message.takeMessageData(from: 12))
            handle(id: id, seqNo: seqNo, body: [], decoded: result, now: now, topLevel: (id, salt), events: &events)
        } else {
            handle(id: id, seqNo: seqNo, body: message.messageData, now: now, topLevel: (id, salt), events: &events)
        }
        return forDriver(events)
    }

    /// The events raised while sending, once `message` is known to belong to this session.
    mutating func takeEvents(before message: borrowing DecryptedMessage) throws(SessionError) -> [SessionEvent] {
        let frameSession = message.sessionIDValue
        guard frameSession == sessionID else { throw .wrongSession(expected: sessionID, received: frameSession) }
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    /// Events raised while sending (requests given up on), when no frame is arriving to carry them.
    public mutating func takeEvents() -> [SessionEvent] {
        defer { pendingEvents.removeAll() }
        return forDriver(pendingEvents)
    }

    /// `events` less the ends of requests the session made itself, which name ids the driver never got.
    mutating func forDriver(_ events: [SessionEvent]) -> [SessionEvent] {
        guard !ownRequests.isEmpty else { return events }
        return events.compactMap { event in
            switch event {
                case .result(let id, _), .rpcError(let id, _), .failed(let id, _):
                    return ownRequests.remove(id) == nil ? event : nil
                case .resent(let id, _):
                    return ownRequests.contains(id) ? nil : event
                case .acknowledged(let ids):
                    let theirs = ids.filter { !ownRequests.contains($0) }
                    return theirs.isEmpty ? nil : .acknowledged(theirs)
                default:
                    return event
            }
        }
    }

    static func int64(_ bytes: [UInt8], at offset: Int) -> Int64 {
        bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: Int64.self)) }
    }

    /// Checks and handles one message. `topLevel` is set for the frame's own message (with the frame's salt).
    /// - Parameter decoded: the message already decoded from `body` (then `body` may be left empty).
    mutating func handle(id: Int64, seqNo: Int32, body: [UInt8], decoded known: ServiceMessage? = nil, now: Double,
                         topLevel: (id: Int64, salt: Int64)?, events: inout [SessionEvent]) {
        let decoded: ServiceMessage
        do {
            decoded = try known ?? ServiceMessage.decode(body, maxUnpackedBytes: configuration.maxUnpackedBytes)
        } catch {
            // Undecodable: still a received message (so not re-handled), reported and skipped.
            if accept(id: id, seqNo: seqNo, message: .other, now: now, topLevel: topLevel, events: &events) {
                received.insert(id, seqNo: seqNo, isRequest: false)
                if seqNo & 1 == 1 { queueAck(id, now: now) }
                events.append(.ignored(messageID: id, .undecodable("\(error)")))
            }
            return
        }
        guard accept(id: id, seqNo: seqNo, message: decoded, now: now, topLevel: topLevel, events: &events) else {
            return
        }
        let isRequest: Bool = if case .other = decoded { role == .server } else { false }
        // A container's id is above its items': it is remembered after them, so forgetting the oldest first
        // keeps the forgotten range below what is still remembered.
        let isContainer: Bool = if case .container = decoded { true } else { false }
        if !isContainer { received.insert(id, seqNo: seqNo, isRequest: isRequest) }
        received.forget(before: now + (role == .client ? timeOffset : 0) - configuration.pastWindow - 30)
        if seqNo & 1 == 1 { queueAck(id, now: now) }
        if role == .server, !announcedCreation, let topLevel {
            announceCreation(firstMessageID: topLevel.id, now: now)
        }
        dispatch(decoded, id: id, seqNo: seqNo, body: body, now: now, isTopLevel: topLevel != nil, events: &events)
        if isContainer { received.insert(id, seqNo: seqNo, isRequest: false) }
    }

    /// The checks every message passes before it is handled. Returns false when it must be dropped; a server
    /// answers a failed check with `bad_msg_notification`.
    mutating func accept(id: Int64, seqNo: Int32, message: ServiceMessage, now: Double,
                         topLevel: (id: Int64, salt: Int64)?, events: inout [SessionEvent]) -> Bool {
        // Parity: a client's ids are divisible by 4, a server's are 1 or 3 mod 4 (description, msg_id).
        let parityOK = role == .server ? id & 3 == 0 : id & 1 == 1
        guard parityOK else {
            reject(id, seqNo: seqNo, code: 18, ignored: .wrongParity, events: &events)
            return false
        }
        let clock = now + (role == .client ? timeOffset : 0)
        let skew = MessageIDGenerator.time(of: id) - clock
        if skew < -configuration.pastWindow || skew > configuration.futureWindow {
            // A client takes a time-sync notification about its own pending message even from a server whose clock
            // disagrees with ours: it is authenticated by msg_key, and it is how the clock gets corrected.
            let isClockFix: Bool = if case .badMessage(let bad, _, let code) = message {
                role == .client && (code == 16 || code == 17)
                    && (requestByMessageID[bad] != nil || containers[bad] != nil)
            } else { false }
            if !isClockFix {
                reject(id, seqNo: seqNo, code: skew < 0 ? 16 : 17, ignored: .outsideTimeWindow(seconds: skew),
                       events: &events)
                return false
            }
        }
        if received.contains(id) {
            // Acknowledged again: its sender keeps a content message until it is acknowledged, and re-sends what
            // it keeps on a new connection, so an ack lost with the old one must not keep it there
            // (core.telegram.org/mtproto/service_messages_about_messages, "Acknowledgment of Receipt").
            if seqNo & 1 == 1 { queueAck(id, now: now) }
            if role == .server { answerDuplicate(id) }
            events.append(.ignored(messageID: id, .duplicate))
            return false
        }
        if received.isTooOld(id) {
            reject(id, seqNo: seqNo, code: 20, ignored: .tooOld, events: &events)
            return false
        }
        guard role == .server else { return true }

        if let topLevel, !saltSchedule.accepts(topLevel.salt, at: now) {
            queueBadMessage(id, seqNo: seqNo, code: 48, newSalt: saltSchedule.current(at: now) ?? salt)
            return false
        }
        switch message {
            case .ack, .container:
                if seqNo & 1 == 1 {
                    queueBadMessage(id, seqNo: seqNo, code: 34)
                    return false
                }
            case .other:
                if seqNo & 1 == 0 {
                    queueBadMessage(id, seqNo: seqNo, code: 35)
                    return false
                }
            default: break
        }
        // Order: a higher msg_id may not carry a lower seq_no, nor the same odd one (and the reverse).
        if let highest = received.highest {
            if id > highest.id, seqNo < highest.seqNo || (seqNo == highest.seqNo && seqNo & 1 == 1) {
                queueBadMessage(id, seqNo: seqNo, code: 32)
                return false
            }
            if id < highest.id, seqNo > highest.seqNo || (seqNo == highest.seqNo && seqNo & 1 == 1) {
                queueBadMessage(id, seqNo: seqNo, code: 33)
                return false
            }
        }
        return true
    }

    /// Drops a message that failed a check: a server tells the client why; a client reports it.
    mutating func reject(_ id: Int64, seqNo: Int32, code: Int32, ignored reason: IgnoredMessage,
                         events: inout [SessionEvent]) {
        if role == .server { queueBadMessage(id, seqNo: seqNo, code: code) }
        events.append(.ignored(messageID: id, reason))
    }

    mutating func queueAck(_ id: Int64, now: Double) {
        if pendingAcks.isEmpty { oldestPendingAck = now }
        pendingAcks.append(id)
    }

    // MARK: Dispatch

    mutating func dispatch(_ message: ServiceMessage, id: Int64, seqNo: Int32, body: [UInt8], now: Double,
                           isTopLevel: Bool, events: inout [SessionEvent]) {
        switch message {
            case .container(let items, let brokenAt):
                guard isTopLevel else {
                    events.append(.ignored(messageID: id, .undecodable("msg_container inside a container")))
                    return
                }
                for item in items {
                    handle(id: item.messageID, seqNo: item.seqNo, body: item.body, now: now, topLevel: nil,
                           events: &events)
                }
                if let brokenAt {
                    events.append(.ignored(messageID: id, .undecodable("container item: \(brokenAt)")))
                    if role == .server { queueBadMessage(id, seqNo: seqNo, code: 64) }
                }
            case .copy(let inner):
                if !received.contains(inner.messageID) {
                    handle(id: inner.messageID, seqNo: inner.seqNo, body: inner.body, now: now, topLevel: nil,
                           events: &events)
                }
            case .gzip(let inner):
                let unpacked: ServiceMessage
                do {
                    unpacked = try ServiceMessage.decode(inner, maxUnpackedBytes: configuration.maxUnpackedBytes)
                } catch {
                    events.append(.ignored(messageID: id, .undecodable("inside gzip_packed: \(error)")))
                    return
                }
                switch unpacked {
                    case .gzip, .container:
                        events.append(.ignored(messageID: id, .undecodable("gzip_packed holding a container or gzip")))
                    default:
                        dispatch(unpacked, id: id, seqNo: seqNo, body: inner, now: now, isTopLevel: false,
                                 events: &events)
                }
            case .rpcResult(let request, let result):
                if role == .client { handleResult(request, result: result, messageID: id, now: now, events: &events) }
                else { events.append(.ignored(messageID: id, .unmatchedAnswer(requestMessageID: request))) }
            case .ack(let ids): handleAck(ids, now: now, events: &events)
            case let .badMessage(bad, _, code):
                handleBadMessage(bad, code: code, newSalt: nil, notificationID: id, now: now, events: &events)
            case let .badServerSalt(bad, _, code, newSalt):
                handleBadMessage(bad, code: code, newSalt: newSalt, notificationID: id, now: now, events: &events)
            case .stateRequest(let ids):
                let info = ids.map { received.status(of: $0) }
                respond(to: id, body: ServiceWriter.stateInfo(requestMessageID: id, info: info), contentRelated: false)
            case let .stateInfo(request, info):
                guard let asked = stateQueries.removeValue(forKey: request) else {
                    events.append(.ignored(messageID: id, .unmatchedAnswer(requestMessageID: request)))
                    return
                }
                handleStates(Array(zip(asked.ids, info)), now: now, events: &events)
            case let .allInfo(ids, info):
                handleStates(Array(zip(ids, info)), now: now, events: &events)
            case let .detailedInfo(messageID, answer, _, _):
                if let request = requestByMessageID[messageID] {
                    requests[request]?.acknowledged = true
                    requests[request]?.lastProgress = now
                }
                askForAnswer(answer, now: now)
            case let .newDetailedInfo(answer, _, _):
                askForAnswer(answer, now: now)
            case .resendRequest(let ids):
                for wanted in ids {
                    if let kept = retained[wanted] { queue.append(Outgoing(kind: .again(id: wanted, kept))) }
                }
            case .resendAnswerRequest(let ids):
                if role == .server { resendAnswers(ids) }
            case let .futureSalts(request, _, salts):
                mergeSalts(salts, now: now)  // unsolicited salts are still salts
                if let owner = requestByMessageID[request], let record = finish(owner) {
                    ownRequests.remove(owner)
                    // get_future_salts sent as an ordinary call: its answer comes without rpc_result.
                    if record.kind == .rpc { events.append(.result(owner, body[...])) }
                }
            case let .pong(pinged, pingID):
                guard let owner = requestByMessageID[pinged], let record = finish(owner) else {
                    events.append(.ignored(messageID: id, .unmatchedAnswer(requestMessageID: pinged)))
                    return
                }
                // A ping sent as an ordinary call gets its pong as the result.
                events.append(record.kind == .rpc ? .result(owner, body[...]) : .pong(pingID: pingID, requestID: owner))
            case .ping(let pingID):
                respond(to: id, body: ServiceWriter.words(WireID.pong) {
                    $0.appendInt64(id)
                    $0.appendInt64(pingID)
                }, contentRelated: true)
            case let .pingDelayDisconnect(pingID, delay):
                respond(to: id, body: ServiceWriter.words(WireID.pong) {
                    $0.appendInt64(id)
                    $0.appendInt64(pingID)
                }, contentRelated: true)
                if role == .server { events.append(.disconnectDeadline(at: now + Double(max(0, delay)))) }
            case .getFutureSalts(let count):
                guard role == .server else { return }
                let salts = saltSchedule.upcoming(from: now, count: Int(max(1, count)))
                respond(to: id, body: ServiceWriter.futureSalts(requestMessageID: id, now: Int32(clamping: Int64(now)),
                                                                 salts: salts), contentRelated: true)
            case .destroySession(let target):
                guard role == .server else { return }
                if target == sessionID {
                    answerDestroySession(id, sessionID: target, existed: false)
                } else {
                    events.append(.destroySessionRequested(sessionID: target, requestMessageID: id))
                }
            case let .destroySessionResult(target, existed):
                completeDestroySession(target, existed: existed, events: &events)
            case let .newSessionCreated(first, unique, newSalt):
                guard role == .client else { return }
                handleNewSession(first: first, uniqueID: unique, salt: newSalt, now: now, events: &events)
            case .dropAnswer(let target):
                if role == .server { dropAnswer(target, requestMessageID: id) }
            case .dropAnswerResult, .destroyAuthKeyResult:
                // Outside rpc_result these answer the one request of their kind.
                completeServiceRequest(matching: message, events: &events)
            case .httpWait:
                break
            case .destroyAuthKey:
                if role == .server { events.append(.destroyAuthKeyRequested(requestMessageID: id)) }
            case .other:
                if role == .server {
                    _ = inProgress.updateValue((), forKey: id)
                    if inProgress.count > configuration.maxRequestsInProgress {
                        answer(id, error: RPCError(code: 420, message: "FLOOD_WAIT_1"))
                    } else {
                        events.append(.request(messageID: id, body: body))
                    }
                } else {
                    events.append(.update(body, messageID: id))
                }
        }
    }

    // MARK: Client reactions

    mutating func handleResult(_ request: Int64, result: ArraySlice<UInt8>, messageID: Int64, now: Double,
                               events: inout [SessionEvent]) {
        guard let owner = requestByMessageID[request], let record = finish(owner) else {
            events.append(.ignored(messageID: messageID, .unmatchedAnswer(requestMessageID: request)))
            return
        }
        if resendCredit != .max { resendCredit += 2 }
        var payload = result
        if payload.count >= 4, Session.constructor(payload) == WireID.gzipPacked {
            do {
                let packed = try BufferReader.withReader(over: payload) { (reader) throws(TLDecodingError) in
                    _ = try reader.readUInt32()
                    return try reader.readTLBytes()
                }
                payload = try GZip.unpack(packed, maxSize: configuration.maxUnpackedBytes)[...]
            } catch {
                events.append(.failed(owner, .malformedAnswer("gzip_packed result: \(error)")))
                return
            }
        }
        if payload.count >= 4, Session.constructor(payload) == WireID.rpcError {
            do {
                let error = try BufferReader.withReader(over: payload) { (reader) throws(TLDecodingError) in
                    _ = try reader.readUInt32()
                    return RPCError(code: try reader.readInt32(), message: try reader.readTLString())
                }
                events.append(.rpcError(owner, error))
            } catch {
                events.append(.failed(owner, .malformedAnswer("rpc_error: \(error)")))
            }
            return
        }
        switch record.kind {
            case .rpc, .bindTemporaryKey:
                events.append(.result(owner, payload))
            case .ping, .futureSalts, .destroySession, .destroyAuthKey, .dropAnswer:
                guard let answer = try? ServiceMessage.decode(Array(payload), maxUnpackedBytes: configuration.maxUnpackedBytes)
                else {
                    events.append(.failed(owner, .malformedAnswer("answer to a service request")))
                    return
                }
                switch (record.kind, answer) {
                    case (.ping, .pong(_, let pingID)): events.append(.pong(pingID: pingID, requestID: owner))
                    case (.futureSalts, .futureSalts(_, _, let salts)):
                        ownRequests.remove(owner)
                        mergeSalts(salts, now: now)
                    case let (.destroySession, .destroySessionResult(target, existed)):
                        events.append(.sessionDestroyed(sessionID: target, existed: existed))
                    case (.destroyAuthKey, .destroyAuthKeyResult(let ok)): events.append(.authKeyDestroyed(ok: ok))
                    case let (.dropAnswer(cancelled), .dropAnswerResult(outcome)):
                        events.append(.answerDropped(cancelled, outcome))
                    default: events.append(.failed(owner, .malformedAnswer("unexpected answer to a service request")))
                }
        }
    }

    static func constructor(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
    }

    /// destroy_session_ok/_none and the drop/destroy answers sent without `rpc_result`: complete the one pending
    /// request they can belong to.
    mutating func completeServiceRequest(matching message: ServiceMessage, events: inout [SessionEvent]) {
        for (request, record) in requests.sorted(by: { $0.key < $1.key }) where !record.messageIDs.isEmpty {
            switch (record.kind, message) {
                case let (.dropAnswer(cancelled), .dropAnswerResult(outcome)):
                    finish(request)
                    events.append(.answerDropped(cancelled, outcome))
                    return
                case (.destroyAuthKey, .destroyAuthKeyResult(let ok)):
                    finish(request)
                    events.append(.authKeyDestroyed(ok: ok))
                    return
                default: continue
            }
        }
    }

    mutating func completeDestroySession(_ target: Int64, existed: Bool, events: inout [SessionEvent]) {
        guard let request = requests.first(where: { $0.value.kind == .destroySession(target) })?.key else { return }
        finish(request)
        events.append(.sessionDestroyed(sessionID: target, existed: existed))
    }

    mutating func handleAck(_ ids: [Int64], now: Double, events: inout [SessionEvent]) {
        var acknowledged: [RequestID] = []
        for id in ids {
            if let request = requestByMessageID[id], requests[request] != nil {
                if requests[request]?.acknowledged == false { acknowledged.append(request) }
                requests[request]?.acknowledged = true
                requests[request]?.lastProgress = now
            } else if let kept = retained.remove(id), let request = kept.answers, answers[request] == id {
                answers[request] = nil
            }
        }
        if !acknowledged.isEmpty { events.append(.acknowledged(acknowledged)) }
    }

    mutating func handleBadMessage(_ bad: Int64, code: Int32, newSalt: Int64?, notificationID: Int64, now: Double,
                                   events: inout [SessionEvent]) {
        let ids = containers[bad] ?? [bad]
        if role == .client {
            switch code {
                case 16, 17:
                    // The notification's own msg_id carries the server's time.
                    let offset = MessageIDGenerator.time(of: notificationID) - now
                    // Continuing after the last id would still be too new for the server: start over.
                    let backwards = MessageIDGenerator.time(of: messageIDs.last)
                        > now + offset + configuration.futureWindow / 2
                    messageIDs.timeOffset = offset
                    events.append(.clockAdjusted(offset: offset))
                    // msg_ids must keep increasing within a session, so a clock moved back behind ids already used
                    // needs a new session. Safe: a 17 means the server took none of the too-new messages.
                    if backwards { startNewSession(reason: .badMessage(code: code), events: &events) }
                case 32:
                    contentMessagesSent &+= 32
                default: break
            }
            if let newSalt {
                salt = newSalt
                futureSalts.removeAll()
            }
        }
        for id in ids {
            if let query = stateQueries.removeValue(forKey: id) {
                // A lost state query: ask again at the next chance.
                for asked in query.ids {
                    if let request = requestByMessageID[asked] { requests[request]?.lastStateQuery = -.infinity }
                }
                nextStateScan = min(nextStateScan, now)
                continue
            }
            resend(id, reason: .badMessage(code: code), code: code, now: now, events: &events)
        }
    }

    /// Queues a message again under a new msg_id, if it is still the newest send of a pending request (or a kept
    /// content message). Bounded by `maxResends` per request.
    mutating func resend(_ id: Int64, reason: ResendReason, code: Int32, now: Double, events: inout [SessionEvent]) {
        if let request = requestByMessageID[id], var record = requests[request] {
            guard record.messageIDs.last == id, !record.queued else { return }
            if code == 20 {
                finish(request)
                events.append(.failed(request, .deliveryUnknown(messageID: id)))
                return
            }
            record.resends += 1
            record.lastCode = code
            if record.resends > configuration.maxResends {
                finish(request)
                events.append(.failed(request, .rejected(code: code, attempts: record.resends)))
                return
            }
            if code == 64 { record.solo = true }
            record.queued = true
            record.acknowledged = false
            record.unansweredStateQueries = 0
            requests[request] = record
            retained.remove(id)
            queue.append(Outgoing(kind: .request(request)))
            events.append(.resent(request, reason))
        } else if let kept = retained.remove(id), kept.contentRelated {
            queue.append(Outgoing(kind: .message(body: kept.body, contentRelated: true, isResponse: kept.isResponse,
                                                 answers: kept.answers)))
        }
    }

    mutating func handleStates(_ states: [(Int64, UInt8)], now: Double, events: inout [SessionEvent]) {
        var wantAnswers: [Int64] = []
        var acknowledged: [RequestID] = []
        for (id, status) in states {
            guard let request = requestByMessageID[id], let record = requests[request],
                  record.messageIDs.last == id, !record.queued else { continue }
            requests[request]?.unansweredStateQueries = 0
            switch status & 7 {
                case 1:
                    finish(request)
                    events.append(.failed(request, .deliveryUnknown(messageID: id)))
                case 2, 3:
                    resend(id, reason: .notReceived, code: 0, now: now, events: &events)
                case 4:
                    if !record.acknowledged { acknowledged.append(request) }
                    requests[request]?.acknowledged = true
                    requests[request]?.lastProgress = now
                    if status & 64 != 0 { wantAnswers.append(id) }
                default: break
            }
        }
        if !acknowledged.isEmpty { events.append(.acknowledged(acknowledged)) }
        if !wantAnswers.isEmpty {
            queue.append(Outgoing(kind: .message(body: ServiceWriter.ids(WireID.msgResendAnsReq, wantAnswers),
                                                 contentRelated: false, isResponse: false, answers: nil)))
        }
    }

    /// msg_detailed_info named an answer: ack it if we have it, else ask for it with `msg_resend_req`.
    mutating func askForAnswer(_ answer: Int64, now: Double) {
        if received.contains(answer) {
            queueAck(answer, now: now)
        } else {
            queue.append(Outgoing(kind: .message(body: ServiceWriter.ids(WireID.msgResendReq, [answer]),
                                                 contentRelated: false, isResponse: false, answers: nil)))
        }
    }

    mutating func mergeSalts(_ salts: [FutureSalt], now: Double) {
        guard role == .client else { return }
        var known = Dictionary(futureSalts.map { ($0.salt, $0) }, uniquingKeysWith: { a, _ in a })
        for salt in salts.prefix(64) where salt.validUntil > salt.validSince { known[salt.salt] = salt }
        futureSalts = known.values.sorted { ($0.validSince, $0.validUntil) < ($1.validSince, $1.validUntil) }
        chooseSalt(now: now)
    }

    /// A fresh session_id, seq_no and msg_id sequence; every pending request goes out again in it.
    mutating func startNewSession(reason: ResendReason, events: inout [SessionEvent]) {
        sessionID = random.int64()
        messageIDs = MessageIDGenerator(role: role, timeOffset: messageIDs.timeOffset)
        contentMessagesSent = 0
        received = ReceivedIDs(capacity: configuration.maxRememberedIDs)
        pendingAcks.removeAll()
        oldestPendingAck = nil
        retained.removeAll()
        stateQueries.removeAll()
        containers.removeAll()
        containerOrder.removeAll()
        queue.removeAll { if case .request = $0.kind { false } else { true } }
        events.append(.sessionChanged(sessionID: sessionID))
        for request in requests.keys { requests[request]?.reuseID = false }
        for (request, record) in requests.sorted(by: { $0.key < $1.key }) where !record.queued {
            requests[request]?.queued = true
            requests[request]?.acknowledged = false
            queue.append(Outgoing(kind: .request(request)))
            events.append(.resent(request, reason))
        }
    }

    mutating func handleNewSession(first: Int64, uniqueID: Int64, salt newSalt: Int64, now: Double,
                                   events: inout [SessionEvent]) {
        salt = newSalt
        for (request, record) in requests.sorted(by: { $0.key < $1.key })
        where !record.queued && record.topLevelID != 0 && record.topLevelID < first {
            guard let last = record.messageIDs.last else { continue }
            resend(last, reason: .sessionRecreated, code: 0, now: now, events: &events)
            _ = request
        }
        events.append(.sessionCreated(firstMessageID: first, uniqueID: uniqueID))
    }
}
