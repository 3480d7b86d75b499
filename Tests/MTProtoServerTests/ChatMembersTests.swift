// Groups, channels and their members end to end on the test Telegram: a supergroup seeded with 1,500 members paged
// past the 200-per-page cap (each member once, with every filter), banning, restricting and promoting with the rights
// the server enforces and the errors Telegram gives, invite links (join, usage limit, expiry, revocation), basic groups
// and their migration, title and about.
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import Synchronization
import TelegramApi
import TelegramClient
import TestTelegram
import Testing

/// Alice, Bob and Carol signed in on one test Telegram whose clock the test moves ahead.
struct ChatRoom {
    let telegram: LocalTelegram
    let alice: TelegramClient
    let bob: TelegramClient
    let carol: TelegramClient
    let ids: (alice: Int64, bob: Int64, carol: Int64)
    let offset: ClockOffset

    final class ClockOffset: Sendable {
        let seconds = Mutex<Double>(0)
    }

    static func start(seed: UInt64) async throws -> ChatRoom {
        let offset = ClockOffset()
        let telegram = try await LocalTelegram.start(
            seed: seed, clock: { Date().timeIntervalSince1970 + offset.seconds.withLock { $0 } })
        try telegram.service.addUser(phone: "9996620003", firstName: "Carol", username: "carol_test")
        let alice = try telegram.client(), bob = try telegram.client(), carol = try telegram.client()
        func id(_ user: Api.User) -> Int64 { if case .user(let u) = user { u.id } else { 0 } }
        let a = id(try await LocalTelegram.signIn(alice, phone: "9996620001"))
        let b = id(try await LocalTelegram.signIn(bob, phone: "9996610002"))
        let c = id(try await LocalTelegram.signIn(carol, phone: "9996620003"))
        // Alice names Bob and Carol by their usernames.
        _ = try await alice.resolve(username: "bob_test")
        _ = try await alice.resolve(username: "carol_test")
        return ChatRoom(telegram: telegram, alice: alice, bob: bob, carol: carol, ids: (a, b, c), offset: offset)
    }

    /// The server's time now.
    var now: Date { Date(timeIntervalSinceNow: offset.seconds.withLock { $0 }) }

    func advance(_ seconds: Double) { offset.seconds.withLock { $0 += seconds } }

    /// A supergroup of Alice's with Bob and Carol in it (Bob and Carol learn it from their dialogs).
    func supergroup() async throws -> PeerID {
        let group = try await alice.createSupergroup(title: "Moderated")
        _ = try await alice.invoke(Api.functions.channels.inviteToChannel(
            channel: try await alice.inputChannel(for: group),
            users: [try await alice.inputUser(for: .user(ids.bob)), try await alice.inputUser(for: .user(ids.carol))]))
        for client in [bob, carol] { for try await _ in client.dialogs() {} }
        return group
    }

    func close() async throws {
        for client in [alice, bob, carol] { await client.close() }
        try await telegram.server.shutdown()
    }
}

/// The RPC error name an error carries, if it is one.
func errorName(_ error: any Error) -> String? {
    if case MTProtoClientError.rpc(let rpc) = error { return rpc.name }
    return nil
}

@Suite struct ChatMembersTests {
    /// 1,500 members, 3 bots and the creator: every filter pages past 200 (or not) and yields each member once, and
    /// the peer cache can name every member after the pass.
    @Test func aSeededSupergroupYieldsEachMemberOnceWithEveryFilter() async throws {
        let room = try await ChatRoom.start(seed: 531)
        let alice = room.alice
        let id = try room.telegram.service.seedSupergroup(owner: room.ids.alice, title: "Big", members: 1_500, bots: 3,
                                                          date: Int32(Fixture.now))
        let group = PeerID.channel(id)
        for try await _ in alice.dialogs() {}

        var all: [PeerID] = []
        for try await member in alice.members(of: group) { all.append(member.id) }
        #expect(all.count == 1_504)
        #expect(Set(all).count == 1_504)
        // Newest first: the last seeded bot, then the others, the creator last.
        #expect(all.last == .user(room.ids.alice))
        for peer in all {
            #expect(try await alice.cachedPeer(peer)?.accessHash != nil || peer == .user(room.ids.alice))
        }
        // Smaller pages: the same members, each once.
        var small = PagingOptions.members
        small.pageSize = 7
        var paged: [PeerID] = []
        for try await member in alice.members(of: group, options: small) { paged.append(member.id) }
        #expect(paged == all)

        let bots = try await collect(alice.members(of: group, filter: .bots))
        #expect(bots.count == 3 && bots.allSatisfy(\.isBot))
        // "Member 17", "Member 170"…"Member 179".
        let search = try await collect(alice.members(of: group, filter: .search("member 17")))
        let expected = (1...1_500).filter { String($0).hasPrefix("17") }.count
        #expect(search.count == expected && expected == 11)
        #expect(search.allSatisfy { $0.name.hasPrefix("Member 17") })

        var named: [String: PeerID] = [:]
        for peer in all { if let name = try await alice.cachedPeer(peer)?.username { named[name] = peer } }
        let member5 = try #require(named["member5"]), member6 = try #require(named["member6"])
        try await alice.promote(member5, in: group, rights: [.banUsers, .deleteMessages], title: "Helper")
        try await alice.ban(member6, from: group)
        try await alice.restrict(all[0], in: group, .muted())

        let admins = try await collect(alice.members(of: group, filter: .admins))
        #expect(admins.map(\.id) == [.user(room.ids.alice), member5])
        #expect(admins.first?.role == .creator)
        #expect(admins.last?.role == .admin([.banUsers, .deleteMessages]) && admins.last?.rank == "Helper")
        let banned = try await collect(alice.members(of: group, filter: .banned))
        #expect(banned.map(\.id) == [member6] && banned.first?.role == .banned(until: nil))
        let restricted = try await collect(alice.members(of: group, filter: .restricted))
        #expect(restricted.map(\.id) == [all[0]])
        #expect(restricted.first?.role == .restricted(.muted()))
        let after = try await collect(alice.members(of: group))
        #expect(after.count == 1_503 && Set(after.map(\.id)).count == 1_503 && !after.contains { $0.id == member6 })
        try await room.close()
    }

    /// The hash of a page answers `channelParticipantsNotModified`; pages stay within 200.
    @Test func participantPagesAreCappedAndHashed() async throws {
        let room = try await ChatRoom.start(seed: 532)
        let id = try room.telegram.service.seedSupergroup(owner: room.ids.alice, title: "Big", members: 450,
                                                          date: Int32(Fixture.now))
        for try await _ in room.alice.dialogs() {}
        let channel = try await room.alice.inputChannel(for: .channel(id))
        let page = try await room.alice.invoke(Api.functions.channels.getParticipants(
            channel: channel, filter: .channelParticipantsRecent, offset: 0, limit: 1_000, hash: 0))
        guard case .channelParticipants(let p) = page else { throw HarnessFailure(description: "\(page)") }
        #expect(p.count == 451 && p.participants.count == 200 && p.users.count == 200)
        var hash: UInt64 = 0
        for user in p.users {
            guard case .user(let u) = user else { continue }
            hash ^= hash >> 21
            hash ^= hash << 35
            hash ^= hash >> 4
            hash &+= UInt64(bitPattern: u.id)
        }
        let again = try await room.alice.invoke(Api.functions.channels.getParticipants(
            channel: channel, filter: .channelParticipantsRecent, offset: 0, limit: 200, hash: Int64(bitPattern: hash)))
        guard case .channelParticipantsNotModified = again else { throw HarnessFailure(description: "\(again)") }
        try await room.close()
    }

    /// A restricted member's sends are refused with Telegram's errors; a banned one is out (CHANNEL_PRIVATE) and
    /// cannot come back by link; an unban lets it rejoin; a dated restriction lapses.
    @Test func restrictionsAndBansAreEnforced() async throws {
        let room = try await ChatRoom.start(seed: 533)
        let group = try await room.supergroup()
        let bob = room.bob
        let peer = try await bob.inputPeer(for: group)
        func send(_ text: String) async throws {
            _ = try await bob.invoke(Api.functions.messages.sendMessage(peer: peer, message: text,
                                                                        randomId: Int64(text.hashValue)))
        }
        try await send("hello")
        try await room.alice.restrict(.user(room.ids.bob), in: group, .muted(until: room.now.addingTimeInterval(3_600)))
        await #expect { try await send("muted") } throws: { errorName($0) == "CHAT_WRITE_FORBIDDEN" }
        try await room.alice.restrict(.user(room.ids.bob), in: group, Restriction(denying: .sendPlain))
        await #expect { try await send("plain") } throws: { errorName($0) == "CHAT_SEND_PLAIN_FORBIDDEN" }
        // Without send_media a file is refused, and text goes.
        try await room.alice.restrict(.user(room.ids.bob), in: group, Restriction(denying: .sendMedia))
        let file = try await bob.upload(bytes: Array("a small file".utf8), name: "note.txt")
        await #expect {
            _ = try await bob.invoke(Api.functions.messages.sendMedia(
                peer: peer, media: .inputMediaUploadedDocument(.init(file: file, mimeType: "text/plain", attributes: [])),
                message: "", randomId: 77))
        } throws: { errorName($0) == "CHAT_SEND_MEDIA_FORBIDDEN" }
        try await send("text with media denied")
        try await room.alice.restrict(.user(room.ids.bob), in: group,
                                      .muted(until: room.now.addingTimeInterval(3_600)))
        room.advance(3_601)
        try await send("free again")

        // Bob, not an admin, cannot ban; nor can he promote.
        for try await _ in bob.members(of: group) {}
        await #expect(throws: ChatError.adminRequired) { try await bob.ban(.user(room.ids.carol), from: group) }
        await #expect(throws: ChatError.adminRequired) { try await bob.promote(.user(room.ids.carol), in: group) }

        let link = try await room.alice.exportInviteLink(for: group)
        try await room.alice.ban(.user(room.ids.bob), from: group)
        await #expect { try await send("banned") } throws: { errorName($0) == "CHANNEL_PRIVATE" }
        await #expect(throws: ChatError.chatInaccessible) { for try await _ in bob.members(of: group) {} }
        await #expect(throws: ChatError.chatInaccessible) { _ = try await bob.join(inviteLink: link.link.description) }
        try await room.alice.unban(.user(room.ids.bob), in: group)
        #expect(try await bob.join(inviteLink: link.link.description) == group)
        try await send("back")
        try await room.close()
    }

    /// Promoting needs add_admins and only rights one holds; an admin can be banned only by whoever promoted it.
    @Test func promotionNeedsTheRightsItGrants() async throws {
        let room = try await ChatRoom.start(seed: 534)
        let group = try await room.supergroup()
        let (alice, bob) = (room.alice, room.bob)
        let carol = PeerID.user(room.ids.carol)
        for try await _ in bob.members(of: group) {}   // Bob's cache learns Carol
        try await alice.promote(.user(room.ids.bob), in: group, rights: [.banUsers], title: "Mod")
        await #expect(throws: ChatError.adminRequired) { try await bob.promote(carol, in: group, rights: [.banUsers]) }
        try await alice.promote(.user(room.ids.bob), in: group, rights: [.banUsers, .addAdmins], title: "Mod")
        await #expect(throws: ChatError.rightForbidden("RIGHT_FORBIDDEN")) {
            try await bob.promote(carol, in: group, rights: [.changeInfo])
        }
        try await bob.promote(carol, in: group, rights: [.banUsers], title: "Junior")
        let carolAsAdmin = try await alice.member(carol, of: group)
        #expect(carolAsAdmin.role == .admin([.banUsers]) && carolAsAdmin.rank == "Junior")
        // Bob cannot ban the creator; Alice can ban the admin Bob made.
        await #expect(throws: ChatError.rightForbidden("USER_ADMIN_INVALID")) {
            try await bob.ban(.user(room.ids.alice), from: group)
        }
        try await alice.demote(carol, in: group)
        #expect(try await alice.member(carol, of: group).role == .member)
        try await bob.kick(carol, from: group)
        await #expect(throws: ChatError.notMember) { _ = try await alice.member(carol, of: group) }
        // Nothing is sent for a title over 16 characters.
        let calls = Atomic<Int>(0)
        room.telegram.service.on(Api.functions.channels.EditAdmin.self) { _, _ throws(RPCError) in
            calls.add(1, ordering: .relaxed)
            throw RPCError(code: 400, message: "UNEXPECTED")
        }
        await #expect(throws: ChatError.invalidRank("a title far too long")) {
            try await alice.promote(.user(room.ids.bob), in: group, title: "a title far too long")
        }
        #expect(calls.load(ordering: .relaxed) == 0)
        try await room.close()
    }

    /// Invite links: join by each form, a used-up link, an expired one, a revoked one; a malformed one sends nothing.
    @Test func inviteLinksJoinUntilUsedUpExpiredOrRevoked() async throws {
        let room = try await ChatRoom.start(seed: 535)
        let (alice, bob, carol) = (room.alice, room.bob, room.carol)
        let group = try await alice.createSupergroup(title: "By link", about: "come in")
        let once = try await alice.exportInviteLink(for: group, usageLimit: 1)
        #expect(once.usageLimit == 1 && !once.isRevoked)
        #expect(try await bob.join(inviteLink: "t.me/joinchat/\(once.link.hash)") == group)
        await #expect(throws: ChatError.alreadyMember) { _ = try await bob.join(inviteLink: once.link.description) }
        await #expect(throws: ChatError.inviteLinkExpired) { _ = try await carol.join(inviteLink: once.link.description) }

        let dated = try await alice.exportInviteLink(for: group, expires: room.now.addingTimeInterval(60))
        // Past the hour a client's message ids may lag the server's clock by, so the clients resynchronise at once.
        room.advance(3_601)
        await #expect(throws: ChatError.inviteLinkExpired) { _ = try await carol.join(inviteLink: dated.link.description) }

        let open = try await alice.exportInviteLink(for: group)
        let revoked = try await alice.revokeInviteLink(open.link, for: group)
        #expect(revoked.isRevoked && revoked.link == open.link)
        await #expect(throws: ChatError.inviteLinkExpired) { _ = try await carol.join(inviteLink: "https://t.me/+\(open.link.hash)") }
        await #expect(throws: ChatError.inviteLinkInvalid) { _ = try await carol.join(inviteLink: "https://t.me/+AAAAAAAAAAAAAAAA") }

        let calls = Atomic<Int>(0)
        room.telegram.service.on(Api.functions.messages.ImportChatInvite.self) { _, _ throws(RPCError) in
            calls.add(1, ordering: .relaxed)
            throw RPCError(code: 400, message: "UNEXPECTED")
        }
        for bad in ["https://t.me/durov", "https://example.com/+abc", "t.me/+", "t.me/+a b", "tg://join?invite="] {
            await #expect(throws: ChatError.malformedInviteLink(bad)) { _ = try await carol.join(inviteLink: bad) }
        }
        #expect(calls.load(ordering: .relaxed) == 0)
        try await room.close()
    }

    /// A basic group: made with a member, listed from getFullChat, an admin made, a member removed, then migrated to a
    /// supergroup that keeps its members.
    @Test func aBasicGroupListsItsMembersAndMigrates() async throws {
        let room = try await ChatRoom.start(seed: 536)
        let alice = room.alice
        let group = try await alice.createGroup(title: "Small", members: [.user(room.ids.bob), .user(room.ids.carol)])
        #expect(group.kind == .chat)
        #expect(Set(try await collect(alice.members(of: group)).map(\.id))
                == [.user(room.ids.alice), .user(room.ids.bob), .user(room.ids.carol)])
        try await alice.promote(.user(room.ids.bob), in: group)
        #expect(try await collect(alice.members(of: group, filter: .admins)).map(\.id)
                == [.user(room.ids.alice), .user(room.ids.bob)])
        try await alice.kick(.user(room.ids.carol), from: group)
        #expect(try await collect(alice.members(of: group)).count == 2)
        try await alice.setTitle("Renamed", of: group)
        await #expect(throws: ChatError.notModified) { try await alice.setTitle("Renamed", of: group) }

        let migrated = try await alice.invoke(Api.functions.messages.migrateChat(chatId: group.id))
        let channel = try #require(TelegramClientTestsSupport.chats(in: migrated).first { $0.kind == .channel })
        let members = try await collect(alice.members(of: channel))
        #expect(Set(members.map(\.id)) == [.user(room.ids.alice), .user(room.ids.bob)])
        #expect(members.first { $0.id == .user(room.ids.bob) }.map { if case .admin = $0.role { true } else { false } } == true)
        // The group stays, deactivated, pointing at the supergroup.
        let full = try await alice.invoke(Api.functions.messages.getFullChat(chatId: group.id))
        guard case .chatFull(let f) = full, case .chat(let old)? = f.chats.first else {
            throw HarnessFailure(description: "\(full)")
        }
        #expect(old.deactivated && old.migratedTo != nil)
        await #expect(throws: ChatError.chatInaccessible) { try await alice.setTitle("Again", of: group) }
        try await room.close()
    }

    /// Title and about of a supergroup: changed by the creator, refused to a member without change_info; bad text
    /// is refused before anything is sent.
    @Test func titleAndAbout() async throws {
        let room = try await ChatRoom.start(seed: 537)
        let group = try await room.supergroup()
        try await room.alice.setAbout("the rules", of: group)
        try await room.alice.setTitle("New name", of: group)
        let full = try await room.alice.invoke(Api.functions.channels.getFullChannel(
            channel: try await room.alice.inputChannel(for: group)))
        guard case .chatFull(let f) = full, case .channelFull(let c) = f.fullChat, case .channel(let chat)? = f.chats.first
        else { throw HarnessFailure(description: "\(full)") }
        #expect(c.about == "the rules" && chat.title == "New name" && c.participantsCount == 3)
        await #expect(throws: ChatError.adminRequired) { try await room.bob.setAbout("mine", of: group) }
        await #expect(throws: ChatError.notModified) { try await room.alice.setAbout("the rules", of: group) }
        await #expect(throws: ChatError.invalidText("a chat title cannot be empty")) {
            try await room.alice.setTitle("  ", of: group)
        }
        await #expect(throws: ChatError.wrongKind(.user(room.ids.bob))) {
            try await room.alice.setAbout("x", of: .user(room.ids.bob))
        }
        try await room.close()
    }

    /// The link forms people paste, and what is not an invite link.
    @Test(arguments: [
        ("https://t.me/+AbC_d-9", "AbC_d-9"), ("t.me/+AbC", "AbC"), ("http://telegram.me/joinchat/XyZ", "XyZ"),
        ("https://t.me/joinchat/XyZ/", "XyZ"), ("tg://join?invite=Q1w2", "Q1w2"), ("tg://join?invite=Q1w2&x=1", "Q1w2"), ("  https://t.me/+AbC?x=1 ", "AbC"),
    ])
    func inviteLinkForms(text: String, hash: String) throws {
        #expect(try InviteLink(parsing: text).hash == hash)
        #expect(try InviteLink(parsing: text).description == "https://t.me/+\(hash)")
    }

    @Test(arguments: ["https://t.me/durov", "t.me/+", "https://t.me/+abc/def", "ftp://t.me/+abc", "t.me/joinchat/",
                      "t.me/+ab%20c", "https://evil.example/+abc", "", String(repeating: "a", count: 70)])
    func malformedInviteLinks(text: String) {
        #expect(throws: ChatError.malformedInviteLink(text)) { try InviteLink(parsing: text) }
    }
}

/// All a member sequence yields.
func collect(_ sequence: MemberSequence) async throws -> [ChatMember] {
    var members: [ChatMember] = []
    for try await member in sequence { members.append(member) }
    return members
}

enum TelegramClientTestsSupport {
    /// The groups and channels an `Updates` names.
    static func chats(in updates: Api.Updates) -> [PeerID] {
        guard case .updates(let u) = updates else { return [] }
        return u.chats.compactMap { chat in
            switch chat {
                case .chat(let c): .chat(c.id)
                case .channel(let c): .channel(c.id)
                default: nil
            }
        }
    }
}
