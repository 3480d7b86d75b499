// The values the chat calls take and give (TelegramClient+Chats.swift): admin rights and member restrictions as
// option sets with the wire's bit layout (core.telegram.org/api/rights), a chat member with its role, invite links
// parsed from the forms people paste, and the typed errors a chat call ends with.
import Foundation
import MTProto
import MTProtoClient
import TelegramApi

/// What an admin may do (`chatAdminRights`, core.telegram.org/api/rights). Raw values are the constructor's flags.
public struct AdminRights: OptionSet, Sendable, Hashable {
    /// The `chatAdminRights` flags word.
    public let rawValue: Int32
    /// Rights from a `chatAdminRights` flags word.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Change the title, photo and about.
    public static let changeInfo = AdminRights(rawValue: 1 << 0)
    /// Post in a broadcast channel.
    public static let postMessages = AdminRights(rawValue: 1 << 1)
    /// Edit others' posts in a broadcast channel.
    public static let editMessages = AdminRights(rawValue: 1 << 2)
    /// Delete others' messages.
    public static let deleteMessages = AdminRights(rawValue: 1 << 3)
    /// Ban, kick and restrict members.
    public static let banUsers = AdminRights(rawValue: 1 << 4)
    /// Invite users and make invite links.
    public static let inviteUsers = AdminRights(rawValue: 1 << 5)
    /// Pin messages.
    public static let pinMessages = AdminRights(rawValue: 1 << 7)
    /// Promote others with rights of one's own.
    public static let addAdmins = AdminRights(rawValue: 1 << 9)
    /// Post anonymously, as the group.
    public static let anonymous = AdminRights(rawValue: 1 << 10)
    /// Manage video chats.
    public static let manageCall = AdminRights(rawValue: 1 << 11)
    /// The rest of what admins may do (see the admin log, ignore slow mode…).
    public static let other = AdminRights(rawValue: 1 << 12)
    /// Manage forum topics.
    public static let manageTopics = AdminRights(rawValue: 1 << 13)

    /// What a group's moderator typically holds: everything but promoting and anonymity.
    public static let moderator: AdminRights = [.changeInfo, .deleteMessages, .banUsers, .inviteUsers, .pinMessages,
                                                 .manageCall, .other, .manageTopics]

    /// The rights of a `chatAdminRights` value.
    public init(_ rights: Api.ChatAdminRights) {
        guard case .chatAdminRights(let r) = rights else { self.init(rawValue: 0); return }
        self.init(rawValue: r.flags & Self.known)
    }

    private static let known: Int32 = 0x3EBF

    /// The rights as `channels.editAdmin` takes them.
    public var api: Api.ChatAdminRights {
        .chatAdminRights(.init(
            changeInfo: contains(.changeInfo), postMessages: contains(.postMessages), editMessages: contains(.editMessages),
            deleteMessages: contains(.deleteMessages), banUsers: contains(.banUsers), inviteUsers: contains(.inviteUsers),
            pinMessages: contains(.pinMessages), addAdmins: contains(.addAdmins), anonymous: contains(.anonymous),
            manageCall: contains(.manageCall), other: contains(.other), manageTopics: contains(.manageTopics)))
    }
}

/// What a member may be denied (`chatBannedRights`, core.telegram.org/api/rights). Raw values are the constructor's
/// flags; `viewMessages` denied is a ban.
public struct MemberRights: OptionSet, Sendable, Hashable {
    /// The `chatBannedRights` flags word.
    public let rawValue: Int32
    /// Rights from a `chatBannedRights` flags word.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Read the chat at all: denied, the user is banned.
    public static let viewMessages = MemberRights(rawValue: 1 << 0)
    /// Send anything.
    public static let sendMessages = MemberRights(rawValue: 1 << 1)
    /// Send media (photos, videos, files…).
    public static let sendMedia = MemberRights(rawValue: 1 << 2)
    /// Send stickers.
    public static let sendStickers = MemberRights(rawValue: 1 << 3)
    /// Send GIFs.
    public static let sendGIFs = MemberRights(rawValue: 1 << 4)
    /// Send games.
    public static let sendGames = MemberRights(rawValue: 1 << 5)
    /// Use inline bots.
    public static let sendInline = MemberRights(rawValue: 1 << 6)
    /// Send link previews.
    public static let embedLinks = MemberRights(rawValue: 1 << 7)
    /// Send polls.
    public static let sendPolls = MemberRights(rawValue: 1 << 8)
    /// Change the chat's title, photo and about.
    public static let changeInfo = MemberRights(rawValue: 1 << 10)
    /// Invite users.
    public static let inviteUsers = MemberRights(rawValue: 1 << 15)
    /// Pin messages.
    public static let pinMessages = MemberRights(rawValue: 1 << 17)
    /// Send plain text.
    public static let sendPlain = MemberRights(rawValue: 1 << 25)
    /// React to messages.
    public static let sendReactions = MemberRights(rawValue: 1 << 27)

    /// The rights a `chatBannedRights` value takes away.
    public init(_ rights: Api.ChatBannedRights) {
        guard case .chatBannedRights(let r) = rights else { self.init(rawValue: 0); return }
        self.init(rawValue: r.flags & Self.known)
    }

    private static let known: Int32 = 0xA0285FF

    /// The rights as `channels.editBanned` takes them, denied until `until` (nil: for ever).
    public func api(until: Date?) -> Api.ChatBannedRights {
        .chatBannedRights(.init(
            viewMessages: contains(.viewMessages), sendMessages: contains(.sendMessages), sendMedia: contains(.sendMedia),
            sendStickers: contains(.sendStickers), sendGifs: contains(.sendGIFs), sendGames: contains(.sendGames),
            sendInline: contains(.sendInline), embedLinks: contains(.embedLinks), sendPolls: contains(.sendPolls),
            changeInfo: contains(.changeInfo), inviteUsers: contains(.inviteUsers), pinMessages: contains(.pinMessages),
            sendPlain: contains(.sendPlain), sendReactions: contains(.sendReactions),
            untilDate: until.map { Int32(clamping: Int64($0.timeIntervalSince1970.rounded(.up))) } ?? 0))
    }
}

/// A restriction on one member: the rights denied, until a date.
public struct Restriction: Sendable, Hashable {
    /// What the member may not do.
    public var denied: MemberRights
    /// When the restriction ends; nil for ever (Telegram also treats under 30 seconds or over 366 days away as for
    /// ever).
    public var until: Date?

    /// Denies `denied` until `until` (nil: for ever).
    public init(denying denied: MemberRights, until: Date? = nil) {
        self.denied = denied
        self.until = until
    }

    /// Read-only: no messages, media, stickers, polls or links.
    public static func muted(until: Date? = nil) -> Restriction {
        Restriction(denying: [.sendMessages, .sendMedia, .sendStickers, .sendGIFs, .sendGames, .sendInline, .embedLinks,
                              .sendPolls, .sendPlain], until: until)
    }
}

/// One member of a group or channel, as `TelegramClient.members(of:filter:options:)` yields it.
public struct ChatMember: Sendable {
    /// What the member is in the chat.
    public enum Role: Sendable, Hashable {
        /// The chat's owner.
        case creator
        /// An admin with these rights.
        case admin(AdminRights)
        /// A member with no special rights or restrictions.
        case member
        /// A member with some rights denied.
        case restricted(Restriction)
        /// Out of the chat and on its banned list (what `ban` does).
        case banned(until: Date?)
    }

    /// The member's user id.
    public let id: PeerID
    /// The user, as the page carried it (nil when it did not).
    public let user: Api.User?
    /// Creator, admin, member, restricted or banned.
    public let role: Role
    /// The admin title (rank) shown next to the name.
    public let rank: String?
    /// When it joined, when Telegram says.
    public let joined: Date?
    /// Who added it (or made the link it came by), when Telegram says.
    public let inviter: PeerID?

    /// Whether the user is a bot.
    public var isBot: Bool {
        guard case .user(let u)? = user else { return false }
        return u.bot
    }

    /// The user's first and last name, as one string.
    public var name: String {
        guard case .user(let u)? = user else { return "" }
        return [u.firstName, u.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// Which members `TelegramClient.members(of:filter:options:)` yields.
public enum MemberFilter: Sendable, Hashable {
    /// Every member, newest first.
    case all
    /// The creator and the admins.
    case admins
    /// Bots.
    case bots
    /// Users banned from the chat (out of it, on its banned list).
    case banned
    /// Members with some rights denied.
    case restricted
    /// Members whose first name, last name or username has a word starting with each word of the query.
    case search(String)
    /// Members among the account's contacts.
    case contacts

    /// The filter as `channels.getParticipants` takes it.
    var api: Api.ChannelParticipantsFilter {
        switch self {
            case .all: .channelParticipantsRecent
            case .admins: .channelParticipantsAdmins
            case .bots: .channelParticipantsBots
            case .banned: .channelParticipantsKicked(.init(q: ""))
            case .restricted: .channelParticipantsBanned(.init(q: ""))
            case .search(let query): .channelParticipantsSearch(.init(q: query))
            case .contacts: .channelParticipantsContacts(.init(q: ""))
        }
    }
}

/// An invite link (core.telegram.org/api/invites) by its hash, read from any form people paste.
public struct InviteLink: Sendable, Hashable, CustomStringConvertible {
    /// The hash that names the invite.
    public let hash: String

    /// The link as `https://t.me/+HASH`.
    public var description: String { "https://t.me/+\(hash)" }

    /// Reads `https://t.me/+HASH`, `t.me/joinchat/HASH` (with or without a scheme, `telegram.me` and `telegram.dog`
    /// too) and `tg://join?invite=HASH`.
    /// - Throws: `ChatError.malformedInviteLink` for anything else: a public username link, another host, an empty
    ///   hash or one with characters invite hashes never have (they are URL-safe base64, at most 64 characters).
    public init(parsing text: String) throws(ChatError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        var rest = Substring(trimmed)
        var found: Substring?
        if rest.lowercased().hasPrefix("tg://join?invite=") {
            found = rest.dropFirst("tg://join?invite=".count)
        } else {
            for scheme in ["https://", "http://"] where rest.lowercased().hasPrefix(scheme) {
                rest = rest.dropFirst(scheme.count)
            }
            let parts = rest.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            let host = parts.first?.lowercased() ?? ""
            guard ["t.me", "www.t.me", "telegram.me", "telegram.dog"].contains(host), parts.count >= 2 else {
                throw .malformedInviteLink(text)
            }
            if parts[1].hasPrefix("+"), parts.count == 2 {
                found = parts[1].dropFirst()
            } else if parts[1] == "joinchat", parts.count == 3 {
                found = parts[2]
            }
        }
        guard var hash = found else { throw .malformedInviteLink(text) }
        if let end = hash.firstIndex(where: { $0 == "?" || $0 == "#" || $0 == "&" }) { hash = hash[..<end] }
        if hash.hasSuffix("/") { hash = hash.dropLast() }
        guard (1...64).contains(hash.count),
              hash.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") })
        else { throw .malformedInviteLink(text) }
        self.hash = String(hash)
    }
}

/// An invite link an admin made, as `exportInviteLink` and `revokeInviteLink` return it.
public struct ExportedInvite: Sendable {
    /// The link.
    public let link: InviteLink
    /// Whether it no longer lets anyone in.
    public let isRevoked: Bool
    /// The admin's permanent link (the one with no date or limit that `getFullChat`/`getFullChannel` show).
    public let isPermanent: Bool
    /// When it stops working.
    public let expires: Date?
    /// How many may join by it.
    public let usageLimit: Int?
    /// How many joined by it.
    public let usage: Int
    /// The admin who made it.
    public let admin: PeerID
    /// The answer as it came.
    public let raw: Api.ExportedChatInvite

    init?(_ invite: Api.ExportedChatInvite) {
        guard case .chatInviteExported(let e) = invite, let link = try? InviteLink(parsing: e.link) else { return nil }
        self.link = link
        isRevoked = e.revoked
        isPermanent = e.permanent
        expires = e.expireDate.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        usageLimit = e.usageLimit.map(Int.init)
        usage = Int(e.usage ?? 0)
        admin = .user(e.adminId)
        raw = invite
    }
}

/// Why a chat call failed, for what a caller can act on. Other server errors come as `MTProtoClientError.rpc`.
public enum ChatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not an invite link (nothing was sent).
    case malformedInviteLink(String)
    /// No such invite (INVITE_HASH_INVALID, INVITE_HASH_EMPTY).
    case inviteLinkInvalid
    /// The invite expired, was revoked or was used up (INVITE_HASH_EXPIRED).
    case inviteLinkExpired
    /// The account is already in the chat (USER_ALREADY_PARTICIPANT).
    case alreadyMember
    /// The account is not an admin with the right this needs (CHAT_ADMIN_REQUIRED).
    case adminRequired
    /// The account's rights do not reach that far: rights it does not hold itself, an admin it did not promote, the
    /// creator (RIGHT_FORBIDDEN, USER_ADMIN_INVALID, USER_CREATOR).
    case rightForbidden(String)
    /// The user is not in the chat (USER_NOT_PARTICIPANT).
    case notMember
    /// The account cannot see the chat: not a member, or banned (CHANNEL_PRIVATE, CHAT_ID_INVALID).
    case chatInaccessible
    /// An admin title over 16 characters or with emoji (nothing was sent for a long one).
    case invalidRank(String)
    /// An empty title, or an about over 255 characters (nothing was sent).
    case invalidText(String)
    /// The title or about is already that (CHAT_NOT_MODIFIED, CHAT_ABOUT_NOT_MODIFIED).
    case notModified
    /// The peer is not a chat of a kind the call works on (a user, or a basic group for a channel-only call).
    case wrongKind(PeerID)
    /// The server's answer did not name the chat it made or joined.
    case unexpectedAnswer(String)
    /// No such message in the chat (MESSAGE_ID_INVALID, MSG_ID_INVALID).
    case messageNotFound
    /// A reaction the chat does not allow, or none at all (REACTION_INVALID, REACTION_EMPTY); a paid reaction (not
    /// sent).
    case reactionInvalid
    /// More reactions than the account may set on one message (REACTIONS_TOO_MANY: one without Telegram Premium).
    case reactionsTooMany
    /// The account may not do this in the chat: a member restricted from it (CHAT_WRITE_FORBIDDEN,
    /// CHAT_SEND_REACTIONS_FORBIDDEN).
    case forbidden(String)
    /// The photo is not one Telegram takes as a chat photo (PHOTO_INVALID, PHOTO_CROP_SIZE_SMALL, IMAGE_PROCESS_FAILED).
    case photoInvalid(String)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
            case .malformedInviteLink(let text): "not an invite link: \(text)"
            case .inviteLinkInvalid: "the invite link does not exist (INVITE_HASH_INVALID)"
            case .inviteLinkExpired: "the invite link expired, was revoked or was used up (INVITE_HASH_EXPIRED)"
            case .alreadyMember: "already a member of the chat (USER_ALREADY_PARTICIPANT)"
            case .adminRequired: "this needs an admin with the right to do it (CHAT_ADMIN_REQUIRED)"
            case .rightForbidden(let name): "the account's admin rights do not allow this (\(name))"
            case .notMember: "the user is not a member of the chat (USER_NOT_PARTICIPANT)"
            case .chatInaccessible: "the chat is private to the account, or it was banned from it (CHANNEL_PRIVATE)"
            case .invalidRank(let rank): "an admin title must be at most 16 characters without emoji: \(rank)"
            case .invalidText(let why): why
            case .notModified: "nothing changed (CHAT_NOT_MODIFIED)"
            case .wrongKind(let peer): "\(peer) is not a chat this works on"
            case .unexpectedAnswer(let what): "unexpected answer: \(what)"
            case .messageNotFound: "no such message in the chat (MESSAGE_ID_INVALID)"
            case .reactionInvalid: "the chat does not allow that reaction (REACTION_INVALID)"
            case .reactionsTooMany: "more reactions than the account may set on a message (REACTIONS_TOO_MANY)"
            case .forbidden(let name): "the account may not do this in the chat (\(name))"
            case .photoInvalid(let name): "not a photo Telegram takes as a chat photo (\(name))"
        }
    }

    /// The chat error a server's error means, if it is one of those above.
    init?(_ error: RPCError) {
        switch error.name {
            case "INVITE_HASH_INVALID", "INVITE_HASH_EMPTY": self = .inviteLinkInvalid
            case "INVITE_HASH_EXPIRED": self = .inviteLinkExpired
            case "USER_ALREADY_PARTICIPANT": self = .alreadyMember
            case "CHAT_ADMIN_REQUIRED": self = .adminRequired
            case "RIGHT_FORBIDDEN", "USER_ADMIN_INVALID", "USER_CREATOR": self = .rightForbidden(error.name)
            case "USER_NOT_PARTICIPANT": self = .notMember
            case "CHANNEL_PRIVATE", "CHAT_ID_INVALID": self = .chatInaccessible
            case "ADMIN_RANK_INVALID", "ADMIN_RANK_EMOJI_NOT_ALLOWED": self = .invalidRank(error.name)
            case "CHAT_NOT_MODIFIED", "CHAT_ABOUT_NOT_MODIFIED": self = .notModified
            case "MESSAGE_ID_INVALID", "MSG_ID_INVALID": self = .messageNotFound
            case "REACTION_INVALID", "REACTION_EMPTY": self = .reactionInvalid
            case "REACTIONS_TOO_MANY": self = .reactionsTooMany
            case "CHAT_WRITE_FORBIDDEN", "CHAT_SEND_REACTIONS_FORBIDDEN": self = .forbidden(error.name)
            case "PHOTO_INVALID", "PHOTO_CROP_SIZE_SMALL", "IMAGE_PROCESS_FAILED": self = .photoInvalid(error.name)
            default: return nil
        }
    }
}
