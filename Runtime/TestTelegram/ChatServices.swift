// Basic groups, invite links and what a chat shows of itself (core.telegram.org/api/channel): `messages.createChat`,
// `getFullChat`, `addChatUser`, `deleteChatUser`, `editChatAdmin`, `editChatTitle`, `editChatPhoto`, `migrateChat`
// (to a supergroup); `channels.getFullChannel`, `editTitle`, `editPhoto`, `joinChannel`; `messages.editChatAbout`
// for both kinds; and
// invite links (core.telegram.org/api/invites): `messages.exportChatInvite`, `checkChatInvite`,
// `importChatInvite`, `editExportedChatInvite` (revoking). A basic group is a member list with a version (moved by
// each change) and a title; messages are not kept for it here (sending to one is PEER_ID_INVALID).
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    func registerChats(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.messages.CreateChat.self, createChat)
        handlers.on(Api.functions.messages.GetFullChat.self, fullChat)
        handlers.on(Api.functions.messages.AddChatUser.self, addChatUser)
        handlers.on(Api.functions.messages.DeleteChatUser.self, deleteChatUser)
        handlers.on(Api.functions.messages.EditChatAdmin.self, editChatAdmin)
        handlers.on(Api.functions.messages.EditChatTitle.self, editChatTitle)
        handlers.on(Api.functions.messages.MigrateChat.self, migrateChat)
        handlers.on(Api.functions.messages.EditChatAbout.self, editAbout)
        handlers.on(Api.functions.channels.GetFullChannel.self, fullChannel)
        handlers.on(Api.functions.channels.EditTitle.self, editChannelTitle)
        handlers.on(Api.functions.channels.EditPhoto.self, editChannelPhoto)
        handlers.on(Api.functions.messages.EditChatPhoto.self, editChatPhoto)
        handlers.on(Api.functions.channels.JoinChannel.self, joinChannel)
        handlers.on(Api.functions.messages.ExportChatInvite.self, exportInvite)
        handlers.on(Api.functions.messages.CheckChatInvite.self, checkInvite)
        handlers.on(Api.functions.messages.ImportChatInvite.self, importInvite)
        handlers.on(Api.functions.messages.EditExportedChatInvite.self, editInvite)
    }

    // MARK: Basic groups

    /// `messages.createChat`: a basic group of the caller (its creator) and `users` (at most 199 more: Telegram's
    /// 200-member bound), each of whom gets `updateChat` pushed.
    private func createChat(_ call: RPCCall, _ request: Api.functions.messages.CreateChat)
        throws(RPCError) -> Api.messages.InvitedUsers {
        let me = try caller(call)
        let title = request.title, inputs = request.users
        guard !title.allSatisfy(\.isWhitespace) else { throw RPCError(code: 400, message: "CHAT_TITLE_EMPTY") }
        guard inputs.count < BasicGroup.maxMembers else { throw RPCError(code: 400, message: "USERS_TOO_MUCH") }
        let date = Self.date(call)
        let limit = limits
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            var users: [Int64] = []
            for input in inputs {
                guard let user = state.resolve(input, me: me) else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
                if user != me, !users.contains(user) { users.append(user) }
            }
            guard state.chats.groups.count < limit.maxChannels else { throw RPCError(code: 400, message: "CHATS_TOO_MUCH") }
            let id = state.chats.nextGroupID
            state.chats.nextGroupID += 1
            var group = BasicGroup(id: id, title: String(title.prefix(128)), creator: me, date: date)
            group.members = [.init(user: me, inviter: me, date: date)]
                + users.map { .init(user: $0, inviter: me, date: date) }
            state.chats.groups[id] = group
            let deliveries = users.map { user in
                (user, Api.Updates.updates(.init(updates: [.updateChat(.init(chatId: id))], users: [],
                                                 chats: [group.api(viewer: user)], date: date, seq: 0)))
            }
            return (group.updates(viewer: me, users: state.users([me] + users, viewer: me), date: date), deliveries)
        }
        push(deliveries, except: call)
        return .invitedUsers(.init(updates: result, missingInvitees: []))
    }

    /// `messages.getFullChat`: the group with its member list (`chatParticipantsForbidden` for one no longer in it)
    /// and every member as a user, and the caller's permanent invite link when it is the creator.
    private func fullChat(_ call: RPCCall, _ request: Api.functions.messages.GetFullChat)
        throws(RPCError) -> Api.messages.ChatFull {
        let me = try caller(call)
        let id = request.chatId
        return try state.withLock { state throws(RPCError) -> Api.messages.ChatFull in
            guard let group = state.chats.groups[id] else { throw RPCError(code: 400, message: "CHAT_ID_INVALID") }
            let member = group.member(me) != nil
            let participants: Api.ChatParticipants = member
                ? .chatParticipants(.init(chatId: id, participants: group.members.map { group.participant($0) },
                                          version: group.version))
                : .chatParticipantsForbidden(.init(chatId: id))
            let invite = state.chats.invites.values.first { $0.chat == .chat(id) && $0.permanent && $0.admin == me && !$0.revoked }
            return .chatFull(.init(
                fullChat: .chatFull(.init(id: id, about: group.about, participants: participants,
                                          chatPhoto: group.photo?.api,
                                          notifySettings: .peerNotifySettings(.init()),
                                          exportedInvite: invite?.api)),
                chats: [group.api(viewer: me)],
                users: member ? state.users(group.members.map(\.user), viewer: me) : []))
        }
    }

    /// `messages.addChatUser`: any member adds a user (USER_ALREADY_PARTICIPANT if in, USERS_TOO_MUCH past 200).
    private func addChatUser(_ call: RPCCall, _ request: Api.functions.messages.AddChatUser)
        throws(RPCError) -> Api.messages.InvitedUsers {
        let me = try caller(call)
        let id = request.chatId, input = request.userId
        let date = Self.date(call)
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            guard let user = state.resolve(input, me: me) else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
            let group = try state.modifyGroup(id, by: me) { group throws(RPCError) in
                guard group.member(user) == nil else { throw RPCError(code: 400, message: "USER_ALREADY_PARTICIPANT") }
                guard group.members.count < BasicGroup.maxMembers else { throw RPCError(code: 400, message: "USERS_TOO_MUCH") }
                group.members.append(.init(user: user, inviter: me, date: date))
            }
            return (group.updates(viewer: me, users: state.users([user], viewer: me), date: date),
                    [(user, .updates(.init(updates: [.updateChat(.init(chatId: id))], users: [],
                                           chats: [group.api(viewer: user)], date: date, seq: 0)))])
        }
        push(deliveries, except: call)
        return .invitedUsers(.init(updates: result, missingInvitees: []))
    }

    /// `messages.deleteChatUser`: the caller leaves, or removes a member it added (the creator and admins: anyone
    /// but the creator; CHAT_ADMIN_REQUIRED otherwise).
    private func deleteChatUser(_ call: RPCCall, _ request: Api.functions.messages.DeleteChatUser)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let id = request.chatId, input = request.userId
        let date = Self.date(call)
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            guard let user = state.resolve(input, me: me) else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
            let group = try state.modifyGroup(id, by: me) { group throws(RPCError) in
                guard let member = group.member(user) else { throw RPCError(code: 400, message: "USER_NOT_PARTICIPANT") }
                if user != me {
                    let admin = group.creator == me || group.member(me)?.admin == true
                    guard user != group.creator, admin || member.inviter == me else {
                        throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED")
                    }
                }
                group.members.removeAll { $0.user == user }
            }
            return (group.updates(viewer: me, users: state.users([user], viewer: me), date: date),
                    user == me ? [] : [(user, .updates(.init(updates: [.updateChat(.init(chatId: id))], users: [],
                                                             chats: [group.api(viewer: user)], date: date, seq: 0)))])
        }
        push(deliveries, except: call)
        return result
    }

    /// `messages.editChatAdmin`: the creator makes a member an admin of the group or takes it back.
    private func editChatAdmin(_ call: RPCCall, _ request: Api.functions.messages.EditChatAdmin) throws(RPCError) -> Bool {
        let me = try caller(call)
        let id = request.chatId, input = request.userId, isAdmin = request.isAdmin
        try state.withLock { state throws(RPCError) in
            guard let user = state.resolve(input, me: me) else { throw RPCError(code: 400, message: "USER_ID_INVALID") }
            _ = try state.modifyGroup(id, by: me) { group throws(RPCError) in
                guard group.creator == me else { throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED") }
                guard let index = group.members.firstIndex(where: { $0.user == user }) else {
                    throw RPCError(code: 400, message: "USER_NOT_PARTICIPANT")
                }
                guard user != group.creator else { throw RPCError(code: 400, message: "USER_CREATOR") }
                group.members[index].admin = isAdmin
            }
        }
        return true
    }

    /// `messages.editChatTitle` (CHAT_TITLE_EMPTY, CHAT_NOT_MODIFIED); any member may, as in a basic group by default.
    private func editChatTitle(_ call: RPCCall, _ request: Api.functions.messages.EditChatTitle)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let id = request.chatId, title = request.title
        guard !title.allSatisfy(\.isWhitespace) else { throw RPCError(code: 400, message: "CHAT_TITLE_EMPTY") }
        let date = Self.date(call)
        return try state.withLock { state throws(RPCError) -> Api.Updates in
            let group = try state.modifyGroup(id, by: me) { group throws(RPCError) in
                guard group.title != title else { throw RPCError(code: 400, message: "CHAT_NOT_MODIFIED") }
                group.title = String(title.prefix(128))
            }
            return group.updates(viewer: me, users: [], date: date)
        }
    }

    /// `messages.migrateChat`: the creator turns the group into a supergroup with the same members (its admins
    /// become admins who may change info, delete, ban, invite and pin); the group is left deactivated with
    /// `migrated_to`. Both come in the answer, with `updateChannel`; the other members get them pushed.
    private func migrateChat(_ call: RPCCall, _ request: Api.functions.messages.MigrateChat)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let id = request.chatId
        let date = Self.date(call)
        let accessHash = random.int64()
        let limit = limits
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            guard var group = state.chats.groups[id], group.member(me) != nil, group.migratedTo == nil else {
                throw RPCError(code: 400, message: "CHAT_ID_INVALID")
            }
            guard group.creator == me else { throw RPCError(code: 403, message: "CHAT_ADMIN_REQUIRED") }
            guard state.channels.count < limit.maxChannels else { throw RPCError(code: 400, message: "CHANNELS_TOO_MUCH") }
            let channelID = state.nextChannelID
            state.nextChannelID += 1
            var channel = Channel(id: channelID, accessHash: accessHash, title: group.title, about: group.about,
                                  broadcast: false, creator: me, date: date, members: [:])
            channel.sharedHashes = state.sharedHashes
            let rights = Api.ChatAdminRights.chatAdminRights(.init(
                changeInfo: true, deleteMessages: true, banUsers: true, inviteUsers: true, pinMessages: true))
            for member in group.members {
                channel.members[member.user] = channel.pts
                channel.roster.join(member.user, inviter: member.inviter, date: member.date)
                if member.admin, member.user != me {
                    channel.roster.admins[member.user] = .init(rights: rights, rank: nil, promotedBy: me, date: date)
                }
            }
            state.channels[channelID] = channel
            group.migratedTo = (channelID, accessHash)
            group.version &+= 1
            state.chats.groups[id] = group
            func updates(for viewer: Int64) -> Api.Updates {
                .updates(.init(updates: [.updateChannel(.init(channelId: channelID)), .updateChat(.init(chatId: id))],
                               users: [], chats: [group.api(viewer: viewer), channel.api(viewer: viewer)], date: date,
                               seq: 0))
            }
            return (updates(for: me), group.members.map(\.user).filter { $0 != me }.map { ($0, updates(for: $0)) })
        }
        push(deliveries, except: call)
        return result
    }

    // MARK: Title, about, full info

    /// `messages.editChatAbout` of a supergroup, channel or basic group: 255 characters at most
    /// (CHAT_ABOUT_TOO_LONG), a change (CHAT_ABOUT_NOT_MODIFIED), by the creator or an admin who may change info.
    private func editAbout(_ call: RPCCall, _ request: Api.functions.messages.EditChatAbout) throws(RPCError) -> Bool {
        let me = try caller(call)
        let peer = request.peer, about = request.about
        guard about.count <= 255 else { throw RPCError(code: 400, message: "CHAT_ABOUT_TOO_LONG") }
        try state.withLock { state throws(RPCError) in
            switch peer {
                case .inputPeerChannel(let input):
                    let id = try state.channelID(id: input.channelId, accessHash: input.accessHash, viewer: me)
                    try state.modifyChannel(id) { channel throws(RPCError) in
                        try channel.checkInfoEditor(me)
                        guard channel.about != about else { throw RPCError(code: 400, message: "CHAT_ABOUT_NOT_MODIFIED") }
                        channel.about = about
                    }
                case .inputPeerChat(let input):
                    _ = try state.modifyGroup(input.chatId, by: me) { group throws(RPCError) in
                        guard group.creator == me || group.member(me)?.admin == true else {
                            throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED")
                        }
                        guard group.about != about else { throw RPCError(code: 400, message: "CHAT_ABOUT_NOT_MODIFIED") }
                        group.about = about
                    }
                default:
                    throw RPCError(code: 400, message: "PEER_ID_INVALID")
            }
        }
        return true
    }

    /// `channels.editTitle` by the creator or an admin who may change info: the new title, with a
    /// `messageActionChatEditTitle` service message posted to every member.
    private func editChannelTitle(_ call: RPCCall, _ request: Api.functions.channels.EditTitle)
        throws(RPCError) -> Api.Updates {
        let title = request.title
        guard !title.allSatisfy(\.isWhitespace) else { throw RPCError(code: 400, message: "CHAT_TITLE_EMPTY") }
        return try editChannelInfo(call, request.channel) { channel throws(RPCError) -> Api.MessageAction in
            guard channel.title != title else { throw RPCError(code: 400, message: "CHAT_NOT_MODIFIED") }
            channel.title = String(title.prefix(128))
            return .messageActionChatEditTitle(.init(title: channel.title))
        }
    }

    /// `channels.editPhoto` (core.telegram.org/method/channels.editPhoto): an uploaded image kept as the channel's
    /// photo (`messageActionChatEditPhoto`), a photo already stored, or none (`messageActionChatDeletePhoto`;
    /// CHAT_NOT_MODIFIED when it had none), by the creator or an admin who may change info.
    private func editChannelPhoto(_ call: RPCCall, _ request: Api.functions.channels.EditPhoto)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call), input = request.channel
        // The rights first, so a refused photo is not kept.
        try state.withLock { state throws(RPCError) in try state.channel(input, viewer: me).checkInfoEditor(me) }
        let photo = try storeChatPhoto(request.photo, call)
        return try editChannelInfo(call, input) { channel throws(RPCError) -> Api.MessageAction in
            guard let photo else {
                guard channel.photo != nil else { throw RPCError(code: 400, message: "CHAT_NOT_MODIFIED") }
                channel.photo = nil
                return .messageActionChatDeletePhoto
            }
            channel.photo = photo
            return .messageActionChatEditPhoto(.init(photo: photo.api))
        }
    }

    /// A change of a channel's info by the creator or an admin with change_info: `change` edits it and names the
    /// service message posted to every member, which the answer carries with `updateChannel`.
    private func editChannelInfo(_ call: RPCCall, _ input: Api.InputChannel,
                                 _ change: @Sendable (inout Channel) throws(RPCError) -> Api.MessageAction) throws(RPCError)
        -> Api.Updates {
        let me = try caller(call)
        let date = Self.date(call)
        let limit = limits
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let id = try state.channelID(input, viewer: me)
            let (channel, notice) = try state.modifyChannel(id) { channel throws(RPCError) -> (Channel, ChannelMessage) in
                try channel.checkInfoEditor(me)
                let action = try change(&channel)
                let notice = channel.announce(action, by: me, date: date, limits: limit)
                return (channel, notice)
            }
            let result = Api.Updates.updates(.init(
                updates: [.updateChannel(.init(channelId: id)),
                          .updateNewChannelMessage(.init(message: notice.api(in: channel, viewer: me), pts: channel.pts,
                                                         ptsCount: 1))],
                users: state.users([me], viewer: me), chats: [channel.api(viewer: me)], date: date, seq: 0))
            return (result, state.noticeDeliveries(notice, in: channel, date: date))
        }
        push(deliveries, except: call)
        return result
    }

    /// `messages.editChatPhoto` of a basic group, by any member (as `editChatTitle`): the new photo or none
    /// (CHAT_NOT_MODIFIED when it had none), answered with the group and its members.
    private func editChatPhoto(_ call: RPCCall, _ request: Api.functions.messages.EditChatPhoto)
        throws(RPCError) -> Api.Updates {
        let me = try caller(call)
        let id = request.chatId
        try state.withLock { state throws(RPCError) in
            guard state.chats.groups[id].map({ $0.migratedTo == nil && $0.member(me) != nil }) == true else {
                throw RPCError(code: 400, message: "CHAT_ID_INVALID")
            }
        }
        let photo = try storeChatPhoto(request.photo, call)
        let date = Self.date(call)
        let (result, deliveries) = try state.withLock { state throws(RPCError) -> (Api.Updates, [Delivery]) in
            let group = try state.modifyGroup(id, by: me) { group throws(RPCError) in
                guard photo != nil || group.photo != nil else { throw RPCError(code: 400, message: "CHAT_NOT_MODIFIED") }
                group.photo = photo
            }
            let others = group.members.map(\.user).filter { $0 != me }
            let deliveries: [Delivery] = others.map { user in
                (user, Api.Updates.updates(.init(updates: [.updateChat(.init(chatId: id))], users: [],
                                                 chats: [group.api(viewer: user)], date: date, seq: 0)))
            }
            return (group.updates(viewer: me, users: [], date: date), deliveries)
        }
        push(deliveries, except: call)
        return result
    }

    /// The photo an `InputChatPhoto` names: an uploaded JPEG or PNG of the caller's (consumed, kept as a stored file
    /// so it counts against the storage bound; IMAGE_PROCESS_FAILED for anything else, PHOTO_INVALID for a video
    /// alone), a photo already stored (PHOTO_INVALID if unknown), or nil for `inputChatPhotoEmpty`.
    func storeChatPhoto(_ input: Api.InputChatPhoto, _ call: RPCCall) throws(RPCError) -> StoredChatPhoto? {
        let me = try caller(call)
        switch input {
            case .inputChatPhotoEmpty:
                return nil
            case .inputChatPhoto(let chosen):
                guard case .inputPhoto(let photo) = chosen.id else { throw RPCError(code: 400, message: "PHOTO_INVALID") }
                return try state.withLock { state throws(RPCError) -> StoredChatPhoto in
                    guard let stored = state.documents[photo.id], stored.accessHash == photo.accessHash,
                          stored.mimeType.hasPrefix("image/") else { throw RPCError(code: 400, message: "PHOTO_INVALID") }
                    return StoredChatPhoto(stored)
                }
            case .inputChatUploadedPhoto(let uploaded):
                let fileID: Int64, parts: Int32, md5: String?
                switch uploaded.file {
                    case .inputFile(let file)?: (fileID, parts, md5) = (file.id, file.parts, file.md5Checksum)
                    case .inputFileBig(let file)?: (fileID, parts, md5) = (file.id, file.parts, nil)
                    default: throw RPCError(code: 400, message: "PHOTO_INVALID")
                }
                let id = random.int64(), accessHash = random.int64(), reference = random.bytes(16)
                let limit = limits
                return try state.withLock { state throws(RPCError) -> StoredChatPhoto in
                    guard let account = state.accounts[me] else { throw RPCError(code: 400, message: "FILE_PARTS_INVALID") }
                    let bytes = try account.assembleUpload(fileID, parts: parts, big: md5 == nil, md5: md5,
                                                           dcID: call.endpoint.dcID)
                    let mime: String
                    if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
                        mime = "image/jpeg"
                    } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
                        mime = "image/png"
                    } else {
                        throw RPCError(code: 400, message: "IMAGE_PROCESS_FAILED")
                    }
                    guard state.documentBytes + bytes.count <= limit.maxStoredFileBytes else {
                        throw RPCError(code: 400, message: "FILE_STORAGE_FULL")
                    }
                    state.accounts[me]?.dropUpload(fileID)
                    let stored = StoredDocument(id: id, accessHash: accessHash, fileReference: reference,
                                                dcID: call.endpoint.dcID, date: Self.date(call), mimeType: mime,
                                                attributes: [], bytes: bytes)
                    state.documents[id] = stored
                    state.documentBytes += bytes.count
                    return StoredChatPhoto(stored)
                }
        }
    }

    /// `channels.getFullChannel`: about, counts of members, admins, kicked and restricted, the channel's pts, and
    /// the caller's permanent invite link when it has made one. A broadcast channel shows its counts to admins only.
    private func fullChannel(_ call: RPCCall, _ request: Api.functions.channels.GetFullChannel)
        throws(RPCError) -> Api.messages.ChatFull {
        let me = try caller(call)
        let input = request.channel
        let now = Self.date(call)
        return try state.withLock { state throws(RPCError) -> Api.messages.ChatFull in
            let channel = try state.channel(input, viewer: me)
            try channel.checkMember(me)
            let admin = channel.creator == me || channel.roster.admins[me] != nil
            let kicked = channel.roster.bans.keys.filter { channel.members[$0] == nil }.count
            let restricted = channel.roster.bans.keys.filter {
                channel.members[$0] != nil && channel.roster.restriction($0, now: now) != nil
            }.count
            let invite = state.chats.invites.values.first {
                $0.chat == .channel(channel.id) && $0.permanent && $0.admin == me && !$0.revoked
            }
            let top = channel.messageOrder.last ?? 0
            return .chatFull(.init(
                fullChat: .channelFull(.init(
                    canViewParticipants: !channel.broadcast || admin, id: channel.id, about: channel.about,
                    participantsCount: Int32(clamping: channel.members.count),
                    adminsCount: admin || !channel.broadcast ? Int32(clamping: channel.roster.admins.count + 1) : nil,
                    kickedCount: admin ? Int32(clamping: kicked) : nil,
                    bannedCount: admin ? Int32(clamping: restricted) : nil,
                    readInboxMaxId: top, readOutboxMaxId: top, unreadCount: 0,
                    chatPhoto: channel.photo?.api ?? .photoEmpty(.init(id: 0)),
                    notifySettings: .peerNotifySettings(.init()), exportedInvite: invite?.api, botInfo: [],
                    pts: channel.pts)),
                chats: [channel.api(viewer: me)], users: []))
        }
    }

    /// `channels.joinChannel` of a channel the caller can name (one it left; the test Telegram's channels have no
    /// usernames): a member again, unless it was banned (CHANNEL_PRIVATE).
    private func joinChannel(_ call: RPCCall, _ request: Api.functions.channels.JoinChannel)
        throws(RPCError) -> Api.messages.ChatInviteJoinResult {
        let me = try caller(call)
        let input = request.channel
        let date = Self.date(call)
        var notices: [Delivery] = []
        let result = try state.withLock { state throws(RPCError) -> Api.Updates in
            let id = try state.channelID(input, viewer: me)
            return try state.join(channel: id, user: me, inviter: nil, date: date, limits: limits, notices: &notices)
        }
        push(result, to: me, except: call)
        push(notices, except: call)
        return .chatInviteJoinResultOk(.init(updates: result))
    }

    // MARK: Invite links

    /// `messages.exportChatInvite`: a new link `https://t.me/+HASH` to a supergroup, channel or basic group, by its
    /// creator or an admin who may invite (CHAT_ADMIN_REQUIRED); `expire_date` in the future (EXPIRE_DATE_INVALID),
    /// `usage_limit` 1…99,999 (USAGE_LIMIT_INVALID). The first link an admin makes is its permanent one.
    private func exportInvite(_ call: RPCCall, _ request: Api.functions.messages.ExportChatInvite)
        throws(RPCError) -> Api.ExportedChatInvite {
        let me = try caller(call)
        let peer = request.peer, expires = request.expireDate, usageLimit = request.usageLimit
        let title = request.title
        let now = Self.date(call)
        if let expires, expires <= now { throw RPCError(code: 400, message: "EXPIRE_DATE_INVALID") }
        if let usageLimit, !(1...99_999).contains(usageLimit) { throw RPCError(code: 400, message: "USAGE_LIMIT_INVALID") }
        if let title, title.count > 32 { throw RPCError(code: 400, message: "INVITE_TITLE_INVALID") }
        let hash = Self.inviteHash(random.int64(), random.int64())
        let cap = limits.maxChannels * 10
        return try state.withLock { state throws(RPCError) -> Api.ExportedChatInvite in
            let chat = try state.inviter(peer, me: me)
            guard state.chats.invites.count < cap else { throw RPCError(code: 400, message: "INVITES_TOO_MUCH") }
            let permanent = !state.chats.invites.values.contains { $0.chat == chat && $0.admin == me && $0.permanent }
                && expires == nil && usageLimit == nil
            let invite = Invite(hash: hash, chat: chat, admin: me, date: now, expires: expires, usageLimit: usageLimit,
                                permanent: permanent, title: title)
            state.chats.invites[hash] = invite
            return invite.api
        }
    }

    /// `messages.checkChatInvite`: what a link leads to — `chatInviteAlready` for a member, else the title and size —
    /// or why it leads nowhere: INVITE_HASH_EMPTY, INVITE_HASH_INVALID (never made), INVITE_HASH_EXPIRED (past its date,
    /// revoked, or used up), as core.telegram.org/method/messages.checkChatInvite lists them.
    private func checkInvite(_ call: RPCCall, _ request: Api.functions.messages.CheckChatInvite)
        throws(RPCError) -> Api.ChatInvite {
        let me = try caller(call)
        let hash = request.hash
        let now = Self.date(call)
        return try state.withLock { state throws(RPCError) -> Api.ChatInvite in
            let invite = try state.chats.usable(hash, now: now)
            switch invite.chat {
                case .channel(let id):
                    guard let channel = state.channels[id] else { throw RPCError(code: 400, message: "INVITE_HASH_INVALID") }
                    if channel.members[me] != nil { return .chatInviteAlready(.init(chat: channel.api(viewer: me))) }
                    let some = Array(channel.members.keys.sorted().prefix(channel.broadcast ? 0 : 10))
                    return .chatInvite(.init(
                        channel: true, broadcast: channel.broadcast, megagroup: !channel.broadcast, title: channel.title,
                        about: channel.about.isEmpty ? nil : channel.about,
                        photo: channel.photo?.api ?? .photoEmpty(.init(id: 0)),
                        participantsCount: Int32(clamping: channel.members.count),
                        participants: some.isEmpty ? nil : state.users(some, viewer: me), color: 0))
                case .chat(let id):
                    guard let group = state.chats.groups[id] else { throw RPCError(code: 400, message: "INVITE_HASH_INVALID") }
                    if group.member(me) != nil { return .chatInviteAlready(.init(chat: group.api(viewer: me))) }
                    return .chatInvite(.init(
                        title: group.title, photo: group.photo?.api ?? .photoEmpty(.init(id: 0)),
                        participantsCount: Int32(clamping: group.members.count),
                        participants: state.users(group.members.prefix(10).map(\.user), viewer: me), color: 0))
            }
        }
    }

    /// `messages.importChatInvite`: joins by a link, with `checkChatInvite`'s errors, USER_ALREADY_PARTICIPANT for a
    /// member, CHANNEL_PRIVATE for a user banned from the channel; each join counts against the link's usage limit.
    private func importInvite(_ call: RPCCall, _ request: Api.functions.messages.ImportChatInvite)
        throws(RPCError) -> Api.messages.ChatInviteJoinResult {
        let me = try caller(call)
        let hash = request.hash
        let now = Self.date(call)
        let limit = limits
        var notices: [Delivery] = []
        let result = try state.withLock { state throws(RPCError) -> Api.Updates in
            let alreadyIn = switch state.chats.invites[hash]?.chat {
                case .channel(let id)?: state.channels[id]?.members[me] != nil
                case .chat(let id)?: state.chats.groups[id]?.member(me) != nil
                case nil: false
            }
            guard !alreadyIn else { throw RPCError(code: 400, message: "USER_ALREADY_PARTICIPANT") }
            let invite = try state.chats.usable(hash, now: now)
            let result: Api.Updates
            switch invite.chat {
                case .channel(let id):
                    guard state.channels[id]?.members[me] == nil else {
                        throw RPCError(code: 400, message: "USER_ALREADY_PARTICIPANT")
                    }
                    result = try state.join(channel: id, user: me, inviter: invite.admin, date: now, limits: limit,
                                            notices: &notices)
                case .chat(let id):
                    let group = try state.modifyGroup(id, by: nil) { group throws(RPCError) in
                        guard group.member(me) == nil else { throw RPCError(code: 400, message: "USER_ALREADY_PARTICIPANT") }
                        guard group.members.count < BasicGroup.maxMembers else {
                            throw RPCError(code: 400, message: "USERS_TOO_MUCH")
                        }
                        group.members.append(.init(user: me, inviter: invite.admin, date: now))
                    }
                    result = group.updates(viewer: me, users: state.users([me], viewer: me), date: now)
            }
            state.chats.invites[hash]?.usage += 1
            return result
        }
        push(result, to: me, except: call)
        push(notices, except: call)
        return .chatInviteJoinResultOk(.init(updates: result))
    }

    /// `messages.editExportedChatInvite`: revokes a link (or changes its date and limit), by the admin who made it or
    /// the creator (CHAT_ADMIN_REQUIRED); INVITE_HASH_INVALID for a link never made for that chat.
    private func editInvite(_ call: RPCCall, _ request: Api.functions.messages.EditExportedChatInvite)
        throws(RPCError) -> Api.messages.ExportedChatInvite {
        let me = try caller(call)
        let peer = request.peer, link = request.link, revoke = request.revoked
        let expires = request.expireDate, usageLimit = request.usageLimit
        let hash = Invite.hash(inLink: link)
        return try state.withLock { state throws(RPCError) -> Api.messages.ExportedChatInvite in
            let chat = try state.inviter(peer, me: me)
            guard var invite = state.chats.invites[hash], invite.chat == chat else {
                throw RPCError(code: 400, message: "INVITE_HASH_INVALID")
            }
            let creator: Int64? = switch chat {
                case .channel(let id): state.channels[id]?.creator
                case .chat(let id): state.chats.groups[id]?.creator
            }
            guard invite.admin == me || creator == me else { throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED") }
            if revoke { invite.revoked = true }
            if let expires { invite.expires = expires == 0 ? nil : expires }
            if let usageLimit { invite.usageLimit = usageLimit == 0 ? nil : usageLimit }
            state.chats.invites[hash] = invite
            return .exportedChatInvite(.init(invite: invite.api, users: state.users([invite.admin], viewer: me)))
        }
    }

    /// A link's hash: 16 URL-safe base64 characters of two random words.
    static func inviteHash(_ a: Int64, _ b: Int64) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var bits = (UInt64(bitPattern: a), UInt64(bitPattern: b))
        var out = ""
        for index in 0..<16 {
            if index == 8 { bits.0 = bits.1 }
            out.append(alphabet[Int(bits.0 & 63)])
            bits.0 >>= 6
        }
        return out
    }
}

/// A group's or channel's photo: a stored image (kept among the documents, so `upload.getFile` bounds apply).
struct StoredChatPhoto: Equatable {
    let id: Int64
    let accessHash: Int64
    let fileReference: [UInt8]
    let dcID: Int32
    let date: Int32
    let size: Int

    init(_ stored: StoredDocument) {
        id = stored.id
        accessHash = stored.accessHash
        fileReference = stored.fileReference
        dcID = stored.dcID
        date = stored.date
        size = stored.bytes.count
    }

    /// As a service message and `photos.*` carry it: one size, Telegram's 640×640 "c" crop.
    var api: Api.Photo {
        .photo(.init(id: id, accessHash: accessHash, fileReference: fileReference, date: date,
                     sizes: [.photoSize(.init(type: "c", w: 640, h: 640, size: Int32(clamping: size)))], dcId: dcID))
    }

    /// As a chat carries it.
    var chatPhoto: Api.ChatPhoto { .chatPhoto(.init(photoId: id, dcId: dcID)) }
}

/// The chat an invite link leads to.
enum InviteTarget: Hashable {
    case channel(Int64)
    case chat(Int64)
}

/// An invite link (core.telegram.org/api/invites).
struct Invite {
    let hash: String
    let chat: InviteTarget
    let admin: Int64
    let date: Int32
    var expires: Int32?
    var usageLimit: Int32?
    var usage: Int32 = 0
    var revoked = false
    let permanent: Bool
    var title: String?

    init(hash: String, chat: InviteTarget, admin: Int64, date: Int32, expires: Int32?, usageLimit: Int32?,
         permanent: Bool, title: String?) {
        self.hash = hash
        self.chat = chat
        self.admin = admin
        self.date = date
        self.expires = expires
        self.usageLimit = usageLimit
        self.permanent = permanent
        self.title = title
    }

    var api: Api.ExportedChatInvite {
        .chatInviteExported(.init(revoked: revoked, permanent: permanent, link: "https://t.me/+\(hash)", adminId: admin,
                                  date: date, expireDate: expires, usageLimit: usageLimit, usage: usage > 0 ? usage : nil,
                                  title: title))
    }

    /// The hash of `https://t.me/+HASH`, `t.me/joinchat/HASH` or a bare hash.
    static func hash(inLink link: String) -> String {
        let last = link.split(separator: "/").last.map(String.init) ?? link
        return last.hasPrefix("+") ? String(last.dropFirst()) : last
    }
}

/// A basic group (core.telegram.org/api/channel: "basic groups").
struct BasicGroup {
    /// Telegram's bound on a basic group's members.
    static let maxMembers = 200

    struct Member {
        let user: Int64
        let inviter: Int64
        let date: Int32
        var admin = false
    }

    let id: Int64
    var title: String
    var about = ""
    /// The group's photo (`editChatPhoto`).
    var photo: StoredChatPhoto?
    let creator: Int64
    let date: Int32
    var members: [Member] = []
    var version: Int32 = 1
    /// The supergroup it became, with the access hash's secret.
    var migratedTo: (id: Int64, accessHash: Int64)?

    init(id: Int64, title: String, creator: Int64, date: Int32) {
        self.id = id
        self.title = title
        self.creator = creator
        self.date = date
    }

    func member(_ user: Int64) -> Member? { members.first { $0.user == user } }

    func participant(_ member: Member) -> Api.ChatParticipant {
        if member.user == creator { return .chatParticipantCreator(.init(userId: member.user)) }
        if member.admin {
            return .chatParticipantAdmin(.init(userId: member.user, inviterId: member.inviter, date: member.date))
        }
        return .chatParticipant(.init(userId: member.user, inviterId: member.inviter, date: member.date))
    }

    /// The group as `viewer` sees it: `chatForbidden` once it is not a member, deactivated with `migrated_to` once
    /// migrated.
    func api(viewer: Int64) -> Api.Chat {
        guard let me = member(viewer) else { return .chatForbidden(.init(id: id, title: title)) }
        let migrated = migratedTo.map {
            Api.InputChannel.inputChannel(.init(channelId: $0.id, accessHash: ServiceState.viewerHash($0.accessHash, viewer: viewer)))
        }
        return .chat(.init(creator: creator == viewer, deactivated: migrated != nil, id: id, title: title,
                           photo: photo?.chatPhoto ?? .chatPhotoEmpty, participantsCount: Int32(clamping: members.count),
                           date: date,
                           version: version, migratedTo: migrated,
                           adminRights: me.admin || creator == viewer ? Channel.creatorRights : nil))
    }

    /// The answer to a change: `updateChatParticipants` with the member list as it now is, and the group.
    func updates(viewer: Int64, users: [Api.User], date: Int32) -> Api.Updates {
        let participants: Api.ChatParticipants = member(viewer) != nil
            ? .chatParticipants(.init(chatId: id, participants: members.map(participant), version: version))
            : .chatParticipantsForbidden(.init(chatId: id))
        return .updates(.init(updates: [.updateChatParticipants(.init(participants: participants))], users: users,
                              chats: [api(viewer: viewer)], date: date, seq: 0))
    }
}

/// Basic groups and invite links.
struct ChatsState {
    var groups: [Int64: BasicGroup] = [:]
    var invites: [String: Invite] = [:]
    /// Basic group ids count up from here (their own id space, apart from users' and channels').
    var nextGroupID: Int64 = 100_001

    /// The link with `hash` if it can still be used now.
    func usable(_ hash: String, now: Int32) throws(RPCError) -> Invite {
        guard !hash.isEmpty else { throw RPCError(code: 400, message: "INVITE_HASH_EMPTY") }
        guard let invite = invites[hash] else { throw RPCError(code: 400, message: "INVITE_HASH_INVALID") }
        let usedUp = invite.usageLimit.map { invite.usage >= $0 } ?? false
        guard !invite.revoked, !usedUp, invite.expires.map({ $0 > now }) ?? true else {
            throw RPCError(code: 406, message: "INVITE_HASH_EXPIRED")
        }
        return invite
    }
}

extension Channel {
    /// The creator, or an admin with change_info (CHAT_ADMIN_REQUIRED).
    func checkInfoEditor(_ user: Int64) throws(RPCError) {
        try checkMember(user)
        guard creator == user || roster.admin(user)?.changeInfo == true else {
            throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED")
        }
    }
}

extension ServiceState {
    /// Runs `body` on a basic group `member` is in (any caller for nil), then moves its version; CHAT_ID_INVALID for
    /// an unknown or migrated group or a non-member.
    mutating func modifyGroup(_ id: Int64, by member: Int64?,
                              _ body: (inout BasicGroup) throws(RPCError) -> Void) throws(RPCError) -> BasicGroup {
        guard var group = chats.groups[id], group.migratedTo == nil, member.map({ group.member($0) != nil }) ?? true else {
            throw RPCError(code: 400, message: "CHAT_ID_INVALID")
        }
        try body(&group)
        group.version &+= 1
        chats.groups[id] = group
        return group
    }

    /// The chat `peer` names, when `me` may make and revoke its links: the creator, or an admin with invite_users.
    func inviter(_ peer: Api.InputPeer, me: Int64) throws(RPCError) -> InviteTarget {
        switch peer {
            case .inputPeerChannel(let input):
                let id = try channelID(id: input.channelId, accessHash: input.accessHash, viewer: me)
                guard let channel = channels[id] else { throw RPCError(code: 400, message: "CHANNEL_INVALID") }
                try channel.checkMember(me)
                guard channel.creator == me || channel.roster.admin(me)?.inviteUsers == true else {
                    throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED")
                }
                return .channel(id)
            case .inputPeerChat(let input):
                guard let group = chats.groups[input.chatId], group.member(me) != nil, group.migratedTo == nil else {
                    throw RPCError(code: 400, message: "CHAT_ID_INVALID")
                }
                guard group.creator == me || group.member(me)?.admin == true else {
                    throw RPCError(code: 400, message: "CHAT_ADMIN_REQUIRED")
                }
                return .chat(input.chatId)
            default:
                throw RPCError(code: 400, message: "PEER_ID_INVALID")
        }
    }

    /// Makes `user` a member of channel `id` (CHANNEL_PRIVATE if it is banned, USERS_TOO_MUCH when full) and
    /// returns the `updateChannel` answer; the bot admins' `updateChannelParticipant` are added to `notices`.
    mutating func join(channel id: Int64, user: Int64, inviter: Int64?, date: Int32,
                       limits: TestTelegramService.Limits, notices: inout [Delivery]) throws(RPCError) -> Api.Updates {
        let before = channels[id]?.standing(of: user, now: date)
        let channel = try modifyChannel(id) { channel throws(RPCError) -> Channel in
            guard channel.roster.restriction(user, now: date)?.viewMessages != true else {
                throw RPCError(code: 400, message: "CHANNEL_PRIVATE")
            }
            if channel.members[user] == nil {
                guard channel.members.count < limits.maxChannelMembers else {
                    throw RPCError(code: 400, message: "USERS_TOO_MUCH")
                }
                channel.members[user] = channel.pts
                channel.roster.join(user, inviter: inviter ?? user, date: date)
            }
            return channel
        }
        notices += participantNotices(user, in: channel, by: user, before: before, date: date)
        return .updates(.init(updates: [.updateChannel(.init(channelId: id))], users: [], chats: [channel.api(viewer: user)],
                              date: date, seq: 0))
    }
}
