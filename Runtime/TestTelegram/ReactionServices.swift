// Reactions on messages (core.telegram.org/api/reactions): `messages.sendReaction` sets the caller's reactions on a
// message of a private chat or a channel (the list replaces the ones it had; none takes them back) and
// `messages.getMessagesReactions` reads them. Both answer with `updateMessageReactions`, which also reaches the
// other party of a private chat (under its own box's id) and every member of a channel, each seeing its own
// choices (`chosen_order`, `my`). Accounts here have no Premium: one reaction each (REACTIONS_TOO_MANY past it),
// from the standard emoji Telegram lists in `messages.getAvailableReactions` (REACTION_INVALID otherwise), or a
// custom emoji. Reactions carry no pts, so `updateMessageReactions` is pushed and not logged for getDifference, as
// Telegram does; a message carries its reactions in `messages.getHistory` and the rest.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    func registerReactions(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.messages.SendReaction.self, sendReaction)
        handlers.on(Api.functions.messages.GetMessagesReactions.self, messagesReactions)
    }

    /// `messages.sendReaction` (errors per core.telegram.org/method/messages.sendReaction): REACTION_EMPTY for a
    /// `reactionEmpty` in the list, REACTION_INVALID for an emoji Telegram does not offer or a paid reaction,
    /// REACTIONS_TOO_MANY past one, MESSAGE_ID_INVALID for a message the chat does not have (or a service message),
    /// PEER_ID_INVALID for a peer the caller cannot name (basic groups keep no messages here), CHANNEL_PRIVATE for
    /// a channel it is not in, CHAT_SEND_REACTIONS_FORBIDDEN for a member whose send_reactions right is taken.
    private func sendReaction(_ call: RPCCall, _ request: Api.functions.messages.SendReaction)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let keys = try Self.reactionKeys(request.reaction ?? [])
        let peer = request.peer, id = request.msgId, big = request.big
        let date = Self.date(call)
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let change = try state.react(me, peer: peer, message: id, date: date) { reactions in
                reactions.set(me, keys, date: date, big: big)
            }
            return state.reactionDeliveries(change, me: me, date: date)
        }
        push(deliveries, except: call)
        return result
    }

    /// `messages.getMessagesReactions`: `updateMessageReactions` for each of the messages (at most 100) the chat has.
    private func messagesReactions(_ call: RPCCall, _ request: Api.functions.messages.GetMessagesReactions)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let peer = request.peer, ids = request.id
        guard ids.count <= 100 else { throw RPCError(code: 400, message: "MESSAGE_IDS_TOO_MUCH") }
        let date = Self.date(call)
        return try state.withLock { state throws(RPCError) -> Api.Updates in
            var updates: [Api.Update] = [], users: [Int64] = [], chats: [Api.Chat] = []
            for id in ids {
                let change: ReactionChange
                do throws(RPCError) {
                    change = try state.react(me, peer: peer, message: id, date: date) { _ in }
                } catch {
                    guard error.message == "MESSAGE_ID_INVALID" else { throw error }
                    continue
                }
                updates.append(.updateMessageReactions(.init(peer: change.chat, msgId: id,
                                                             reactions: change.reactions.api(viewer: me,
                                                                                             list: change.showsList))))
                users += change.reactions.users
                if let channel = change.channel, chats.isEmpty { chats = [channel.api(viewer: me)] }
            }
            if case .inputPeerUser = peer, let with = state.resolve(peer, me: me) { users.append(with) }
            return .updates(.init(updates: updates, users: state.users(users, viewer: me), chats: chats, date: date,
                                  seq: 0))
        }
    }

    /// The reactions a request lists, as stored.
    static func reactionKeys(_ list: [Api.Reaction]) throws(RPCError) -> [ReactionKey] {
        var keys: [ReactionKey] = []
        for reaction in list {
            let key: ReactionKey
            switch reaction {
                case .reactionEmpty: throw RPCError(code: 400, message: "REACTION_EMPTY")
                case .reactionPaid: throw RPCError(code: 400, message: "REACTION_INVALID")
                case .reactionCustomEmoji(let r):
                    guard r.documentId != 0 else { throw RPCError(code: 400, message: "REACTION_INVALID") }
                    key = .custom(r.documentId)
                case .reactionEmoji(let r):
                    // Telegram's emoticons carry no variation selector ("❤", not "❤️").
                    let bare = String(String.UnicodeScalarView(r.emoticon.unicodeScalars.filter { $0.value != 0xFE0F }))
                    guard ReactionKey.available.contains(bare) else { throw RPCError(code: 400, message: "REACTION_INVALID") }
                    key = .emoji(bare)
            }
            if !keys.contains(key) { keys.append(key) }
        }
        guard keys.count <= 1 else { throw RPCError(code: 400, message: "REACTIONS_TOO_MANY") }
        return keys
    }
}

/// A reaction as stored: an emoji or a custom emoji's document.
enum ReactionKey: Hashable {
    case emoji(String)
    case custom(Int64)

    var api: Api.Reaction {
        switch self {
            case .emoji(let emoticon): .reactionEmoji(.init(emoticon: emoticon))
            case .custom(let id): .reactionCustomEmoji(.init(documentId: id))
        }
    }

    /// The emoji Telegram offers every chat by default (`messages.getAvailableReactions`).
    static let available: Set<String> = [
        "👍", "👎", "❤", "🔥", "🥰", "👏", "😁", "🤔", "🤯", "😱", "🤬", "😢", "🎉", "🤩", "🤮", "💩", "🙏", "👌", "🕊",
        "🤡", "🥱", "🥴", "😍", "🐳", "❤\u{200D}🔥", "🌚", "🌭", "💯", "🤣", "⚡", "🍌", "🏆", "💔", "🤨", "😐", "🍓",
        "🍾", "💋", "🖕", "😈", "😴", "😭", "🤓", "👻", "👨\u{200D}💻", "👀", "🎃", "🙈", "😇", "😨", "🤝", "✍", "🤗",
        "🫡", "🎅", "🎄", "☃", "💅", "🤪", "🗿", "🆒", "💘", "🙉", "🦄", "😘", "💊", "🙊", "😎", "👾",
        "🤷\u{200D}♂", "🤷", "🤷\u{200D}♀", "😡",
    ]
}

/// Who reacted to one message with what: one entry a reacting peer, so as large as the chat at most.
struct StoredReactions {
    struct Entry {
        var reactions: [ReactionKey]
        var date: Int32
        var big: Bool
        /// When it was set, for the recent list and `chosen_order`.
        var order: Int
    }

    var entries: [Int64: Entry] = [:]
    var nextOrder = 0

    /// The reacting users, newest first.
    var users: [Int64] { entries.sorted { $0.value.order > $1.value.order }.map(\.key) }

    /// Sets `user`'s reactions (none: takes them back).
    mutating func set(_ user: Int64, _ reactions: [ReactionKey], date: Int32, big: Bool) {
        guard !reactions.isEmpty else {
            entries[user] = nil
            return
        }
        nextOrder += 1
        entries[user] = Entry(reactions: reactions, date: date, big: big, order: nextOrder)
    }

    /// The reactions as `viewer` sees them: each with its count, most chosen first (ties: first chosen first), the
    /// viewer's own with `chosen_order`; with `list`, the latest reactions (at most 3, as Telegram shows) with who
    /// sent them.
    func api(viewer: Int64, list: Bool) -> Api.MessageReactions {
        var counts: [ReactionKey: (count: Int, first: Int)] = [:]
        for entry in entries.values {
            for key in entry.reactions {
                let known = counts[key]
                counts[key] = ((known?.count ?? 0) + 1, min(known?.first ?? .max, entry.order))
            }
        }
        let mine = entries[viewer]?.reactions ?? []
        let results = counts.sorted { a, b in
            a.value.count != b.value.count ? a.value.count > b.value.count : a.value.first < b.value.first
        }.map { item in
            Api.ReactionCount.reactionCount(.init(
                chosenOrder: mine.firstIndex(of: item.key).map { Int32($0 + 1) }, reaction: item.key.api,
                count: Int32(clamping: item.value.count)))
        }
        var recent: [Api.MessagePeerReaction] = []
        for item in entries.sorted(by: { $0.value.order > $1.value.order }).prefix(3) where list {
            for key in item.value.reactions {
                recent.append(.messagePeerReaction(.init(
                    big: item.value.big, my: item.key == viewer, peerId: .peerUser(.init(userId: item.key)),
                    date: item.value.date, reaction: key.api)))
            }
        }
        return .messageReactions(.init(canSeeList: list, results: results, recentReactions: list ? recent : nil))
    }
}

/// One message's reactions after a change, and where the message is.
struct ReactionChange {
    /// The chat as the caller names it in updates.
    let chat: Api.Peer
    /// The message, in the caller's box or the channel.
    let messageID: Int32
    let reactions: StoredReactions
    /// The recent list is shown (private chats and supergroups; not broadcast channels).
    let showsList: Bool
    /// The channel the message is in, as it is now; nil for a private chat.
    let channel: Channel?
    /// A private chat's other party and its box's id of the message (nil for Saved Messages and channels).
    let twin: (user: Int64, id: Int32)?
}

extension ServiceState {
    /// Runs `change` on the reactions of message `id` of the chat `peer` names, kept the same in both boxes of a
    /// private chat, and returns them.
    mutating func react(_ me: Int64, peer: Api.InputPeer, message id: Int32, date: Int32,
                        _ change: (inout StoredReactions) -> Void) throws(RPCError) -> ReactionChange {
        let missing = RPCError(code: 400, message: "MESSAGE_ID_INVALID")
        if case .inputPeerChannel(let input) = peer {
            let channelID = try self.channelID(id: input.channelId, accessHash: input.accessHash, viewer: me)
            return try modifyChannel(channelID) { channel throws(RPCError) -> ReactionChange in
                try channel.checkMember(me)
                if channel.roster.restriction(me, now: date)?.sendReactions == true {
                    throw RPCError(code: 403, message: "CHAT_SEND_REACTIONS_FORBIDDEN")
                }
                guard var message = channel.messages[id], message.action == nil else { throw missing }
                change(&message.reactions)
                channel.messages[id] = message
                return ReactionChange(chat: .peerChannel(.init(channelId: channelID)), messageID: id,
                                      reactions: message.reactions, showsList: !channel.broadcast, channel: channel,
                                      twin: nil)
            }
        }
        guard let with = resolve(peer, me: me) else { throw RPCError(code: 400, message: "PEER_ID_INVALID") }
        guard var message = accounts[me]?.messages[id], message.peer == with, message.action == nil else { throw missing }
        change(&message.reactions)
        accounts[me]?.messages[id] = message
        var twin: (user: Int64, id: Int32)?
        if with != me, let twinID = message.twinID, accounts[with]?.messages[twinID] != nil {
            accounts[with]?.messages[twinID]?.reactions = message.reactions
            twin = (with, twinID)
        }
        return ReactionChange(chat: .peerUser(.init(userId: with)), messageID: id, reactions: message.reactions,
                              showsList: true, channel: nil, twin: twin)
    }

    /// The caller's answer to a reaction and the `updateMessageReactions` pushed: to the other party of a private
    /// chat (and the caller's other sessions), to every member of a channel signed in somewhere.
    func reactionDeliveries(_ change: ReactionChange, me: Int64, date: Int32) -> (Api.Updates, [Delivery]) {
        let named = change.showsList ? change.reactions.users : []
        func container(for viewer: Int64, peer: Api.Peer, id: Int32, users extra: [Int64]) -> Api.Updates {
            let update = Api.Update.updateMessageReactions(.init(
                peer: peer, msgId: id, reactions: change.reactions.api(viewer: viewer, list: change.showsList)))
            if let channel = change.channel {
                return .updates(.init(updates: [update], users: members(named, viewer: viewer),
                                      chats: [channel.api(viewer: viewer)], date: date, seq: 0))
            }
            return .updates(.init(updates: [update], users: users(extra + named, viewer: viewer), chats: [], date: date,
                                  seq: 0))
        }
        if let channel = change.channel {
            let deliveries = channel.members.keys.sorted().filter { accounts[$0]?.keys.isEmpty == false }.map { member in
                (member, container(for: member, peer: change.chat, id: change.messageID, users: []))
            }
            return (container(for: me, peer: change.chat, id: change.messageID, users: []), deliveries)
        }
        var other: [Int64] = []
        if case .peerUser(let with) = change.chat { other = [with.userId] }
        let result = container(for: me, peer: change.chat, id: change.messageID, users: other)
        var deliveries: [Delivery] = [(me, result)]
        if let twin = change.twin {
            deliveries.append((twin.user, container(for: twin.user, peer: .peerUser(.init(userId: me)), id: twin.id,
                                                    users: [me])))
        }
        return (result, deliveries)
    }
}
