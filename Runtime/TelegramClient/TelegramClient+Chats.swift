// Groups and channels (core.telegram.org/api/channel): making them, their members (an AsyncSequence past the
// 200-per-page cap, ChatMembers.swift), banning, restricting and promoting (core.telegram.org/api/rights), invite links
// (core.telegram.org/api/invites), title, about and photo. Each call names the chat through the peer cache; a supergroup or
// channel goes by `channels.*`, a basic group by `messages.*`. Input that cannot be right (a malformed link, a long
// admin title, an empty title) is refused before anything is sent; the server's refusals a caller acts on come as
// `ChatError`.
import Foundation
import MTProto
import MTProtoClient
import TLRuntime
import TelegramApi

extension TelegramClient {
    // MARK: Making

    /// Makes a basic group with the account as its creator and `members` in it (199 at most: a basic group holds 200).
    /// - Returns: The group.
    /// - Throws: `ChatError.invalidText` for an empty title (nothing sent), `PeerCacheError` for a member the cache
    ///   cannot name, or the server's error.
    public func createGroup(title: String, members: [PeerID]) async throws -> PeerID {
        try Self.checkTitle(title)
        var users: [Api.InputUser] = []
        for member in members { users.append(try await inputUser(for: member)) }
        let invited = try await chatCall(Api.functions.messages.createChat(users: users, title: title))
        guard case .invitedUsers(let i) = invited, let chat = Self.chats(in: i.updates).first(where: { $0.kind == .chat })
        else { throw ChatError.unexpectedAnswer("createChat named no group") }
        return chat
    }

    /// Makes a supergroup (a megagroup: every member may post) with the account as its creator.
    /// - Throws: `ChatError.invalidText` for an empty title or an about over 255 characters (nothing sent), or the
    ///   server's error.
    public func createSupergroup(title: String, about: String = "") async throws -> PeerID {
        try await createChannel(title: title, about: about, megagroup: true)
    }

    /// Makes a broadcast channel (only admins post) with the account as its creator.
    /// - Throws: As ``createSupergroup(title:about:)``.
    public func createChannel(title: String, about: String = "") async throws -> PeerID {
        try await createChannel(title: title, about: about, megagroup: false)
    }

    private func createChannel(title: String, about: String, megagroup: Bool) async throws -> PeerID {
        try Self.checkTitle(title)
        try Self.checkAbout(about)
        let updates = try await chatCall(Api.functions.channels.createChannel(
            broadcast: !megagroup, megagroup: megagroup, title: title, about: about))
        guard let channel = Self.chats(in: updates).first(where: { $0.kind == .channel }) else {
            throw ChatError.unexpectedAnswer("createChannel named no channel")
        }
        return channel
    }

    // MARK: Members

    /// The members of a group or channel a filter picks, each once: a supergroup or channel is paged with
    /// `channels.getParticipants` (200 a page, Telegram's most), a basic group comes whole from
    /// `messages.getFullChat` and is filtered here (a basic group keeps no banned, restricted or contacts lists: those
    /// filters yield nothing there). Every member's user reaches the peer cache.
    ///
    /// ```swift
    /// for try await member in client.members(of: group, filter: .admins) {
    ///     print(member.name, member.role)
    /// }
    /// ```
    public nonisolated func members(of chat: PeerID, filter: MemberFilter = .all,
                                    options: PagingOptions = .members) -> MemberSequence {
        MemberSequence(client: self, chat: chat, filter: filter, options: options)
    }

    /// One member as the chat sees it now (`channels.getParticipant`; a basic group's from its member list).
    /// - Throws: `ChatError.notMember` when the user is not in the chat (nor banned from it).
    public func member(_ user: PeerID, of chat: PeerID) async throws -> ChatMember {
        if chat.kind == .chat {
            for try await member in members(of: chat) where member.id == user { return member }
            throw ChatError.notMember
        }
        let channel = try await channelInput(chat)
        let found = try await chatCall(Api.functions.channels.getParticipant(
            channel: channel, participant: try await inputPeer(for: user)))
        guard case .channelParticipant(let p) = found, let member = ChatMember(p.participant, users: p.users) else {
            throw ChatError.unexpectedAnswer("getParticipant named no member")
        }
        return member
    }

    // MARK: Moderating

    /// Bans `user` from a supergroup or channel: out of it and unable to come back (by link too) until `until` (nil:
    /// for ever). In a basic group, where there is no banned list, the user is removed.
    /// - Throws: `ChatError.adminRequired` without the ban right, `.rightForbidden` for an admin the account did not
    ///   promote or the creator.
    public func ban(_ user: PeerID, from chat: PeerID, until: Date? = nil) async throws {
        if chat.kind == .chat { return try await removeFromGroup(user, chat) }
        try await editBanned(user, in: chat, MemberRights.viewMessages.api(until: until))
    }

    /// Lifts a ban or restriction in a supergroup or channel. A banned user is not put back: it may join again.
    public func unban(_ user: PeerID, in chat: PeerID) async throws {
        guard chat.kind != .chat else { throw ChatError.wrongKind(chat) }
        try await editBanned(user, in: chat, MemberRights().api(until: nil))
    }

    /// Removes `user` from the chat without keeping it out: banned then unbanned in a supergroup or channel, removed
    /// from a basic group.
    public func kick(_ user: PeerID, from chat: PeerID) async throws {
        if chat.kind == .chat { return try await removeFromGroup(user, chat) }
        try await editBanned(user, in: chat, MemberRights.viewMessages.api(until: nil))
        try await editBanned(user, in: chat, MemberRights().api(until: nil))
    }

    /// Denies a member of a supergroup some rights until a date (`Restriction.muted()` for read-only).
    /// - Throws: `ChatError.wrongKind` for a basic group (restrictions there are chat-wide only), `.notMember`, or
    ///   `ban(_:from:until:)`'s errors.
    public func restrict(_ user: PeerID, in chat: PeerID, _ restriction: Restriction) async throws {
        guard chat.kind != .chat else { throw ChatError.wrongKind(chat) }
        try await editBanned(user, in: chat, restriction.denied.api(until: restriction.until))
    }

    /// Makes a member an admin with `rights` and an admin title (`rank`, 16 characters at most, no emoji). In a
    /// basic group admins have no separate rights: any non-empty `rights` makes an admin there.
    /// - Throws: `ChatError.invalidRank` for a title over 16 characters (nothing sent); `.adminRequired` without the
    ///   right to add admins; `.rightForbidden` for rights the account does not hold itself, an admin someone else
    ///   promoted, or the creator.
    public func promote(_ user: PeerID, in chat: PeerID, rights: AdminRights = .moderator,
                        title rank: String? = nil) async throws {
        if let rank, rank.count > 16 { throw ChatError.invalidRank(rank) }
        if chat.kind == .chat {
            _ = try await chatCall(Api.functions.messages.editChatAdmin(
                chatId: chat.id, userId: try await inputUser(for: user), isAdmin: !rights.isEmpty))
            return
        }
        let channel = try await channelInput(chat)
        _ = try await chatCall(Api.functions.channels.editAdmin(
            channel: channel, userId: try await inputUser(for: user), adminRights: rights.api, rank: rank))
    }

    /// Takes every admin right back: a plain member again.
    public func demote(_ user: PeerID, in chat: PeerID) async throws {
        try await promote(user, in: chat, rights: [], title: nil)
    }

    private func editBanned(_ user: PeerID, in chat: PeerID, _ rights: Api.ChatBannedRights) async throws {
        let channel = try await channelInput(chat)
        _ = try await chatCall(Api.functions.channels.editBanned(
            channel: channel, participant: try await inputPeer(for: user), bannedRights: rights))
    }

    private func removeFromGroup(_ user: PeerID, _ chat: PeerID) async throws {
        _ = try await chatCall(Api.functions.messages.deleteChatUser(chatId: chat.id, userId: try await inputUser(for: user)))
    }

    // MARK: Invite links

    /// Makes an invite link to the chat, which works until `expires` (nil: no date) for `usageLimit` joins (nil: no
    /// limit).
    /// - Throws: `ChatError.adminRequired` without the right to invite.
    public func exportInviteLink(for chat: PeerID, expires: Date? = nil, usageLimit: Int? = nil,
                                 title: String? = nil) async throws -> ExportedInvite {
        let peer = try await chatPeer(chat)
        let made = try await chatCall(Api.functions.messages.exportChatInvite(
            peer: peer, expireDate: expires.map { Int32(clamping: Int64($0.timeIntervalSince1970)) },
            usageLimit: usageLimit.map { Int32(clamping: $0) }, title: title))
        guard let invite = ExportedInvite(made) else { throw ChatError.unexpectedAnswer("exportChatInvite: \(made)") }
        return invite
    }

    /// Revokes a link: nobody joins by it any more.
    /// - Throws: `ChatError.inviteLinkInvalid` for a link not made for this chat, `.adminRequired` for another
    ///   admin's link.
    public func revokeInviteLink(_ link: InviteLink, for chat: PeerID) async throws -> ExportedInvite {
        let peer = try await chatPeer(chat)
        let edited = try await chatCall(Api.functions.messages.editExportedChatInvite(
            revoked: true, peer: peer, link: link.description))
        let raw: Api.ExportedChatInvite = switch edited {
            case .exportedChatInvite(let e): e.invite
            case .exportedChatInviteReplaced(let e): e.invite
        }
        guard let invite = ExportedInvite(raw) else { throw ChatError.unexpectedAnswer("editExportedChatInvite: \(raw)") }
        return invite
    }

    /// Joins the chat an invite link leads to (`https://t.me/+HASH`, `t.me/joinchat/HASH`, `tg://join?invite=HASH`).
    /// - Returns: The chat joined; its access hash is in the peer cache.
    /// - Throws: `ChatError.malformedInviteLink` (nothing sent), `.inviteLinkExpired` for an expired, revoked or
    ///   used-up link, `.inviteLinkInvalid` for one never made, `.alreadyMember`, `.chatInaccessible` when banned.
    public func join(inviteLink text: String) async throws -> PeerID {
        let link = try InviteLink(parsing: text)
        let joined = try await chatCall(Api.functions.messages.importChatInvite(hash: link.hash))
        guard case .chatInviteJoinResultOk(let ok) = joined,
              let chat = Self.chats(in: ok.updates).first(where: { $0.kind != .user }) else {
            throw ChatError.unexpectedAnswer("importChatInvite named no chat")
        }
        return chat
    }

    /// Joins a supergroup or channel the account can name (a public one, or one it left).
    public func join(_ chat: PeerID) async throws {
        let channel = try await channelInput(chat)
        _ = try await chatCall(Api.functions.channels.joinChannel(channel: channel))
    }

    /// Leaves a group or channel (the creator of a supergroup or channel cannot: `rightForbidden("USER_CREATOR")`).
    public func leave(_ chat: PeerID) async throws {
        if chat.kind == .chat {
            _ = try await chatCall(Api.functions.messages.deleteChatUser(chatId: chat.id, userId: .inputUserSelf))
            return
        }
        _ = try await chatCall(Api.functions.channels.leaveChannel(channel: try await channelInput(chat)))
    }

    // MARK: Title, about and photo

    /// Renames the chat.
    /// - Throws: `ChatError.invalidText` for an empty title (nothing sent), `.notModified`, `.adminRequired`.
    public func setTitle(_ title: String, of chat: PeerID) async throws {
        try Self.checkTitle(title)
        if chat.kind == .chat {
            _ = try await chatCall(Api.functions.messages.editChatTitle(chatId: chat.id, title: title))
        } else {
            _ = try await chatCall(Api.functions.channels.editTitle(channel: try await channelInput(chat), title: title))
        }
    }

    /// Sets the chat's description.
    /// - Throws: `ChatError.invalidText` past 255 characters (nothing sent), `.notModified`, `.adminRequired`.
    public func setAbout(_ about: String, of chat: PeerID) async throws {
        try Self.checkAbout(about)
        _ = try await chatCall(Api.functions.messages.editChatAbout(peer: try await chatPeer(chat), about: about))
    }

    /// Sets the chat's photo to an uploaded image (`TelegramClient.upload(bytes:name:options:)` or `upload(path:)`):
    /// `messages.editChatPhoto` for a basic group, `channels.editPhoto` otherwise.
    /// - Throws: `ChatError.adminRequired` without the right to change info, `.photoInvalid` for a file Telegram does
    ///   not take as a photo.
    public func setPhoto(_ file: Api.InputFile, of chat: PeerID) async throws {
        try await editPhoto(.inputChatUploadedPhoto(.init(file: file)), of: chat)
    }

    /// Removes the chat's photo.
    /// - Throws: `ChatError.notModified` when it has none, `.adminRequired`.
    public func removePhoto(of chat: PeerID) async throws {
        try await editPhoto(.inputChatPhotoEmpty, of: chat)
    }

    private func editPhoto(_ photo: Api.InputChatPhoto, of chat: PeerID) async throws {
        if chat.kind == .chat {
            _ = try await chatCall(Api.functions.messages.editChatPhoto(chatId: chat.id, photo: photo))
        } else {
            _ = try await chatCall(Api.functions.channels.editPhoto(channel: try await channelInput(chat), photo: photo))
        }
    }

    // MARK: Shared

    /// Runs a call, its chat errors made `ChatError`.
    nonisolated func chatCall<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>))
        async throws -> T {
        do {
            return try await invoke(call)
        } catch MTProtoClientError.rpc(let error) {
            if let mapped = ChatError(error) { throw mapped }
            throw MTProtoClientError.rpc(error)
        }
    }

    private func channelInput(_ chat: PeerID) async throws -> Api.InputChannel {
        guard chat.kind == .channel else { throw ChatError.wrongKind(chat) }
        return try await inputChannel(for: chat)
    }

    private func chatPeer(_ chat: PeerID) async throws -> Api.InputPeer {
        guard chat.kind != .user else { throw ChatError.wrongKind(chat) }
        return try await inputPeer(for: chat)
    }

    private static func checkTitle(_ title: String) throws(ChatError) {
        guard !title.allSatisfy(\.isWhitespace) else { throw .invalidText("a chat title cannot be empty") }
    }

    private static func checkAbout(_ about: String) throws(ChatError) {
        guard about.count <= 255 else { throw .invalidText("a chat's about is at most 255 characters") }
    }

    /// The groups and channels an answer names, in order.
    static func chats(in updates: Api.Updates) -> [PeerID] {
        let chats: [Api.Chat] = switch updates {
            case .updates(let u): u.chats
            case .updatesCombined(let u): u.chats
            default: []
        }
        return chats.compactMap { chat in
            switch chat {
                case .chat(let c): .chat(c.id)
                case .chatForbidden(let c): .chat(c.id)
                case .channel(let c): .channel(c.id)
                case .channelForbidden(let c): .channel(c.id)
                default: nil
            }
        }
    }

    /// Learns the users and chats of the chat calls' answers (TelegramClient+Peers.swift asks for the types it does
    /// not know); false for a type that is none of them.
    func learnChatPeers<T>(from result: T) -> Bool {
        switch result {
            case let page as Api.channels.ChannelParticipants:
                guard case .channelParticipants(let p) = page else { return true }
                peerCache.learn(users: p.users, chats: p.chats)
            case let one as Api.channels.ChannelParticipant:
                guard case .channelParticipant(let p) = one else { return true }
                peerCache.learn(users: p.users, chats: p.chats)
            case let full as Api.messages.ChatFull:
                guard case .chatFull(let f) = full else { return true }
                peerCache.learn(users: f.users, chats: f.chats)
            case let joined as Api.messages.ChatInviteJoinResult:
                switch joined {
                    case .chatInviteJoinResultOk(let ok): peerCache.learn(ok.updates)
                    case .chatInviteJoinResultWebView(let w): peerCache.learn(users: w.users, chats: [])
                }
            case let invite as Api.ChatInvite:
                switch invite {
                    case .chatInviteAlready(let a): peerCache.learn(a.chat)
                    case .chatInvite(let i): peerCache.learn(users: i.participants ?? [], chats: [])
                    case .chatInvitePeek(let p): peerCache.learn(p.chat)
                }
            case let exported as Api.messages.ExportedChatInvite:
                switch exported {
                    case .exportedChatInvite(let e): peerCache.learn(users: e.users, chats: [])
                    case .exportedChatInviteReplaced(let e): peerCache.learn(users: e.users, chats: [])
                }
            default:
                return false
        }
        return true
    }
}

extension PagingOptions {
    /// Members' paging: 200 a page, Telegram's most for `channels.getParticipants`.
    public static var members: PagingOptions {
        var options = PagingOptions()
        options.pageSize = 200
        return options
    }
}
