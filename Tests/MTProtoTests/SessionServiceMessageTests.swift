// One test per row of the service-message table on `Session`, plus the session's checks on what it receives and how
// it packs what it sends. Server messages are hand-made where a real server would never send them on its own.
import MTProtoApi
import MTProtoCrypto
import TLRuntime
import Testing
@testable import MTProto

/// A client session alone, fed hand-made server messages.
struct ClientUnderTest {
    var session: Session
    var now: Double = 1_700_000_000
    var serverStep: Int64 = 0

    /// A client that already knows the server's salts (sent unsolicited), so no get_future_salts mixes in.
    init(configuration: SessionConfiguration = SessionConfiguration()) {
        session = Session(role: .client, authKey: SessionPair.authKey, salt: 77, configuration: configuration,
                          random: SeededRandom(seed: 5))
        let start = Int32(now) - 60
        let salts = (0..<4).map { FutureSalt(validSince: start + Int32($0) * 3600, validUntil: start + Int32($0 + 1) * 3600 + 1800, salt: 77 + Int64($0)) }
        _ = try? feed(ServiceWriter.futureSalts(requestMessageID: 0, now: Int32(now), salts: salts), seqNo: 0)
    }

    /// The client's next frames, opened.
    mutating func sent() throws -> [(id: Int64, seqNo: Int32, salt: Int64, body: [UInt8])] {
        try session.outgoing(now: now).map {
            let o = try open($0.bytes, from: .client)
            return (o.id, o.seqNo, o.salt, o.body)
        }
    }

    /// Feeds one server message (content-related unless `seqNo` says otherwise).
    mutating func feed(_ body: [UInt8], seqNo: Int32 = 1, at time: Double? = nil) throws -> [SessionEvent] {
        serverStep += 1
        let id = serverID(at: time ?? now, step: serverStep)
        return try session.receive(frame: seal(body, id: id, seqNo: seqNo, salt: 1, session: session.sessionID,
                                               from: .server), now: now)
    }
}

/// The messages inside a body: a container's items, or the body itself.
func items(_ body: [UInt8]) -> [(id: Int64, seqNo: Int32, body: [UInt8])] {
    if case .container(let inner, _)? = try? ServiceMessage.decode(body, maxUnpackedBytes: 1 << 20) {
        return inner.map { ($0.messageID, $0.seqNo, $0.body) }
    }
    return []
}

func constructorOf(_ body: [UInt8]) -> UInt32 { body.count >= 4 ? Session.constructor(body[...]) : 0 }

/// Every message a client frame list carries, containers opened: (msg_id, seq_no, body).
func flatten(_ frames: [(id: Int64, seqNo: Int32, salt: Int64, body: [UInt8])]) -> [(id: Int64, seqNo: Int32, body: [UInt8])] {
    frames.flatMap { frame in
        constructorOf(frame.body) == WireID.msgContainer ? items(frame.body) : [(frame.id, frame.seqNo, frame.body)]
    }
}

func words(_ id: UInt32, _ build: (Buffer) -> Void = { _ in }) -> [UInt8] { ServiceWriter.words(id, build) }

@Suite struct ServiceMessageTableTests {
    /// Sends `count` echo requests and returns their ids and the msg_ids they went out under.
    func sendRequests(_ client: inout ClientUnderTest, _ count: Int) throws -> ([RequestID], [Int64]) {
        let ids = try (0..<count).map { try client.session.send(Echo.request(UInt64($0))) }
        let messages = flatten(try client.sent()).filter { constructorOf($0.body) == 0xc0ff_ee01 }
        return (ids, messages.map(\.id))
    }

    @Test func msgsAckMarksRequestsAcknowledgedAndDelaysStateQueries() throws {
        var acked = ClientUnderTest(), quiet = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&acked, 2)
        _ = try sendRequests(&quiet, 2)
        let events = try acked.feed(ServiceWriter.ids(WireID.msgsAck, messageIDs), seqNo: 0)
        guard case .acknowledged(let done)? = events.first else { Issue.record("no ack event: \(events)"); return }
        #expect(Set(done) == Set(ids))
        // Six seconds on: the unacknowledged session asks msgs_state_req, the acknowledged one waits for answers.
        acked.now += 6
        quiet.now += 6
        #expect(!flatten(try acked.sent()).contains { constructorOf($0.body) == WireID.msgsStateReq })
        #expect(flatten(try quiet.sent()).contains { constructorOf($0.body) == WireID.msgsStateReq })
    }

    @Test(arguments: [16, 17] as [Int32])
    func timeSyncNotificationsFixTheClockAndResend(code: Int32) throws {
        var client = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&client, 1)
        // The server's clock is 100 s ahead (16) or 100 s behind (17): its notification is outside our window, yet
        // it is taken because it is about our own message.
        let skew: Double = code == 16 ? 100 : -100
        let sessionBefore = client.session.sessionID
        let events = try client.feed(ServiceWriter.badMessage(messageIDs[0], seqNo: 1, code: code, newSalt: nil),
                                     seqNo: 0, at: client.now + skew)
        #expect(events.contains { if case .clockAdjusted(let o) = $0 { abs(o - skew) < 1 } else { false } })
        #expect(events.resends.map(\.0) == ids)
        let session = client.session.sessionID
        let frames = try client.sent()
        let resent = flatten(frames).filter { constructorOf($0.body) == 0xc0ff_ee01 }
        #expect(resent.count == 1)
        #expect(abs(MessageIDGenerator.time(of: resent[0].id) - (client.now + skew)) < 1)
        // Ids cannot go back within a session: a clock moved back starts a new one.
        #expect(events.contains { if case .sessionChanged = $0 { true } else { false } } == (code == 17))
        #expect((session != sessionBefore) == (code == 17))
    }

    @Test(arguments: [18, 19, 33, 34, 35] as [Int32])
    func malformedIDNotificationsResendUnderANewID(code: Int32) throws {
        var client = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&client, 1)
        let events = try client.feed(ServiceWriter.badMessage(messageIDs[0], seqNo: 1, code: code, newSalt: nil), seqNo: 0)
        #expect(events.resends.map(\.0) == ids && events.resends.map(\.1) == [.badMessage(code: code)])
        let resent = flatten(try client.sent()).filter { constructorOf($0.body) == 0xc0ff_ee01 }
        #expect(resent.count == 1 && resent[0].id > messageIDs[0] && resent[0].seqNo & 1 == 1)
    }

    @Test func code20FailsTheRequestInsteadOfRisking() throws {
        var client = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&client, 1)
        let events = try client.feed(ServiceWriter.badMessage(messageIDs[0], seqNo: 1, code: 20, newSalt: nil), seqNo: 0)
        #expect(events.failures.map(\.0) == ids)
        #expect(events.failures.first?.1 == .deliveryUnknown(messageID: messageIDs[0]))
        #expect(flatten(try client.sent()).allSatisfy { constructorOf($0.body) != 0xc0ff_ee01 })
    }

    @Test func code32MovesSeqNoSixtyFourAhead() throws {
        var client = ClientUnderTest()
        let before = flatten(try client.sent())
        _ = before
        let id = try client.session.send(Echo.request(1))
        let first = flatten(try client.sent()).first { constructorOf($0.body) == 0xc0ff_ee01 }
        let firstID = try #require(first)
        _ = try client.feed(ServiceWriter.badMessage(firstID.id, seqNo: firstID.seqNo, code: 32, newSalt: nil), seqNo: 0)
        let again = try #require(flatten(try client.sent()).first { constructorOf($0.body) == 0xc0ff_ee01 })
        #expect(again.seqNo >= firstID.seqNo + 64 && again.seqNo & 1 == 1)
        _ = id
    }

    @Test func badServerSaltAdoptsTheSaltAndRefetchesFutureSalts() throws {
        var client = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&client, 1)
        let events = try client.feed(ServiceWriter.badMessage(messageIDs[0], seqNo: 1, code: 48, newSalt: 0x5a17),
                                     seqNo: 0)
        #expect(events.resends.map(\.0) == ids)
        let frames = try client.sent()
        #expect(frames.allSatisfy { $0.salt == 0x5a17 })
        #expect(flatten(frames).contains { constructorOf($0.body) == WireID.getFutureSalts },
                "future salts are asked for again, not only learned from the error")
        #expect(client.session.futureSalts.isEmpty, "the salts that failed are forgotten")
    }

    @Test func invalidContainerResendsEachItemAlone() throws {
        var client = ClientUnderTest()
        _ = try client.session.send(Echo.request(1))
        _ = try client.session.send(Echo.request(2))
        let frames = try client.sent()
        let container = try #require(frames.first { constructorOf($0.body) == WireID.msgContainer })
        _ = try client.feed(ServiceWriter.badMessage(container.id, seqNo: 0, code: 64, newSalt: nil), seqNo: 0)
        let again = try client.sent()
        let alone = again.filter { constructorOf($0.body) == 0xc0ff_ee01 }
        #expect(alone.count == 2, "each request in its own frame, no container")
    }

    @Test func resendsAreBounded() throws {
        var configuration = SessionConfiguration()
        configuration.maxResends = 3
        var client = ClientUnderTest(configuration: configuration)
        let id = try client.session.send(Echo.request(1))
        var failure: RequestFailure?
        for _ in 0..<10 {
            guard let sent = flatten(try client.sent()).first(where: { constructorOf($0.body) == 0xc0ff_ee01 }) else { break }
            let events = try client.feed(ServiceWriter.badMessage(sent.id, seqNo: sent.seqNo, code: 48, newSalt: 9),
                                         seqNo: 0)
            if let f = events.failures.first { failure = f.1; #expect(f.0 == id) }
        }
        #expect(failure == .rejected(code: 48, attempts: 4))
        #expect(client.session.pendingRequestCount <= 1, "only a get_future_salts may remain")
    }

    @Test func newSessionCreatedResendsWhatTheServerCannotHaveAndReportsIt() throws {
        var client = ClientUnderTest()
        let (early, _) = try sendRequests(&client, 1)
        client.now += 1
        let late = try client.session.send(Echo.request(9))
        let lateFrames = try client.sent()
        let first = try #require(lateFrames.map(\.id).min())
        let events = try client.feed(words(WireID.newSessionCreated) {
            $0.appendInt64(first)
            $0.appendInt64(0x1234)
            $0.appendInt64(0x5a1)
        })
        #expect(events.resends.map(\.0) == early && events.resends.map(\.1) == [.sessionRecreated])
        #expect(!events.resends.map(\.0).contains(late))
        #expect(events.contains { if case .sessionCreated(first, 0x1234) = $0 { true } else { false } })
        #expect(client.session.salt == 0x5a1)
    }

    @Test func bothRolesAnswerMsgsStateReqFromWhatTheyReceived() throws {
        var configuration = SessionConfiguration()
        configuration.maxRememberedIDs = 16
        var pair = SessionPair(seed: 21, configuration: configuration)
        pair.autoAnswer = false
        let answeredRequest = try pair.client.send(Echo.request(1))
        _ = try pair.client.send(Echo.request(2))
        try pair.step()
        let requests = pair.serverRequests
        #expect(requests.count == 2)
        pair.server.answer(requests[0].0, result: Echo.answer(to: requests[0].1) ?? [])
        // Twenty more requests push the first ids out of a 16-id memory.
        for n in 0..<20 as Range<UInt64> { _ = try pair.client.send(Echo.request(100 + n)) }
        try pair.step()
        #expect(pair.takeClientEvents().results.map(\.0) == [answeredRequest])
        let forgotten = requests[0].0
        let pending = requests[1].0
        let newest = try #require(pair.serverRequests.last?.0)
        let between = newest - 1  // never a client id, inside the remembered range
        let future = newest + (1 << 40)  // above everything, the state query itself included
        let status = { (ids: [Int64]) -> [UInt8] in
            ids.map { pair.server.received.status(of: $0) }
        }
        #expect(status([forgotten, pending, newest, between, future]) == [1, 1, 4 + 32, 2, 3])
        // Through the wire: the answer to msgs_state_req carries exactly those bytes.
        var server = pair.server
        let query = try seal(ServiceWriter.ids(WireID.msgsStateReq, [newest, between, future]),
                             id: MessageIDGenerator.rawID(at: pair.now) & ~3 + 400_000, seqNo: 999, salt: pair.client.salt,
                             session: pair.client.sessionID, from: .client)
        _ = try server.receive(frame: query, now: pair.now)
        let answers = try server.outgoing(now: pair.now).flatMap { frame -> [(id: Int64, seqNo: Int32, body: [UInt8])] in
            let o = try open(frame.bytes, from: .server)
            return constructorOf(o.body) == WireID.msgContainer ? items(o.body) : [(o.id, o.seqNo, o.body)]
        }
        let info = try #require(answers.first { constructorOf($0.body) == WireID.msgsStateInfo })
        guard case .stateInfo(_, let bytes)? = try? ServiceMessage.decode(info.body, maxUnpackedBytes: 1024) else {
            Issue.record("not msgs_state_info")
            return
        }
        #expect(bytes == [4 + 32, 2, 3])
        #expect(info.seqNo & 1 == 0, "msgs_state_info needs no ack")
        // A client answers about the server's messages the same way.
        var client = ClientUnderTest()
        _ = try client.feed(Echo.request(5))
        let serverMessage = serverID(at: client.now, step: 2)  // step 1 was the salts, sent not content-related
        _ = try client.feed(words(WireID.msgsStateReq) { $0.appendVectorHeader(count: 2, boxed: true); $0.appendInt64(serverMessage); $0.appendInt64(serverMessage + 4 * 1000) })
        let reply = flatten(try client.sent()).first { constructorOf($0.body) == WireID.msgsStateInfo }
        guard let reply, case .stateInfo(_, let clientBytes)? = try? ServiceMessage.decode(reply.body, maxUnpackedBytes: 1024)
        else { Issue.record("client did not answer msgs_state_req"); return }
        #expect(clientBytes == [4, 3])
    }

    /// Asks the client's state query and returns (query msg_id, the ids it asked about).
    func stateQuery(_ client: inout ClientUnderTest) throws -> (Int64, [Int64]) {
        client.now += 6
        let query = try #require(flatten(try client.sent()).first { constructorOf($0.body) == WireID.msgsStateReq })
        guard case .stateRequest(let ids)? = try? ServiceMessage.decode(query.body, maxUnpackedBytes: 1 << 16) else {
            throw MissingVector(description: "no msgs_state_req")
        }
        return (query.id, ids)
    }

    @Test(arguments: [false, true])
    func statesDecideResendAnswerRequestOrFailure(allInfo: Bool) throws {
        var client = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&client, 4)
        let (query, asked) = try stateQuery(&client)
        #expect(Set(asked) == Set(messageIDs))
        let statusByID: [Int64: UInt8] = [messageIDs[0]: 2, messageIDs[1]: 3, messageIDs[2]: 4 + 32 + 64, messageIDs[3]: 1]
        let events = try client.feed(allInfo
            ? words(WireID.msgsAllInfo) {
                $0.appendVector(asked, boxed: true)
                $0.appendTLBytes(asked.map { statusByID[$0] ?? 0 })
            }
            : ServiceWriter.stateInfo(requestMessageID: query, info: asked.map { statusByID[$0] ?? 0 }), seqNo: 0)
        #expect(Set(events.resends.map(\.0)) == [ids[0], ids[1]])
        #expect(events.failures.map(\.0) == [ids[3]])
        #expect(events.contains { if case .acknowledged(let a) = $0 { a == [ids[2]] } else { false } })
        let next = flatten(try client.sent())
        let resendAnswers = try #require(next.first { constructorOf($0.body) == WireID.msgResendAnsReq })
        #expect(resendAnswers.body == ServiceWriter.ids(WireID.msgResendAnsReq, [messageIDs[2]]))
        #expect(next.filter { constructorOf($0.body) == 0xc0ff_ee01 }.count == 2)
    }

    @Test func detailedInfoAsksForAMissingAnswerAndAcksAKnownOne() throws {
        var client = ClientUnderTest()
        let (_, messageIDs) = try sendRequests(&client, 1)
        let missing = serverID(at: client.now, step: 500)
        _ = try client.feed(words(WireID.msgDetailedInfo) {
            $0.appendInt64(messageIDs[0]); $0.appendInt64(missing); $0.appendInt32(5000); $0.appendInt32(0)
        }, seqNo: 0)
        let asked = flatten(try client.sent()).first { constructorOf($0.body) == WireID.msgResendReq }
        #expect(asked?.body == ServiceWriter.ids(WireID.msgResendReq, [missing]))
        // An answer we already hold is acknowledged instead.
        _ = try client.feed(Echo.request(1))  // any content message, received as server step N
        let held = serverID(at: client.now, step: client.serverStep)
        _ = try client.feed(words(WireID.msgNewDetailedInfo) { $0.appendInt64(held); $0.appendInt32(20); $0.appendInt32(0) },
                            seqNo: 0)
        client.now += 1.1  // acks alone wait for the ack delay
        let next = flatten(try client.sent())
        #expect(!next.contains { constructorOf($0.body) == WireID.msgResendReq })
        let ack = try #require(next.first { constructorOf($0.body) == WireID.msgsAck })
        guard case .ack(let acked)? = try? ServiceMessage.decode(ack.body, maxUnpackedBytes: 1024) else { return }
        #expect(acked.contains(held))
    }

    /// MtProtoKit mis-parsed msg_resend_req; here the named messages go out again, byte for byte the same message.
    @Test func msgResendReqSendsTheSameMessagesAgain() throws {
        var client = ClientUnderTest()
        let (_, messageIDs) = try sendRequests(&client, 3)
        _ = try client.feed(ServiceWriter.ids(WireID.msgResendReq, [messageIDs[2], 12345 * 4, messageIDs[0]]))
        let again = flatten(try client.sent()).filter { constructorOf($0.body) == 0xc0ff_ee01 }
        #expect(Set(again.map(\.id)) == [messageIDs[0], messageIDs[2]])
        for message in again {
            let index = try #require(messageIDs.firstIndex(of: message.id))
            #expect(message.body == Echo.request(UInt64(index)))
        }
    }

    @Test func serverResendsKeptAnswersOnMsgResendAnsReq() throws {
        var pair = SessionPair(seed: 31)
        let id = try pair.client.send(Echo.request(42))
        pair.post(pair.client.outgoing(now: pair.now), toServer: true)
        try pair.deliver(toServer: true)
        _ = pair.server.outgoing(now: pair.now)  // the answer is lost
        pair.now += 6
        // The client asks, learns the answer exists (status +64), asks for it again and gets it.
        #expect(try pair.run(limit: 100) { $0.clientEvents.results.map(\.0) == [id] })
        #expect(Echo.value(ofAnswer: pair.clientEvents.results[0].1) == 42)
        #expect(pair.executions == 1, "answered from the kept answer, not run twice")
    }

    @Test func rpcResultsMatchErrorsParseAndGzipInflates() throws {
        var client = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&client, 3)
        var events = try client.feed(ServiceWriter.rpcResult(requestMessageID: messageIDs[0],
                                                              result: ServiceWriter.rpcError(RPCError(code: 420, message: "FLOOD_WAIT_17"))))
        guard case .rpcError(ids[0], let error)? = events.first else { Issue.record("\(events)"); return }
        #expect(error.kind == .floodWait(seconds: 17) && error.code == 420)
        let big = Echo.answer(to: Echo.request(7)).map { $0 + [UInt8](repeating: 0, count: 4000) } ?? []
        events = try client.feed(ServiceWriter.rpcResult(requestMessageID: messageIDs[1], result: GZip.packedObject(big)))
        #expect(events.results.map(\.1) == [big] && events.results.map(\.0) == [ids[1]])
        // An answer to nothing we sent is reported, not fatal; the session goes on.
        events = try client.feed(ServiceWriter.rpcResult(requestMessageID: 4 * 999, result: [1, 2, 3, 4]))
        #expect(events.ignored.map(\.1) == [.unmatchedAnswer(requestMessageID: 4 * 999)])
        events = try client.feed(ServiceWriter.rpcResult(requestMessageID: messageIDs[2], result: Echo.answer(to: Echo.request(3)) ?? []))
        #expect(events.results.map(\.0) == [ids[2]])
        // A second answer to the same request is not delivered twice.
        events = try client.feed(ServiceWriter.rpcResult(requestMessageID: messageIDs[2], result: Echo.answer(to: Echo.request(3)) ?? []))
        #expect(events.results.isEmpty && events.ignored.count == 1)
    }

    @Test func rpcDropAnswerHasThreeOutcomes() throws {
        var pair = SessionPair(seed: 41)
        pair.autoAnswer = false
        let running = try pair.client.send(Echo.request(1))
        let answeredLost = try pair.client.send(Echo.request(2))
        try pair.step()
        let (runningID, _) = pair.serverRequests[0]
        let (lostID, lostBody) = pair.serverRequests[1]
        pair.server.answer(lostID, result: Echo.answer(to: lostBody) ?? [])
        _ = pair.server.outgoing(now: pair.now)  // that answer is lost on the way
        let neverSent = try pair.client.send(Echo.request(3))
        _ = pair.client.outgoing(now: pair.now)  // …and this request never arrives
        let cancelled = [running, answeredLost, neverSent].map { pair.client.cancel($0) }
        #expect(cancelled == [true, true, true])
        let twice = pair.client.cancel(running)
        #expect(!twice, "cancelling twice is a no-op")
        #expect(try pair.run(limit: 50) { $0.clientEvents.contains { if case .answerDropped = $0 { true } else { false } } })
        try pair.step()
        var outcomes: [RequestID: DropAnswerOutcome] = [:]
        for case .answerDropped(let id, let outcome) in pair.clientEvents { outcomes[id] = outcome }
        #expect(outcomes[running] == .droppedRunning)
        if case .dropped = outcomes[answeredLost] {} else { Issue.record("\(String(describing: outcomes[answeredLost]))") }
        #expect(outcomes[neverSent] == .unknown)
        let late = pair.server.answer(runningID, result: [1, 2, 3, 4])
        #expect(!late, "a dropped request takes no answer")
        #expect(pair.clientEvents.results.isEmpty)
    }

    @Test func futureSaltsAreFetchedAheadAndUsed() throws {
        var pair = SessionPair(seed: 51)
        _ = try pair.client.send(Echo.request(1))
        #expect(try pair.run { $0.clientEvents.results.count == 1 })
        let salts = pair.client.futureSalts
        #expect(salts.count >= 2 && salts == pair.server.saltSchedule.upcoming(from: pair.now, count: 32))
        // Near the end of the known salts a new get_future_salts goes out with the next request, and the salt in
        // use follows the server's schedule without a single bad_server_salt.
        pair.now = Double(salts.last?.validUntil ?? 0) - 500
        _ = try pair.client.send(Echo.request(2))
        let frames = try pair.client.outgoing(now: pair.now).map { try open($0.bytes, from: .client) }
        #expect(frames.allSatisfy { pair.server.saltSchedule.accepts($0.salt, at: pair.now) })
        #expect(flatten(frames.map { ($0.id, $0.seqNo, $0.salt, $0.body) }).contains {
            constructorOf($0.body) == WireID.getFutureSalts
        })
    }

    @Test func pingsArePongedByBothRolesAndPingDelayDisconnectSetsADeadline() throws {
        var pair = SessionPair(seed: 61)
        let ping = try pair.client.ping(id: 0x77)
        _ = try pair.client.ping(id: 0x78, disconnectDelay: 75)
        try pair.step()
        #expect(pair.clientEvents.contains { if case .pong(0x77, ping) = $0 { true } else { false } })
        #expect(pair.serverEvents.contains { if case .disconnectDeadline(let at) = $0 { at == pair.now - 0.05 + 75 } else { false } })
        var client = ClientUnderTest()
        _ = try client.feed(words(WireID.ping) { $0.appendInt64(5) })
        let pong = try #require(flatten(try client.sent()).first { constructorOf($0.body) == WireID.pong })
        guard case .pong(_, 5)? = try? ServiceMessage.decode(pong.body, maxUnpackedBytes: 64) else {
            Issue.record("no pong"); return
        }
    }

    @Test func destroySessionAndDestroyAuthKey() throws {
        var pair = SessionPair(seed: 71)
        let other = try pair.client.destroySession(0x07e4)
        let own = try pair.client.destroySession(pair.client.sessionID)
        let key = try pair.client.destroyAuthKey()
        try pair.step()
        let requested = pair.serverEvents.compactMap { event -> (Int64, Int64)? in
            if case .destroySessionRequested(let s, let m) = event { (s, m) } else { nil }
        }
        #expect(requested.map(\.0) == [0x07e4])
        let destroyKey = pair.serverEvents.compactMap { if case .destroyAuthKeyRequested(let m) = $0 { m } else { nil } }
        #expect(destroyKey.count == 1)
        if let (session, message) = requested.first { pair.server.answerDestroySession(message, sessionID: session, existed: true) }
        if let message = destroyKey.first { pair.server.answerDestroyAuthKey(message, ok: true) }
        try pair.step()
        #expect(pair.clientEvents.contains { if case .sessionDestroyed(0x07e4, true) = $0 { true } else { false } })
        #expect(pair.clientEvents.contains { if case .sessionDestroyed(let s, false) = $0 { s == pair.client.sessionID } else { false } })
        #expect(pair.clientEvents.contains { if case .authKeyDestroyed(true) = $0 { true } else { false } })
        #expect(pair.client.pendingRequestCount <= 1)
        _ = (other, own, key)
    }

    @Test func httpWaitIsAcceptedAndIgnored() throws {
        var pair = SessionPair(seed: 81)
        let wait = try seal(words(WireID.httpWait) { $0.appendInt32(0); $0.appendInt32(0); $0.appendInt32(25_000) },
                            id: MessageIDGenerator.rawID(at: pair.now) & ~3, seqNo: 1, salt: pair.client.salt,
                            session: pair.client.sessionID, from: .client)
        let events = try pair.server.receive(frame: wait, now: pair.now)
        #expect(events.isEmpty)
        #expect(pair.server.requestsInProgress == 0)
    }

    /// MtProtoKit reset the session when one container item failed; here the item is reported and the rest delivered.
    @Test func oneBadContainerItemIsSkippedAndTheRestDelivered() throws {
        var client = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&client, 2)
        let good = { (i: Int) in ServiceWriter.rpcResult(requestMessageID: messageIDs[i], result: Echo.answer(to: Echo.request(UInt64(i))) ?? []) }
        let bad = words(WireID.badServerSalt) { $0.appendInt64(1) }  // truncated
        let base = serverID(at: client.now, step: 100)
        let container = ServiceWriter.container([(base, 1, good(0)), (base + 4, 1, bad), (base + 8, 1, good(1))])
        let events = try client.feed(container, seqNo: 0)
        #expect(events.results.map(\.0) == ids)
        #expect(events.ignored.map(\.0) == [base + 4])
        // A container whose framing breaks part-way keeps what came before.
        var broken = ServiceWriter.container([(base + 12, 1, words(WireID.ping) { $0.appendInt64(1) })])
        broken += [0, 0, 0, 0]
        broken[4] = 2  // claims two items
        let more = try client.feed(broken, seqNo: 0)
        #expect(more.ignored.count == 1)
        #expect(flatten(try client.sent()).contains { constructorOf($0.body) == WireID.pong })
    }

    @Test func msgCopyAndGzipPackedAreUnwrapped() throws {
        var client = ClientUnderTest()
        let (ids, messageIDs) = try sendRequests(&client, 2)
        let inner = serverID(at: client.now, step: 200)
        let copy = words(WireID.msgCopy) {
            $0.appendInt64(inner)
            $0.appendInt32(1)
            let body = ServiceWriter.rpcResult(requestMessageID: messageIDs[0], result: Echo.answer(to: Echo.request(0)) ?? [])
            $0.appendInt32(Int32(body.count))
            $0.appendRaw(body)
        }
        #expect(try client.feed(copy).results.map(\.0) == [ids[0]])
        let packed = GZip.packedObject(ServiceWriter.rpcResult(requestMessageID: messageIDs[1],
                                                               result: Echo.answer(to: Echo.request(1)) ?? []))
        #expect(try client.feed(packed).results.map(\.0) == [ids[1]])
    }
}

@Suite struct SessionChecksTests {
    @Test func everyFlippedByteIsRejectedWithoutChangingTheSession() throws {
        var client = ClientUnderTest()
        let (_, messageIDs) = try sendRequests(&client, 1)
        let frame = try seal(ServiceWriter.rpcResult(requestMessageID: messageIDs[0], result: Echo.answer(to: Echo.request(0)) ?? []),
                             id: serverID(at: client.now), seqNo: 1, salt: 1, session: client.session.sessionID, from: .server)
        for index in frame.indices {
            var bad = frame
            bad[index] ^= 0xff
            #expect(throws: SessionError.self) { _ = try client.session.receive(frame: bad, now: client.now) }
        }
        #expect(try client.session.receive(frame: frame, now: client.now).results.count == 1)
    }

    func sendRequests(_ client: inout ClientUnderTest, _ count: Int) throws -> ([RequestID], [Int64]) {
        try ServiceMessageTableTests().sendRequests(&client, count)
    }

    @Test func serverRejectsEveryFlippedByteOfAClientFrame() throws {
        var pair = SessionPair(seed: 111)
        _ = try pair.client.send(Echo.request(1))
        _ = try pair.client.send(Echo.request(2))
        let frames = pair.client.outgoing(now: pair.now)
        for frame in frames {
            for index in frame.bytes.indices {
                var bad = frame.bytes
                bad[index] ^= 0xff
                #expect(throws: SessionError.self) { _ = try pair.server.receive(frame: bad, now: pair.now) }
            }
        }
        #expect(pair.server.requestsInProgress == 0, "nothing of a tampered frame was taken")
        for frame in frames { _ = try pair.server.receive(frame: frame.bytes, now: pair.now) }
        #expect(pair.server.requestsInProgress == 2)
    }

    @Test func wrongSessionParityTimeAndDuplicates() throws {
        var client = ClientUnderTest()
        let other = try seal(Echo.request(1), id: serverID(at: client.now), seqNo: 1, salt: 1, session: 5, from: .server)
        #expect(throws: SessionError.wrongSession(expected: client.session.sessionID, received: 5)) {
            _ = try client.session.receive(frame: other, now: client.now)
        }
        let even = try seal(Echo.request(1), id: MessageIDGenerator.rawID(at: client.now) & ~3, seqNo: 1, salt: 1,
                            session: client.session.sessionID, from: .server)
        #expect(try client.session.receive(frame: even, now: client.now).ignored.map(\.1) == [.wrongParity])
        for skew in [-301.0, 31.0] {
            let frame = try seal(Echo.request(1), id: serverID(at: client.now + skew), seqNo: 1, salt: 1,
                                 session: client.session.sessionID, from: .server)
            let ignored = try client.session.receive(frame: frame, now: client.now).ignored
            if case .outsideTimeWindow? = ignored.first?.1 {} else { Issue.record("\(skew): \(ignored)") }
        }
        let fine = try seal(Echo.request(1), id: serverID(at: client.now), seqNo: 1, salt: 1,
                            session: client.session.sessionID, from: .server)
        #expect(try client.session.receive(frame: fine, now: client.now).contains { if case .update = $0 { true } else { false } })
        #expect(try client.session.receive(frame: fine, now: client.now).ignored.map(\.1) == [.duplicate])
    }

    /// What a server checks, and the bad_msg_notification code it answers each failed check with.
    @Test func serverAnswersFailedChecksWithTheirCodes() throws {
        let pair = SessionPair(seed: 91)
        let salt = pair.client.salt
        let now = pair.now
        let base = MessageIDGenerator.rawID(at: now) & ~3
        let cases: [(String, Int64, Int32, [UInt8], Int64, Int32)] = [
            ("parity", base + 1, 1, Echo.request(1), salt, 18),
            ("too old", MessageIDGenerator.rawID(at: now - 301) & ~3, 1, Echo.request(1), salt, 16),
            ("too new", MessageIDGenerator.rawID(at: now + 31) & ~3, 1, Echo.request(1), salt, 17),
            ("even seq_no for a request", base, 2, Echo.request(1), salt, 35),
            ("odd seq_no for an ack", base, 3, ServiceWriter.ids(WireID.msgsAck, [4]), salt, 34),
            ("salt", base, 1, Echo.request(1), salt ^ 1, 48),
        ]
        for (name, id, seqNo, body, frameSalt, code) in cases {
            var server = pair.server
            let frame = try seal(body, id: id, seqNo: seqNo, salt: frameSalt, session: pair.client.sessionID, from: .client)
            let events = try server.receive(frame: frame, now: now)
            #expect(!events.contains { if case .request = $0 { true } else { false } }, "\(name)")
            let replies = try server.outgoing(now: now).flatMap { f -> [[UInt8]] in
                let o = try open(f.bytes, from: .server)
                return constructorOf(o.body) == WireID.msgContainer ? items(o.body).map(\.body) : [o.body]
            }
            let notification = replies.compactMap { try? ServiceMessage.decode($0, maxUnpackedBytes: 64) }.compactMap { m -> (Int64, Int32)? in
                switch m {
                    case let .badMessage(bad, _, c): (bad, c)
                    case let .badServerSalt(bad, _, c, _): (bad, c)
                    default: nil
                }
            }
            #expect(notification.map(\.1) == [code], "\(name)")
            #expect(notification.map(\.0) == [id], "\(name)")
        }
        // seq_no order: a higher msg_id with a lower seq_no is 32, a lower msg_id with a higher one 33.
        var server = pair.server
        _ = try server.receive(frame: try seal(Echo.request(1), id: base + 400, seqNo: 21, salt: salt,
                                               session: pair.client.sessionID, from: .client), now: now)
        for (id, seqNo, code) in [(base + 800, 19 as Int32, 32 as Int32), (base + 4, 23 as Int32, 33 as Int32)] {
            var copy = server
            _ = try copy.receive(frame: try seal(Echo.request(2), id: id, seqNo: seqNo, salt: salt,
                                                 session: pair.client.sessionID, from: .client), now: now)
            let codes = try copy.outgoing(now: now).flatMap { f -> [[UInt8]] in
                let o = try open(f.bytes, from: .server)
                return constructorOf(o.body) == WireID.msgContainer ? items(o.body).map(\.body) : [o.body]
            }.compactMap { body -> Int32? in
                if case .badMessage(_, _, let c)? = try? ServiceMessage.decode(body, maxUnpackedBytes: 64) { c } else { nil }
            }
            #expect(codes == [code])
        }
    }
}

@Suite struct SessionBoundsTests {
    /// A client that floods a server with requests its driver has not answered gets FLOOD_WAIT, not unbounded state.
    @Test func serverBoundsRequestsInProgress() throws {
        var configuration = SessionConfiguration()
        configuration.maxRequestsInProgress = 10
        var pair = SessionPair(seed: 101, configuration: configuration)
        pair.autoAnswer = false
        let ids = try (0..<25).map { try pair.client.send(Echo.request(UInt64($0))) }
        try pair.step()
        try pair.step()
        #expect(pair.serverRequests.count == 10)
        #expect(pair.server.requestsInProgress == 10)
        let errors = pair.clientEvents.compactMap { if case .rpcError(let id, let e) = $0 { (id, e) } else { nil } }
        #expect(errors.count == 15 && errors.allSatisfy { $0.1.kind == .floodWait(seconds: 1) })
        #expect(Set(errors.map(\.0)).isSubset(of: Set(ids)))
    }

    @Test func clientBoundsPendingRequests() throws {
        var configuration = SessionConfiguration()
        configuration.maxPendingRequests = 3
        var client = ClientUnderTest(configuration: configuration)
        for n in 0..<3 as Range<UInt64> { _ = try client.session.send(Echo.request(n)) }
        #expect(throws: SessionError.tooManyPendingRequests(limit: 3)) { _ = try client.session.send(Echo.request(9)) }
    }
}

@Suite struct SessionPackingTests {
    @Test func containersRespectTheItemLimitAndBigMessagesGoAlone() throws {
        var client = ClientUnderTest()
        for n in 0..<250 as Range<UInt64> { _ = try client.session.send(Echo.request(n)) }
        _ = try client.session.send([0x01, 0xee, 0xff, 0xc0] + SeededRandom(seed: 4).bytes(40_000))
        let frames = try client.sent()
        for frame in frames where constructorOf(frame.body) == WireID.msgContainer {
            #expect(items(frame.body).count <= 100)
            #expect(frame.seqNo & 1 == 0)
            #expect(items(frame.body).allSatisfy { $0.id < frame.id }, "a container's id is above its items'")
        }
        #expect(flatten(frames).filter { constructorOf($0.body) == 0xc0ff_ee01 }.count == 251)
        let big = frames.filter { $0.body.count > 30_000 }
        #expect(big.count == 1 && constructorOf(big[0].body) == 0xc0ff_ee01, "the 40 KB request is alone")
        #expect(frames.map(\.id) == frames.map(\.id).sorted())
    }

    @Test func gzipOnlyWhenItHelps() throws {
        var client = ClientUnderTest()
        _ = try client.session.send(Echo.request(1, padding: 2000))  // compressible
        _ = try client.session.send([0x01, 0xee, 0xff, 0xc0] + SeededRandom(seed: 3).bytes(2000))  // not
        _ = try client.session.send(Echo.request(2, padding: 100))  // below the threshold
        let sent = flatten(try client.sent()).filter { [0xc0ff_ee01, WireID.gzipPacked].contains(constructorOf($0.body)) }
        #expect(sent.map { constructorOf($0.body) } == [WireID.gzipPacked, 0xc0ff_ee01, 0xc0ff_ee01])
        #expect(try GZip.unpack(try { var r = BufferReader(bytes: sent[0].body); _ = try r.readUInt32(); return try r.readTLBytes() }())
            == Echo.request(1, padding: 2000))
    }

    @Test func quickAckTokensMatchTheServersAndAcknowledge() throws {
        var configuration = SessionConfiguration()
        configuration.quickAcks = true
        var client = ClientUnderTest(configuration: configuration)
        let id = try client.session.send(Echo.request(1))
        let frame = try #require(client.session.outgoing(now: client.now).first)
        let token = try #require(frame.quickAckToken)
        // The server computes the same token from what it decrypted: msg_key_large's first 32 bits, top bit set.
        let cipher = MTProto2Cipher(authKey: SessionPair.authKey)
        let message = try cipher.decrypt(frame.bytes, direction: .client)
        let large = cipher.messageKeyLarge(for: message.plaintext, direction: .client)
        #expect(token == UInt32(large[0]) | UInt32(large[1]) << 8 | UInt32(large[2]) << 16 | (UInt32(large[3]) << 24 | 0x8000_0000))
        guard case .acknowledged(let acked)? = client.session.receiveQuickAck(token).first else { Issue.record("no ack"); return }
        #expect(acked == [id])
        #expect(client.session.receiveQuickAck(token).isEmpty)
    }

    @Test func acksGoAloneAfterSixteenOrAfterTheDelay() throws {
        var client = ClientUnderTest()
        _ = try client.feed(Echo.request(1))
        #expect(try client.sent().isEmpty, "one ack waits")
        client.now += 1.01
        let late = flatten(try client.sent())
        #expect(late.map { constructorOf($0.body) } == [WireID.msgsAck])
        for n in 0..<16 as Range<UInt64> { _ = try client.feed(Echo.request(n)) }
        let batch = flatten(try client.sent())
        #expect(batch.count == 1 && constructorOf(batch[0].body) == WireID.msgsAck && batch[0].seqNo & 1 == 0)
        guard case .ack(let ids)? = try? ServiceMessage.decode(batch[0].body, maxUnpackedBytes: 1 << 12) else { return }
        #expect(ids.count == 16)
    }
}

@Suite struct ServiceWireTests {
    /// What the session writes, the generated MTProtoApi reads, and re-serializes to the same bytes.
    @Test func writtenServiceMessagesParseWithTheGeneratedTypes() throws {
        let salts = [FutureSalt(validSince: 1, validUntil: 2, salt: 3), FutureSalt(validSince: 4, validUntil: 5, salt: 6)]
        let samples: [(String, [UInt8])] = [
            ("msgs_ack", ServiceWriter.ids(WireID.msgsAck, [4, 8])),
            ("msgs_state_req", ServiceWriter.ids(WireID.msgsStateReq, [4])),
            ("msg_resend_req", ServiceWriter.ids(WireID.msgResendReq, [4, 8, 12])),
            ("bad_msg_notification", ServiceWriter.badMessage(4, seqNo: 1, code: 16, newSalt: nil)),
            ("bad_server_salt", ServiceWriter.badMessage(4, seqNo: 1, code: 48, newSalt: -5)),
            ("msgs_state_info", ServiceWriter.stateInfo(requestMessageID: 4, info: [1, 2, 3, 4])),
            ("future_salts", ServiceWriter.futureSalts(requestMessageID: 4, now: 9, salts: salts)),
            ("rpc_answer_unknown", ServiceWriter.dropAnswerResult(.unknown)),
            ("rpc_answer_dropped_running", ServiceWriter.dropAnswerResult(.droppedRunning)),
            ("rpc_answer_dropped", ServiceWriter.dropAnswerResult(.dropped(messageID: 4, seqNo: 3, bytes: 100))),
            ("rpc_error", ServiceWriter.rpcError(RPCError(code: 400, message: "PEER_ID_INVALID"))),
        ]
        for (name, bytes) in samples {
            let object = try MT.registry.parse(bytes: bytes)
            #expect(object.descriptionFields().0 == name)
            let again = Buffer()
            object.serialize(again, true)
            #expect(again.bytes == bytes, "\(name)")
        }
        // And what the generated types write, the session reads.
        let generated = Buffer()
        MT.FutureSalts.future_salts(.init(reqMsgId: 8, now: 9, salts: [.future_salt(.init(validSince: 1, validUntil: 2, salt: 3))]))
            .serialize(generated, true)
        guard case .futureSalts(8, 9, let read)? = try? ServiceMessage.decode(generated.bytes, maxUnpackedBytes: 64) else {
            Issue.record("future_salts")
            return
        }
        #expect(read == [FutureSalt(validSince: 1, validUntil: 2, salt: 3)])
    }

    @Test func malformedServiceMessagesAreTypedErrors() {
        for bytes in [[UInt8](), [1, 2], Array(ServiceWriter.ids(WireID.msgsAck, [4]).dropLast(1)),
                      words(WireID.futureSalts) { $0.appendInt64(1); $0.appendInt32(1); $0.appendInt32(1_000_000) }] {
            #expect(throws: TLDecodingError.self) { _ = try ServiceMessage.decode(Array(bytes), maxUnpackedBytes: 64) }
        }
    }
}

@Suite struct RPCErrorTests {
    @Test(arguments: [
        ("FLOOD_WAIT_30", "FLOOD_WAIT", 30),
        ("PHONE_MIGRATE_2", "PHONE_MIGRATE", 2),
        ("FILE_PART_3_MISSING", "FILE_PART_MISSING", 3),
        ("2FA_CONFIRM_WAIT_86400", "2FA_CONFIRM_WAIT", 86400),
        ("AUTH_KEY_UNREGISTERED", "AUTH_KEY_UNREGISTERED", nil),
        ("X_99999999999999999999", "X_99999999999999999999", nil),
    ] as [(String, String, Int?)])
    func numbersAreTakenOut(message: String, name: String, value: Int?) {
        let error = RPCError(code: 400, message: message)
        #expect(error.name == name && error.value == value)
    }

    @Test func kinds() {
        #expect(RPCError(code: 420, message: "FLOOD_WAIT_5").kind == .floodWait(seconds: 5))
        #expect(RPCError(code: 420, message: "FLOOD_PREMIUM_WAIT_5").kind == .floodWait(seconds: 5))
        #expect(RPCError(code: 303, message: "USER_MIGRATE_4").kind == .migrate(.user, dc: 4))
        #expect(RPCError(code: 303, message: "FILE_MIGRATE_1").kind == .migrate(.file, dc: 1))
        #expect(RPCError(code: 303, message: "STATS_MIGRATE_3").kind == .migrate(.stats, dc: 3))
        #expect(RPCError(code: 303, message: "NETWORK_MIGRATE_5").kind == .migrate(.network, dc: 5))
        #expect(RPCError(code: 303, message: "PHONE_MIGRATE_2").kind == .migrate(.phone, dc: 2))
        #expect(RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED").kind == .unauthorized)
        #expect(RPCError(code: 400, message: "PEER_ID_INVALID").kind == .other)
    }
}
