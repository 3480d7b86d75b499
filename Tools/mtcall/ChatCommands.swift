// `mtcall members CHAT [--filter F]`, `ban CHAT USER [--until UNIX]`, `promote CHAT USER [--rights R,…] [--title T]`,
// `join LINK`, `title CHAT TEXT` and `react PEER MESSAGE_ID EMOJI|--remove`: the SDK's chat calls from the command
// line. CHAT and USER are PEERs as `send` takes them; a chat
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

    @Flag(name: .customLong("remove"), help: "react: take the account's reaction on the message back.")
    var removeReaction = false

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

    /// `react PEER MESSAGE_ID EMOJI` (an emoji, or `custom:DOCUMENT_ID`) or `react PEER MESSAGE_ID --remove`: prints
    /// the message's reactions as they now are.
    func runReact(logger: Logger) async throws {
        let usage = "usage: mtcall react PEER MESSAGE_ID EMOJI | mtcall react PEER MESSAGE_ID --remove"
        guard more.count == (chats.removeReaction ? 1 : 2) else { throw ValidationError(usage) }
        let id = try Self.messageID(more[0], usage: usage)
        let reaction = try more.count == 2 ? Self.reaction(more[1], usage: usage) : nil
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = if case .id(let id) = reference, id.kind != .user {
                try await Self.chat(reference, client)
            } else {
                try await reference.peerID(client)
            }
            let now = if let reaction {
                try await client.react(to: id, in: peer, with: reaction)
            } else {
                try await client.removeReaction(from: id, in: peer)
            }
            Self.printLine(.object([("chat", .string(peer.description)), ("msg_id", .number(String(id))),
                                    ("reactions", now.map { Self.json($0) } ?? .null)]), output)
        }
    }

    /// `title CHAT TEXT`: renames a group or channel.
    func runTitle(logger: Logger) async throws {
        guard let title = more.first, more.count == 1, !title.allSatisfy(\.isWhitespace) else {
            throw ValidationError("usage: mtcall title CHAT TEXT")
        }
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let chat = try await Self.chat(reference, client)
            try await client.setTitle(title, of: chat)
            Self.printLine(.object([("title", .string(title)), ("chat", .string(chat.description))]), output)
        }
    }

    /// An emoji, or `custom:DOCUMENT_ID`.
    static func reaction(_ text: String, usage: String) throws(ValidationError) -> Reaction {
        if text.hasPrefix("custom:") {
            guard let id = Int64(text.dropFirst("custom:".count)), id != 0 else {
                throw ValidationError("custom:DOCUMENT_ID needs a document id: \(text)\n\(usage)")
            }
            return .customEmoji(documentID: id)
        }
        guard !text.isEmpty, text.count <= 2, text.unicodeScalars.contains(where: { $0.properties.isEmoji && !$0.isASCII })
        else { throw ValidationError("EMOJI must be one emoji (or custom:DOCUMENT_ID): \(text)\n\(usage)") }
        return .emoji(text)
    }

    static func json(_ reactions: MessageReactions) -> JSONValue {
        .object([
            ("counts", .array(reactions.counts.map { count in
                .object([("reaction", .string(count.reaction.description)), ("count", .number(String(count.count))),
                         ("mine", .bool(count.chosenOrder != nil))])
            })),
            ("recent", .array(reactions.recent.map { recent in
                .object([("peer", .string(recent.peer.description)), ("reaction", .string(recent.reaction.description))])
            })),
        ])
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
