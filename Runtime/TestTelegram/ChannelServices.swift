// Channels: supergroups (megagroups) and broadcast channels (core.telegram.org/api/channel). A channel keeps its own
// message ids (1, 2, 3…), its own pts and a bounded log of its pts-carrying updates, apart from its members' boxes:
// it is an update box of its own, caught up with `updates.getChannelDifference` (core.telegram.org/api/updates,
// "Recovering gaps"). A message is stored once, in the channel; each member sees it with its own `out`. The common
// `updates.getDifference` only names the channels a member is behind in (`updateChannelTooLong`), from the pts the
// service knows each member to have. Unlike Telegram, creating a channel and inviting to it make no service
// messages, so only sent messages move a channel's pts.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    func registerChannels(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.channels.CreateChannel.self, createChannel)
        handlers.on(Api.functions.channels.InviteToChannel.self, invite)
        handlers.on(Api.functions.channels.GetChannels.self) { [self] call, request throws(RPCError) in
            let me = try caller(call)
            let inputs = request.id
            guard inputs.count <= 200 else { throw RPCError(code: 400, message: "LIMIT_INVALID") }
            let chats = try state.withLock { state throws(RPCError) in
                try inputs.map { input throws(RPCError) in try state.channel(input, viewer: me).api(viewer: me) }
            }
            return Api.messages.Chats.chats(.init(chats: chats))
        }
        handlers.on(Api.functions.channels.DeleteMessages.self, deleteMessages)
        handlers.on(Api.functions.channels.LeaveChannel.self, leave)
        handlers.on(Api.functions.updates.GetChannelDifference.self, channelDifference)
    }

    // MARK: Making and joining

    /// A channel with the caller as its creator and only member, announced with `updateChannel` (seq 0: channel
    /// updates are outside the common box's seq).
    private func createChannel(_ call: RPCCall, _ request: Api.functions.channels.CreateChannel)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let title = request.title, about = request.about
        guard !title.allSatisfy(\.isWhitespace) else { throw RPCError(code: 400, message: "CHAT_TITLE_EMPTY") }
        guard about.count <= 255 else { throw RPCError(code: 400, message: "CHAT_ABOUT_TOO_LONG") }
        // Without `megagroup` a channel is a broadcast channel, as Telegram makes it; for_import, forum, geo and
        // ttl are ignored.
        let broadcast = !request.megagroup
        let accessHash = random.int64()
        let date = Self.date(call)
        let limit = limits
        let result = try state.withLock { state throws(RPCError) -> Api.Updates in
            guard state.accounts[me] != nil else { throw RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED") }
            guard state.channels.count < limit.maxChannels, limit.maxChannelMembers > 0 else {
                throw RPCError(code: 400, message: "CHANNELS_TOO_MUCH")
            }
            let id = state.nextChannelID
            state.nextChannelID += 1
            // A title is kept to 128 characters, so its size is bounded like everything else.
            var channel = Channel(id: id, accessHash: accessHash, title: String(title.prefix(128)), about: about,
                                  broadcast: broadcast, creator: me, date: date, members: [me: 1])
            channel.sharedHashes = state.sharedHashes
            state.channels[id] = channel
            return .updates(.init(updates: [.updateChannel(.init(channelId: id))], users: [],
                                  chats: [channel.api(viewer: me)], date: date, seq: 0))
        }
        push(result, to: me, except: call)
        return result
    }

    /// Adds users to a channel (any member may in a supergroup, only the creator in a broadcast channel); those
    /// already in it are left as they are. Each new member is known to have the channel's pts as it is now, and
    /// gets `updateChannel` pushed.
    private func invite(_ call: RPCCall, _ request: Api.functions.channels.InviteToChannel)
        throws(RPCError) -> Api.messages.InvitedUsers {
        let me = try caller(call)
        let input = request.channel
        let inputs = request.users
        guard inputs.count <= 200 else { throw RPCError(code: 400, message: "USERS_TOO_MUCH") }
        let date = Self.date(call)
        let maxMembers = limits.maxChannelMembers
        let limit = limits, announces = announcesMembers
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let id = try state.channelID(input, viewer: me)
            var users: [Int64] = []
            for user in inputs {
                guard let resolved = state.resolve(user, me: me) else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
                users.append(resolved)
            }
            let (channel, added, notice) = try state.modifyChannel(id) { channel throws(RPCError) -> (Channel, [Int64], ChannelMessage?) in
                try channel.checkMember(me)
                guard !channel.broadcast || channel.creator == me else {
                    throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED")
                }
                var added: [Int64] = []
                for user in users where channel.members[user] == nil && !added.contains(user) { added.append(user) }
                guard channel.members.count + added.count <= maxMembers else {
                    throw RPCError(code: 400, message: "USERS_TOO_MUCH")
                }
                for user in added {
                    channel.members[user] = channel.pts
                    channel.roster.join(user, inviter: me, date: date)
                }
                let notice = announces && !channel.broadcast && !added.isEmpty
                    ? channel.announce(.messageActionChatAddUser(.init(users: added)), by: me, date: date, limits: limit) : nil
                return (channel, added, notice)
            }
            var deliveries = added.map { user in
                (user, Api.Updates.updates(.init(updates: [.updateChannel(.init(channelId: id))], users: [],
                                                 chats: [channel.api(viewer: user)], date: date, seq: 0)))
            }
            for user in added {
                deliveries += state.participantNotices(user, in: channel, by: me, before: nil, date: date)
            }
            var updates: [Api.Update] = [.updateChannel(.init(channelId: id))]
            if let notice {
                deliveries += state.noticeDeliveries(notice, in: channel, date: date)
                updates.append(.updateNewChannelMessage(.init(message: notice.api(in: channel, viewer: me), pts: channel.pts,
                                                              ptsCount: 1)))
            }
            let result = Api.Updates.updates(.init(updates: updates,
                                                   users: state.users(added, viewer: me),
                                                   chats: [channel.api(viewer: me)], date: date, seq: 0))
            return (result, deliveries)
        }
        push(deliveries, except: call)
        return Api.messages.InvitedUsers.invitedUsers(.init(updates: result, missingInvitees: []))
    }

    /// `channels.leaveChannel`: the caller is no longer a member (the creator cannot leave: `USER_CREATOR`, as
    /// Telegram answers before ownership moves). The answer, and the caller's other sessions, carry `updateChannel`
    /// with the channel as `channelForbidden`: what a client sees once it is out.
    private func leave(_ call: RPCCall, _ request: Api.functions.channels.LeaveChannel)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let input = request.channel
        let date = Self.date(call)
        let (result, notices) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let id = try state.channelID(input, viewer: me)
            let before = state.channels[id]?.standing(of: me, now: date)
            let channel = try state.modifyChannel(id) { channel throws(RPCError) -> Channel in
                try channel.checkMember(me)
                guard channel.creator != me else { throw RPCError(code: 400, message: "USER_CREATOR") }
                channel.members[me] = nil
                return channel
            }
            return (.updates(.init(updates: [.updateChannel(.init(channelId: id))], users: [],
                                   chats: [channel.api(viewer: me)], date: date, seq: 0)),
                    state.participantNotices(me, in: channel, by: me, before: before, date: date))
        }
        push(result, to: me, except: call)
        push(notices, except: call)
        return result
    }

    // MARK: Sending and reading

    /// Stores a message in the channel with the channel's next pts; the sender gets `updateMessageID` and
    /// `updateNewChannelMessage` as the result, every other member's sessions (and the sender's others) get the
    /// `updateNewChannelMessage` pushed. Only the sender is then known to have the new pts: a push is queued to a
    /// session, which may have no connection (a closed client's), so it proves nothing; the members catch up through
    /// the `updateChannelTooLong` of their next getDifference and their getChannelDifference.
    func sendToChannel(_ call: RPCCall, me: Int64, channel input: Int64, accessHash: Int64, randomID: Int64,
                       content: OutgoingContent) throws(RPCError) -> Api.Updates {
        let (result, deliveries) = try postToChannel(call, me: me, channel: input, accessHash: accessHash,
                                                     randomID: randomID, content: content)
        push(deliveries, except: call)
        return result
    }

    /// `sendToChannel` without the push: the sender's answer and what each member (the sender's other sessions
    /// included) is to be sent.
    func postToChannel(_ call: RPCCall, me: Int64, channel input: Int64, accessHash: Int64, randomID: Int64,
                       content: OutgoingContent) throws(RPCError) -> (Api.Updates, [Delivery]) {
        let date = Self.date(call)
        let limit = limits
        let withheld = faults?.withholdMessagePush
        return try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let id = try state.channelID(id: input, accessHash: accessHash, viewer: me)
            try state.channels[id]?.checkPoster(me, media: content.media != nil, now: date)
            if let reply = content.replyTo, state.channels[id]?.messages[reply] == nil {
                throw RPCError(code: 400, message: "REPLY_MESSAGE_ID_INVALID")
            }
            try state.modify(me, missing: RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")) { sender throws(RPCError) in
                guard sender.remember(randomID: randomID) else { throw RPCError(code: 400, message: "RANDOM_ID_DUPLICATE") }
            }
            state.messagesSent += 1
            let withhold = state.messagesSent == withheld
            let (message, channel) = try state.modifyChannel(id) { channel throws(RPCError) in
                let message = channel.post(from: me, date: date, content: content, limits: limit)
                // The call's result reaches the sender.
                channel.delivered(pts: channel.pts, to: me)
                return (message, channel)
            }
            // Each member's copy: its own `out`, and the sender as that member sees it.
            let senders = channel.broadcast ? [] : [me]
            func published(for viewer: Int64) -> (update: Api.Update, container: Api.Updates) {
                let update = Api.Update.updateNewChannelMessage(.init(
                    message: message.api(in: channel, viewer: viewer), pts: channel.pts, ptsCount: 1))
                return (update, .updates(.init(updates: [update], users: state.members(senders, viewer: viewer),
                                               chats: [channel.api(viewer: viewer)], date: date, seq: 0)))
            }
            var deliveries: [Delivery] = []
            if !withhold {
                for member in channel.members.keys.sorted() where member != me {
                    deliveries.append((member, published(for: member).container))
                }
            }
            let mine = published(for: me)
            deliveries.append((me, mine.container))
            let result = Api.Updates.updates(.init(
                updates: [.updateMessageID(.init(id: message.id, randomId: randomID)), mine.update],
                users: state.members(senders, viewer: me), chats: [channel.api(viewer: me)], date: date, seq: 0))
            return (result, deliveries)
        }
    }

    /// `channels.deleteMessages`: deletes the caller's own messages (the creator's: any) among `id` and moves the
    /// channel's pts by how many went (pts_count; ids already gone or never there are skipped). The caller gets
    /// `messages.affectedMessages` with the channel's pts — a channel's, not the common box's — and every other
    /// member's sessions `updateDeleteChannelMessages`.
    private func deleteMessages(_ call: RPCCall, _ request: Api.functions.channels.DeleteMessages)
        throws(RPCError) -> Api.messages.AffectedMessages {
        let me = try caller(call)
        let input = request.channel
        let ids = request.id
        guard ids.count <= 100 else { throw RPCError(code: 400, message: "MESSAGE_IDS_TOO_MUCH") }
        let date = Self.date(call)
        let limit = limits
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.messages.AffectedMessages, [Delivery]) in
            let id = try state.channelID(input, viewer: me)
            let (deleted, channel) = try state.modifyChannel(id) { channel throws(RPCError) -> ([Int32], Channel) in
                try channel.checkMember(me)
                var deleted: [Int32] = []
                for message in ids where !deleted.contains(message) {
                    guard let stored = channel.messages[message] else { continue }
                    guard stored.sender == me || channel.creator == me else {
                        throw RPCError(code: 403, message: "MESSAGE_DELETE_FORBIDDEN")
                    }
                    deleted.append(message)
                }
                if !deleted.isEmpty {
                    channel.delete(deleted, limits: limit)
                    channel.delivered(pts: channel.pts, count: Int32(deleted.count), to: me)
                }
                return (deleted, channel)
            }
            let result = Api.messages.AffectedMessages.affectedMessages(.init(
                pts: channel.pts, ptsCount: Int32(deleted.count)))
            guard !deleted.isEmpty else { return (result, []) }
            let update = Api.Update.updateDeleteChannelMessages(.init(
                channelId: id, messages: deleted, pts: channel.pts, ptsCount: Int32(deleted.count)))
            let deliveries = channel.members.keys.sorted().map { member in
                (member, Api.Updates.updates(.init(updates: [update], users: [], chats: [channel.api(viewer: member)],
                                                   date: date, seq: 0)))
            }
            return (result, deliveries)
        }
        push(deliveries, except: call)
        return result
    }

    /// `messages.getHistory` in a channel, for members: the private chats' paging (`HistoryPaging`), answered as
    /// `messages.channelMessages` with the channel's pts.
    func channelHistory(me: Int64, channel input: Int64, accessHash: Int64,
                        paging: HistoryPaging) throws(RPCError) -> Api.messages.Messages {
        let page = try state.withLock { state throws(RPCError) -> Api.messages.Messages in
            let channel = try state.channel(.inputChannel(.init(channelId: input, accessHash: accessHash)), viewer: me)
            try channel.checkMember(me)
            let all = paging.bounded(channel.messages.values, id: \.id)
            let range = paging.range(in: all, id: \.id, date: \.date)
            let page = all[range]
            return .channelMessages(.init(
                pts: channel.pts, count: Int32(clamping: all.count),
                messages: page.map { $0.api(in: channel, viewer: me, media: state.current($0.media)) },
                topics: [], chats: [channel.api(viewer: me)],
                users: state.members(channel.broadcast ? [] : page.map(\.sender), viewer: me)))
        }
        return page
    }

    // MARK: Catching up

    /// `updates.getChannelDifference` (core.telegram.org/api/updates, "Recovering gaps"): the messages after the
    /// client's pts, at most `limit` (1…100, Telegram's bound for users) with `final` once they reach the channel's
    /// pts; `channelDifferenceEmpty` when there is nothing new; `channelDifferenceTooLong` with the newest messages
    /// and the channel's pts in the dialog when the log no longer reaches back that far. Whatever the answer, the
    /// caller is then known to have the pts it reached. `force` changes nothing here; a
    /// `channelMessagesFilter` (message id ranges) is refused with FILTER_NOT_SUPPORTED rather than ignored, so a
    /// client that relies on it finds out.
    private func channelDifference(_ call: RPCCall, _ request: Api.functions.updates.GetChannelDifference)
        throws(RPCError) -> Api.updates.ChannelDifference {
        let me = try caller(call)
        let input = request.channel
        let filter = request.filter
        let pts = request.pts
        let limit = Int(max(1, min(100, request.limit)))
        // Clients refetch after this many seconds while they look at the channel.
        let timeout: Int32 = 30
        let result = try state.withLock { state throws(RPCError) -> Api.updates.ChannelDifference in
            let channel = try state.channel(input, viewer: me)
            try channel.checkMember(me)
            guard case .channelMessagesFilterEmpty = filter else {
                throw RPCError(code: 400, message: "FILTER_NOT_SUPPORTED")
            }
            guard pts > 0 else { throw RPCError(code: 400, message: "PERSISTENT_TIMESTAMP_EMPTY") }
            guard pts <= channel.pts else { throw RPCError(code: 400, message: "PERSISTENT_TIMESTAMP_INVALID") }
            let answer: Api.updates.ChannelDifference, reached: Int32
            let oldest = channel.log.first.map { $0.pts &- $0.count &+ 1 } ?? channel.pts &+ 1
            if pts == channel.pts {
                answer = .channelDifferenceEmpty(.init(final: true, pts: pts, timeout: timeout))
                reached = pts
            } else if pts < oldest &- 1 {
                let newest = channel.messageOrder.suffix(limit).reversed().compactMap { channel.messages[$0] }
                answer = .channelDifferenceTooLong(.init(
                    final: true, timeout: timeout, dialog: channel.dialog(viewer: me).dialog,
                    messages: newest.map { $0.api(in: channel, viewer: me) }, chats: [channel.api(viewer: me)],
                    users: state.members(channel.broadcast ? [] : newest.map(\.sender), viewer: me)))
                reached = channel.pts
            } else {
                let entries = Array(channel.log.lazy.filter { $0.pts > pts }.prefix(limit))
                reached = entries.last?.pts ?? pts
                let final = reached == channel.pts
                // New messages first, then the deletions and pins, as a client applies a difference.
                let created = entries.compactMap { if case .new(let message) = $0.entry { message } else { nil } }
                let deletions = entries.compactMap { entry -> Api.Update? in
                    switch entry.entry {
                        case .new: nil
                        case .deleted(let ids):
                            .updateDeleteChannelMessages(.init(channelId: channel.id, messages: ids, pts: entry.pts,
                                                               ptsCount: entry.count))
                        case .pinned(let ids, let pinned):
                            .updatePinnedChannelMessages(.init(pinned: pinned, channelId: channel.id, messages: ids,
                                                               pts: entry.pts, ptsCount: entry.count))
                    }
                }
                answer = .channelDifference(.init(
                    final: final, pts: reached, timeout: final ? timeout : nil,
                    newMessages: created.map { $0.api(in: channel, viewer: me) }, otherUpdates: deletions,
                    chats: [channel.api(viewer: me)],
                    users: state.members(channel.broadcast ? [] : created.map(\.sender), viewer: me)))
            }
            state.channels[channel.id]?.members[me] = reached
            return answer
        }
        return result
    }
}

/// A supergroup or broadcast channel.
struct Channel {
    let id: Int64
    let accessHash: Int64
    var title: String
    var about: String
    /// The channel's photo (`channels.editPhoto`).
    var photo: StoredChatPhoto?
    /// A broadcast channel (only the creator posts, posts carry no sender); else a supergroup.
    let broadcast: Bool
    let creator: Int64
    let date: Int32
    /// Each member, with the channel pts it is known to have had every update up to: the pts of the last update
    /// its own call's result or its getChannelDifference gave it.
    var members: [Int64: Int32]
    var pts: Int32 = 1
    var nextMessageID: Int32 = 1
    var messages: [Int32: ChannelMessage] = [:]
    var messageOrder: [Int32] = []
    /// Every viewer gets the same access hash (`TestTelegramService.init(sharedAccessHashes:)`).
    var sharedHashes = false
    /// pts-ordered updates (new messages and deletions), each with the pts after it and its pts_count.
    var log: [(pts: Int32, count: Int32, entry: LogEntry)] = []
    /// Join dates, admins, bans and restrictions (ParticipantServices.swift).
    var roster = Roster()

    /// What each member read up to, and what each author was last told was read of its messages
    /// (MessageOperationServices.swift).
    var readInbox: [Int64: Int32] = [:]
    var readOutbox: [Int64: Int32] = [:]

    enum LogEntry {
        case new(ChannelMessage)
        case deleted([Int32])
        case pinned([Int32], Bool)
    }

    init(id: Int64, accessHash: Int64, title: String, about: String, broadcast: Bool, creator: Int64, date: Int32,
         members: [Int64: Int32]) {
        self.id = id
        self.accessHash = accessHash
        self.title = title
        self.about = about
        self.broadcast = broadcast
        self.creator = creator
        self.date = date
        self.members = members
    }

    /// 406 CHANNEL_PRIVATE for anyone not in it, as Telegram answers about a channel one has not joined.
    func checkMember(_ user: Int64) throws(RPCError) {
        guard members[user] != nil else { throw RPCError(code: 406, message: "CHANNEL_PRIVATE") }
    }

    /// Members post in a supergroup unless restricted (ParticipantServices.swift); only the creator and admins with
    /// post_messages in a broadcast channel (403 CHAT_WRITE_FORBIDDEN).
    func checkPoster(_ user: Int64, media: Bool = false, now: Int32 = 0) throws(RPCError) {
        try checkMember(user)
        guard !broadcast || creator == user || roster.admin(user)?.postMessages == true else {
            throw RPCError(code: 403, message: "CHAT_WRITE_FORBIDDEN")
        }
        try roster.checkSend(user, media: media, now: now)
    }

    /// The channel as `viewer` sees it: `channelForbidden` for non-members (channels here have no usernames, so
    /// none is public).
    func api(viewer: Int64) -> Api.Chat {
        guard members[viewer] != nil else {
            return .channelForbidden(.init(broadcast: broadcast, megagroup: !broadcast, id: id,
                                           accessHash: ServiceState.viewerHash(accessHash, viewer: sharedHashes ? 0 : viewer),
                                           title: title))
        }
        return .channel(.init(creator: creator == viewer, broadcast: broadcast, megagroup: !broadcast, id: id,
                              accessHash: ServiceState.viewerHash(accessHash, viewer: sharedHashes ? 0 : viewer), title: title, photo: photo?.chatPhoto ?? .chatPhotoEmpty, date: date,
                              participantsCount: Int32(clamping: members.count)))
    }

    /// The member's dialog with its newest kept message (dated by it, or by the channel's creation when there is
    /// none) and the channel's pts, for `messages.getDialogs` and `channelDifferenceTooLong`. Read state is not kept
    /// for channels: the dialog says all is read.
    func dialog(viewer: Int64, pinned: Bool = false) -> DialogEntry {
        let top = messageOrder.last.flatMap { messages[$0] }
        let topID = top?.id ?? 0
        let dialog = Api.Dialog.dialog(.init(
            pinned: pinned, peer: .peerChannel(.init(channelId: id)), topMessage: topID, readInboxMaxId: topID, readOutboxMaxId: topID,
            unreadCount: 0, unreadMentionsCount: 0, unreadReactionsCount: 0, unreadPollVotesCount: 0,
            notifySettings: .peerNotifySettings(.init()), pts: pts))
        return DialogEntry(date: top?.date ?? date, top: topID, peer: id, dialog: dialog,
                           message: top?.api(in: self, viewer: viewer),
                           users: broadcast ? [] : (top.map { [$0.sender] } ?? []), chat: api(viewer: viewer))
    }

    /// Stores a new message with the next id and logs it with the next pts (pts_count 1), forgetting the oldest
    /// past the bounds.
    mutating func post(from sender: Int64, date: Int32, content: OutgoingContent,
                       limits: TestTelegramService.Limits) -> ChannelMessage {
        let message = ChannelMessage(id: nextMessageID, sender: sender, date: date, text: content.text,
                                     media: content.media, entities: content.entities, replyTo: content.replyTo,
                                     fwdFrom: content.fwdFrom, silent: content.silent, groupedID: content.groupedID)
        nextMessageID &+= 1
        messages[message.id] = message
        messageOrder.append(message.id)
        if messageOrder.count > limits.maxChannelMessages {
            messages.removeValue(forKey: messageOrder.removeFirst())
        }
        pts &+= 1
        append(.new(message), count: 1, limits: limits)
        return message
    }

    /// Forgets messages `ids` (all kept) and logs their deletion with pts_count their number.
    mutating func delete(_ ids: [Int32], limits: TestTelegramService.Limits) {
        for id in ids { messages.removeValue(forKey: id) }
        messageOrder.removeAll { ids.contains($0) }
        pts &+= Int32(ids.count)
        append(.deleted(ids), count: Int32(ids.count), limits: limits)
    }

    private mutating func append(_ entry: LogEntry, count: Int32, limits: TestTelegramService.Limits) {
        log.append((pts, count, entry))
        if log.count > limits.maxChannelLog { log.removeFirst(log.count - limits.maxChannelLog) }
    }

    /// Records that `member` got the update that made `pts` (pts_count `count`) as its call's result. Its known pts
    /// moves only if it had the updates before, so a member behind stays behind until getChannelDifference.
    mutating func delivered(pts: Int32, count: Int32 = 1, to member: Int64) {
        if let known = members[member], known == pts &- count { members[member] = pts }
    }
}

/// A message in a channel, stored once for all members.
struct ChannelMessage {
    let id: Int32
    let sender: Int64
    let date: Int32
    let text: String
    let media: Api.MessageMedia?
    var entities: [Api.MessageEntity]? = nil
    var replyTo: Int32? = nil
    var fwdFrom: Api.MessageFwdHeader? = nil
    var silent = false
    var pinned = false
    /// A service message's action (PeerServices.swift).
    var action: Api.MessageAction? = nil
    /// The album it belongs to.
    var groupedID: Int64? = nil
    /// Who reacted with what (ReactionServices.swift).
    var reactions = StoredReactions()

    /// The message as `viewer` sees it: a supergroup's carry `from_id`, a broadcast channel's are `post`s without
    /// one; `out` for the sender. `media`, when given, stands for the stored media (with a current file reference).
    func api(in channel: Channel, viewer: Int64, media current: Api.MessageMedia? = nil) -> Api.Message {
        let replyHeader = replyTo.map { Api.MessageReplyHeader.messageReplyHeader(.init(replyToMsgId: $0)) }
        if let action {
            return .messageService(.init(out: sender == viewer, silent: silent, id: id,
                                         fromId: .peerUser(.init(userId: sender)),
                                         peerId: .peerChannel(.init(channelId: channel.id)), replyTo: replyHeader,
                                         date: date, action: action))
        }
        return .message(.init(out: sender == viewer, silent: silent, post: channel.broadcast, pinned: pinned, id: id,
                       fromId: channel.broadcast ? nil : .peerUser(.init(userId: sender)),
                       peerId: .peerChannel(.init(channelId: channel.id)), fwdFrom: fwdFrom, replyTo: replyHeader,
                       date: date, message: text, media: current ?? media, entities: entities, groupedId: groupedID,
                       reactions: reactions.entries.isEmpty ? nil
                           : reactions.api(viewer: viewer, list: !channel.broadcast)))
    }
}

extension ServiceState {
    /// The channel an input names, if it exists and the access hash is the one `viewer` was given; 400
    /// CHANNEL_INVALID otherwise.
    func channel(_ input: Api.InputChannel, viewer: Int64) throws(RPCError) -> Channel {
        let id = try channelID(input, viewer: viewer)
        guard let channel = channels[id] else { throw RPCError(code: 400, message: "CHANNEL_INVALID") }
        return channel
    }

    /// The same check, for code about to change the channel in place (a copy held meanwhile would be copied
    /// whole on the first change).
    func channelID(_ input: Api.InputChannel, viewer: Int64) throws(RPCError) -> Int64 {
        guard case .inputChannel(let channel) = input else { throw RPCError(code: 400, message: "CHANNEL_INVALID") }
        return try channelID(id: channel.channelId, accessHash: channel.accessHash, viewer: viewer)
    }

    func channelID(id: Int64, accessHash: Int64, viewer: Int64) throws(RPCError) -> Int64 {
        guard let channel = channels[id], hash(channel.accessHash, viewer: viewer) == accessHash else {
            throw RPCError(code: 400, message: "CHANNEL_INVALID")
        }
        return id
    }

    /// Runs `body` on a channel in place (out of the table meanwhile, as `modify` does for accounts, so its
    /// messages and log are not copied).
    mutating func modifyChannel<T>(_ id: Int64, _ body: (inout Channel) throws(RPCError) -> T) throws(RPCError) -> T {
        guard var channel = channels.removeValue(forKey: id) else { throw RPCError(code: 400, message: "CHANNEL_INVALID") }
        defer { channels[id] = channel }
        return try body(&channel)
    }

    /// For `updates.getDifference`: `updateChannelTooLong` with the channel's pts for each channel whose pts is past
    /// the one `user` is known to have, and those channels.
    func channelsBehind(for user: Int64) -> (updates: [Api.Update], chats: [Api.Chat]) {
        let behind = channels.values.filter { channel in channel.members[user].map { $0 < channel.pts } ?? false }
            .sorted { $0.id < $1.id }
        return (behind.map { .updateChannelTooLong(.init(channelId: $0.id, pts: $0.pts)) },
                behind.map { $0.api(viewer: user) })
    }
}
