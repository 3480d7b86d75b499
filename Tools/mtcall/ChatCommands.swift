// `mtcall members CHAT [--filter F]`, `ban CHAT USER [--until UNIX]`, `promote CHAT USER [--rights R,…] [--title T]`
// and `join LINK`: the SDK's chat calls from the command line. CHAT and USER are PEERs as `send` takes them; a chat
// the session's cache does not know yet is looked up in the account's dialogs first. `members` prints one JSON line a
// member: {"user", "role", "rank", "name", "username"}.
import ArgumentParser
import Foundation
import Logging
import MTProtoClient
import TLJSON
import TelegramApi
import TelegramClient

/// The chat commands' flags.
struct ChatOptions: ParsableArguments {
    @Option(name: .customLong("filter"),
            help: "members: all, admins, bots, banned, restricted, contacts, or search:QUERY.")
    var filter: String = "all"

    @Option(name: .customLong("rights"),
            help: "promote: comma-separated admin rights (change_info, post_messages, edit_messages, delete_messages, ban_users, invite_users, pin_messages, add_admins, anonymous, manage_call, other, manage_topics); default a moderator's.")
    var rights: String?

    @Option(name: .customLong("title"), help: "promote: the admin title shown next to the name (16 characters at most).")
    var title: String?

    @Option(name: .customLong("until"), help: "ban: Unix time the ban ends (default: for ever).")
    var until: Int64?

    static let rightNames: [(String, AdminRights)] = [
        ("change_info", .changeInfo), ("post_messages", .postMessages), ("edit_messages", .editMessages),
        ("delete_messages", .deleteMessages), ("ban_users", .banUsers), ("invite_users", .inviteUsers),
        ("pin_messages", .pinMessages), ("add_admins", .addAdmins), ("anonymous", .anonymous),
        ("manage_call", .manageCall), ("other", .other), ("manage_topics", .manageTopics),
    ]

    func memberFilter() throws(ValidationError) -> MemberFilter {
        switch filter {
            case "all": return .all
            case "admins": return .admins
            case "bots": return .bots
            case "banned": return .banned
            case "restricted": return .restricted
            case "contacts": return .contacts
            default:
                guard filter.hasPrefix("search:") else {
                    throw ValidationError("--filter must be all, admins, bots, banned, restricted, contacts or search:QUERY")
                }
                return .search(String(filter.dropFirst("search:".count)))
        }
    }

    func adminRights() throws(ValidationError) -> AdminRights {
        guard let rights else { return .moderator }
        var set: AdminRights = []
        for name in rights.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let right = Self.rightNames.first(where: { $0.0 == name })?.1 else {
                throw ValidationError("--rights: \(name) is not one of \(Self.rightNames.map(\.0).joined(separator: ", "))")
            }
            set.insert(right)
        }
        return set
    }
}

extension MTCall {
    func runMembers(logger: Logger) async throws {
        guard more.isEmpty else { throw ValidationError("usage: mtcall members CHAT [--filter F] [--limit N]") }
        let reference = try PeerReference(params)
        let filter = try chats.memberFilter()
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let chat = try await Self.chat(reference, client)
            for try await member in client.members(of: chat, filter: filter, options: .members.limited(to: limit)) {
                Self.printLine(Self.json(member), output)
            }
        }
    }

    func runBan(logger: Logger) async throws {
        guard let user = more.first, more.count == 1 else {
            throw ValidationError("usage: mtcall ban CHAT USER [--until UNIX]")
        }
        let (chatReference, userReference) = (try PeerReference(params), try PeerReference(user))
        let until = chats.until.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let chat = try await Self.chat(chatReference, client)
            let user = try await Self.user(userReference, in: chat, client)
            try await client.ban(user, from: chat, until: until)
            Self.printLine(.object([("banned", .string(user.description)), ("chat", .string(chat.description))]), output)
        }
    }

    func runPromote(logger: Logger) async throws {
        guard let user = more.first, more.count == 1 else {
            throw ValidationError("usage: mtcall promote CHAT USER [--rights R,...] [--title T]")
        }
        let (chatReference, userReference) = (try PeerReference(params), try PeerReference(user))
        let rights = try chats.adminRights()
        if let title = chats.title, title.count > 16 { throw ValidationError("--title: at most 16 characters") }
        let title = chats.title
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let chat = try await Self.chat(chatReference, client)
            let user = try await Self.user(userReference, in: chat, client)
            try await client.promote(user, in: chat, rights: rights, title: title)
            Self.printLine(.object([("promoted", .string(user.description)), ("chat", .string(chat.description))]), output)
        }
    }

    func runJoin(logger: Logger) async throws {
        guard more.isEmpty else { throw ValidationError("usage: mtcall join LINK") }
        let link: InviteLink
        do {
            link = try InviteLink(parsing: params)
        } catch {
            throw ValidationError("\(params): not an invite link (https://t.me/+HASH, t.me/joinchat/HASH or tg://join?invite=HASH)")
        }
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let chat = try await client.join(inviteLink: link.description)
            Self.printLine(.object([("joined", .string(chat.description))]), output)
        }
    }

    /// The chat a PEER names; one the cache does not know is looked for in the dialogs (which teach the cache).
    static func chat(_ reference: PeerReference, _ client: TelegramClient) async throws -> PeerID {
        switch reference {
            case .me: throw ValidationError("CHAT must be a group or channel, not me")
            case .username(let name): return try await client.resolve(username: name)
            case .id(let id):
                if (try? await client.inputPeer(for: id)) == nil { for try await _ in client.dialogs() {} }
                return id
        }
    }

    /// The user a PEER names; one the cache does not know is looked for among the chat's members.
    static func user(_ reference: PeerReference, in chat: PeerID, _ client: TelegramClient) async throws -> PeerID {
        switch reference {
            case .me: throw ValidationError("USER must be another user, not me")
            case .username(let name): return try await client.resolve(username: name)
            case .id(let id):
                if (try? await client.inputPeer(for: id)) == nil {
                    for try await member in client.members(of: chat) where member.id == id { break }
                }
                return id
        }
    }

    static func json(_ member: ChatMember) -> JSONValue {
        let role: String = switch member.role {
            case .creator: "creator"
            case .admin: "admin"
            case .member: "member"
            case .restricted: "restricted"
            case .banned: "banned"
        }
        var username: JSONValue = .null
        if case .user(let u)? = member.user, let name = u.username { username = .string(name) }
        return .object([("user", .string(member.id.description)), ("role", .string(role)),
                        ("rank", member.rank.map { .string($0) } ?? .null), ("name", .string(member.name)),
                        ("username", username)])
    }
}

extension PagingOptions {
    /// These options yielding at most `limit` items (nil: all).
    func limited(to limit: Int?) -> PagingOptions {
        var options = self
        options.limit = limit
        return options
    }
}
