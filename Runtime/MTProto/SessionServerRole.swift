// What only a server session does: answer requests and push updates, answer the service messages a server answers,
// keep answers for resends and drops, tell clients their session was created, and the fault hooks a test server
// uses (salt rotation, bad_msg_notification codes the caller injects, a forgotten session).
import MTProtoCrypto
import TLRuntime

extension Session {
    /// Answers a request reported by `.request` with its serialized result. Returns false when the request is not
    /// pending (already answered, or dropped by `rpc_drop_answer`).
    @discardableResult
    public mutating func answer(_ requestMessageID: Int64, result: [UInt8]) -> Bool {
        guard inProgress.removeValue(forKey: requestMessageID) != nil else { return false }
        respond(to: requestMessageID,
                body: ServiceWriter.rpcResultBody(requestMessageID: requestMessageID, result: packed(result)),
                contentRelated: true)
        return true
    }

    /// Answers a request with `rpc_error`.
    @discardableResult
    public mutating func answer(_ requestMessageID: Int64, error: RPCError) -> Bool {
        answer(requestMessageID, result: ServiceWriter.rpcError(error))
    }

    /// Sends a content message that answers nothing: an update (`Updates`), as serialized.
    public mutating func push(_ update: [UInt8]) {
        queue.append(Outgoing(kind: .message(body: packed(update), contentRelated: true, isResponse: false,
                                             answers: nil)))
    }

    /// Answers `.destroySessionRequested` once the driver has destroyed (or not found) the session.
    public mutating func answerDestroySession(_ requestMessageID: Int64, sessionID target: Int64, existed: Bool) {
        respond(to: requestMessageID,
                body: ServiceWriter.words(existed ? WireID.destroySessionOk : WireID.destroySessionNone) {
                    $0.appendInt64(target)
                }, contentRelated: true)
    }

    /// Answers `.destroyAuthKeyRequested` (`destroy_auth_key_ok` when the key was forgotten).
    public mutating func answerDestroyAuthKey(_ requestMessageID: Int64, ok: Bool) {
        respond(to: requestMessageID,
                body: ServiceWriter.words(ok ? WireID.destroyAuthKeyOk : WireID.destroyAuthKeyFail) { _ in },
                contentRelated: true)
    }

    /// Replaces the salts this server accepts (rotation; a fault test may rotate early).
    public mutating func rotateSalts(_ schedule: SaltSchedule) { saltSchedule = schedule }

    /// Fault injection for a test server, whose caller keeps the codes (the session keeps no such state): while
    /// `refusals` is not empty, a frame whose message passes every check is answered with the first code's
    /// `bad_msg_notification` (48: `bad_server_salt`) instead of being handled, and the code is used up. A message a
    /// check drops anyway leaves the codes as they are. With no codes this is `receive(_:now:)`.
    package mutating func receive(_ message: consuming DecryptedMessage, now: Double,
                                  refusing refusals: inout [Int32]) throws(SessionError) -> [SessionEvent] {
        guard let code = refusals.first else { return try receive(message, now: now) }
        var events = try takeEvents(before: message)
        let (id, seqNo, salt) = (message.messageID, message.seqNo, message.saltValue)
        let body = message.messageData
        let decoded = (try? ServiceMessage.decode(body, maxUnpackedBytes: configuration.maxUnpackedBytes)) ?? .other
        if accept(id: id, seqNo: seqNo, message: decoded, now: now, topLevel: (id, salt), events: &events) {
            refusals.removeFirst()
            queueBadMessage(id, seqNo: seqNo, code: code,
                            newSalt: code == 48 ? saltSchedule.current(at: now) ?? salt : nil)
        }
        return forDriver(events)
    }

    /// Fault injection: forget everything about this session, as a restarted server would; the next message gets
    /// `new_session_created`.
    public mutating func forgetState() {
        received = ReceivedIDs(capacity: configuration.maxRememberedIDs)
        retained.removeAll()
        answers.removeAll()
        inProgress.removeAll()
        queue.removeAll()
        pendingAcks.removeAll()
        oldestPendingAck = nil
        containers.removeAll()
        containerOrder.removeAll()
        announcedCreation = false
        uniqueID = random.int64()
    }

    /// Requests reported by `.request` and not answered yet.
    public var requestsInProgress: Int { inProgress.count }

    // MARK: Internals

    /// Queues an answer to message `id`; an answered message needs no separate ack. A content-related answer is
    /// kept for `msg_resend_ans_req` and marks `id` answered in `msgs_state_info`, whatever the request was.
    mutating func respond(to id: Int64, body: [UInt8], contentRelated: Bool) {
        respond(to: id, body: MessageBody(body), contentRelated: contentRelated)
    }

    mutating func respond(to id: Int64, body: MessageBody, contentRelated: Bool) {
        if let index = pendingAcks.lastIndex(of: id) {
            pendingAcks.remove(at: index)
            if pendingAcks.isEmpty { oldestPendingAck = nil }
        }
        if contentRelated { received.markAnswered(id) }
        queue.append(Outgoing(kind: .message(body: body, contentRelated: contentRelated, isResponse: role == .server,
                                             answers: contentRelated ? id : nil)))
    }

    mutating func queueBadMessage(_ id: Int64, seqNo: Int32, code: Int32, newSalt: Int64? = nil) {
        respond(to: id, body: ServiceWriter.badMessage(id, seqNo: seqNo, code: code, newSalt: newSalt),
                contentRelated: false)
    }

    mutating func announceCreation(firstMessageID: Int64, now: Double) {
        announcedCreation = true
        let current = saltSchedule.current(at: now) ?? salt
        queue.append(Outgoing(kind: .message(body: ServiceWriter.words(WireID.newSessionCreated) {
            $0.appendInt64(firstMessageID)
            $0.appendInt64(uniqueID)
            $0.appendInt64(current)
        }, contentRelated: true, isResponse: false, answers: nil)))
    }

    /// The session is now carried by another connection than before: what it sent on the last one and the client
    /// has not acknowledged may have died with it. Updates and other messages that answer nothing go out again on
    /// this one, oldest first, under their own msg_ids and seq_nos, which lets the client drop those it did receive
    /// (core.telegram.org/mtproto/service_messages_about_messages: a sender keeps a content message until it is
    /// acknowledged and re-sends it under the same msg_id). Answers wait for the client to re-send the requests it
    /// has no answer to (`answerDuplicate`): sending every unacknowledged answer again would fill a connection that
    /// is cut every few kilobytes before the client's acks could get out, so nothing would ever be acknowledged.
    /// What is kept is bounded in bytes, count and age (`SessionConfiguration.maxRetainedBytes`,
    /// `maxRetainedMessages`, `retainedMessageLifetime`).
    public mutating func redeliverUnacknowledged() {
        for id in retained.ids {
            guard let kept = retained[id], kept.answers == nil else { continue }
            queue.append(Outgoing(kind: .again(id: id, kept)))
        }
    }

    /// A request seen again under the same msg_id: send the kept answer again under its own msg_id if it is small,
    /// else tell the client where it is (`msg_detailed_info`, service_messages_about_messages); nothing while it is
    /// being handled (the answer follows when it is made).
    mutating func answerDuplicate(_ id: Int64) {
        guard let answerID = answers[id], let kept = retained[answerID] else { return }
        if kept.body.count <= 1024 {
            queue.append(Outgoing(kind: .again(id: answerID, kept)))
        } else {
            queue.append(Outgoing(kind: .message(body: ServiceWriter.words(WireID.msgDetailedInfo) {
                $0.appendInt64(id)
                $0.appendInt64(answerID)
                $0.appendInt32(Int32(clamping: kept.body.count))
                $0.appendInt32(0)
            }, contentRelated: false, isResponse: true, answers: nil)))
        }
    }

    /// `msg_resend_ans_req`: the kept answers to these requests, again under new msg_ids.
    mutating func resendAnswers(_ ids: [Int64]) {
        for id in ids {
            guard let answerID = answers[id], let kept = retained.remove(answerID) else { continue }
            queue.append(Outgoing(kind: .message(body: kept.body, contentRelated: true, isResponse: true, answers: id)))
        }
    }

    /// `rpc_drop_answer` (service_messages, "Cancellation of an RPC Query").
    mutating func dropAnswer(_ target: Int64, requestMessageID: Int64) {
        let outcome: DropAnswerOutcome
        let queuedBefore = queue.count
        queue.removeAll {
            if case .message(_, _, _, let answers) = $0.kind { return answers == target }
            return false
        }
        if inProgress.removeValue(forKey: target) != nil || queue.count < queuedBefore {
            outcome = .droppedRunning
        } else if let answerID = answers.removeValue(forKey: target), let kept = retained.remove(answerID) {
            outcome = .dropped(messageID: answerID, seqNo: kept.seqNo, bytes: Int32(clamping: kept.body.count))
        } else {
            outcome = .unknown
        }
        respond(to: requestMessageID,
                body: ServiceWriter.rpcResultBody(requestMessageID: requestMessageID,
                                                  result: ServiceWriter.dropAnswerResult(outcome)),
                contentRelated: true)
    }
}
