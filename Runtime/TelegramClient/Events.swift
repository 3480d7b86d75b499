// Typed events: each `Api.Updates` the update sequence delivers (ordered, each once) taken apart into what an app
// switches on, with the sender and chat resolved from the container's users and chats and the peer cache.
import TelegramApi

/// A user or chat an event names, with what is known of it.
public struct EventPeer: Sendable {
    /// The peer's kind and id.
    public let id: PeerID
    /// The user as the update's container carried it, if it did.
    public let user: Api.User?
    /// The group or channel as the update's container carried it, if it did.
    public let chat: Api.Chat?
    /// How to name it in a call (nil when neither a hash nor a message naming it is known).
    public let input: Api.InputPeer?
}

/// One typed event of `TelegramClient.events`.
public enum UpdateEvent: Sendable {
    /// A message arrived or was sent (by this account too, from any of its sessions).
    case newMessage(MessageEvent)
    /// A message was edited.
    case editedMessage(MessageEvent)
    /// Messages were deleted.
    case deletedMessages(DeletedMessagesEvent)
    /// A chat was read up to a message: by this account (`outbox` false) or by the other side (`outbox` true).
    case readHistory(ReadHistoryEvent)
    /// A user came online or went offline.
    case userStatus(UserStatusEvent)
    /// Someone is typing (or uploading, recording…) in a chat.
    case typing(TypingEvent)
    /// A button of an inline keyboard on one of this account's messages was pressed (for bots).
    case callbackQuery(CallbackQueryEvent)
    /// Someone joined or left a group or channel.
    case participant(ParticipantEvent)
    /// Messages were pinned or unpinned in a chat.
    case pinnedMessages(PinnedMessagesEvent)
    /// A user typed an inline query to this bot (BotTypes.swift).
    case inlineQuery(InlineQueryEvent)
    /// The reactions on a message changed.
    case messageReactions(MessageReactionsEvent)
    /// An album arrived or was sent: two or more messages sharing a grouped_id that came together, in one event
    /// instead of a ``newMessage(_:)`` for each. A grouped message that comes alone (an album of one, or an item
    /// that came in an update of its own) is a ``newMessage(_:)`` whose message carries its `grouped_id`.
    case album(AlbumEvent)
}

/// An album: two or more new messages of one chat sharing a grouped_id, in the order they came.
public struct AlbumEvent: Sendable {
    /// The album's id (each message's `grouped_id`).
    public let groupedID: Int64
    /// Its messages, each as a message event would carry it.
    public let messages: [MessageEvent]

    /// The chat it is in.
    public var chat: EventPeer { messages[0].chat }
    /// Who sent it.
    public var sender: EventPeer? { messages[0].sender }
    /// Sent by this account.
    public var outgoing: Bool { messages[0].outgoing }
    /// The messages read into their ids, captions, media and the rest.
    public var chatMessages: [ChatMessage] { messages.compactMap(\.chatMessage) }
}

/// A new or edited message.
public struct MessageEvent: Sendable {
    /// The message as the update carried it.
    public let message: Api.Message
    /// The chat it is in: the other user of a private chat, the group or the channel.
    public let chat: EventPeer
    /// Who sent it (nil for a channel post without a sender).
    public let sender: EventPeer?
    /// Sent by this account.
    public let outgoing: Bool

    /// The message read into its id, chat, sender, text and the rest (nil for `messageEmpty`).
    public var chatMessage: ChatMessage? { ChatMessage(message) }

    /// The album the message is in.
    var groupedID: Int64? {
        if case .message(let m) = message { return m.groupedId }
        return nil
    }
}

/// Deleted messages.
public struct DeletedMessagesEvent: Sendable {
    /// The ids deleted (in the account's own box for private chats and basic groups, the channel's otherwise).
    public let ids: [Int32]
    /// The channel they were in; nil for private chats and basic groups (Telegram does not say which chat).
    public let channel: EventPeer?
}

/// Messages pinned or unpinned.
public struct PinnedMessagesEvent: Sendable {
    /// The chat they are in.
    public let chat: EventPeer
    /// The messages, in the chat's ids as this account sees them.
    public let ids: [Int32]
    /// True when they were pinned, false when unpinned.
    public let pinned: Bool
}

/// A chat read up to a message.
public struct ReadHistoryEvent: Sendable {
    /// The chat read.
    public let chat: EventPeer
    /// Messages up to this id are read.
    public let maxID: Int32
    /// True when the other side read this account's messages; false when this account read the chat.
    public let outbox: Bool
}

/// A user's online status.
public struct UserStatusEvent: Sendable {
    /// The user whose status changed.
    public let user: EventPeer
    /// Online (with its expiry), offline (since when), or an approximate status.
    public let status: Api.UserStatus
}

/// A typing (or other chat action) notice.
public struct TypingEvent: Sendable {
    /// The chat it happens in (the typist itself in a private chat).
    public let chat: EventPeer
    /// Who is typing.
    public let sender: EventPeer
    /// What they are doing (typing, uploading, recording…).
    public let action: Api.SendMessageAction
}

/// A pressed inline keyboard button.
public struct CallbackQueryEvent: Sendable {
    /// The press's id; answer it with `TelegramClient.answer(_:text:alert:url:cacheTime:)`.
    public let queryID: Int64
    /// Who pressed the button.
    public let sender: EventPeer
    /// The chat the message with the button is in.
    public let chat: EventPeer
    /// The message with the button, in this account's box.
    public let messageID: Int32
    /// The button's data.
    public let data: [UInt8]?
}

/// Someone joined or left a group or channel, or a member's role changed.
public struct ParticipantEvent: Sendable {
    /// What happened to the member.
    public enum Change: Sendable, Hashable {
        /// It joined, or was added.
        case joined
        /// It left, or was removed without a ban.
        case left
        /// It was banned (out of the chat and kept out).
        case banned
        /// Some of its rights were taken (still a member).
        case restricted
        /// It was made an admin, or its admin rights changed.
        case promoted
        /// It is a plain member again: admin rights taken, or a restriction lifted.
        case demoted
    }

    /// The group or channel.
    public let chat: EventPeer
    /// The member concerned.
    public let user: EventPeer
    /// Who added, removed, banned or promoted the user, when that is said.
    public let actor: EventPeer?
    /// True when the user joined, false otherwise.
    public let joined: Bool
    /// What happened.
    public let change: Change
    /// The member before the change, when the update says (`updateChannelParticipant`, `updateChatParticipant`);
    /// nil when it was not a member or the update does not say.
    public let previous: ChatMember?
    /// The member after the change, likewise; nil once it is out of the chat.
    public let current: ChatMember?

    init(chat: EventPeer, user: EventPeer, actor: EventPeer?, joined: Bool, previous: ChatMember? = nil,
         current: ChatMember? = nil, change: Change? = nil) {
        self.chat = chat
        self.user = user
        self.actor = actor
        self.joined = change.map { $0 == .joined } ?? joined
        self.change = change ?? (joined ? .joined : .left)
        self.previous = previous
        self.current = current
    }

    /// The change from one member to the next, as `updateChannelParticipant` gives both.
    static func change(from previous: ChatMember?, to current: ChatMember?) -> Change {
        func inChat(_ member: ChatMember?) -> Bool {
            guard let member else { return false }
            if case .banned = member.role { return false }
            return true
        }
        func admin(_ member: ChatMember?) -> Bool {
            switch member?.role {
                case .admin?, .creator?: true
                default: false
            }
        }
        if let current, case .banned = current.role { return .banned }
        guard inChat(current) else { return .left }
        guard inChat(previous) else { return .joined }
        if admin(current) { return .promoted }
        if case .restricted? = current?.role { return .restricted }
        return .demoted
    }
}

extension TelegramClient {
    /// Takes a delivered `Api.Updates` apart into typed events, after the cache learned its users and chats.
    func emitEvents(for updates: Api.Updates) {
        let list: [Api.Update], users: [Api.User], chats: [Api.Chat]
        switch updates {
            case .updates(let u): (list, users, chats) = (u.updates, u.users, u.chats)
            case .updatesCombined(let u): (list, users, chats) = (u.updates, u.users, u.chats)
            case .updateShort(let u): (list, users, chats) = ([u.update], [], [])
            case .updateShortMessage(let m):
                let peer = Api.Peer.peerUser(.init(userId: m.userId))
                let me = peerCache.selfUser.map(\.peer)
                let message = Api.Message.message(.init(
                    out: m.out, mentioned: m.mentioned, mediaUnread: m.mediaUnread, silent: m.silent, id: m.id,
                    fromId: m.out ? me : peer, peerId: peer, fwdFrom: m.fwdFrom, viaBotId: m.viaBotId, replyTo: m.replyTo,
                    date: m.date, message: m.message, entities: m.entities, ttlPeriod: m.ttlPeriod))
                (list, users, chats) = ([.updateNewMessage(.init(message: message, pts: m.pts, ptsCount: m.ptsCount))], [], [])
            case .updateShortChatMessage(let m):
                let message = Api.Message.message(.init(
                    out: m.out, mentioned: m.mentioned, mediaUnread: m.mediaUnread, silent: m.silent, id: m.id,
                    fromId: .peerUser(.init(userId: m.fromId)), peerId: .peerChat(.init(chatId: m.chatId)),
                    fwdFrom: m.fwdFrom, viaBotId: m.viaBotId, replyTo: m.replyTo, date: m.date, message: m.message,
                    entities: m.entities, ttlPeriod: m.ttlPeriod))
                (list, users, chats) = ([.updateNewMessage(.init(message: message, pts: m.pts, ptsCount: m.ptsCount))], [], [])
            default:
                return
        }
        let context = EventContext(users: users, chats: chats)
        let events = list.compactMap { event(for: $0, context) }
        // An album's messages come in one container (core.telegram.org/api/files#albums-grouped-media): gathered
        // into one event where the first of them was.
        var albums: [Int64: [MessageEvent]] = [:]
        for case .newMessage(let new) in events {
            if let group = new.groupedID { albums[group, default: []].append(new) }
        }
        for event in events {
            if case .newMessage(let new) = event, let message = ChatMessage(new.message) { messageArrived(message) }
            guard case .newMessage(let new) = event, let group = new.groupedID else {
                eventsSink.yield(event)
                continue
            }
            if let album = albums.removeValue(forKey: group) {
                eventsSink.yield(album.count == 1 ? event : .album(AlbumEvent(groupedID: group, messages: album)))
            }
        }
    }

    private struct EventContext {
        var users: [Int64: Api.User] = [:]
        var chats: [Int64: Api.Chat] = [:]

        /// The users by peer, as `ChatMember` takes them.
        var peerUsers: [PeerID: Api.User] {
            Dictionary(uniqueKeysWithValues: users.map { (PeerID.user($0.key), $0.value) })
        }

        init(users: [Api.User], chats: [Api.Chat]) {
            for case .user(let u) in users { self.users[u.id] = .user(u) }
            for chat in chats {
                switch chat {
                    case .chat(let c): self.chats[c.id] = chat
                    case .chatForbidden(let c): self.chats[c.id] = chat
                    case .channel(let c): self.chats[c.id] = chat
                    case .channelForbidden(let c): self.chats[c.id] = chat
                    default: continue
                }
            }
        }
    }

    private func peer(_ id: PeerID, _ context: EventContext) -> EventPeer {
        EventPeer(id: id, user: id.kind == .user ? context.users[id.id] : nil,
                  chat: id.kind == .user ? nil : context.chats[id.id], input: peerCache.inputPeer(for: id))
    }

    private func event(for update: Api.Update, _ context: EventContext) -> UpdateEvent? {
        switch update {
            case .updateNewMessage(let u): return messageEvent(u.message, context, edited: false)
            case .updateNewChannelMessage(let u): return messageEvent(u.message, context, edited: false)
            case .updateEditMessage(let u): return messageEvent(u.message, context, edited: true)
            case .updateEditChannelMessage(let u): return messageEvent(u.message, context, edited: true)
            case .updateDeleteMessages(let u): return .deletedMessages(.init(ids: u.messages, channel: nil))
            case .updateDeleteChannelMessages(let u):
                return .deletedMessages(.init(ids: u.messages, channel: peer(.channel(u.channelId), context)))
            case .updateReadHistoryInbox(let u):
                return .readHistory(.init(chat: peer(PeerID(u.peer), context), maxID: u.maxId, outbox: false))
            case .updateReadHistoryOutbox(let u):
                return .readHistory(.init(chat: peer(PeerID(u.peer), context), maxID: u.maxId, outbox: true))
            case .updateReadChannelInbox(let u):
                return .readHistory(.init(chat: peer(.channel(u.channelId), context), maxID: u.maxId, outbox: false))
            case .updateReadChannelOutbox(let u):
                return .readHistory(.init(chat: peer(.channel(u.channelId), context), maxID: u.maxId, outbox: true))
            case .updateUserStatus(let u):
                return .userStatus(.init(user: peer(.user(u.userId), context), status: u.status))
            case .updateUserTyping(let u):
                let user = peer(.user(u.userId), context)
                return .typing(.init(chat: user, sender: user, action: u.action))
            case .updateChatUserTyping(let u):
                return .typing(.init(chat: peer(.chat(u.chatId), context), sender: peer(PeerID(u.fromId), context),
                                     action: u.action))
            case .updateChannelUserTyping(let u):
                return .typing(.init(chat: peer(.channel(u.channelId), context), sender: peer(PeerID(u.fromId), context),
                                     action: u.action))
            case .updatePinnedMessages(let u):
                return .pinnedMessages(.init(chat: peer(PeerID(u.peer), context), ids: u.messages, pinned: u.pinned))
            case .updatePinnedChannelMessages(let u):
                return .pinnedMessages(.init(chat: peer(.channel(u.channelId), context), ids: u.messages,
                                             pinned: u.pinned))
            case .updateBotCallbackQuery(let u):
                return .callbackQuery(.init(queryID: u.queryId, sender: peer(.user(u.userId), context),
                                            chat: peer(PeerID(u.peer), context), messageID: u.msgId, data: u.data))
            case .updateBotInlineQuery(let u):
                return .inlineQuery(.init(queryID: u.queryId, sender: peer(.user(u.userId), context), query: u.query,
                                          offset: u.offset, peerType: u.peerType, geo: u.geo))
            case .updateChatParticipantAdd(let u):
                return .participant(.init(chat: peer(.chat(u.chatId), context), user: peer(.user(u.userId), context),
                                          actor: peer(.user(u.inviterId), context), joined: true))
            case .updateChatParticipantDelete(let u):
                return .participant(.init(chat: peer(.chat(u.chatId), context), user: peer(.user(u.userId), context),
                                          actor: nil, joined: false))
            case .updateChannelParticipant(let u):
                let users = context.peerUsers
                // A `channelParticipantLeft` is no member at all.
                func member(_ p: Api.ChannelParticipant?) -> ChatMember? {
                    guard let p else { return nil }
                    if case .channelParticipantLeft = p { return nil }
                    return ChatMember(p, users: users)
                }
                let previous = member(u.prevParticipant), current = member(u.newParticipant)
                let change = ParticipantEvent.change(from: previous, to: current)
                return .participant(.init(chat: peer(.channel(u.channelId), context), user: peer(.user(u.userId), context),
                                          actor: peer(.user(u.actorId), context), joined: change == .joined,
                                          previous: previous, current: current, change: change))
            case .updateChatParticipant(let u):
                let users = context.peerUsers
                let previous = u.prevParticipant.map { ChatMember($0, users: users) }
                let current = u.newParticipant.map { ChatMember($0, users: users) }
                let change = ParticipantEvent.change(from: previous, to: current)
                return .participant(.init(chat: peer(.chat(u.chatId), context), user: peer(.user(u.userId), context),
                                          actor: peer(.user(u.actorId), context), joined: change == .joined,
                                          previous: previous, current: current, change: change))
            case .updateChatParticipantAdmin(let u):
                return .participant(.init(chat: peer(.chat(u.chatId), context), user: peer(.user(u.userId), context),
                                          actor: nil, joined: false, change: u.isAdmin ? .promoted : .demoted))
            case .updateMessageReactions(let u):
                return .messageReactions(.init(chat: peer(PeerID(u.peer), context), messageID: u.msgId,
                                               topMessageID: u.topMsgId, reactions: MessageReactions(u.reactions)))
            default:
                return nil
        }
    }

    /// A message, or for a service message that adds or removes members, a participant event.
    private func messageEvent(_ message: Api.Message, _ context: EventContext, edited: Bool) -> UpdateEvent? {
        switch message {
            case .message(let m):
                let event = MessageEvent(message: message, chat: peer(PeerID(m.peerId), context),
                                         sender: m.fromId.map { peer(PeerID($0), context) }
                                             ?? (m.peerId.isUser && !m.out ? peer(PeerID(m.peerId), context) : nil),
                                         outgoing: m.out)
                return edited ? .editedMessage(event) : .newMessage(event)
            case .messageService(let m):
                let chat = peer(PeerID(m.peerId), context), actor = m.fromId.map { peer(PeerID($0), context) }
                switch m.action {
                    case .messageActionChatAddUser(let a):
                        guard let user = a.users.first else { return nil }
                        return .participant(.init(chat: chat, user: peer(.user(user), context), actor: actor, joined: true))
                    case .messageActionChatDeleteUser(let a):
                        return .participant(.init(chat: chat, user: peer(.user(a.userId), context), actor: actor,
                                                  joined: false))
                    case .messageActionChatJoinedByLink, .messageActionChatJoinedByRequest:
                        guard let actor else { return nil }
                        return .participant(.init(chat: chat, user: actor, actor: nil, joined: true))
                    default:
                        return nil
                }
            case .messageEmpty:
                return nil
        }
    }
}

extension Api.Peer {
    /// A private chat's peer.
    var isUser: Bool {
        if case .peerUser = self { return true }
        return false
    }
}
