// What an app does to messages once they are sent, as Telegram answers it: forwarding (new messages in the
// destination, each with a `fwd_from` header naming the original author unless `drop_author`), getting messages by
// id, pinning and unpinning (`updatePinnedMessages` to both parties of a private chat and a service message saying
// so; `updatePinnedChannelMessages` to a channel's members), reading a channel, and scheduled sends. Every state
// change moves the box it changes by one pts and reaches the other party's sessions as it does on Telegram.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    /// Telegram's bound on scheduled messages per chat (SCHEDULE_TOO_MUCH).
    static let maxScheduledPerChat = 100

    func registerMessageOperations(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.messages.ForwardMessages.self, forward)
        handlers.on(Api.functions.messages.GetMessages.self, getMessages)
        handlers.on(Api.functions.channels.GetMessages.self, getChannelMessages)
        handlers.on(Api.functions.messages.UpdatePinnedMessage.self, updatePin)
        handlers.on(Api.functions.channels.ReadHistory.self, readChannel)
    }

    // MARK: Forwarding

    /// `messages.forwardMessages`: each message of `from_peer` among `id` sent anew to `to_peer` with its
    /// random_id, as `sendMessage` sends one (so the recipients get theirs pushed), keeping its text, entities and
    /// media; ids the source has no message for are passed over, and when none is left the answer is
    /// MESSAGE_ID_INVALID with nothing sent. The answer is one container of every send's updates.
    private func forward(_ call: RPCCall, _ request: Api.functions.messages.ForwardMessages)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let ids = request.id, randomIDs = request.randomId
        guard !ids.isEmpty else { throw RPCError(code: 400, message: "MESSAGE_IDS_EMPTY") }
        guard ids.count == randomIDs.count else { throw RPCError(code: 400, message: "RANDOM_ID_INVALID") }
        guard ids.count <= 100 else { throw RPCError(code: 400, message: "MESSAGE_IDS_TOO_MUCH") }
        let source = request.fromPeer
        let dropAuthor = request.dropAuthor, dropCaptions = request.dropMediaCaptions, silent = request.silent
        let originals = try state.withLock { state throws(RPCError) -> [(index: Int, content: OutgoingContent)] in
            var found: [(index: Int, content: OutgoingContent)] = []
            if case .inputPeerChannel(let input) = source {
                let channel = try state.channel(.inputChannel(.init(channelId: input.channelId,
                                                                    accessHash: input.accessHash)), viewer: me)
                try channel.checkMember(me)
                for (index, id) in ids.enumerated() {
                    guard let message = channel.messages[id], message.action == nil else { continue }
                    let author: Api.MessageFwdHeader = channel.broadcast
                        ? .messageFwdHeader(.init(fromId: .peerChannel(.init(channelId: channel.id)), date: message.date,
                                                  channelPost: message.id))
                        : .messageFwdHeader(.init(fromId: .peerUser(.init(userId: message.sender)), date: message.date))
                    found.append((index, OutgoingContent(text: message.text, media: message.media,
                                                         entities: message.entities, fwdFrom: message.fwdFrom ?? author)))
                }
            } else {
                guard let from = state.resolve(source, me: me), let account = state.accounts[me] else {
                    throw RPCError(code: 400, message: "PEER_ID_INVALID")
                }
                for (index, id) in ids.enumerated() {
                    guard let message = account.messages[id], message.peer == from, message.action == nil else { continue }
                    // A forward of a forward names the first author, as Telegram's does.
                    let author = Api.MessageFwdHeader.messageFwdHeader(.init(
                        fromId: .peerUser(.init(userId: message.out ? me : message.peer)), date: message.date))
                    found.append((index, OutgoingContent(text: message.text, media: message.media,
                                                         entities: message.entities, fwdFrom: message.fwdFrom ?? author)))
                }
            }
            return found
        }
        guard !originals.isEmpty else { throw RPCError(code: 400, message: "MESSAGE_ID_INVALID") }
        var results: [Api.Updates] = []
        for original in originals {
            var content = original.content
            content.silent = silent
            if dropAuthor { content.fwdFrom = nil }
            if dropCaptions, content.media != nil { (content.text, content.entities) = ("", nil) }
            results.append(try send(call, peer: request.toPeer, randomID: randomIDs[original.index], content: content))
        }
        return Self.combined(results, date: Self.date(call))
    }

    /// Several answers as one: their updates in order, the users and chats once each, and the seq range they
    /// cover (`updatesCombined` when it is more than one: core.telegram.org/api/updates#seq).
    static func combined(_ results: [Api.Updates], date: Int32) -> Api.Updates {
        var updates: [Api.Update] = [], users: [Api.User] = [], chats: [Api.Chat] = []
        var userIDs = Set<Int64>(), chatIDs = Set<Int64>(), seqs: [Int32] = []
        for case .updates(let u) in results {
            updates += u.updates
            for case .user(let user) in u.users where userIDs.insert(user.id).inserted { users.append(.user(user)) }
            for chat in u.chats where chat.chatID.map({ chatIDs.insert($0).inserted }) ?? true { chats.append(chat) }
            if u.seq != 0 { seqs.append(u.seq) }
        }
        if let first = seqs.first, let last = seqs.last, seqs.count > 1 {
            return .updatesCombined(.init(updates: updates, users: users, chats: chats, date: date, seqStart: first,
                                          seq: last))
        }
        return .updates(.init(updates: updates, users: users, chats: chats, date: date, seq: seqs.last ?? 0))
    }

    // MARK: Getting

    /// `messages.getMessages`: the caller's box's messages by id (a private chat's ids are the account's, across its
    /// chats), `messageEmpty` for an id it has none for, and for an input other than `inputMessageID`.
    private func getMessages(_ call: RPCCall, _ request: Api.functions.messages.GetMessages)
        throws(RPCError) -> Api.messages.Messages {
        let me = try caller(call)
        let inputs = request.id
        guard inputs.count <= 200 else { throw RPCError(code: 400, message: "LIMIT_INVALID") }
        recordFetches(inputs.compactMap { input in
            if case .inputMessageID(let wanted) = input { .user(me, wanted.id) } else { nil }
        })
        return state.withLock { state in
            let account = state.accounts[me]
            var peers: [Int64] = [me]
            let messages = inputs.map { input -> Api.Message in
                guard case .inputMessageID(let wanted) = input else { return .messageEmpty(.init(id: 0)) }
                guard let message = account?.messages[wanted.id] else { return .messageEmpty(.init(id: wanted.id)) }
                peers.append(message.peer)
                return message.api(owner: me, media: state.current(message.media))
            }
            return .messages(.init(messages: messages, topics: [], chats: [], users: state.users(peers, viewer: me)))
        }
    }

    /// `channels.getMessages`: a channel's messages by id, for members, as `messages.channelMessages`.
    private func getChannelMessages(_ call: RPCCall, _ request: Api.functions.channels.GetMessages)
        throws(RPCError) -> Api.messages.Messages {
        let me = try caller(call)
        let inputs = request.id
        guard inputs.count <= 200 else { throw RPCError(code: 400, message: "LIMIT_INVALID") }
        let input = request.channel
        if case .inputChannel(let named) = input {
            recordFetches(inputs.compactMap { input in
                if case .inputMessageID(let wanted) = input { .channel(named.channelId, wanted.id) } else { nil }
            })
        }
        return try state.withLock { state throws(RPCError) in
            let channel = try state.channel(input, viewer: me)
            try channel.checkMember(me)
            var found: [ChannelMessage] = []
            let messages = inputs.map { input -> Api.Message in
                guard case .inputMessageID(let wanted) = input else { return .messageEmpty(.init(id: 0)) }
                guard let message = channel.messages[wanted.id] else { return .messageEmpty(.init(id: wanted.id)) }
                found.append(message)
                return message.api(in: channel, viewer: me, media: state.current(message.media))
            }
            return .channelMessages(.init(
                pts: channel.pts, count: Int32(messages.count), messages: messages, topics: [],
                chats: [channel.api(viewer: me)],
                users: state.members(channel.broadcast ? [] : found.map(\.sender), viewer: me)))
        }
    }

    // MARK: Pinning

    /// `messages.updatePinnedMessage` in a private chat: the message (and its twin, unless `pm_oneside`) pinned or
    /// unpinned in each box with `updatePinnedMessages`; a pin also posts a service message
    /// (`messageActionPinMessage`, answering the pinned message) in each box. The caller's updates are its answer,
    /// the other party's pushed. A channel's pin is `pinInChannel`.
    private func updatePin(_ call: RPCCall, _ request: Api.functions.messages.UpdatePinnedMessage)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let peer = request.peer, id = request.id
        let pin = !request.unpin, oneSide = request.pmOneside, silent = request.silent
        if case .inputPeerChannel(let channel) = peer {
            return try pinInChannel(call, me: me, channel: channel, id: id, pin: pin, silent: silent)
        }
        let date = Self.date(call)
        let limit = limits
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let invalid = RPCError(code: 400, message: "PEER_ID_INVALID")
            guard let with = state.resolve(peer, me: me) else { throw invalid }
            guard let message = state.accounts[me]?.messages[id], message.peer == with, message.action == nil else {
                throw RPCError(code: 400, message: "MESSAGE_ID_INVALID")
            }
            let twin = oneSide || with == me ? nil : message.twinID.flatMap { state.accounts[with]?.messages[$0] }
            // Each box's service message names the other's as its twin.
            let notice = pin && !oneSide
            let mineNotice = state.accounts[me]?.nextMessageID ?? 0
            let theirNotice = twin == nil ? nil : state.accounts[with]?.nextMessageID
            func change(_ owner: Int64, _ messageID: Int32, chat: Int64, out: Bool, noticeID: Int32?,
                        noticeTwin: Int32?, users: [Api.User]) throws(RPCError) -> [Api.Updates] {
                try state.modify(owner, missing: invalid) { account throws(RPCError) -> [Api.Updates] in
                    account.messages[messageID]?.pinned = pin
                    var containers = [account.publish({ .updatePinnedMessages(.init(
                        pinned: pin, peer: .peerUser(.init(userId: chat)), messages: [messageID], pts: $0, ptsCount: 1)) },
                                                      users: users, date: date, limit: limit.maxUpdateLog).container]
                    if let noticeID {
                        let service = StoredMessage(id: noticeID, peer: chat, out: out, date: date, text: "", media: nil,
                                                    twinID: noticeTwin, replyTo: messageID, silent: silent,
                                                    action: .messageActionPinMessage)
                        account.nextMessageID = noticeID + 1
                        account.store(service, limit: limit.maxMessagesPerAccount)
                        containers.append(account.publish({ .updateNewMessage(.init(
                            message: service.api(owner: owner), pts: $0, ptsCount: 1)) },
                                                          users: users, date: date, limit: limit.maxUpdateLog).container)
                    }
                    return containers
                }
            }
            let mine = try change(me, id, chat: with, out: true, noticeID: notice ? mineNotice : nil,
                                  noticeTwin: notice ? theirNotice : nil, users: state.users([me, with], viewer: me))
            var deliveries: [Delivery] = mine.map { (me, $0) }
            if let twin {
                let theirs = try change(with, twin.id, chat: me, out: false, noticeID: notice ? theirNotice : nil,
                                        noticeTwin: notice ? mineNotice : nil, users: state.users([me, with], viewer: with))
                deliveries += theirs.map { (with, $0) }
            }
            return (Self.combined(mine, date: date), deliveries)
        }
        push(deliveries, except: call)
        return result
    }

    /// A pin in a channel (only its creator may, in a broadcast channel): the message's `pinned` flag,
    /// `updatePinnedChannelMessages` with the channel's next pts to every member, and for a pin a service message.
    private func pinInChannel(_ call: RPCCall, me: Int64, channel input: Api.InputPeer.Cons_inputPeerChannel, id: Int32,
                              pin: Bool, silent: Bool) throws(RPCError) -> Api.Updates {
        let date = Self.date(call)
        let limit = limits
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let channelID = try state.channelID(id: input.channelId, accessHash: input.accessHash, viewer: me)
            let (channel, notice) = try state.modifyChannel(channelID) { channel throws(RPCError) -> (Channel, ChannelMessage?) in
                try channel.checkPoster(me)
                guard channel.messages[id]?.action == nil, channel.messages[id] != nil else {
                    throw RPCError(code: 400, message: "MESSAGE_ID_INVALID")
                }
                channel.pin([id], pinned: pin, limits: limit)
                channel.delivered(pts: channel.pts, to: me)
                var notice: ChannelMessage?
                if pin {
                    var service = channel.post(from: me, date: date,
                                               content: OutgoingContent(text: "", replyTo: id, silent: silent), limits: limit)
                    service.action = .messageActionPinMessage
                    channel.messages[service.id] = service
                    if case .new = channel.log.last?.entry { channel.log[channel.log.count - 1].entry = .new(service) }
                    channel.delivered(pts: channel.pts, to: me)
                    notice = service
                }
                return (channel, notice)
            }
            let pinPts = notice == nil ? channel.pts : channel.pts - 1
            func updates(for viewer: Int64) -> [Api.Update] {
                var list: [Api.Update] = [.updatePinnedChannelMessages(.init(
                    pinned: pin, channelId: channel.id, messages: [id], pts: pinPts, ptsCount: 1))]
                if let notice {
                    list.append(.updateNewChannelMessage(.init(message: notice.api(in: channel, viewer: viewer),
                                                               pts: channel.pts, ptsCount: 1)))
                }
                return list
            }
            let senders = channel.broadcast ? [] : [me]
            let deliveries = channel.members.keys.sorted().map { member in
                (member, Api.Updates.updates(.init(updates: updates(for: member), users: state.members(senders, viewer: member),
                                                   chats: [channel.api(viewer: member)], date: date, seq: 0)))
            }
            let result = Api.Updates.updates(.init(updates: updates(for: me), users: state.members(senders, viewer: me),
                                                   chats: [channel.api(viewer: me)], date: date, seq: 0))
            return (result, deliveries)
        }
        push(deliveries, except: call)
        return result
    }

    // MARK: Reading a channel

    /// `channels.readHistory`: the reader's inbox read up to `max_id` (0: the newest message), pushed to its other
    /// sessions as `updateReadChannelInbox`; each other member whose messages that reaches gets
    /// `updateReadChannelOutbox` with its newest one read. Channels keep no pts for reads.
    private func readChannel(_ call: RPCCall, _ request: Api.functions.channels.ReadHistory) throws(RPCError) -> Bool {
        let me = try caller(call)
        let input = request.channel, maxID = request.maxId
        let date = Self.date(call)
        let deliveries = try state.withLock { state throws(RPCError) -> [Delivery] in
            let id = try state.channelID(input, viewer: me)
            let (channel, upTo, authors) = try state.modifyChannel(id) { channel throws(RPCError) -> (Channel, Int32, [Int64: Int32]) in
                try channel.checkMember(me)
                let newest = channel.messageOrder.last ?? 0
                let upTo = maxID <= 0 ? newest : min(maxID, newest)
                guard upTo > channel.readInbox[me, default: 0] else { return (channel, 0, [:]) }
                channel.readInbox[me] = upTo
                // Each author's newest message the read reaches, past what it was told before.
                var authors: [Int64: Int32] = [:]
                for message in channel.messages.values where message.id <= upTo && message.sender != me
                    && message.action == nil && channel.members[message.sender] != nil {
                    authors[message.sender] = max(authors[message.sender] ?? 0, message.id)
                }
                authors = authors.filter { $0.value > channel.readOutbox[$0.key, default: 0] }
                for (author, read) in authors { channel.readOutbox[author] = read }
                return (channel, upTo, authors)
            }
            guard upTo > 0 else { return [] }
            let chats = { (viewer: Int64) in [channel.api(viewer: viewer)] }
            var deliveries: [Delivery] = [(me, .updates(.init(
                updates: [.updateReadChannelInbox(.init(channelId: id, maxId: upTo, stillUnreadCount: 0, pts: channel.pts))],
                users: [], chats: chats(me), date: date, seq: 0)))]
            for (author, read) in authors.sorted(by: { $0.key < $1.key }) {
                deliveries.append((author, .updates(.init(
                    updates: [.updateReadChannelOutbox(.init(channelId: id, maxId: read))], users: [], chats: chats(author),
                    date: date, seq: 0))))
            }
            return deliveries
        }
        push(deliveries, except: call)
        return true
    }

    // MARK: Scheduling

    /// A send with a `schedule_date` still to come, in a private chat: kept in the sender's scheduled messages
    /// (their own ids) and answered `updateMessageID` and `updateNewScheduledMessage`, which the sender's other
    /// sessions get too. It is not sent at its date; nothing but the sender sees it.
    func schedule(_ call: RPCCall, me: Int64, peer: Api.InputPeer, randomID: Int64, content: OutgoingContent,
                  date: Int32) throws(RPCError) -> Api.Updates {
        if case .inputPeerChannel = peer { throw RPCError(code: 400, message: "SCHEDULE_CHANNEL_NOT_SUPPORTED") }
        let now = Self.date(call)
        let result = try state.withLock { state throws(RPCError) -> Api.Updates in
            guard let to = state.resolve(peer, me: me) else { throw RPCError(code: 400, message: "PEER_ID_INVALID") }
            let message = try state.modify(me, missing: RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")) {
                account throws(RPCError) -> StoredMessage in
                guard account.scheduled.values.lazy.filter({ $0.peer == to }).count < Self.maxScheduledPerChat else {
                    throw RPCError(code: 400, message: "SCHEDULE_TOO_MUCH")
                }
                guard account.remember(randomID: randomID) else { throw RPCError(code: 400, message: "RANDOM_ID_DUPLICATE") }
                let message = StoredMessage(id: account.nextScheduledID, peer: to, out: true, date: date, content: content,
                                            twinID: nil)
                account.nextScheduledID += 1
                account.scheduled[message.id] = message
                return message
            }
            return .updates(.init(updates: [.updateMessageID(.init(id: message.id, randomId: randomID)),
                                            .updateNewScheduledMessage(.init(message: message.api(owner: me)))],
                                  users: state.users([me, to], viewer: me), chats: [], date: now, seq: 0))
        }
        push(result, to: me, except: call)
        return result
    }
}

extension Channel {
    /// Pins or unpins messages, logged with the next pts (pts_count 1).
    mutating func pin(_ ids: [Int32], pinned: Bool, limits: TestTelegramService.Limits) {
        for id in ids { messages[id]?.pinned = pinned }
        pts &+= 1
        log.append((pts, 1, .pinned(ids, pinned)))
        if log.count > limits.maxChannelLog { log.removeFirst(log.count - limits.maxChannelLog) }
    }
}

extension Api.Chat {
    /// The chat's id, for the constructors that carry one.
    var chatID: Int64? {
        switch self {
            case .chat(let c): c.id
            case .chatForbidden(let c): c.id
            case .channel(let c): c.id
            case .channelForbidden(let c): c.id
            case .chatEmpty(let c): c.id
            default: nil
        }
    }
}
