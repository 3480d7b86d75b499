// What a chat shows while the account works, and waiting for the other side: a chat action ("typing…") kept up for
// as long as a piece of work runs, and the next message of a chat that matches, with a timeout. Telegram shows an
// action for about six seconds after each `messages.setTyping` (core.telegram.org/method/messages.setTyping), so
// the action is sent again every five until the work ends, then cancelled.
import Logging
import MTProtoClient
import TelegramApi

extension TelegramClient {
    /// Most waits of ``nextMessage(in:after:timeout:where:)`` running at once.
    public static let maxMessageWaits = 1_024

    /// Shows `action` in `peer` (Telegram's "typing…", "uploading a photo…") while `body` runs, then cancels it.
    ///
    /// The action is sent once before `body` starts, then again every `interval` on `clock` until it ends, then
    /// `sendMessageCancelAction`. Only the first send's failure is thrown: a later one only leaves the action to
    /// expire, and never stops the work.
    ///
    /// ```swift
    /// let answer = try await client.withChatAction(.sendMessageTypingAction, in: chat) {
    ///     try await composeAnswer()
    /// }
    /// ```
    /// - Throws: ``PeerCacheError/unknownPeer(_:)`` (nothing is sent and `body` does not run), the first send's
    ///   error, or what `body` throws.
    public nonisolated(nonsending) func withChatAction<T, C: Clock<Duration>>(
        _ action: Api.SendMessageAction = .sendMessageTypingAction, in peer: PeerID, every interval: Duration = .seconds(5),
        clock: C = ContinuousClock(), _ body: () async throws -> T) async throws -> T {
        let input = try await inputPeer(for: peer)
        _ = try await invoke(Api.functions.messages.setTyping(peer: input, action: action))
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
                group.addTask { [self] in
                    while true {
                        try await clock.sleep(for: interval)
                        do {
                            _ = try await invoke(Api.functions.messages.setTyping(peer: input, action: action))
                        } catch is CancellationError {
                            return
                        } catch {
                            configuration.logger.debug("chat action in \(peer): \(error)")
                        }
                    }
                }
                defer { group.cancelAll() }
                return try await body()
            })
        } catch {
            outcome = .failure(error)
        }
        // The repeats have stopped (the group waited for them), so nothing is sent after the cancel.
        _ = try? await invoke(Api.functions.messages.setTyping(peer: input, action: .sendMessageCancelAction))
        return try outcome.get()
    }

    /// The next message in `peer` that `match` accepts (by default, one the other side sent), waiting at most
    /// `timeout`.
    ///
    /// With `after`, a message newer than that id which came before the call counts too (the client remembers
    /// the last messages it received), so a reply that beats the wait is not missed:
    ///
    /// ```swift
    /// let question = try await client.sendMessage(to: chat, formatted: .plain("Ready?"))
    /// let answer = try await client.nextMessage(in: chat, after: question.id, timeout: .seconds(30))
    /// ```
    /// - Throws: ``MessageError/timedOut(chat:after:)`` when none came in time,
    ///   ``MessageError/tooManyWaits(limit:)``, `CancellationError` when the task is cancelled, and
    ///   ``TelegramClientError/closed`` when the client closes first.
    public func nextMessage(in peer: PeerID, after id: Int32? = nil, timeout: Duration,
                            where match: @escaping @Sendable (ChatMessage) -> Bool = { !$0.isOutgoing })
        async throws -> ChatMessage {
        guard !closed else { throw TelegramClientError.closed }
        if let id, let seen = messageWaits.recent.first(where: { $0.chat == peer && $0.id > id && match($0) }) {
            return seen
        }
        guard messageWaits.waiting.count < Self.maxMessageWaits else {
            throw MessageError.tooManyWaits(limit: Self.maxMessageWaits)
        }
        let token = messageWaits.nextToken()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let timer = Task { [weak self] in
                    try await Task.sleep(for: timeout)
                    await self?.endWait(token, with: .failure(MessageError.timedOut(chat: peer, after: timeout)))
                }
                messageWaits.waiting[token] = MessageWaits.Wait(chat: peer, match: match, continuation: continuation,
                                                                timer: timer)
                if Task.isCancelled { endWait(token, with: .failure(CancellationError())) }
            }
        } onCancel: {
            Task { await self.endWait(token, with: .failure(CancellationError())) }
        }
    }

    /// A new message arrived: the waits it matches end with it, and it is kept for waits that start after it.
    func messageArrived(_ message: ChatMessage) {
        messageWaits.remember(message)
        for (token, wait) in messageWaits.waiting where wait.chat == message.chat && wait.match(message) {
            endWait(token, with: .success(message))
        }
    }

    /// Ends a wait once: its continuation resumed, its timer stopped.
    func endWait(_ token: UInt64, with result: Result<ChatMessage, any Error>) {
        guard let wait = messageWaits.waiting.removeValue(forKey: token) else { return }
        wait.timer.cancel()
        wait.continuation.resume(with: result)
    }

    /// Every wait ends with `TelegramClientError.closed` (on close).
    func endWaits() {
        for token in messageWaits.waiting.keys { endWait(token, with: .failure(TelegramClientError.closed)) }
    }
}

/// The waits for messages under way, and the last messages received, bounded.
struct MessageWaits {
    struct Wait {
        let chat: PeerID
        let match: @Sendable (ChatMessage) -> Bool
        let continuation: CheckedContinuation<ChatMessage, any Error>
        let timer: Task<Void, any Error>
    }

    /// Messages kept for waits that start after them.
    static let recentCapacity = 64

    var waiting: [UInt64: Wait] = [:]
    private(set) var recent: [ChatMessage] = []
    private var token: UInt64 = 0

    mutating func nextToken() -> UInt64 {
        token &+= 1
        return token
    }

    mutating func remember(_ message: ChatMessage) {
        recent.append(message)
        if recent.count > Self.recentCapacity { recent.removeFirst(recent.count - Self.recentCapacity) }
    }
}
