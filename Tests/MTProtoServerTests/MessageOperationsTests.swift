// The message operations of `TelegramClient` end to end on the test Telegram: Bob sends, edits, deletes, forwards,
// gets, pins and reads through peers his cache knows, and Alice's client receives each as a typed event (and the
// other way round for reads); a chat action kept up while work runs, counted on a manual clock; the wait for the
// next message; and bad input (an unknown peer, a message id that does not exist) refused with typed errors while
// nothing reaches the other party.
import Foundation
import MTProtoClient
import MTProtoServer
import Synchronization
import TelegramApi
import TelegramClient
import Testing

/// A clock that moves only when the test says, and counts who sleeps on it.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        let offset: Swift.Duration
        func advanced(by duration: Swift.Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Swift.Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: (deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var next: UInt64 = 0
    }

    private let state = Mutex(State())
    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Swift.Duration { .zero }
    /// Tasks asleep on the clock.
    var sleepers: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let token = state.withLock { state -> UInt64 in
            state.next += 1
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[token] = (deadline, continuation)
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: token) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on, waking every sleeper whose deadline it reaches.
    func advance(by duration: Duration) {
        let woken = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for token in due.keys { state.sleepers[token] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }
}

/// Waits until `condition` holds (at most 10 s).
func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
    for _ in 0..<1_000 {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw HarnessFailure(description: "never: \(what)")
}

/// A flag set from anywhere.
private final class Flag: Sendable {
    let value = Mutex(false)
}

extension EventPair {
    var alicePeer: PeerID { .user(aliceID) }
    var bobPeer: PeerID { .user(bobID) }

    /// The id in `client`'s box of the newest message with `text` in its chat with `peer`.
    static func id(of text: String, in client: TelegramClient, with peer: Api.InputPeer) async throws -> Int32 {
        for try await message in client.history(of: peer) {
            if case .message(let m) = message, m.message == text { return m.id }
        }
        throw HarnessFailure(description: "no \(text)")
    }

    /// Alice's new message with `text` that `match` accepts, from her events.
    func aliceReceives(_ text: String, _ match: @escaping @Sendable (ChatMessage) -> Bool = { _ in true }) async throws
        -> ChatMessage {
        try await log.first { event -> ChatMessage? in
            guard case .newMessage(let new) = event, let message = new.chatMessage, !message.isOutgoing,
                  message.text == text, match(message) else { return nil }
            return message
        }
    }
}

@Suite struct MessageOperationsTests {
    @Test func aSendAnswersSilentlyAndASchedulingSendsNothing() async throws {
        let pair = try await EventPair.start(seed: 521)
        let question = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .plain("question"))
        #expect(question.isOutgoing && question.chat == pair.bobPeer && question.text == "question")
        let asked = try await EventPair.id(of: "question", in: pair.bob, with: pair.toAlice)
        let answer = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .markdown("*yes*"),
                                                    options: SendOptions(silent: true, replyTo: asked))
        #expect(answer.text == "yes" && answer.replyToID == asked && answer.isSilent && !answer.isScheduled)
        guard case .messageEntityBold(let bold)? = answer.entities.first else {
            throw HarnessFailure(description: "\(answer.entities)")
        }
        #expect((bold.offset, bold.length) == (0, 3))
        // Alice sees the answer to her own message, under her own id.
        let received = try await pair.aliceReceives("yes")
        #expect(received.replyToID == question.id && received.isSilent && received.sender == pair.bobPeer)

        let date = Int32(Date().timeIntervalSince1970) + 3_600
        let later = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("later"),
                                                   options: SendOptions(scheduleDate: date))
        #expect(later.isScheduled && later.date == date && later.text == "later")
        var texts: [String] = []
        for try await message in pair.alice.history(of: pair.toBob) {
            if case .message(let m) = message { texts.append(m.message) }
        }
        #expect(texts == ["yes", "question"])
        try await pair.close()
    }

    @Test func anEditReachesThePeerAsAnEditedMessage() async throws {
        let pair = try await EventPair.start(seed: 522)
        let sent = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("before"))
        let hers = try await pair.aliceReceives("before")
        let edited = try await pair.bob.editMessage(sent.id, in: pair.alicePeer, formatted: .html("<b>after</b>"))
        #expect(edited.id == sent.id && edited.text == "after" && edited.editDate != nil)
        let event = try await pair.log.first { event -> ChatMessage? in
            guard case .editedMessage(let e) = event else { return nil }
            return e.chatMessage
        }
        #expect(event.id == hers.id && event.text == "after" && event.sender == pair.bobPeer)
        guard case .messageEntityBold(let bold)? = event.entities.first else {
            throw HarnessFailure(description: "\(event.entities)")
        }
        #expect((bold.offset, bold.length) == (0, 5))
        // An edit that changes nothing, and one of a message that is not one's own, are typed errors.
        _ = try await pair.bob.editMessage(sent.id, in: pair.alicePeer, formatted: .plain("plain"))
        await #expect(throws: MessageError.notModified(id: sent.id, chat: pair.alicePeer)) {
            try await pair.bob.editMessage(sent.id, in: pair.alicePeer, formatted: .plain("plain"))
        }
        await #expect(throws: MessageError.notAuthor(id: hers.id, chat: pair.bobPeer)) {
            try await pair.alice.editMessage(hers.id, in: pair.bobPeer, formatted: .plain("mine now"))
        }
        try await pair.close()
    }

    @Test func aDeletionForEveryoneReachesThePeerAndOneForMeDoesNot() async throws {
        let pair = try await EventPair.start(seed: 523)
        let one = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("one"))
        let two = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("two"))
        let hersOne = try await pair.aliceReceives("one"), hersTwo = try await pair.aliceReceives("two")
        try await pair.bob.deleteMessages([one.id], in: pair.alicePeer)
        let deleted = try await pair.log.first { event -> DeletedMessagesEvent? in
            guard case .deletedMessages(let d) = event else { return nil }
            return d
        }
        #expect(deleted.ids == [hersOne.id] && deleted.channel == nil)
        try await pair.bob.deleteMessages([two.id], in: pair.alicePeer, forEveryone: false)
        #expect(try await pair.bob.messages([one.id, two.id], in: pair.alicePeer).allSatisfy { $0 == nil })
        let left = try await pair.alice.messages([hersOne.id, hersTwo.id], in: pair.bobPeer)
        #expect(left[0] == nil && left[1]?.text == "two")
        try await pair.close()
    }

    @Test func aForwardKeepsOrDropsTheAuthor() async throws {
        let pair = try await EventPair.start(seed: 524)
        _ = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .html("<i>original</i>"))
        _ = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .plain("second"))
        let original = try await EventPair.id(of: "original", in: pair.bob, with: pair.toAlice)
        let second = try await EventPair.id(of: "second", in: pair.bob, with: pair.toAlice)
        // Many at once, to Bob's Saved Messages; an id with no message comes back nil.
        let saved = try await pair.bob.forwardMessages([original, 99_999, second], from: pair.alicePeer, to: pair.bobPeer)
        #expect(saved.map { $0?.text } == ["original", nil, "second"])
        #expect(saved.allSatisfy { $0 == nil || $0?.chat == pair.bobPeer })
        guard case .messageFwdHeader(let header)? = saved[0]?.forwardHeader else {
            throw HarnessFailure(description: "no header: \(String(describing: saved[0]))")
        }
        #expect(header.fromId.map(PeerID.init) == pair.alicePeer)
        guard case .messageEntityItalic? = saved[0]?.entities.first else { throw HarnessFailure(description: "entities") }

        // Back to Alice: with the author, then without.
        let kept = try await pair.bob.forwardMessage(original, from: pair.alicePeer, to: pair.alicePeer)
        let dropped = try await pair.bob.forwardMessage(original, from: pair.alicePeer, to: pair.alicePeer,
                                                        dropAuthor: true)
        #expect(kept.forwardHeader != nil && dropped.forwardHeader == nil && kept.id != dropped.id)
        let withAuthor = try await pair.aliceReceives("original") { $0.forwardHeader != nil }
        guard case .messageFwdHeader(let seen)? = withAuthor.forwardHeader else { throw HarnessFailure(description: "") }
        #expect(seen.fromId.map(PeerID.init) == pair.alicePeer && withAuthor.sender == pair.bobPeer)
        let withoutAuthor = try await pair.aliceReceives("original") { $0.forwardHeader == nil }
        #expect(withoutAuthor.sender == pair.bobPeer && withoutAuthor.id != withAuthor.id)
        try await pair.close()
    }

    @Test func messagesByIDAreTheChatsOnly() async throws {
        let pair = try await EventPair.start(seed: 525)
        let first = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("first"))
        let note = try await pair.bob.sendMessage(to: pair.bobPeer, formatted: .plain("note"))
        let found = try await pair.bob.messages([first.id, 424_242, note.id], in: pair.alicePeer)
        #expect(found.map { $0?.text } == ["first", nil, nil])
        #expect(try await pair.bob.message(note.id, in: pair.bobPeer)?.text == "note")
        try await pair.close()
    }

    @Test func aPinAndAnUnpinReachThePeer() async throws {
        let pair = try await EventPair.start(seed: 526)
        let sent = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("pin me"))
        let hers = try await pair.aliceReceives("pin me")
        try await pair.bob.pinMessage(sent.id, in: pair.alicePeer)
        let pinned = try await pair.log.first { event -> PinnedMessagesEvent? in
            guard case .pinnedMessages(let p) = event, p.pinned else { return nil }
            return p
        }
        #expect(pinned.ids == [hers.id])
        #expect(try await pair.isBob(pinned.chat))
        // The service message saying so is the newest of Alice's chat.
        var newest: ChatMessage?
        for try await message in pair.alice.history(of: pair.toBob, options: PagingOptions(limit: 1)) {
            newest = ChatMessage(message)
        }
        guard let notice = newest, case .messageActionPinMessage? = notice.action else {
            throw HarnessFailure(description: "no pin notice: \(String(describing: newest))")
        }
        #expect(notice.replyToID == hers.id && notice.sender == pair.bobPeer && notice.id > hers.id)
        #expect(try await pair.alice.message(hers.id, in: pair.bobPeer)?.isPinned == true)

        try await pair.bob.unpinMessage(sent.id, in: pair.alicePeer)
        let unpinned = try await pair.log.first { event -> PinnedMessagesEvent? in
            guard case .pinnedMessages(let p) = event, !p.pinned else { return nil }
            return p
        }
        #expect(unpinned.ids == [hers.id])
        #expect(try await pair.alice.message(hers.id, in: pair.bobPeer)?.isPinned == false)
        // A pin for Bob only leaves Alice's copy as it was.
        try await pair.bob.pinMessage(sent.id, in: pair.alicePeer, forMeOnly: true)
        #expect(try await pair.bob.message(sent.id, in: pair.alicePeer)?.isPinned == true)
        #expect(try await pair.alice.message(hers.id, in: pair.bobPeer)?.isPinned == false)
        try await pair.close()
    }

    @Test func markingReadReachesTheSenderAsItsOutboxRead() async throws {
        let pair = try await EventPair.start(seed: 527)
        _ = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .plain("one"))
        let two = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .plain("two"))
        let first = try await EventPair.id(of: "one", in: pair.bob, with: pair.toAlice)
        try await pair.bob.markRead(pair.alicePeer, upTo: first)
        try await pair.bob.markRead(pair.alicePeer)
        let reads = try await pair.log.first(2) { event -> Int32? in
            guard case .readHistory(let r) = event, r.outbox else { return nil }
            return r.maxID
        }
        #expect(reads == [two.id - 1, two.id])
        try await pair.close()
    }

    /// The action goes out once, then once for each interval the clock passes while the work runs, then its cancel:
    /// counted at the server and in Alice's typing events.
    @Test func aChatActionRepeatsUntilTheWorkEnds() async throws {
        let counter = MethodCounter()
        let pair = try await EventPair.start(seed: 528, onEvent: counter.record)
        _ = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("hi"))
        let clock = ManualClock(), gate = Gate()
        let bob = pair.bob, alice = pair.alicePeer
        let work = Task {
            try await bob.withChatAction(.sendMessageTypingAction, in: alice, clock: clock) {
                _ = await gate.wait()
                return 42
            }
        }
        for sent in 1...3 {
            try await eventually("setTyping #\(sent) and a sleeper") {
                counter.count("messages.setTyping") == sent && clock.sleepers == 1
            }
            if sent < 3 { clock.advance(by: .seconds(5)) }
        }
        gate.fire("done")
        #expect(try await work.value == 42)
        try await eventually("the cancel") { counter.count("messages.setTyping") == 4 }
        let actions = try await pair.log.first(4) { event -> Api.SendMessageAction? in
            guard case .typing(let t) = event else { return nil }
            return t.action
        }
        #expect(actions.map(\.isTyping) == [true, true, true, false])
        guard case .sendMessageCancelAction = actions[3] else { throw HarnessFailure(description: "\(actions[3])") }
        try await pair.close()
    }

    @Test func theNextMessageIsTheReply() async throws {
        let pair = try await EventPair.start(seed: 529)
        let bobLog = TypedEventLog(pair.bob)
        let question = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("ready?"))
        async let answer = pair.bob.nextMessage(in: pair.alicePeer, after: question.id, timeout: .seconds(30))
        _ = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .plain("yes"))
        let reply = try await answer
        #expect(reply.text == "yes" && reply.sender == pair.alicePeer && reply.id > question.id)

        // A reply that came before the wait counts when the wait says after which message.
        let again = try await pair.bob.sendMessage(to: pair.alicePeer, formatted: .plain("again?"))
        _ = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .plain("sure"))
        _ = try await bobLog.first { event -> Bool? in
            guard case .newMessage(let new) = event, new.chatMessage?.text == "sure" else { return nil }
            return true
        }
        #expect(try await pair.bob.nextMessage(in: pair.alicePeer, after: again.id, timeout: .seconds(30)).text == "sure")
        // Without it, only what comes after the call does; a filter picks among what comes.
        await #expect(throws: MessageError.timedOut(chat: pair.alicePeer, after: .milliseconds(200))) {
            try await pair.bob.nextMessage(in: pair.alicePeer, timeout: .milliseconds(200))
        }
        async let picked = pair.bob.nextMessage(in: pair.alicePeer, after: again.id, timeout: .seconds(30)) {
            $0.text.hasPrefix("b")
        }
        _ = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .plain("a"))
        _ = try await pair.alice.sendMessage(to: pair.bobPeer, formatted: .plain("b"))
        #expect(try await picked.text == "b")
        try await pair.close()
    }

    /// An unknown peer fails before any call; a message id that does not exist is a typed error, and the other
    /// party gets nothing.
    @Test func badInputIsATypedErrorAndSendsNothing() async throws {
        let counter = MethodCounter()
        let pair = try await EventPair.start(seed: 530, onEvent: counter.record)
        let stranger = PeerID.user(424_242), alice = pair.alicePeer, bob = pair.bob
        let unknown = PeerCacheError.unknownPeer(stranger)
        await #expect(throws: unknown) { try await bob.sendMessage(to: stranger, formatted: .plain("x")) }
        await #expect(throws: unknown) { try await bob.editMessage(1, in: stranger, formatted: .plain("x")) }
        await #expect(throws: unknown) { try await bob.deleteMessages([1], in: stranger) }
        await #expect(throws: unknown) { try await bob.forwardMessages([1], from: stranger, to: alice) }
        await #expect(throws: unknown) { try await bob.forwardMessages([1], from: alice, to: stranger) }
        await #expect(throws: unknown) { try await bob.messages([1], in: stranger) }
        await #expect(throws: unknown) { try await bob.pinMessage(1, in: stranger) }
        await #expect(throws: unknown) { try await bob.markRead(stranger) }
        let ran = Flag()
        await #expect(throws: unknown) {
            try await bob.withChatAction(in: stranger) { ran.value.withLock { $0 = true } }
        }
        await #expect(throws: PeerCacheError.unknownPeer(.channel(77))) {
            try await bob.deleteMessages([1], in: .channel(77))
        }
        #expect(!ran.value.withLock { $0 })
        for method in ["messages.sendMessage", "messages.editMessage", "messages.deleteMessages",
                       "messages.forwardMessages", "messages.getMessages", "messages.updatePinnedMessage",
                       "messages.readHistory", "messages.setTyping", "channels.deleteMessages"] {
            #expect(counter.count(method) == 0, "\(method)")
        }

        await #expect(throws: MessageError.notFound(ids: [99_999], chat: alice)) {
            try await bob.editMessage(99_999, in: alice, formatted: .plain("x"))
        }
        await #expect(throws: MessageError.notFound(ids: [99_999], chat: alice)) {
            try await bob.forwardMessages([99_999], from: alice, to: alice)
        }
        await #expect(throws: MessageError.notFound(ids: [99_999], chat: alice)) {
            try await bob.pinMessage(99_999, in: alice)
        }
        // Ids that cannot be a message's are refused without a call.
        await #expect(throws: MessageError.notFound(ids: [0], chat: alice)) {
            try await bob.editMessage(0, in: alice, formatted: .plain("x"))
        }
        await #expect(throws: MessageError.notFound(ids: [-1], chat: alice)) {
            try await bob.forwardMessages([5, -1], from: alice, to: alice)
        }
        await #expect(throws: MessageError.emptyText) {
            try await bob.sendMessage(to: alice, formatted: .html("<b></b>"))
        }
        #expect(counter.count("messages.editMessage") == 1)
        #expect(counter.count("messages.editMessage", error: "MESSAGE_ID_INVALID") == 1)
        #expect(counter.count("messages.forwardMessages") == 1)
        #expect(counter.count("messages.forwardMessages", error: "MESSAGE_ID_INVALID") == 1)
        #expect(counter.count("messages.updatePinnedMessage", error: "MESSAGE_ID_INVALID") == 1)
        #expect(counter.count("messages.sendMessage") == 0)
        var seen = 0
        for try await _ in pair.alice.history(of: pair.toBob) { seen += 1 }
        #expect(seen == 0)
        try await pair.close()
    }

    /// In a supergroup: the channel's own methods for getting, deleting and reading, a pin every member sees, and
    /// a forward out of it naming its author.
    @Test func channelMessagesUseTheChannelsMethods() async throws {
        let counter = MethodCounter()
        let pair = try await EventPair.start(seed: 531, onEvent: counter.record)
        let bobLog = TypedEventLog(pair.bob)
        let created = try await pair.bob.invoke(Api.functions.channels.createChannel(megagroup: true, title: "G", about: ""))
        guard case .updates(let made) = created, case .channel(let channel)? = made.chats.first else {
            throw HarnessFailure(description: "\(created)")
        }
        let group = PeerID.channel(channel.id)
        guard case .inputPeerUser(let alice) = pair.toAlice else { throw HarnessFailure(description: "\(pair.toAlice)") }
        _ = try await pair.bob.invoke(Api.functions.channels.inviteToChannel(
            channel: try await pair.bob.inputChannel(for: group),
            users: [.inputUser(.init(userId: alice.userId, accessHash: alice.accessHash))]))
        try await eventually("Alice knows the group") { try await pair.alice.cachedPeer(group)?.accessHash != nil }

        let post = try await pair.bob.sendMessage(to: group, formatted: .plain("in the group"))
        let seen = try await pair.aliceReceives("in the group")
        #expect(seen.id == post.id && seen.chat == group && seen.sender == pair.bobPeer)
        #expect(try await pair.alice.messages([post.id, 9_999], in: group).map { $0?.text } == ["in the group", nil])
        #expect(counter.count("channels.getMessages") == 1 && counter.count("messages.getMessages") == 0)

        try await pair.bob.pinMessage(post.id, in: group)
        let pinned = try await pair.log.first { event -> PinnedMessagesEvent? in
            guard case .pinnedMessages(let p) = event else { return nil }
            return p
        }
        #expect(pinned.chat.id == group && pinned.ids == [post.id] && pinned.pinned)
        #expect(try await pair.alice.message(post.id, in: group)?.isPinned == true)

        try await pair.alice.markRead(group)
        let read = try await bobLog.first { event -> ReadHistoryEvent? in
            guard case .readHistory(let r) = event, r.outbox else { return nil }
            return r
        }
        #expect(read.chat.id == group && read.maxID == post.id)
        #expect(counter.count("channels.readHistory") == 1)

        let out = try await pair.alice.forwardMessage(post.id, from: group, to: pair.bobPeer)
        guard case .messageFwdHeader(let header)? = out.forwardHeader else { throw HarnessFailure(description: "") }
        #expect(header.fromId.map(PeerID.init) == pair.bobPeer && out.chat == pair.bobPeer)

        await #expect(throws: MessageError.deleteForMeInChannel(group)) {
            try await pair.bob.deleteMessages([post.id], in: group, forEveryone: false)
        }
        try await pair.bob.deleteMessages([post.id], in: group)
        let deleted = try await pair.log.first { event -> DeletedMessagesEvent? in
            guard case .deletedMessages(let d) = event else { return nil }
            return d
        }
        #expect(deleted.ids == [post.id] && deleted.channel?.id == group)
        #expect(counter.count("channels.deleteMessages") == 1 && counter.count("messages.deleteMessages") == 0)
        try await pair.close()
    }
}

extension TypedEventLog {
    /// The first `count` events `match` picks, once that many came (waiting at most 10 s).
    func first<T>(_ count: Int, _ match: (UpdateEvent) -> T?) async throws -> [T] {
        for _ in 0..<1_000 {
            let found = events.compactMap(match)
            if found.count >= count { return Array(found.prefix(count)) }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "fewer than \(count) such events among \(events.count)")
    }
}

extension Api.SendMessageAction {
    var isTyping: Bool {
        if case .sendMessageTypingAction = self { return true }
        return false
    }
}
