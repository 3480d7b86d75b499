// Users, private chats and the update state (core.telegram.org/api/updates). Every account has its own message box
// (ids 1, 2, 3…) and pts; a private message is stored in both parties' boxes. Each state change adds one
// pts-carrying update to the account's log (pts_count 1) and goes out as an `updates` constructor whose seq is the
// account's next seq, so a client that misses one sees a pts or seq gap and catches up with
// `updates.getDifference`. A sender gets its update as the call's result; the recipient's sessions, and the sender's
// other sessions, get it pushed.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    func registerUsers(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.users.GetUsers.self) { [self] call, request throws(RPCError) in
            let me = try caller(call)
            let inputs = request.id
            guard inputs.count <= 200 else { throw RPCError(code: 400, message: "LIMIT_INVALID") }
            return state.withLock { state in
                // Unknown ids are left out, as Telegram does.
                inputs.compactMap { state.resolve($0, me: me) }.map { state.user($0, viewer: me) }
            }
        }
        handlers.on(Api.functions.users.GetFullUser.self) { [self] call, request throws(RPCError) in
            let me = try caller(call)
            let input = request.id
            let user = try state.withLock { state throws(RPCError) in
                guard let id = state.resolve(input, me: me) else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
                return (id, state.user(id, viewer: me))
            }
            return .userFull(.init(
                fullUser: .userFull(.init(id: user.0, settings: .peerSettings(.init()),
                                          notifySettings: .peerNotifySettings(.init()), commonChatsCount: 0)),
                chats: [], users: [user.1]))
        }
        handlers.on(Api.functions.contacts.ResolveUsername.self) { [self] call, request throws(RPCError) in
            let me = try caller(call)
            let username = request.username
            let found = try state.withLock { state throws(RPCError) in
                guard let id = state.usernames[username.lowercased()] else {
                    throw RPCError(code: 400, message: "USERNAME_NOT_OCCUPIED")
                }
                return (id, state.user(id, viewer: me))
            }
            return .resolvedPeer(.init(peer: .peerUser(.init(userId: found.0)), chats: [], users: [found.1]))
        }
    }

    func registerMessages(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.messages.SendMessage.self) { [self] call, request throws(RPCError) in
            let text = request.message
            guard !text.isEmpty else { throw RPCError(code: 400, message: "MESSAGE_EMPTY") }
            guard text.count <= 4096 else { throw RPCError(code: 400, message: "MESSAGE_TOO_LONG") }
            var content = OutgoingContent(text: text, entities: try Self.entities(request.entities, text: text),
                                          replyTo: Self.replyID(request.replyTo), silent: request.silent)
            content.replyMarkup = try keptMarkup(request.replyMarkup, from: try caller(call))
            return try send(call, peer: request.peer, randomID: request.randomId, content: content,
                            scheduleDate: request.scheduleDate)
        }
        handlers.on(Api.functions.messages.GetHistory.self, history)
        handlers.on(Api.functions.messages.GetDialogs.self) { [self] call, request throws(RPCError) in
            try refuseBots(call)
            return try dialogs(call, request)
        }
        handlers.on(Api.functions.messages.ReadHistory.self) { [self] call, request throws(RPCError) in
            try readHistory(call, peer: request.peer, maxID: request.maxId)
        }
    }

    func registerUpdates(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.updates.GetState.self) { [self] call, _ throws(RPCError) in
            let me = try caller(call)
            let state: (Int32, Int32, Int32, Int32) = self.state.withLock { state in
                state.accounts[me].map { ($0.pts, $0.seq, $0.totalUnread, state.secret.qts(of: me)) } ?? (1, 0, 0, 0)
            }
            return .state(.init(pts: state.0, qts: state.3, date: Self.date(call), seq: state.1, unreadCount: state.2))
        }
        handlers.on(Api.functions.updates.GetDifference.self) { [self] call, request throws(RPCError) in
            try difference(call, pts: request.pts, qts: request.qts, since: request.date)
        }
    }

    static func date(_ call: RPCCall) -> Int32 { Int32(clamping: Int64(call.now)) }

    // MARK: Sending

    /// Stores a message in the sender's box and the recipient's, and answers `updates` with `updateMessageID` and
    /// `updateNewMessage`; the recipient's sessions and the sender's others get theirs pushed. The message it answers
    /// is named in the recipient's box by its twin there. With a `schedule_date` still to come it is kept in the
    /// sender's scheduled messages instead (MessageOperationServices.swift) and sent to no one.
    func send(_ call: RPCCall, peer: Api.InputPeer, randomID: Int64, content: OutgoingContent,
              scheduleDate: Int32? = nil) throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        if let scheduleDate, scheduleDate > Self.date(call) {
            return try schedule(call, me: me, peer: peer, randomID: randomID, content: content, date: scheduleDate)
        }
        if case .inputPeerChannel(let channel) = peer {
            return try sendToChannel(call, me: me, channel: channel.channelId, accessHash: channel.accessHash,
                                     randomID: randomID, content: content)
        }
        return try sendPrivate(call, me: me, peer: peer, items: [(randomID, content)])
    }

    /// Stores messages in the sender's box and the recipient's, in order, all or none. Each side gets them in one
    /// `updates` (an album arrives together, as Telegram sends it): the sender's with an `updateMessageID` for each
    /// random_id, then each `updateNewMessage` with its own pts.
    func sendPrivate(_ call: RPCCall, me: Int64, peer: Api.InputPeer,
                     items: [(randomID: Int64, content: OutgoingContent)]) throws(RPCError) -> Api.Updates {
        let date = Self.date(call)
        let limit = limits
        let withheld = faults?.withholdMessagePush
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            guard let to = state.resolve(peer, me: me) else { throw RPCError(code: 400, message: "PEER_ID_INVALID") }
            let unregistered = RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")
            let users = state.users([me, to], viewer: me)
            let recipientUsers = state.users([me, to], viewer: to)
            // Checked before anything is stored, so a refused item leaves no part of the others behind.
            let (outIDs, replyTwins) = try state.modify(me, missing: unregistered) { sender throws(RPCError) -> ([Int32], [Int32?]) in
                var twins: [Int32?] = []
                for item in items {
                    if let reply = item.content.replyTo {
                        guard let answered = sender.messages[reply], answered.peer == to else {
                            throw RPCError(code: 400, message: "REPLY_MESSAGE_ID_INVALID")
                        }
                        twins.append(answered.twinID)
                    } else {
                        twins.append(nil)
                    }
                }
                guard Set(items.map(\.randomID)).count == items.count,
                      items.allSatisfy({ !sender.recentRandomIDs.contains($0.randomID) })
                else { throw RPCError(code: 400, message: "RANDOM_ID_DUPLICATE") }
                for item in items { _ = sender.remember(randomID: item.randomID) }
                let first = sender.nextMessageID
                sender.nextMessageID += Int32(items.count)
                return (items.indices.map { first + Int32($0) }, twins)
            }
            var inIDs: [Int32?] = Array(repeating: nil, count: items.count)
            var deliveries: [Delivery] = []
            let sentBefore = state.messagesSent
            state.messagesSent += items.count
            let withhold = withheld.map { $0 > sentBefore && $0 <= state.messagesSent } ?? false
            if to != me, state.accounts[to] != nil {
                let delivery = try state.modify(to, missing: unregistered) { recipient throws(RPCError) -> Delivery in
                    var updates: [Api.Update] = []
                    for (index, item) in items.enumerated() {
                        var incoming = StoredMessage(id: recipient.nextMessageID, peer: me, out: false, date: date,
                                                     content: item.content, twinID: outIDs[index])
                        incoming.replyTo = replyTwins[index].flatMap { recipient.messages[$0] == nil ? nil : $0 }
                        recipient.nextMessageID += 1
                        inIDs[index] = incoming.id
                        recipient.store(incoming, limit: limit.maxMessagesPerAccount)
                        let update = Api.Update.updateNewMessage(.init(message: incoming.api(owner: to),
                                                                       pts: recipient.pts &+ 1, ptsCount: 1))
                        recipient.log(update, limit: limit.maxUpdateLog)
                        updates.append(update)
                    }
                    recipient.seq &+= 1
                    return (to, .updates(.init(updates: updates, users: recipientUsers, chats: [], date: date,
                                               seq: recipient.seq)))
                }
                if !withhold { deliveries.append(delivery) }
            }
            let (newMessages, seq) = try state.modify(me, missing: unregistered) { sender throws(RPCError) -> ([Api.Update], Int32) in
                var updates: [Api.Update] = []
                for (index, item) in items.enumerated() {
                    let outgoing = StoredMessage(id: outIDs[index], peer: to, out: true, date: date,
                                                 content: item.content, twinID: inIDs[index])
                    sender.store(outgoing, limit: limit.maxMessagesPerAccount)
                    let update = Api.Update.updateNewMessage(.init(message: outgoing.api(owner: me), pts: sender.pts &+ 1,
                                                                   ptsCount: 1))
                    sender.log(update, limit: limit.maxUpdateLog)
                    updates.append(update)
                }
                sender.seq &+= 1
                return (updates, sender.seq)
            }
            deliveries.append((me, .updates(.init(updates: newMessages, users: users, chats: [], date: date, seq: seq))))
            let ids = items.indices.map { Api.Update.updateMessageID(.init(id: outIDs[$0], randomId: items[$0].randomID)) }
            let result = Api.Updates.updates(.init(updates: ids + newMessages, users: users, chats: [], date: date,
                                                   seq: seq))
            return (result, deliveries)
        }
        push(deliveries, except: call)
        return result
    }

    /// The message a send answers, when it answers one of the same chat.
    static func replyID(_ replyTo: Api.InputReplyTo?) -> Int32? {
        guard case .inputReplyToMessage(let reply)? = replyTo, reply.replyToPeerId == nil else { return nil }
        return reply.replyToMsgId
    }

    // MARK: Reading

    private func history(_ call: RPCCall, _ request: Api.functions.messages.GetHistory)
        throws(RPCError) -> Api.messages.Messages {
        let me = try caller(call)
        let peer = request.peer
        let paging = HistoryPaging(request)
        if case .inputPeerChannel(let channel) = peer {
            return try channelHistory(me: me, channel: channel.channelId, accessHash: channel.accessHash, paging: paging)
        }
        let page = try state.withLock { state throws(RPCError) -> Api.messages.Messages in
            guard let with = state.resolve(peer, me: me), let account = state.accounts[me] else {
                throw RPCError(code: 400, message: "PEER_ID_INVALID")
            }
            let all = paging.bounded(account.messages.values.filter { $0.peer == with }, id: \.id)
            let range = paging.range(in: all, id: \.id, date: \.date)
            let messages = all[range].map { $0.api(owner: me, media: state.current($0.media)) }
            let users = state.users([me, with], viewer: me)
            if range.count == all.count {
                return .messages(.init(messages: messages, topics: [], chats: [], users: users))
            }
            return .messagesSlice(.init(count: Int32(clamping: all.count), messages: messages, topics: [], chats: [],
                                        users: users))
        }
        return page
    }

    /// Private chats with a message and the channels the account is in: the pinned ones first in pin order (on the
    /// first page, unless `exclude_pinned`), then the others newest first, paged by the (offset_date, offset_id,
    /// offset_peer) of the previous page's last dialog (core.telegram.org/api/offsets). A channel's dialog carries its
    /// pts, where a client starts that channel's update box (core.telegram.org/api/updates). Everything is in the
    /// main folder (0): the archive (1) is empty.
    private func dialogs(_ call: RPCCall, _ request: Api.functions.messages.GetDialogs)
        throws(RPCError) -> Api.messages.Dialogs {
        let me = try caller(call)
        let offsetDate = request.offsetDate, offsetID = request.offsetId
        let offsetPeer = request.offsetPeer
        let excludePinned = request.excludePinned
        let folder = request.folderId
        var limit = Int(request.limit)
        if limit <= 0 || limit > 100 { limit = 100 }
        let result = state.withLock { state -> Api.messages.Dialogs in
            guard let account = state.accounts[me], folder ?? 0 == 0 else {
                return .dialogs(.init(dialogs: [], messages: [], chats: [], users: []))
            }
            var all = account.dialogs.filter { $0.value.topMessage > 0 }.map { peer, dialog in
                DialogEntry(date: dialog.topDate, top: dialog.topMessage, peer: peer, dialog: .dialog(.init(
                    pinned: account.pinned.contains(peer), peer: .peerUser(.init(userId: peer)), topMessage: dialog.topMessage,
                    readInboxMaxId: dialog.readInboxMaxID, readOutboxMaxId: dialog.readOutboxMaxID,
                    unreadCount: account.unreadCount(with: peer), unreadMentionsCount: 0, unreadReactionsCount: 0,
                    unreadPollVotesCount: 0, notifySettings: .peerNotifySettings(.init()))),
                            message: account.messages[dialog.topMessage]?.api(owner: me), users: [peer], chat: nil)
            }
            for channel in state.channels.values where channel.members[me] != nil {
                all.append(channel.dialog(viewer: me, pinned: account.pinned.contains(channel.id)))
            }
            // The peer id breaks ties, so the order does not depend on the tables' hashing.
            all.sort { ($0.date, $0.top, $0.peer) > ($1.date, $1.top, $1.peer) }
            let pinned = account.pinned.compactMap { peer in all.first { $0.peer == peer } }
            let others = all.filter { !account.pinned.contains($0.peer) }
            let total = excludePinned ? others.count : all.count
            let page: ArraySlice<DialogEntry>
            if offsetDate > 0 || offsetID > 0 {
                let peer: Int64 = switch offsetPeer {
                    case .inputPeerUser(let user): user.userId
                    case .inputPeerChannel(let channel): channel.channelId
                    default: 0
                }
                page = others.filter { ($0.date, $0.top, $0.peer) < (offsetDate, offsetID, peer) }.prefix(limit)
            } else {
                page = ((excludePinned ? [] : pinned) + others).prefix(limit)
            }
            let dialogs = page.map(\.dialog), messages = page.compactMap(\.message), chats = page.compactMap(\.chat)
            let users = state.users([me] + page.flatMap(\.users), viewer: me)
            if page.count == total { return .dialogs(.init(dialogs: dialogs, messages: messages, chats: chats, users: users)) }
            return .dialogsSlice(.init(count: Int32(clamping: total), dialogs: dialogs, messages: messages, chats: chats,
                                       users: users))
        }
        return result
    }

    /// Marks the chat read up to `max_id` in the reader's box; the other party learns its messages were read
    /// (`updateReadHistoryOutbox` with its own box's id).
    private func readHistory(_ call: RPCCall, peer: Api.InputPeer, maxID: Int32)
        throws(RPCError) -> Api.messages.AffectedMessages {
        let me = try caller(call)
        let date = Self.date(call)
        let limit = limits.maxUpdateLog
        let (pts, deliveries) = try state.withLock { state throws(RPCError) -> (Int32, [Delivery]) in
            let invalid = RPCError(code: 400, message: "PEER_ID_INVALID")
            guard let with = state.resolve(peer, me: me) else { throw invalid }
            let read = try state.modify(me, missing: invalid) { reader throws(RPCError) -> (pts: Int32, Delivery?, twinMax: Int32?) in
                var dialog = reader.dialogs[with] ?? DialogState()
                let upTo = maxID <= 0 ? dialog.topMessage : min(maxID, dialog.topMessage)
                guard upTo > dialog.readInboxMaxID else { return (reader.pts, nil, nil) }  // nothing new: pts_count 0
                dialog.readInboxMaxID = upTo
                reader.dialogs[with] = dialog
                let still = reader.unreadCount(with: with)
                let published = reader.publish({ .updateReadHistoryInbox(.init(
                    peer: .peerUser(.init(userId: with)), maxId: upTo, stillUnreadCount: still, pts: $0, ptsCount: 1)) },
                                                users: [], date: date, limit: limit)
                // The sender's box: its outgoing messages whose twins the reader has now read.
                let twinMax = reader.messages.values.filter { $0.peer == with && !$0.out && $0.id <= upTo }
                    .compactMap(\.twinID).max()
                return (reader.pts, (me, published.container), twinMax)
            }
            guard let inbox = read.1 else { return (read.pts, []) }
            var deliveries: [Delivery] = [inbox]
            if with != me, let twinMax = read.twinMax, let other = state.accounts[with],
               twinMax > (other.dialogs[me]?.readOutboxMaxID ?? 0) {
                deliveries.append(try state.modify(with, missing: invalid) { other throws(RPCError) -> Delivery in
                    other.dialogs[me, default: DialogState()].readOutboxMaxID = twinMax
                    let published = other.publish({ .updateReadHistoryOutbox(.init(
                        peer: .peerUser(.init(userId: me)), maxId: twinMax, pts: $0, ptsCount: 1)) },
                                                  users: [], date: date, limit: limit)
                    return (with, published.container)
                })
            }
            return (read.pts, deliveries)
        }
        push(deliveries, except: call)
        return .affectedMessages(.init(pts: pts, ptsCount: deliveries.isEmpty ? 0 : 1))
    }

    // MARK: Catching up

    /// `updates.getDifference` from the client's pts: the logged updates after it (new messages apart), or
    /// `differenceEmpty`, or `differenceTooLong` when the log no longer reaches back that far; with the encrypted
    /// messages after its qts and the secret chats' dated updates (EncryptedServices.swift), and in a final
    /// `difference` an `updateChannelTooLong` for each channel the account is behind in (ChannelServices.swift).
    private func difference(_ call: RPCCall, pts: Int32, qts: Int32, since: Int32)
        throws(RPCError) -> Api.updates.Difference {
        let me = try caller(call)
        let date = Self.date(call)
        let result = state.withLock { state -> Api.updates.Difference in
            guard let account = state.accounts[me] else { return .differenceEmpty(.init(date: date, seq: 0)) }
            let secret = state.secret.difference(for: me, qts: qts, since: since, limits: limits.secretChats)
            // Channels with messages the account is not known to have: only named, for getChannelDifference.
            let behind = state.channelsBehind(for: me)
            guard pts < account.pts || !secret.isEmpty || secret.tooLong || !behind.updates.isEmpty else {
                return .differenceEmpty(.init(date: date, seq: account.seq))
            }
            let oldest = account.updateLog.first?.pts ?? account.pts &+ 1
            guard pts >= oldest &- 1, !secret.tooLong else { return .differenceTooLong(.init(pts: account.pts)) }
            var messages: [Api.Message] = []
            var others: [Api.Update] = secret.updates
            var peers: [Int64] = [me] + secret.users
            for entry in account.updateLog where entry.pts > pts {
                if case .updateNewMessage(let new) = entry.update {
                    messages.append(new.message)
                    if case .message(let message) = new.message, case .peerUser(let user) = message.peerId {
                        peers.append(user.userId)
                    }
                } else {
                    others.append(entry.update)
                }
            }
            let reached = Api.updates.State.state(.init(pts: account.pts, qts: secret.qts, date: date, seq: account.seq,
                                                         unreadCount: account.totalUnread))
            guard secret.isFinal else {
                return .differenceSlice(.init(
                    newMessages: messages, newEncryptedMessages: secret.messages, otherUpdates: others, chats: [],
                    users: state.users(peers, viewer: me), intermediateState: reached))
            }
            return .difference(.init(
                newMessages: messages, newEncryptedMessages: secret.messages, otherUpdates: others + behind.updates,
                chats: behind.chats, users: state.users(peers, viewer: me), state: reached))
        }
        return result
    }
}

/// A row of `messages.getDialogs`, with what it needs in the answer's messages, chats and users.
struct DialogEntry {
    let date: Int32
    let top: Int32
    /// The user's or the channel's id.
    let peer: Int64
    let dialog: Api.Dialog
    let message: Api.Message?
    let users: [Int64]
    let chat: Api.Chat?
}

extension ServiceState {
    /// The user an input peer names, if it exists and the access hash is the one `me` was given (or the peer is
    /// named through a message `me` can see: PeerServices.swift).
    func resolve(_ peer: Api.InputPeer, me: Int64) -> Int64? {
        switch peer {
        case .inputPeerSelf: return me
        case .inputPeerUser(let user):
            guard let account = accounts[user.userId],
                  hash(account.accessHash, viewer: me) == user.accessHash else { return nil }
            return account.id
        case .inputPeerUserFromMessage(let from):
            return sender(from.userId, of: from.msgId, in: from.peer, me: me)
        default: return nil
        }
    }

    /// The user an input user names, by the same rules as its input peer.
    func resolve(_ user: Api.InputUser, me: Int64) -> Int64? {
        switch user {
        case .inputUserSelf: resolve(Api.InputPeer.inputPeerSelf, me: me)
        case .inputUser(let input):
            resolve(Api.InputPeer.inputPeerUser(.init(userId: input.userId, accessHash: input.accessHash)), me: me)
        case .inputUserFromMessage(let from):
            resolve(Api.InputPeer.inputPeerUserFromMessage(.init(peer: from.peer, msgId: from.msgId, userId: from.userId)),
                    me: me)
        default: nil
        }
    }
}

extension StoredMessage {
    /// The message as its box's owner sees it: outgoing ones carry `from_id`, incoming private ones only the peer
    /// (layer 119 and later). `media`, when given, stands for the stored media (the same with a current file
    /// reference).
    func api(owner: Int64, media current: Api.MessageMedia? = nil) -> Api.Message {
        let replyHeader = replyTo.map { Api.MessageReplyHeader.messageReplyHeader(.init(replyToMsgId: $0)) }
        if let action {
            return .messageService(.init(out: out, silent: silent, id: id,
                                         fromId: out ? .peerUser(.init(userId: owner)) : nil,
                                         peerId: .peerUser(.init(userId: peer)), replyTo: replyHeader, date: date,
                                         action: action))
        }
        return .message(.init(out: out, silent: silent, pinned: pinned, id: id,
                              fromId: out ? .peerUser(.init(userId: owner)) : nil, peerId: .peerUser(.init(userId: peer)),
                              fwdFrom: fwdFrom, viaBotId: viaBotID, replyTo: replyHeader, date: date, message: text,
                              media: current ?? media, replyMarkup: replyMarkup, entities: entities, editDate: editDate,
                              groupedId: groupedID,
                              reactions: reactions.entries.isEmpty ? nil : reactions.api(viewer: owner, list: true)))
    }
}

/// `messages.getHistory`'s paging: newest first; offset_id/offset_date pick where the page starts, add_offset moves it
/// (negative: towards newer messages), max_id/min_id bound the ids, limit is 1…100 (core.telegram.org/api/offsets).
struct HistoryPaging {
    let offsetID: Int32, offsetDate: Int32, addOffset: Int32, maxID: Int32, minID: Int32
    let limit: Int

    init(offsetID: Int32, offsetDate: Int32, addOffset: Int32, maxID: Int32, minID: Int32, limit asked: Int32) {
        self.offsetID = offsetID
        self.offsetDate = offsetDate
        self.addOffset = addOffset
        self.maxID = maxID
        self.minID = minID
        limit = asked <= 0 || asked > 100 ? 100 : Int(asked)
    }

    init(_ request: Api.functions.messages.GetHistory) {
        self.init(offsetID: request.offsetId, offsetDate: request.offsetDate, addOffset: request.addOffset,
                  maxID: request.maxId, minID: request.minId, limit: request.limit)
    }

    /// The messages within max_id/min_id, newest first.
    func bounded<T>(_ messages: some Sequence<T>, id: (T) -> Int32) -> [T] {
        messages.filter { (maxID <= 0 || id($0) < maxID) && id($0) > minID }.sorted { id($0) > id($1) }
    }

    /// The page's place in `all` (newest first).
    func range<T>(in all: [T], id: (T) -> Int32, date: (T) -> Int32) -> Range<Int> {
        var start = 0
        if offsetID > 0 {
            start = all.firstIndex { id($0) < offsetID } ?? all.count
        } else if offsetDate > 0 {
            start = all.firstIndex { date($0) < offsetDate } ?? all.count
        }
        // Both ends are clamped, so a negative add_offset near the newest message gives a shorter page rather than
        // one that reaches past offset_id.
        let lower = start + Int(addOffset), upper = lower + limit
        return min(max(0, lower), all.count)..<min(max(0, upper), all.count)
    }
}
