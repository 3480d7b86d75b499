// Message operations on a peer the cache knows: send, edit, delete, forward, get by id, pin, mark read. Each names
// the peer through the peer cache first (an unknown one throws before anything is sent), picks the method the chat's
// kind takes (a channel's own `channels.*` method where there is one: core.telegram.org/api/channel), and reads the
// typed result out of Telegram's answer: the messages an `Updates` carries, matched to the call's random_ids by
// `updateMessageID` (core.telegram.org/api/updates).
import MTProto
import MTProtoClient
import TLRuntime
import TelegramApi
import TelegramFormatting

extension TelegramClient {
    /// Most ids one call of `messages.deleteMessages`, `forwardMessages` or `getMessages` takes; longer lists go in
    /// several calls.
    public static let messageIDsPerCall = 100

    // MARK: Sending

    /// Sends `markup` to `peer` as one text message and returns it as Telegram stored it.
    ///
    /// Mentions of users by id (`tg://user?id=N`) go as `inputMessageEntityMentionName` when the peer cache knows
    /// the user. With ``SendOptions/scheduleDate`` the message is scheduled: the result is the scheduled message
    /// (``ChatMessage/isScheduled``).
    /// - Throws: `FormattingError` for malformed markup, ``MessageError/emptyText`` for an empty message and
    ///   ``BotError/markup(_:)`` for a keyboard past Telegram's bounds (nothing is sent),
    ///   ``PeerCacheError/unknownPeer(_:)``, ``MessageError/missingFromAnswer(chat:)``, or what `invoke(_:timeout:)`
    ///   throws.
    public func sendMessage(to peer: PeerID, formatted markup: Markup,
                            options: SendOptions = SendOptions()) async throws -> ChatMessage {
        let keyboard: Api.ReplyMarkup?
        do { keyboard = try options.replyMarkup?.api() } catch { throw BotError.markup(error) }
        let formatted = try FormattedText(markup)
        guard !formatted.text.isEmpty else { throw MessageError.emptyText }
        let input = try await inputPeer(for: peer)
        let entities = try await Self.inputEntities(formatted.entities) { [self] id in
            try? await inputUser(for: .user(id))
        }
        let randomID = configuration.random.int64()
        let updates = try await invoke(Api.functions.messages.sendMessage(
            noWebpage: options.noWebpage, silent: options.silent, peer: input,
            replyTo: options.replyTo.map { .inputReplyToMessage(.init(replyToMsgId: $0)) }, message: formatted.text,
            randomId: randomID, replyMarkup: keyboard, entities: entities.isEmpty ? nil : entities,
            scheduleDate: options.scheduleDate))
        if case .updateShortSentMessage(let sent) = updates {
            // A private chat's send may come back this short: the message is what was sent, with the id and date.
            let message = Api.Message.message(.init(
                out: sent.out, silent: options.silent, id: sent.id, fromId: peerCache.selfUser?.peer, peerId: peer.peer,
                replyTo: options.replyTo.map { .messageReplyHeader(.init(replyToMsgId: $0)) }, date: sent.date,
                message: formatted.text, media: sent.media, replyMarkup: keyboard, entities: sent.entities ?? entities))
            if let sent = ChatMessage(message, isScheduled: options.scheduleDate != nil) { return sent }
        }
        guard let sent = Self.messages(in: updates, randomIDs: [randomID]).first ?? nil else {
            throw MessageError.missingFromAnswer(chat: peer)
        }
        return sent
    }

    // MARK: Editing

    /// Replaces the text and formatting of message `id` in `peer` with `markup`; returns the edited message.
    /// - Throws: `FormattingError` or ``MessageError/emptyText`` (nothing is sent),
    ///   ``PeerCacheError/unknownPeer(_:)``, ``MessageError/notFound(ids:chat:)``,
    ///   ``MessageError/notModified(id:chat:)``, ``MessageError/notAuthor(id:chat:)``, or what `invoke` throws.
    public func editMessage(_ id: Int32, in peer: PeerID, formatted markup: Markup,
                            noWebpage: Bool = false) async throws -> ChatMessage {
        let formatted = try FormattedText(markup)
        guard !formatted.text.isEmpty else { throw MessageError.emptyText }
        guard id > 0 else { throw MessageError.notFound(ids: [id], chat: peer) }
        let input = try await inputPeer(for: peer)
        let entities = try await Self.inputEntities(formatted.entities) { [self] id in
            try? await inputUser(for: .user(id))
        }
        let updates = try await Self.naming([id], in: peer) {
            try await invoke(Api.functions.messages.editMessage(noWebpage: noWebpage, peer: input, id: id,
                                                                message: formatted.text, entities: entities))
        }
        guard let edited = Self.editedMessages(in: updates).first(where: { $0.id == id && $0.chat == peer }) else {
            throw MessageError.missingFromAnswer(chat: peer)
        }
        return edited
    }

    // MARK: Deleting

    /// Deletes messages `ids` of `peer`: for everyone (the other party's copies too) or only for this account.
    ///
    /// A private chat's or basic group's messages go with `messages.deleteMessages`, a channel's with
    /// `channels.deleteMessages`, which deletes for everyone. Ids already gone are passed over, as Telegram does.
    /// - Throws: ``MessageError/deleteForMeInChannel(_:)`` (nothing is sent), ``PeerCacheError/unknownPeer(_:)``, or
    ///   what `invoke` throws.
    public func deleteMessages(_ ids: [Int32], in peer: PeerID, forEveryone: Bool = true) async throws {
        guard !ids.isEmpty else { return }
        if peer.kind == .channel {
            guard forEveryone else { throw MessageError.deleteForMeInChannel(peer) }
            let channel = try await inputChannel(for: peer)
            for batch in Self.batches(ids) {
                _ = try await invoke(Api.functions.channels.deleteMessages(channel: channel, id: batch))
            }
            return
        }
        // Named first, so an unknown peer fails here too although the call itself takes no peer.
        _ = try await inputPeer(for: peer)
        for batch in Self.batches(ids) {
            _ = try await invoke(Api.functions.messages.deleteMessages(revoke: forEveryone, id: batch))
        }
    }

    // MARK: Forwarding

    /// Forwards messages `ids` of `source` to `destination`, in order; returns the new messages, one for each id
    /// (nil for an id Telegram had no message for, when it forwarded the others).
    ///
    /// - Parameters:
    ///   - ids: The messages, in `source`'s ids.
    ///   - source: The chat they are in.
    ///   - destination: The chat to forward them to.
    ///   - dropAuthor: Sends them as new messages of this account, without the "forwarded from" header
    ///     (`drop_author`).
    ///   - silent: Sends without a notification.
    /// - Throws: ``PeerCacheError/unknownPeer(_:)`` for either peer and ``MessageError/notFound(ids:chat:)`` for
    ///   an id that is not positive (nothing is sent); ``MessageError/notFound(ids:chat:)`` when Telegram has none
    ///   of them; or what `invoke` throws.
    public func forwardMessages(_ ids: [Int32], from source: PeerID, to destination: PeerID, dropAuthor: Bool = false,
                                silent: Bool = false) async throws -> [ChatMessage?] {
        let invalid = ids.filter { $0 <= 0 }
        guard invalid.isEmpty else { throw MessageError.notFound(ids: invalid, chat: source) }
        let from = try await inputPeer(for: source), to = try await inputPeer(for: destination)
        var forwarded: [ChatMessage?] = []
        for batch in Self.batches(ids) {
            let randomIDs = batch.map { _ in configuration.random.int64() }
            let updates = try await Self.naming(batch, in: source) {
                try await invoke(Api.functions.messages.forwardMessages(
                    silent: silent, dropAuthor: dropAuthor, fromPeer: from, id: batch, randomId: randomIDs, toPeer: to))
            }
            forwarded += Self.messages(in: updates, randomIDs: randomIDs)
        }
        return forwarded
    }

    /// Forwards message `id` of `source` to `destination`; returns the new message.
    /// - Throws: what ``forwardMessages(_:from:to:dropAuthor:silent:)`` throws, and
    ///   ``MessageError/missingFromAnswer(chat:)`` when the answer does not carry the new message.
    public func forwardMessage(_ id: Int32, from source: PeerID, to destination: PeerID, dropAuthor: Bool = false,
                               silent: Bool = false) async throws -> ChatMessage {
        guard let message = try await forwardMessages([id], from: source, to: destination, dropAuthor: dropAuthor,
                                                      silent: silent).first ?? nil
        else { throw MessageError.missingFromAnswer(chat: destination) }
        return message
    }

    // MARK: Getting

    /// Messages `ids` of `peer`, one for each id: nil where the chat has no such message (Telegram's
    /// `messageEmpty`, or a message of another chat: a private chat's ids are the account's, shared by its chats).
    /// - Throws: ``PeerCacheError/unknownPeer(_:)`` (nothing is sent), or what `invoke` throws.
    public func messages(_ ids: [Int32], in peer: PeerID) async throws -> [ChatMessage?] {
        var channel: Api.InputChannel?
        if peer.kind == .channel {
            channel = try await inputChannel(for: peer)
        } else {
            _ = try await inputPeer(for: peer)
        }
        var found: [Int32: ChatMessage] = [:]
        for batch in Self.batches(ids.filter { $0 > 0 }) {
            let inputs = batch.map { Api.InputMessage.inputMessageID(.init(id: $0)) }
            let page: MessagePage
            if let channel {
                page = MessagePage(try await invoke(Api.functions.channels.getMessages(channel: channel, id: inputs)))
            } else {
                page = MessagePage(try await invoke(Api.functions.messages.getMessages(id: inputs)))
            }
            for case let message? in page.messages.map({ ChatMessage($0) }) where message.chat == peer {
                found[message.id] = message
            }
        }
        return ids.map { found[$0] }
    }

    /// Message `id` of `peer`, or nil when the chat has none with that id.
    /// - Throws: what ``messages(_:in:)`` throws.
    public func message(_ id: Int32, in peer: PeerID) async throws -> ChatMessage? {
        try await messages([id], in: peer).first ?? nil
    }

    // MARK: Pinning

    /// Pins message `id` in `peer` (`messages.updatePinnedMessage`). Telegram posts a service message saying so,
    /// unless the pin is for this account only.
    ///
    /// - Parameters:
    ///   - id: The message.
    ///   - peer: The chat it is in.
    ///   - silent: Pins without notifying the chat's members.
    ///   - forMeOnly: In a private chat, pins it for this account only (`pm_oneside`).
    /// - Throws: ``PeerCacheError/unknownPeer(_:)`` and, for an id that is not positive,
    ///   ``MessageError/notFound(ids:chat:)`` (nothing is sent); ``MessageError/notFound(ids:chat:)`` when Telegram
    ///   has no such message; or what `invoke` throws.
    public func pinMessage(_ id: Int32, in peer: PeerID, silent: Bool = false, forMeOnly: Bool = false) async throws {
        try await updatePin(id, in: peer, unpin: false, silent: silent, forMeOnly: forMeOnly)
    }

    /// Unpins message `id` in `peer`.
    /// - Throws: what ``pinMessage(_:in:silent:forMeOnly:)`` throws.
    public func unpinMessage(_ id: Int32, in peer: PeerID) async throws {
        try await updatePin(id, in: peer, unpin: true, silent: false, forMeOnly: false)
    }

    private func updatePin(_ id: Int32, in peer: PeerID, unpin: Bool, silent: Bool, forMeOnly: Bool) async throws {
        guard id > 0 else { throw MessageError.notFound(ids: [id], chat: peer) }
        let input = try await inputPeer(for: peer)
        _ = try await Self.naming([id], in: peer) {
            try await invoke(Api.functions.messages.updatePinnedMessage(silent: silent, unpin: unpin,
                                                                        pmOneside: forMeOnly, peer: input, id: id))
        }
    }

    // MARK: Reading

    /// Marks `peer` read up to message `maxID` (nil: up to its newest), through `messages.readHistory`, or
    /// `channels.readHistory` for a channel; the senders of the messages read see it as their outbox read.
    /// - Throws: ``PeerCacheError/unknownPeer(_:)`` (nothing is sent), or what `invoke` throws.
    public func markRead(_ peer: PeerID, upTo maxID: Int32? = nil) async throws {
        if peer.kind == .channel {
            let channel = try await inputChannel(for: peer)
            _ = try await invoke(Api.functions.channels.readHistory(channel: channel, maxId: maxID ?? 0))
        } else {
            let input = try await inputPeer(for: peer)
            _ = try await invoke(Api.functions.messages.readHistory(peer: input, maxId: maxID ?? 0))
        }
    }

    // MARK: Reading answers

    /// The messages `updates` carries for `randomIDs`, in their order (nil for one it has none for): each id
    /// `updateMessageID` gives a random_id, then the new message (or scheduled message) with that id.
    static func messages(in updates: Api.Updates, randomIDs: [Int64]) -> [ChatMessage?] {
        let list = updates.list
        var ids: [Int64: Int32] = [:]
        var byID: [Int32: ChatMessage] = [:]
        for update in list {
            switch update {
                case .updateMessageID(let u): ids[u.randomId] = u.id
                case .updateNewMessage(let u): if let m = ChatMessage(u.message) { byID[m.id] = m }
                case .updateNewChannelMessage(let u): if let m = ChatMessage(u.message) { byID[m.id] = m }
                case .updateNewScheduledMessage(let u):
                    if let m = ChatMessage(u.message, isScheduled: true) { byID[m.id] = m }
                default: continue
            }
        }
        return randomIDs.map { ids[$0].flatMap { byID[$0] } }
    }

    /// The edited messages `updates` carries.
    static func editedMessages(in updates: Api.Updates) -> [ChatMessage] {
        updates.list.compactMap { update in
            switch update {
                case .updateEditMessage(let u): ChatMessage(u.message)
                case .updateEditChannelMessage(let u): ChatMessage(u.message)
                default: nil
            }
        }
    }

    /// `body`, with Telegram's answers about the messages themselves as ``MessageError``s naming them.
    nonisolated(nonsending) static func naming<T>(_ ids: [Int32], in chat: PeerID,
                                                  _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch MTProtoClientError.rpc(let error) {
            switch error.message {
                case "MESSAGE_ID_INVALID", "MESSAGE_IDS_EMPTY": throw MessageError.notFound(ids: ids, chat: chat)
                case "MESSAGE_NOT_MODIFIED" where ids.count == 1: throw MessageError.notModified(id: ids[0], chat: chat)
                case "MESSAGE_AUTHOR_REQUIRED" where ids.count == 1: throw MessageError.notAuthor(id: ids[0], chat: chat)
                default: throw MTProtoClientError.rpc(error)
            }
        }
    }

    /// `ids` in runs of at most ``messageIDsPerCall``.
    static func batches(_ ids: [Int32]) -> [[Int32]] {
        stride(from: 0, to: ids.count, by: messageIDsPerCall).map { Array(ids[$0..<min(ids.count, $0 + messageIDsPerCall)]) }
    }
}

extension Api.Updates {
    /// The updates of a container (one for `updateShort`; none for the short message forms).
    var list: [Api.Update] {
        switch self {
            case .updates(let u): u.updates
            case .updatesCombined(let u): u.updates
            case .updateShort(let u): [u.update]
            default: []
        }
    }
}
