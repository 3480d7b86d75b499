// The members of a group or channel as an AsyncSequence (made by `TelegramClient.members(of:filter:options:)`).
// `channels.getParticipants` pages by offset, at most 200 a page (core.telegram.org/method/channels.getParticipants):
// members who join or leave meanwhile move the offsets, so a page may repeat a member already yielded (skipped here:
// each member once) or skip one; the sequence ends at the first empty page or once `count` is reached. A basic group
// comes whole in `messages.getFullChat`, filtered here.
import Foundation
import MTProto
import MTProtoClient
import TelegramApi

/// The members of a group or channel, fetched a page at a time, each yielded once.
public struct MemberSequence: AsyncSequence, Sendable {
    /// Each member with its role.
    public typealias Element = ChatMember

    let client: TelegramClient
    let chat: PeerID
    let filter: MemberFilter
    let options: PagingOptions

    /// A fresh pass from the first page.
    public func makeAsyncIterator() -> Iterator { Iterator(sequence: self) }

    /// Pages by offset, skipping members already yielded.
    public struct Iterator: AsyncIteratorProtocol {
        let sequence: MemberSequence
        var buffer: [ChatMember] = []
        var ended = false
        var offset: Int32 = 0
        var yielded = 0
        /// Members yielded so far; as large as the chat at most.
        var seen: Set<PeerID> = []

        init(sequence: MemberSequence) { self.sequence = sequence }

        /// The next member, fetching a page when the last one is used up; nil at the end.
        public mutating func next() async throws -> ChatMember? {
            if let limit = sequence.options.limit, yielded >= limit { return nil }
            while buffer.isEmpty {
                guard !ended else { return nil }
                try await fetch()
            }
            yielded += 1
            return buffer.removeFirst()
        }

        private mutating func fetch() async throws {
            let client = sequence.client
            switch sequence.chat.kind {
                case .user:
                    throw ChatError.wrongKind(sequence.chat)
                case .chat:
                    ended = true
                    let full = try await client.chatCall(Api.functions.messages.getFullChat(chatId: sequence.chat.id))
                    buffer = Self.groupMembers(full, filter: sequence.filter).filter { seen.insert($0.id).inserted }
                case .channel:
                    let channel = try await client.inputChannel(for: sequence.chat)
                    let size = Int32(Swift.min(200, Swift.max(1, sequence.options.pageSize)))
                    let page: Api.channels.ChannelParticipants
                    do {
                        page = try await client.invokeWaiting(Api.functions.channels.getParticipants(
                            channel: channel, filter: sequence.filter.api, offset: offset, limit: size, hash: 0),
                            options: sequence.options)
                    } catch MTProtoClientError.rpc(let error) {
                        if let mapped = ChatError(error) { throw mapped }
                        throw MTProtoClientError.rpc(error)
                    }
                    guard case .channelParticipants(let p) = page, !p.participants.isEmpty else {
                        ended = true
                        return
                    }
                    offset &+= Int32(p.participants.count)
                    if offset >= p.count { ended = true }
                    let users = Dictionary(p.users.map { ($0.peerID, $0) }, uniquingKeysWith: { first, _ in first })
                    buffer = p.participants.compactMap { ChatMember($0, users: users) }
                        .filter { seen.insert($0.id).inserted }
            }
        }

        /// A basic group's members from `getFullChat`, as a filter picks them.
        static func groupMembers(_ full: Api.messages.ChatFull, filter: MemberFilter) -> [ChatMember] {
            guard case .chatFull(let f) = full, case .chatFull(let chat) = f.fullChat,
                  case .chatParticipants(let list) = chat.participants else { return [] }
            let users = Dictionary(f.users.map { ($0.peerID, $0) }, uniquingKeysWith: { first, _ in first })
            let members = list.participants.map { ChatMember($0, users: users) }
            switch filter {
                case .all: return members
                case .admins:
                    return members.filter { if case .member = $0.role { false } else { true } }
                case .bots: return members.filter(\.isBot)
                case .banned, .restricted, .contacts: return []
                case .search(let query):
                    let words = query.lowercased().split(separator: " ")
                    return members.filter { member in
                        let names = (member.name + " " + (member.username ?? "")).lowercased().split(separator: " ")
                        return words.allSatisfy { word in names.contains { $0.hasPrefix(word) } }
                    }
            }
        }
    }
}

extension ChatMember {
    /// A supergroup's or channel's participant with its user from `users` (nil for a participant that is not a user:
    /// a channel banned from a group).
    init?(_ participant: Api.ChannelParticipant, users: [PeerID: Api.User]) {
        func date(_ value: Int32) -> Date { Date(timeIntervalSince1970: TimeInterval(value)) }
        func until(_ rights: Api.ChatBannedRights) -> Date? {
            guard case .chatBannedRights(let r) = rights, r.untilDate != 0 else { return nil }
            return date(r.untilDate)
        }
        let id: PeerID, role: Role, rank: String?, joined: Date?, inviter: PeerID?
        switch participant {
            case .channelParticipant(let p):
                (id, role, rank, joined, inviter) = (.user(p.userId), .member, p.rank, date(p.date), nil)
            case .channelParticipantSelf(let p):
                (id, role, rank, joined, inviter) = (.user(p.userId), .member, p.rank, date(p.date), .user(p.inviterId))
            case .channelParticipantCreator(let p):
                (id, role, rank, joined, inviter) = (.user(p.userId), .creator, p.rank, nil, nil)
            case .channelParticipantAdmin(let p):
                (id, role, rank, joined) = (.user(p.userId), .admin(AdminRights(p.adminRights)), p.rank, date(p.date))
                inviter = p.inviterId.map(PeerID.user)
            case .channelParticipantBanned(let p):
                guard case .peerUser = p.peer else { return nil }
                let denied = MemberRights(p.bannedRights)
                role = p.left || denied.contains(.viewMessages) ? .banned(until: until(p.bannedRights))
                    : .restricted(Restriction(denying: denied, until: until(p.bannedRights)))
                (id, rank, joined, inviter) = (PeerID(p.peer), p.rank, date(p.date), nil)
            case .channelParticipantLeft(let p):
                guard case .peerUser = p.peer else { return nil }
                (id, role, rank, joined, inviter) = (PeerID(p.peer), .banned(until: nil), nil, nil, nil)
        }
        self.init(id: id, user: users[id], role: role, rank: rank, joined: joined, inviter: inviter)
    }

    /// A participant from a one-member answer.
    init?(_ participant: Api.ChannelParticipant, users: [Api.User]) {
        self.init(participant, users: Dictionary(users.map { ($0.peerID, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    /// A basic group's participant.
    init(_ participant: Api.ChatParticipant, users: [PeerID: Api.User]) {
        func date(_ value: Int32) -> Date { Date(timeIntervalSince1970: TimeInterval(value)) }
        switch participant {
            case .chatParticipant(let p):
                self.init(id: .user(p.userId), user: users[.user(p.userId)], role: .member, rank: p.rank,
                          joined: date(p.date), inviter: .user(p.inviterId))
            case .chatParticipantCreator(let p):
                self.init(id: .user(p.userId), user: users[.user(p.userId)], role: .creator, rank: p.rank, joined: nil,
                          inviter: nil)
            case .chatParticipantAdmin(let p):
                // A basic group's admins hold one fixed set of rights.
                self.init(id: .user(p.userId), user: users[.user(p.userId)], role: .admin(.moderator), rank: p.rank,
                          joined: date(p.date), inviter: .user(p.inviterId))
        }
    }

    /// The user's username, if it has one.
    var username: String? {
        guard case .user(let u)? = user else { return nil }
        return u.username
    }
}

extension Api.User {
    /// The user's id as a peer.
    var peerID: PeerID {
        switch self {
            case .user(let u): .user(u.id)
            case .userEmpty(let u): .user(u.id)
        }
    }
}
