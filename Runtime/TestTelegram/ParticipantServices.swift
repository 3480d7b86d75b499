// Who is who in a supergroup or channel (core.telegram.org/api/rights): members with their join date and inviter,
// admins with their rights and rank, the banned (kicked: no longer members, `view_messages` taken) and the restricted
// (still members, some rights taken, until a date). Served: `channels.getParticipants` (offset, at most 200 a page,
// the filters, the ids' hash → `channelParticipantsNotModified`), `channels.getParticipant`, `channels.editBanned`,
// `channels.editAdmin`, and the rights are checked where members send (ChannelServices.swift's `checkPoster`).
// Admin changes reach the user concerned as `updateChannel`. Every change of a member (joined, left, banned,
// restricted, promoted) reaches the channel's admins that are bots as `updateChannelParticipant` with the member
// before and after, numbered by each bot's qts (core.telegram.org/constructor/updateChannelParticipant: what the Bot
// API delivers as `chat_member`; Telegram sends it to bots, not to user accounts).
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    func registerParticipants(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.channels.GetParticipants.self, participants)
        handlers.on(Api.functions.channels.GetParticipant.self, participant)
        handlers.on(Api.functions.channels.EditBanned.self, editBanned)
        handlers.on(Api.functions.channels.EditAdmin.self, editAdmin)
    }

    /// Makes a supergroup owned by `owner` with `members` new accounts in it ("Member 1"… with test numbers
    /// 999669YYYY, usernames `member1`…) and `bots` new bots ("Bot 1"…, `seeded1_bot`…), joined in that order one
    /// second apart from the channel's creation at `date`. For paging tests and `mtserver --seed-supergroup`; nothing
    /// is pushed. Returns the channel's id.
    public func seedSupergroup(owner: Int64, title: String, members: Int, bots: Int = 0,
                               date: Int32) throws(RPCError) -> Int64 {
        guard members >= 0, bots >= 0, members <= 9_999, members + bots + 1 <= limits.maxChannelMembers else {
            throw RPCError(code: 400, message: "SEED_INVALID")
        }
        var botIDs: [Int64] = []
        for index in 1...max(1, bots) where bots > 0 {
            botIDs.append(try addBot(token: "\(700_000 + index):SeededBotToken\(index)", firstName: "Bot \(index)",
                                     username: "seeded\(index)_bot"))
        }
        let accessHash = random.int64()
        let limit = limits
        return try state.withLock { state throws(RPCError) -> Int64 in
            guard state.accounts[owner] != nil else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
            guard state.channels.count < limit.maxChannels else { throw RPCError(code: 400, message: "CHANNELS_TOO_MUCH") }
            var users: [Int64] = []
            var serial = 0
            for index in 1...max(1, members) where members > 0 {
                // The next free number of the 999669YYYY range (accounts added before may hold some).
                var number: TestPhone?
                while number == nil, serial <= 9_999 {
                    let digits = String(serial)
                    let candidate = TestPhone("999669" + String(repeating: "0", count: 4 - digits.count) + digits)
                    serial += 1
                    if let candidate, state.phones[candidate.digits] == nil { number = candidate }
                }
                guard let number else { throw RPCError(code: 400, message: "SEED_INVALID") }
                let username = "member\(index)"
                let id = try state.createAccount(number: number, firstName: "Member", lastName: "\(index)",
                                                 username: state.usernames[username] == nil ? username : nil,
                                                 homeDC: nil, accessHash: random.int64(), limits: limit)
                users.append(id)
            }
            users += botIDs
            let id = state.nextChannelID
            state.nextChannelID += 1
            var channel = Channel(id: id, accessHash: accessHash, title: String(title.prefix(128)), about: "",
                                  broadcast: false, creator: owner, date: date, members: [owner: 1])
            channel.sharedHashes = state.sharedHashes
            channel.roster.join(owner, inviter: owner, date: date)
            for (offset, user) in users.enumerated() {
                channel.members[user] = channel.pts
                channel.roster.join(user, inviter: owner, date: date &+ Int32(offset + 1))
            }
            state.channels[id] = channel
            return id
        }
    }

    // MARK: Listing

    /// `channels.getParticipants`: the members a filter picks (recent: newest first; admins: the creator and admins;
    /// bots; kicked; banned: the restricted; search and contacts by name), from `offset`, at most `limit` (200 at
    /// most, as Telegram serves), with their users in full so a client can name each. A non-zero `hash` equal to the
    /// page's (core.telegram.org/api/offsets, "Hash generation", over the page's user ids) is answered
    /// `channelParticipantsNotModified`. Broadcast channels list their members to admins only (CHAT_ADMIN_REQUIRED).
    private func participants(_ call: RPCCall, _ request: Api.functions.channels.GetParticipants)
        throws(RPCError) -> Api.channels.ChannelParticipants {
        let me = try caller(call)
        let input = request.channel, filter = request.filter, hash = request.hash
        let offset = max(0, Int(request.offset))
        let limit = min(200, max(0, Int(request.limit)))
        let now = Self.date(call)
        return try state.withLock { state throws(RPCError) -> Api.channels.ChannelParticipants in
            let channel = try state.channel(input, viewer: me)
            try channel.checkMember(me)
            let admin = channel.creator == me || channel.roster.admins[me] != nil
            if channel.broadcast, !admin { throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED") }
            let picked = try state.pick(filter, in: channel, viewer: me, now: now)
            let page = offset < picked.count ? Array(picked[offset..<min(picked.count, offset + limit)]) : []
            if hash != 0, hash == Self.participantsHash(page) { return .channelParticipantsNotModified }
            return .channelParticipants(.init(
                count: Int32(clamping: picked.count),
                participants: page.map { channel.participant($0, viewer: me, now: now) },
                chats: [], users: state.users(page, viewer: me)))
        }
    }

    /// Telegram's hash of a list of ids (core.telegram.org/api/offsets, "Hash generation").
    static func participantsHash(_ ids: [Int64]) -> Int64 {
        var hash: UInt64 = 0
        for id in ids {
            hash ^= hash >> 21
            hash ^= hash << 35
            hash ^= hash >> 4
            hash &+= UInt64(bitPattern: id)
        }
        return Int64(bitPattern: hash)
    }

    /// `channels.getParticipant`: one member (or banned user) as `getParticipants` shows it; USER_NOT_PARTICIPANT
    /// for anyone else.
    private func participant(_ call: RPCCall, _ request: Api.functions.channels.GetParticipant)
        throws(RPCError) -> Api.channels.ChannelParticipant {
        let me = try caller(call)
        let input = request.channel, peer = request.participant
        let now = Self.date(call)
        return try state.withLock { state throws(RPCError) -> Api.channels.ChannelParticipant in
            let channel = try state.channel(input, viewer: me)
            try channel.checkMember(me)
            guard let user = state.resolve(peer, me: me) else { throw RPCError(code: 400, message: "PARTICIPANT_ID_INVALID") }
            guard channel.members[user] != nil || channel.roster.bans[user] != nil else {
                throw RPCError(code: 400, message: "USER_NOT_PARTICIPANT")
            }
            return .channelParticipant(.init(participant: channel.participant(user, viewer: me, now: now), chats: [],
                                             users: state.users([user], viewer: me)))
        }
    }

    // MARK: Banning and promoting

    /// `channels.editBanned`: bans (`view_messages`: out of the channel, on its kicked list), restricts (some rights
    /// taken, until `until_date`; 0, under 30 s or over 366 days away means for ever, as on Telegram) or lifts both
    /// (no rights taken). Needs the creator, or an admin with ban_users (CHAT_ADMIN_REQUIRED); an admin can be banned
    /// only by the creator or whoever promoted them (USER_ADMIN_INVALID), the creator by nobody.
    private func editBanned(_ call: RPCCall, _ request: Api.functions.channels.EditBanned)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let input = request.channel, peer = request.participant
        guard case .chatBannedRights(var rights) = request.bannedRights else {
            throw RPCError(code: 400, message: "RIGHTS_INVALID")
        }
        let now = Self.date(call)
        if rights.untilDate != 0, rights.untilDate &- now < 30 || rights.untilDate &- now > 366 * 86_400 {
            rights = rights.lasting(until: 0)
        }
        let taken = rights
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let id = try state.channelID(input, viewer: me)
            guard let user = state.resolve(peer, me: me) else { throw RPCError(code: 400, message: "PARTICIPANT_ID_INVALID") }
            let before = state.channels[id]?.standing(of: user, now: now)
            let channel = try state.modifyChannel(id) { channel throws(RPCError) -> Channel in
                try channel.checkMember(me)
                guard channel.creator == me || channel.roster.admin(me)?.banUsers == true else {
                    throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED")
                }
                guard user != me, user != channel.creator else { throw RPCError(code: 400, message: "USER_ADMIN_INVALID") }
                if let admin = channel.roster.admins[user] {
                    guard channel.creator == me || admin.promotedBy == me else {
                        throw RPCError(code: 400, message: "USER_ADMIN_INVALID")
                    }
                }
                if taken.flags == 0 {
                    channel.roster.bans[user] = nil
                } else {
                    guard taken.viewMessages || channel.members[user] != nil else {
                        throw RPCError(code: 400, message: "USER_NOT_PARTICIPANT")
                    }
                    channel.roster.admins[user] = nil
                    channel.roster.bans[user] = .init(rights: .chatBannedRights(taken), by: me, date: now,
                                                      joined: channel.roster.joined[user]?.date ?? now)
                    if taken.viewMessages {
                        channel.members[user] = nil
                        channel.roster.joined[user] = nil
                    }
                }
                return channel
            }
            return state.changed(user, in: channel, by: me, date: now, before: before)
        }
        push(deliveries, except: call)
        return result
    }

    /// `channels.editAdmin`: makes a member an admin with `admin_rights` and `rank` (16 characters at most, no
    /// emoji: ADMIN_RANK_INVALID, ADMIN_RANK_EMOJI_NOT_ALLOWED), or a member again with no rights. Needs the creator,
    /// or an admin with add_admins (CHAT_ADMIN_REQUIRED) granting only rights it has itself and changing only admins it
    /// promoted (RIGHT_FORBIDDEN); the creator's rights cannot change (USER_CREATOR). At most 50 admins.
    private func editAdmin(_ call: RPCCall, _ request: Api.functions.channels.EditAdmin)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let input = request.channel, target = request.userId, rank = request.rank
        guard case .chatAdminRights(let rights) = request.adminRights else {
            throw RPCError(code: 400, message: "RIGHTS_INVALID")
        }
        if let rank {
            guard rank.count <= 16 else { throw RPCError(code: 400, message: "ADMIN_RANK_INVALID") }
            guard !rank.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) else {
                throw RPCError(code: 400, message: "ADMIN_RANK_EMOJI_NOT_ALLOWED")
            }
        }
        let now = Self.date(call)
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let id = try state.channelID(input, viewer: me)
            guard let user = state.resolve(target, me: me) else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
            let before = state.channels[id]?.standing(of: user, now: now)
            let channel = try state.modifyChannel(id) { channel throws(RPCError) -> Channel in
                try channel.checkMember(me)
                let mine = channel.creator == me ? nil : channel.roster.admin(me)
                guard channel.creator == me || mine?.addAdmins == true else {
                    throw RPCError(code: 403, message: "CHAT_ADMIN_REQUIRED")
                }
                guard user != channel.creator else { throw RPCError(code: 400, message: "USER_CREATOR") }
                if let mine {
                    guard rights.flags & ~mine.flags == 0 else { throw RPCError(code: 403, message: "RIGHT_FORBIDDEN") }
                    if let existing = channel.roster.admins[user], existing.promotedBy != me {
                        throw RPCError(code: 403, message: "RIGHT_FORBIDDEN")
                    }
                }
                guard channel.members[user] != nil else { throw RPCError(code: 400, message: "USER_NOT_PARTICIPANT") }
                if rights.flags == 0 {
                    channel.roster.admins[user] = nil
                } else {
                    guard channel.roster.admins[user] != nil || channel.roster.admins.count < 50 else {
                        throw RPCError(code: 400, message: "ADMINS_TOO_MUCH")
                    }
                    let kept = rank ?? channel.roster.admins[user]?.rank
                    channel.roster.admins[user] = .init(rights: .chatAdminRights(rights), rank: kept, promotedBy: me,
                                                        date: now)
                    channel.roster.bans[user] = nil
                }
                return channel
            }
            return state.changed(user, in: channel, by: me, date: now, before: before)
        }
        push(deliveries, except: call)
        return result
    }
}

/// A channel's members beyond membership itself (`Channel.members`): when each joined and who added them, the admins,
/// and the bans and restrictions.
struct Roster {
    struct Joined {
        var date: Int32
        var inviter: Int64
        /// Join order, for "recent" lists (many join within one second).
        var order: Int
    }

    struct Admin {
        var rights: Api.ChatAdminRights
        var rank: String?
        var promotedBy: Int64
        var date: Int32
    }

    struct Ban {
        var rights: Api.ChatBannedRights
        var by: Int64
        var date: Int32
        /// When the user had joined (a participant's `date`).
        var joined: Int32
    }

    var joined: [Int64: Joined] = [:]
    var admins: [Int64: Admin] = [:]
    var bans: [Int64: Ban] = [:]
    var nextOrder = 0

    mutating func join(_ user: Int64, inviter: Int64, date: Int32) {
        joined[user] = Joined(date: date, inviter: inviter, order: nextOrder)
        nextOrder += 1
    }

    func admin(_ user: Int64) -> Api.ChatAdminRights.Cons_chatAdminRights? {
        guard case .chatAdminRights(let rights)? = admins[user]?.rights else { return nil }
        return rights
    }

    /// The rights taken from `user` now, if a restriction is in force (a dated one lapses at its date).
    func restriction(_ user: Int64, now: Int32) -> Api.ChatBannedRights.Cons_chatBannedRights? {
        guard case .chatBannedRights(let rights)? = bans[user]?.rights,
              rights.untilDate == 0 || rights.untilDate > now else { return nil }
        return rights
    }

    /// A restricted member sending: without send_messages nothing (CHAT_WRITE_FORBIDDEN), without send_plain no
    /// text alone (CHAT_SEND_PLAIN_FORBIDDEN), without send_media no media (CHAT_SEND_MEDIA_FORBIDDEN), the errors
    /// core.telegram.org/method/messages.sendMessage and sendMedia list. (USER_BANNED_IN_CHANNEL is Telegram's answer
    /// to an account limited everywhere, not to one chat's restriction; a banned user is no longer a member and gets
    /// CHANNEL_PRIVATE.)
    func checkSend(_ user: Int64, media: Bool, now: Int32) throws(RPCError) {
        guard let rights = restriction(user, now: now) else { return }
        if rights.sendMessages { throw RPCError(code: 403, message: "CHAT_WRITE_FORBIDDEN") }
        if media, rights.sendMedia { throw RPCError(code: 403, message: "CHAT_SEND_MEDIA_FORBIDDEN") }
        if !media, rights.sendPlain { throw RPCError(code: 403, message: "CHAT_SEND_PLAIN_FORBIDDEN") }
    }
}

extension Api.ChatBannedRights.Cons_chatBannedRights {
    /// The same rights taken until `date`.
    func lasting(until date: Int32) -> Self {
        .init(viewMessages: viewMessages, sendMessages: sendMessages, sendMedia: sendMedia, sendStickers: sendStickers,
              sendGifs: sendGifs, sendGames: sendGames, sendInline: sendInline, embedLinks: embedLinks,
              sendPolls: sendPolls, changeInfo: changeInfo, inviteUsers: inviteUsers, pinMessages: pinMessages,
              manageTopics: manageTopics, sendPhotos: sendPhotos, sendVideos: sendVideos, sendRoundvideos: sendRoundvideos,
              sendAudios: sendAudios, sendVoices: sendVoices, sendDocs: sendDocs, sendPlain: sendPlain, editRank: editRank,
              sendReactions: sendReactions, manageLinkedPeers: manageLinkedPeers, untilDate: date)
    }
}

extension Channel {
    /// `user`'s place in the channel as a bot admin is told it: nil when it is neither a member nor on the banned
    /// list.
    func standing(of user: Int64, now: Int32) -> Api.ChannelParticipant? {
        guard members[user] != nil || roster.bans[user] != nil else { return nil }
        return participant(user, viewer: 0, now: now)
    }

    /// Every right, as the creator holds them.
    static let creatorRights = Api.ChatAdminRights.chatAdminRights(.init(
        changeInfo: true, postMessages: true, editMessages: true, deleteMessages: true, banUsers: true, inviteUsers: true,
        pinMessages: true, addAdmins: true, manageCall: true, other: true, manageTopics: true, postStories: true,
        editStories: true, deleteStories: true))

    /// `user` as a participant: creator, admin, banned (until its ban lapses) or restricted, or a plain member
    /// (`channelParticipantSelf` for the viewer itself).
    func participant(_ user: Int64, viewer: Int64, now: Int32) -> Api.ChannelParticipant {
        if user == creator {
            return .channelParticipantCreator(.init(userId: user, adminRights: Self.creatorRights, rank: nil))
        }
        let joined = roster.joined[user]
        if let admin = roster.admins[user] {
            return .channelParticipantAdmin(.init(
                canEdit: viewer == creator || admin.promotedBy == viewer, userId: user,
                inviterId: user == viewer ? (joined?.inviter ?? creator) : nil, promotedBy: admin.promotedBy,
                date: admin.date, adminRights: admin.rights, rank: admin.rank))
        }
        if let ban = roster.bans[user], members[user] == nil || roster.restriction(user, now: now) != nil {
            return .channelParticipantBanned(.init(left: members[user] == nil, peer: .peerUser(.init(userId: user)),
                                                   kickedBy: ban.by, date: ban.joined, bannedRights: ban.rights))
        }
        let date = joined?.date ?? date
        if user == viewer {
            return .channelParticipantSelf(.init(userId: user, inviterId: joined?.inviter ?? creator, date: date))
        }
        return .channelParticipant(.init(userId: user, date: date))
    }
}

extension ServiceState {
    /// The answer to a ban or promotion of `user` (`updateChannel` with the channel and the user as `actor` sees
    /// them), and the `updateChannel` pushed to the user.
    mutating func changed(_ user: Int64, in channel: Channel, by actor: Int64, date: Int32,
                          before: Api.ChannelParticipant?) -> (Api.Updates, [Delivery]) {
        let update = Api.Update.updateChannel(.init(channelId: channel.id))
        return (.updates(.init(updates: [update], users: users([user], viewer: actor), chats: [channel.api(viewer: actor)],
                               date: date, seq: 0)),
                [(user, .updates(.init(updates: [update], users: [], chats: [channel.api(viewer: user)], date: date,
                                       seq: 0)))]
                    + participantNotices(user, in: channel, by: actor, before: before, date: date))
    }

    /// `updateChannelParticipant` for each bot that is an admin of `channel` (the creator too), `user` as it was
    /// (`before`) and as it now is, numbered by the bot's next qts.
    mutating func participantNotices(_ user: Int64, in channel: Channel, by actor: Int64,
                                     before: Api.ChannelParticipant?, date: Int32) -> [Delivery] {
        let after = channel.standing(of: user, now: date)
        let bots = ([channel.creator] + channel.roster.admins.keys.sorted()).filter {
            signIn.bots.contains($0) && channel.members[$0] != nil
        }
        return bots.map { bot -> Delivery in
            let update = secret.logQts(for: bot, users: [user, actor]) { qts in
                .updateChannelParticipant(.init(channelId: channel.id, date: date, actorId: actor, userId: user,
                                                prevParticipant: before, newParticipant: after, qts: qts))
            }
            return (bot, Api.Updates.updates(.init(updates: [update], users: users([user, actor], viewer: bot),
                                                   chats: [channel.api(viewer: bot)], date: date, seq: 0)))
        }
    }

    /// The user ids a participants filter picks in `channel`, in the order `getParticipants` pages them.
    func pick(_ filter: Api.ChannelParticipantsFilter, in channel: Channel, viewer: Int64,
              now: Int32) throws(RPCError) -> [Int64] {
        let roster = channel.roster
        // Newest first; members added before join dates were kept come last, by id.
        func recent(_ ids: some Sequence<Int64>) -> [Int64] {
            ids.sorted { a, b in
                let (x, y) = (roster.joined[a]?.order ?? -1, roster.joined[b]?.order ?? -1)
                return x != y ? x > y : a < b
            }
        }
        func named(_ query: String) -> (Int64) -> Bool {
            let words = query.lowercased().split(separator: " ").map(String.init)
            return { id in
                guard let account = accounts[id] else { return false }
                guard !words.isEmpty else { return true }
                let names = "\(account.firstName) \(account.lastName) \(account.username ?? "")".lowercased()
                    .split(separator: " ")
                return words.allSatisfy { word in names.contains { $0.hasPrefix(word) } }
            }
        }
        switch filter {
            case .channelParticipantsRecent:
                return recent(channel.members.keys)
            case .channelParticipantsSearch(let f):
                return recent(channel.members.keys.filter(named(f.q)))
            case .channelParticipantsAdmins:
                return [channel.creator] + recent(roster.admins.keys.filter { channel.members[$0] != nil })
            case .channelParticipantsBots:
                return recent(channel.members.keys.filter { signIn.bots.contains($0) })
            case .channelParticipantsKicked(let f):
                let match = named(f.q)
                return recent(roster.bans.keys.filter {
                    channel.members[$0] == nil && roster.restriction($0, now: now) != nil && match($0)
                })
            case .channelParticipantsBanned(let f):
                let match = named(f.q)
                return recent(roster.bans.keys.filter {
                    channel.members[$0] != nil && roster.restriction($0, now: now) != nil && match($0)
                })
            case .channelParticipantsContacts(let f):
                let match = named(f.q), dialogs = accounts[viewer]?.dialogs ?? [:]
                return recent(channel.members.keys.filter { dialogs[$0] != nil && $0 != viewer && match($0) })
            case .channelParticipantsMentions:
                throw RPCError(code: 400, message: "FILTER_NOT_SUPPORTED")
        }
    }
}
