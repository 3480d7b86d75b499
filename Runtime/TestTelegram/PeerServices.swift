// What a client's peer cache, history iterators and typed events need of the test Telegram: access hashes that
// differ per viewer (a hash is good only for the account it was given to, as on Telegram: core.telegram.org/api/peers),
// `min` users in channels (core.telegram.org/api/min) and peers named through a message, `messages.search`, pinned
// dialogs, edits, deletions, typing, online status, and seeded history to page through.
import MTProto
import MTProtoCrypto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramFormatting
import TelegramApiServer

extension TestTelegramService {
    func registerPeers(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.messages.Search.self, search)
        handlers.on(Api.functions.messages.ToggleDialogPin.self, togglePin)
        handlers.on(Api.functions.messages.EditMessage.self, edit)
        handlers.on(Api.functions.messages.DeleteMessages.self, deletePrivate)
        handlers.on(Api.functions.messages.SetTyping.self, typing)
        handlers.on(Api.functions.account.UpdateStatus.self, status)
    }

    /// Stores `count` messages between two accounts, alternating senders, dated one second apart from `startDate`,
    /// texts "message 1"… (for paging tests and `mtserver --seed-history`). They are history, not news: no update is
    /// logged or pushed, so clients signed in later see them only through `getHistory`/`getDialogs`.
    public func seedHistory(between first: Int64, and second: Int64, count: Int, startDate: Int32) throws(RPCError) {
        guard first != second, count >= 0, count <= limits.maxMessagesPerAccount else {
            throw RPCError(code: 400, message: "SEED_INVALID")
        }
        let limit = limits.maxMessagesPerAccount
        try state.withLock { state throws(RPCError) in
            let missing = RPCError(code: 400, message: "USER_ID_INVALID")
            guard state.accounts[first] != nil, state.accounts[second] != nil else { throw missing }
            for index in 0..<count {
                let (from, to) = index % 2 == 0 ? (first, second) : (second, first)
                let date = startDate &+ Int32(index)
                let text = "message \(index + 1)"
                let outID = try state.modify(from, missing: missing) { $0.nextMessageID += 1; return $0.nextMessageID - 1 }
                let inID = try state.modify(to, missing: missing) { recipient throws(RPCError) -> Int32 in
                    let id = recipient.nextMessageID
                    recipient.nextMessageID += 1
                    recipient.store(StoredMessage(id: id, peer: from, out: false, date: date, text: text, media: nil,
                                                  twinID: outID), limit: limit)
                    return id
                }
                try state.modify(from, missing: missing) { sender throws(RPCError) in
                    sender.store(StoredMessage(id: outID, peer: to, out: true, date: date, text: text, media: nil,
                                               twinID: inID), limit: limit)
                }
            }
        }
    }

    /// The id of the account with this test number, if there is one.
    public func user(phone: String) -> Int64? {
        guard let number = TestPhone(phone) else { return nil }
        return state.withLock { $0.phones[number.digits] }
    }

    /// The `entities` of a send or edit, checked against the text: offsets and lengths in UTF-16 code units inside
    /// it (core.telegram.org/api/entities), at most 100 (ENTITIES_TOO_LONG as Telegram answers).
    static func entities(_ entities: [Api.MessageEntity]?, text: String) throws(RPCError) -> [Api.MessageEntity]? {
        guard let entities else { return nil }
        guard entities.count <= 100 else { throw RPCError(code: 400, message: "ENTITIES_TOO_LONG") }
        let units = text.utf16.count
        for entity in entities {
            let (offset, length) = entity.range
            guard offset >= 0, length > 0, Int(offset) + Int(length) <= units else {
                throw RPCError(code: 400, message: "ENTITY_BOUNDS_INVALID")
            }
        }
        return entities.isEmpty ? nil : entities
    }

    // MARK: Search

    /// `messages.search` in one chat: messages whose text contains `q` (case-insensitively; all for an empty `q`)
    /// within min_date/max_date, paged as `getHistory` is (offset_id, add_offset, limit, max_id, min_id). Only
    /// `inputMessagesFilterEmpty` is served (FILTER_NOT_SUPPORTED otherwise, so a client relying on another finds out).
    private func search(_ call: RPCCall, _ request: Api.functions.messages.Search)
        throws(RPCError) -> Api.messages.Messages {
        let me = try caller(call)
        let peer = request.peer
        let query = request.q.lowercased()
        guard case .inputMessagesFilterEmpty = request.filter else {
            throw RPCError(code: 400, message: "FILTER_NOT_SUPPORTED")
        }
        let minDate = request.minDate, maxDate = request.maxDate
        let paging = HistoryPaging(search: request)
        func matches(_ text: String, _ date: Int32) -> Bool {
            (minDate <= 0 || date >= minDate) && (maxDate <= 0 || date <= maxDate)
                && (query.isEmpty || text.lowercased().contains(query))
        }
        let result = try state.withLock { state throws(RPCError) -> Api.messages.Messages in
            if case .inputPeerChannel(let input) = peer {
                let channel = try state.channel(.inputChannel(.init(channelId: input.channelId, accessHash: input.accessHash)),
                                                viewer: me)
                try channel.checkMember(me)
                let all = paging.bounded(channel.messages.values.filter { matches($0.text, $0.date) }, id: \.id)
                let page = all[paging.range(in: all, id: \.id, date: \.date)]
                return .channelMessages(.init(
                    pts: channel.pts, count: Int32(clamping: all.count),
                    messages: page.map { $0.api(in: channel, viewer: me) }, topics: [], chats: [channel.api(viewer: me)],
                    users: state.members(channel.broadcast ? [] : page.map(\.sender), viewer: me)))
            }
            guard let with = state.resolve(peer, me: me), let account = state.accounts[me] else {
                throw RPCError(code: 400, message: "PEER_ID_INVALID")
            }
            let all = paging.bounded(account.messages.values.filter { $0.peer == with && matches($0.text, $0.date) },
                                     id: \.id)
            let page = all[paging.range(in: all, id: \.id, date: \.date)]
            return .messagesSlice(.init(count: Int32(clamping: all.count), messages: page.map { $0.api(owner: me) },
                                        topics: [], chats: [], users: state.users([me, with], viewer: me)))
        }
        return result
    }

    // MARK: Dialogs

    /// `messages.toggleDialogPin`: pins (at the top, newest pin first, as Telegram orders them) or unpins a
    /// private chat or a channel; at most `maxPinnedDialogs` (PINNED_DIALOGS_TOO_MUCH).
    private func togglePin(_ call: RPCCall, _ request: Api.functions.messages.ToggleDialogPin)
        throws(RPCError) -> Bool {
        let me = try caller(call)
        let pin = request.pinned
        guard case .inputDialogPeer(let dialog) = request.peer else {
            throw RPCError(code: 400, message: "PEER_ID_INVALID")
        }
        try state.withLock { state throws(RPCError) in
            let invalid = RPCError(code: 400, message: "PEER_ID_INVALID")
            let peer: Int64
            if case .inputPeerChannel(let input) = dialog.peer {
                peer = try state.channelID(id: input.channelId, accessHash: input.accessHash, viewer: me)
                try state.channels[peer]?.checkMember(me)
            } else {
                guard let user = state.resolve(dialog.peer, me: me) else { throw invalid }
                peer = user
            }
            try state.modify(me, missing: invalid) { account throws(RPCError) in
                account.pinned.removeAll { $0 == peer }
                guard pin else { return }
                guard account.pinned.count < Self.maxPinnedDialogs else {
                    throw RPCError(code: 400, message: "PINNED_DIALOGS_TOO_MUCH")
                }
                account.pinned.insert(peer, at: 0)
            }
        }
        return true
    }

    /// Telegram's bound for an account without Premium.
    static let maxPinnedDialogs = 5

    // MARK: Editing and deleting

    /// `messages.editMessage` of one's own message in a private chat: the new text and entities, with `edit_date`,
    /// in both boxes; each party gets `updateEditMessage` with its own pts (the editor as the call's result).
    /// Channel messages cannot be edited here (CHANNEL_EDIT_NOT_SUPPORTED rather than a silent no-op).
    private func edit(_ call: RPCCall, _ request: Api.functions.messages.EditMessage) throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let peer = request.peer
        let id = request.id
        guard let text = request.message, !text.isEmpty else {
            throw RPCError(code: 400, message: "MESSAGE_EMPTY")
        }
        guard text.count <= 4096 else { throw RPCError(code: 400, message: "MESSAGE_TOO_LONG") }
        if case .inputPeerChannel = peer { throw RPCError(code: 400, message: "CHANNEL_EDIT_NOT_SUPPORTED") }
        let entities = try Self.entities(request.entities, text: text)
        let date = Self.date(call)
        let limit = limits.maxUpdateLog
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let invalid = RPCError(code: 400, message: "PEER_ID_INVALID")
            guard let with = state.resolve(peer, me: me) else { throw invalid }
            let users = state.users([me, with], viewer: me)
            let (mine, twin) = try state.modify(me, missing: invalid) { editor throws(RPCError) -> (Api.Updates, Int32?) in
                guard var message = editor.messages[id], message.peer == with else {
                    throw RPCError(code: 400, message: "MESSAGE_ID_INVALID")
                }
                guard message.out else { throw RPCError(code: 403, message: "MESSAGE_AUTHOR_REQUIRED") }
                guard message.text != text || message.entities != nil || entities != nil else {
                    throw RPCError(code: 400, message: "MESSAGE_NOT_MODIFIED")
                }
                message.text = text
                message.entities = entities
                message.editDate = date
                editor.messages[id] = message
                let edited = message
                let published = editor.publish({ .updateEditMessage(.init(message: edited.api(owner: me), pts: $0,
                                                                          ptsCount: 1)) },
                                                users: users, date: date, limit: limit)
                return (published.container, message.twinID)
            }
            var deliveries: [Delivery] = [(me, mine)]
            if with != me, let twin, state.accounts[with]?.messages[twin] != nil {
                let theirUsers = state.users([me, with], viewer: with)
                deliveries.append(try state.modify(with, missing: invalid) { other throws(RPCError) -> Delivery in
                    other.messages[twin]?.text = text
                    other.messages[twin]?.entities = entities
                    other.messages[twin]?.editDate = date
                    guard let copy = other.messages[twin] else { throw invalid }
                    let published = other.publish({ .updateEditMessage(.init(message: copy.api(owner: with), pts: $0,
                                                                             ptsCount: 1)) },
                                                  users: theirUsers, date: date, limit: limit)
                    return (with, published.container)
                })
            }
            return (mine, deliveries)
        }
        push(deliveries, except: call)
        return result
    }

    /// `messages.deleteMessages` in private chats: the ids in the caller's box go, and with `revoke` their twins in
    /// the other parties' boxes; each box that lost messages gets one `updateDeleteMessages` (its pts moves by one).
    /// The caller's is answered as `messages.affectedMessages`, the others pushed.
    private func deletePrivate(_ call: RPCCall, _ request: Api.functions.messages.DeleteMessages)
        throws(RPCError) -> Api.messages.AffectedMessages {
        let me = try caller(call)
        let ids = request.id
        guard ids.count <= 100 else { throw RPCError(code: 400, message: "MESSAGE_IDS_TOO_MUCH") }
        let revoke = request.revoke
        let date = Self.date(call)
        let limit = limits.maxUpdateLog
        let (affected, deliveries) = try state.withLock { state throws(RPCError) -> (Api.messages.AffectedMessages, [Delivery]) in
            let unregistered = RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")
            let (mine, twins) = try state.modify(me, missing: unregistered) { owner throws(RPCError) -> ((Int32, Delivery?), [Int64: [Int32]]) in
                var twins: [Int64: [Int32]] = [:]
                var gone: [Int32] = []
                for id in ids where !gone.contains(id) {
                    guard let message = owner.remove(id) else { continue }
                    gone.append(id)
                    if revoke, message.peer != me, let twin = message.twinID { twins[message.peer, default: []].append(twin) }
                }
                guard !gone.isEmpty else { return ((owner.pts, nil), [:]) }
                let published = owner.publish({ .updateDeleteMessages(.init(messages: gone, pts: $0, ptsCount: 1)) },
                                              users: [], date: date, limit: limit)
                return ((owner.pts, (me, published.container)), twins)
            }
            var deliveries: [Delivery] = mine.1.map { [$0] } ?? []
            for (other, messages) in twins.sorted(by: { $0.key < $1.key }) where state.accounts[other] != nil {
                let delivery = try state.modify(other, missing: unregistered) { account throws(RPCError) -> Delivery? in
                    let gone = messages.filter { account.remove($0) != nil }
                    guard !gone.isEmpty else { return nil }
                    let published = account.publish({ .updateDeleteMessages(.init(messages: gone, pts: $0, ptsCount: 1)) },
                                                    users: [], date: date, limit: limit)
                    return (other, published.container)
                }
                if let delivery { deliveries.append(delivery) }
            }
            return (.affectedMessages(.init(pts: mine.0, ptsCount: mine.1 == nil ? 0 : 1)), deliveries)
        }
        push(deliveries, except: call)
        return affected
    }

    // MARK: Presence

    /// `messages.setTyping`: the other party of a private chat gets `updateUserTyping`, every other member of a
    /// channel `updateChannelUserTyping` with the typist as it sees it. Not part of any box (no pts, no seq).
    private func typing(_ call: RPCCall, _ request: Api.functions.messages.SetTyping) throws(RPCError) -> Bool {
        let me = try caller(call)
        let peer = request.peer
        let action = request.action
        let date = Self.date(call)
        let deliveries = try state.withLock { state throws(RPCError) -> [Delivery] in
            if case .inputPeerChannel(let input) = peer {
                let channel = try state.channel(.inputChannel(.init(channelId: input.channelId, accessHash: input.accessHash)),
                                                viewer: me)
                try channel.checkPoster(me)
                return channel.members.keys.sorted().filter { $0 != me }.map { member in
                    (member, .updates(.init(
                        updates: [.updateChannelUserTyping(.init(channelId: channel.id, fromId: .peerUser(.init(userId: me)),
                                                                 action: action))],
                        users: state.members([me], viewer: member), chats: [channel.api(viewer: member)], date: date,
                        seq: 0)))
                }
            }
            guard let to = state.resolve(peer, me: me) else { throw RPCError(code: 400, message: "PEER_ID_INVALID") }
            guard to != me else { return [] }
            return [(to, .updates(.init(updates: [.updateUserTyping(.init(userId: me, action: action))],
                                        users: state.users([me], viewer: to), chats: [], date: date, seq: 0)))]
        }
        push(deliveries, except: nil)
        return true
    }

    /// `account.updateStatus`: everyone with a private chat with the caller gets `updateUserStatus` (online for five
    /// minutes, or offline since now).
    private func status(_ call: RPCCall, _ request: Api.functions.account.UpdateStatus) throws(RPCError) -> Bool {
        let me = try caller(call)
        let offline = request.offline
        let date = Self.date(call)
        let status: Api.UserStatus = offline ? .userStatusOffline(.init(wasOnline: date))
            : .userStatusOnline(.init(expires: date &+ 300))
        let deliveries = state.withLock { state -> [Delivery] in
            state.accounts.values.filter { $0.id != me && $0.dialogs[me] != nil }.map(\.id).sorted().map { watcher in
                (watcher, .updates(.init(updates: [.updateUserStatus(.init(userId: me, status: status))],
                                         users: state.users([me], viewer: watcher), chats: [], date: date, seq: 0)))
            }
        }
        push(deliveries, except: nil)
        return true
    }
}

extension ServiceState {
    /// The access hash `viewer` is given for a user or channel whose own secret is `secret`: a keyed hash of the
    /// viewer under that secret, so a hash one account learned is refused from another (core.telegram.org/api/peers).
    static func viewerHash(_ secret: Int64, viewer: Int64) -> Int64 {
        func bytes(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        let digest = Hash.sha256(bytes(secret), bytes(viewer))
        return digest.prefix(8).enumerated().reduce(Int64(0)) { $0 | Int64($1.element) << (8 * $1.offset) }
    }

    /// `viewerHash`, or one hash for every viewer in a service made with `sharedAccessHashes`.
    func hash(_ secret: Int64, viewer: Int64) -> Int64 {
        Self.viewerHash(secret, viewer: sharedHashes ? 0 : viewer)
    }

    /// Senders of channel messages as `viewer` sees them: in full when it is the viewer itself or someone it has a
    /// private chat with; otherwise `min` (core.telegram.org/api/min), whose access hash is not the viewer's (a
    /// client that used it would be refused).
    func members(_ ids: [Int64], viewer: Int64) -> [Api.User] {
        let dialogs = accounts[viewer]?.dialogs ?? [:]
        return users(ids, viewer: viewer).map { user in
            guard case .user(let full) = user, full.id != viewer, dialogs[full.id] == nil,
                  let secret = accounts[full.id]?.accessHash else { return user }
            return .user(.init(min: true, id: full.id, accessHash: Self.viewerHash(secret, viewer: ~viewer ^ 1),
                               firstName: full.firstName, lastName: full.lastName, username: full.username))
        }
    }

    /// The sender of message `messageID` in the channel `chat` names, when `me` can see the channel and that is
    /// the message's sender: how `inputPeerUserFromMessage` names a user known only from a `min` constructor.
    func sender(_ user: Int64, of messageID: Int32, in chat: Api.InputPeer, me: Int64) -> Int64? {
        guard case .inputPeerChannel(let input) = chat,
              let id = try? channelID(id: input.channelId, accessHash: input.accessHash, viewer: me),
              let channel = channels[id], channel.members[me] != nil,
              channel.messages[messageID]?.sender == user, accounts[user] != nil else { return nil }
        return user
    }
}

extension Account {
    /// Takes a message out of the box (its dialog's top moves to the newest left); nil when it was not there.
    mutating func remove(_ id: Int32) -> StoredMessage? {
        guard let message = messages.removeValue(forKey: id) else { return nil }
        messageOrder.removeAll { $0 == id }
        if dialogs[message.peer]?.topMessage == id {
            let top = messages.values.filter { $0.peer == message.peer }.max { $0.id < $1.id }
            dialogs[message.peer]?.topMessage = top?.id ?? 0
            dialogs[message.peer]?.topDate = top?.date ?? 0
        }
        return message
    }
}

extension HistoryPaging {
    /// `messages.search`'s paging: `getHistory`'s without offset_date.
    init(search request: Api.functions.messages.Search) {
        self.init(offsetID: request.offsetId, offsetDate: 0, addOffset: request.addOffset, maxID: request.maxId,
                  minID: request.minId, limit: request.limit)
    }
}

extension Channel {
    /// Posts a service message (a member added) with the next id and pts, as `post` does a message; the poster is
    /// known to have it (it comes back in the call's result).
    mutating func announce(_ action: Api.MessageAction, by actor: Int64, date: Int32,
                           limits: TestTelegramService.Limits) -> ChannelMessage {
        var message = post(from: actor, date: date, content: OutgoingContent(text: ""), limits: limits)
        message.action = action
        messages[message.id] = message
        if case .new = log.last?.entry { log[log.count - 1].entry = .new(message) }
        delivered(pts: pts, to: actor)
        return message
    }
}

extension ServiceState {
    /// A service message pushed to every member but its poster, the users it names as each sees them.
    func noticeDeliveries(_ notice: ChannelMessage, in channel: Channel, date: Int32) -> [Delivery] {
        var named = [notice.sender]
        if case .messageActionChatAddUser(let add)? = notice.action { named += add.users }
        return channel.members.keys.sorted().filter { $0 != notice.sender }.map { member in
            (member, .updates(.init(
                updates: [.updateNewChannelMessage(.init(message: notice.api(in: channel, viewer: member), pts: channel.pts,
                                                         ptsCount: 1))],
                users: members(named, viewer: member), chats: [channel.api(viewer: member)], date: date, seq: 0)))
        }
    }
}
