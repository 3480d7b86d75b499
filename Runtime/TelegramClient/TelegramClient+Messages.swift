// Messages: a chat's history, a search and the dialogs as AsyncSequences that page (Iterators.swift), and sending
// formatted text: markup parsed to text and entities (TelegramFormatting), then `messages.sendMessage` with
// a fresh random_id. A mention of a user by id is sent as `inputMessageEntityMentionName`, which needs the user's
// access hash (core.telegram.org/api/mentions): the caller's resolver supplies it.
import MTProtoClient
import MTProtoCrypto
import TLRuntime
import TelegramApi
import TelegramFormatting

extension TelegramClient {
    /// Sends `markup` to `peer` as one text message: HTML or MarkdownV2 parsed into text and entities (see
    /// `FormattedText` of TelegramFormatting), with a random_id from the configuration's random source.
    ///
    /// - Parameters:
    ///   - peer: Where to send.
    ///   - markup: The message, in the markup it is written in.
    ///   - silent: Sends without a notification.
    ///   - noWebpage: Sends without a link preview.
    ///   - replyTo: The message (or story) this one answers.
    ///   - mentionedUser: For each user mentioned by id (`tg://user?id=N`), the `InputUser` to send the mention
    ///     with; when it returns nil the mention goes as `messageEntityMentionName`, which Telegram may drop.
    /// - Returns: The `Updates` `messages.sendMessage` answers with.
    /// - Throws: `FormattingError` for malformed markup (nothing is sent), or what `invoke(_:timeout:)` throws.
    public func sendMessage(to peer: Api.InputPeer, formatted markup: Markup, silent: Bool = false,
                            noWebpage: Bool = false, replyTo: Api.InputReplyTo? = nil,
                            mentionedUser: @Sendable (Int64) async throws -> Api.InputUser? = { _ in nil })
        async throws -> Api.Updates {
        let formatted = try FormattedText(markup)
        let entities = try await Self.inputEntities(formatted.entities, mentionedUser: mentionedUser)
        return try await invoke(Self.sendMessageCall(to: peer, text: formatted.text, entities: entities,
                                                     randomID: configuration.random.int64(), silent: silent,
                                                     noWebpage: noWebpage, replyTo: replyTo))
    }

    /// `entities` with each mention by id the resolver knows made `inputMessageEntityMentionName`.
    static func inputEntities(_ entities: [Api.MessageEntity],
                              mentionedUser: @Sendable (Int64) async throws -> Api.InputUser?)
        async throws -> [Api.MessageEntity] {
        var out: [Api.MessageEntity] = []
        out.reserveCapacity(entities.count)
        for entity in entities {
            if case .messageEntityMentionName(let mention) = entity, let user = try await mentionedUser(mention.userId) {
                out.append(.inputMessageEntityMentionName(.init(offset: mention.offset, length: mention.length,
                                                                userId: user)))
            } else {
                out.append(entity)
            }
        }
        return out
    }

    /// The `messages.sendMessage` call for a text and its entities (no `entities` field when there are none).
    static func sendMessageCall(to peer: Api.InputPeer, text: String, entities: [Api.MessageEntity], randomID: Int64,
                                silent: Bool, noWebpage: Bool, replyTo: Api.InputReplyTo?)
        -> (FunctionDescription, Buffer, DeserializeFunctionResponse<Api.Updates>) {
        Api.functions.messages.sendMessage(noWebpage: noWebpage, silent: silent, peer: peer, replyTo: replyTo,
                                           message: text, randomId: randomID,
                                           entities: entities.isEmpty ? nil : entities)
    }
}

extension TelegramClient {
    /// A chat's messages, newest first from `start` (oldest first when `reverse`), through `messages.getHistory`.
    public nonisolated func history(of peer: Api.InputPeer, from start: HistoryStart = .newest, reverse: Bool = false,
                                    options: PagingOptions = PagingOptions()) -> MessageSequence {
        MessageSequence(client: self, source: .history(peer), start: start, reverse: reverse, options: options)
    }

    /// The messages of a chat whose text contains `query`, newest first, through `messages.search`.
    public nonisolated func search(in peer: Api.InputPeer, query: String,
                                   options: PagingOptions = PagingOptions()) -> MessageSequence {
        MessageSequence(client: self, source: .search(peer, query), start: .newest, reverse: false, options: options)
    }

    /// The account's dialogs as `messages.getDialogs` orders them (pinned ones first), each once; `folder` 0 is the
    /// main list, 1 the archive, nil both as Telegram mixes them.
    public nonisolated func dialogs(folder: Int32? = nil, excludePinned: Bool = false,
                                    options: PagingOptions = PagingOptions()) -> DialogSequence {
        DialogSequence(client: self, folder: folder, excludePinned: excludePinned, options: options)
    }

    /// Runs `call`, waiting out flood waits up to the options' bounds (the connection's own threshold may have
    /// waited some already).
    nonisolated func invokeWaiting<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                                options: PagingOptions) async throws -> T {
        var waits = 0
        while true {
            do {
                return try await invoke(call)
            } catch MTProtoClientError.rpc(let error) {
                guard case .floodWait(let seconds) = error.kind, seconds <= options.maxFloodWait,
                      waits < options.maxFloodWaits else { throw MTProtoClientError.rpc(error) }
                waits += 1
                try await Task.sleep(for: .seconds(max(1, seconds)))
            }
        }
    }
}
