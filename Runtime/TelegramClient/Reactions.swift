// Reactions on messages (core.telegram.org/api/reactions): the account sets its own reactions on a message with
// `messages.sendReaction` (the list replaces what it had; an empty list takes them back) and reads a message's with
// `messages.getMessagesReactions`. Both answer with `updateMessageReactions`, the update that also tells a message's
// author and a channel's members when the reactions change; `MessageReactions` reads its counts and recent reactors.
import Foundation
import MTProto
import MTProtoClient
import TelegramApi

/// A reaction: an emoji, or a custom emoji by its sticker document.
public enum Reaction: Sendable, Hashable, CustomStringConvertible {
    /// A standard emoji, as Telegram lists them in `messages.getAvailableReactions` ("👍", "❤", "🔥"…).
    case emoji(String)
    /// A custom emoji, by the id of its document (`reactionCustomEmoji`).
    case customEmoji(documentID: Int64)
    /// A paid (Telegram Stars) reaction: read from updates, never sent by `react`.
    case paid

    /// The reaction as `messages.sendReaction` takes it.
    public var api: Api.Reaction {
        switch self {
            case .emoji(let emoticon): .reactionEmoji(.init(emoticon: emoticon))
            case .customEmoji(let id): .reactionCustomEmoji(.init(documentId: id))
            case .paid: .reactionPaid
        }
    }

    /// The reaction an `Api.Reaction` names; nil for `reactionEmpty`.
    public init?(_ reaction: Api.Reaction) {
        switch reaction {
            case .reactionEmoji(let r): self = .emoji(r.emoticon)
            case .reactionCustomEmoji(let r): self = .customEmoji(documentID: r.documentId)
            case .reactionPaid: self = .paid
            case .reactionEmpty: return nil
        }
    }

    /// The emoji itself, `custom:ID` or `paid`.
    public var description: String {
        switch self {
            case .emoji(let emoticon): emoticon
            case .customEmoji(let id): "custom:\(id)"
            case .paid: "paid"
        }
    }
}

/// The reactions on one message, as an update or a message carries them (`messageReactions`).
public struct MessageReactions: Sendable {
    /// How many chose one reaction.
    public struct Count: Sendable, Hashable {
        /// The reaction.
        public let reaction: Reaction
        /// How many peers reacted with it.
        public let count: Int
        /// Set when this account chose it too: the larger, the more recently.
        public let chosenOrder: Int?
    }

    /// One peer's recent reaction (shown in private chats and groups, not in broadcast channels).
    public struct Recent: Sendable, Hashable {
        /// Who reacted.
        public let peer: PeerID
        /// With what.
        public let reaction: Reaction
        /// When.
        public let date: Date
        /// This account's own reaction.
        public let isMine: Bool
        /// Sent with the big animation.
        public let isBig: Bool
        /// Not yet seen by this account (a reaction to one of its messages).
        public let isUnread: Bool
    }

    /// Every reaction with its count, most chosen first, as Telegram orders them.
    public let counts: [Count]
    /// The latest reactions with who sent them; empty where Telegram does not show them.
    public let recent: [Recent]
    /// Whether `messages.getMessageReactionsList` may list who reacted.
    public let canSeeList: Bool
    /// A `min` value: the counts without this account's own choices (core.telegram.org/api/reactions).
    public let isMin: Bool
    /// The value as it came.
    public let raw: Api.MessageReactions

    /// The reactions this account chose, oldest first.
    public var mine: [Reaction] {
        counts.filter { $0.chosenOrder != nil }.sorted { ($0.chosenOrder ?? 0) < ($1.chosenOrder ?? 0) }.map(\.reaction)
    }

    /// How many reacted with `reaction` (0 when nobody did).
    public func count(of reaction: Reaction) -> Int { counts.first { $0.reaction == reaction }?.count ?? 0 }

    /// Reads a `messageReactions` value; reactions of kinds this client does not know are left out.
    public init(_ reactions: Api.MessageReactions) {
        guard case .messageReactions(let r) = reactions else {
            counts = []
            recent = []
            canSeeList = false
            isMin = false
            raw = reactions
            return
        }
        counts = r.results.compactMap { result in
            guard case .reactionCount(let c) = result, let reaction = Reaction(c.reaction) else { return nil }
            return Count(reaction: reaction, count: Int(c.count), chosenOrder: c.chosenOrder.map(Int.init))
        }
        recent = (r.recentReactions ?? []).compactMap { item in
            guard case .messagePeerReaction(let p) = item, let reaction = Reaction(p.reaction) else { return nil }
            return Recent(peer: PeerID(p.peerId), reaction: reaction,
                          date: Date(timeIntervalSince1970: TimeInterval(p.date)), isMine: p.my, isBig: p.big,
                          isUnread: p.unread)
        }
        canSeeList = r.canSeeList
        isMin = r.min
        raw = reactions
    }
}

/// The reactions on a message changed (`updateMessageReactions`): someone reacted, changed or took a reaction back.
public struct MessageReactionsEvent: Sendable {
    /// The chat the message is in (the other user of a private chat).
    public let chat: EventPeer
    /// The message, in this account's box for private chats and basic groups, the channel's otherwise.
    public let messageID: Int32
    /// The forum topic's first message, when the message is in one.
    public let topMessageID: Int32?
    /// The reactions as they now are.
    public let reactions: MessageReactions
}

extension TelegramClient {
    /// Sets the account's reaction on a message to `reaction`, replacing any it had (`messages.sendReaction`).
    /// - Parameters:
    ///   - messageID: The message, by its id in `chat`.
    ///   - chat: The chat it is in.
    ///   - reaction: An emoji or a custom emoji.
    ///   - big: Play the big animation.
    /// - Returns: The message's reactions as they now are, when the answer carries them.
    /// - Throws: `ChatError.messageNotFound` for a message the chat does not have, `.reactionInvalid` for a reaction
    ///   the chat does not allow, `.chatInaccessible`, or the server's error.
    @discardableResult
    public func react(to messageID: Int32, in chat: PeerID, with reaction: Reaction,
                      big: Bool = false) async throws -> MessageReactions? {
        try await setReactions([reaction], on: messageID, in: chat, big: big)
    }

    /// Sets the account's reactions on a message (several need Telegram Premium: `ChatError.reactionsTooMany`
    /// without it); an empty list takes them back.
    /// - Throws: As ``react(to:in:with:big:)``; `ChatError.reactionInvalid` for `.paid` (nothing sent).
    @discardableResult
    public func setReactions(_ reactions: [Reaction], on messageID: Int32, in chat: PeerID,
                             big: Bool = false) async throws -> MessageReactions? {
        guard !reactions.contains(.paid) else { throw ChatError.reactionInvalid }
        let peer = try await inputPeer(for: chat)
        let updates = try await chatCall(Api.functions.messages.sendReaction(
            big: big, peer: peer, msgId: messageID, reaction: reactions.map(\.api)))
        return Self.reactions(in: updates)[messageID]
    }

    /// Takes the account's reactions on a message back.
    /// - Throws: As ``react(to:in:with:big:)``.
    @discardableResult
    public func removeReaction(from messageID: Int32, in chat: PeerID) async throws -> MessageReactions? {
        try await setReactions([], on: messageID, in: chat)
    }

    /// The reactions on messages of a chat (`messages.getMessagesReactions`, at most 100 ids), by message id; a
    /// message the chat does not have is left out.
    public func reactions(on messageIDs: [Int32], in chat: PeerID) async throws -> [Int32: MessageReactions] {
        guard messageIDs.count <= 100 else { throw ChatError.invalidText("at most 100 messages at once") }
        guard !messageIDs.isEmpty else { return [:] }
        let peer = try await inputPeer(for: chat)
        return Self.reactions(in: try await chatCall(Api.functions.messages.getMessagesReactions(peer: peer,
                                                                                                 id: messageIDs)))
    }

    /// The `updateMessageReactions` of an answer, by message id.
    static func reactions(in updates: Api.Updates) -> [Int32: MessageReactions] {
        let list: [Api.Update] = switch updates {
            case .updates(let u): u.updates
            case .updatesCombined(let u): u.updates
            case .updateShort(let u): [u.update]
            default: []
        }
        var found: [Int32: MessageReactions] = [:]
        for case .updateMessageReactions(let u) in list { found[u.msgId] = MessageReactions(u.reactions) }
        return found
    }
}
