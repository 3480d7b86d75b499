// `mtcall send PEER TEXT`, `history PEER`, `dialogs` and `events`: the SDK's peer cache, iterators and typed events
// from the command line. PEER, here and in `upload --to`, is `me`, a username (with or without "@"), or a peer the
// session's cache knows: `user:ID`, `channel:ID`, `chat:ID`, the `user#ID` form `events` prints, or a bare user id.
// Items print as one tl-json line each.
import ArgumentParser
import Foundation
import Logging
import MTProtoClient
import TLJSON
import TelegramApi
import TelegramClient
import TelegramFormatting


extension MTCall {
    /// What a command-line PEER names, before any call: checked up front, so a mistyped peer fails before an upload.
    enum PeerReference: Equatable {
        case me
        case id(PeerID)
        case username(String)

        static let usage = "PEER must be me, @username, user:ID, channel:ID or chat:ID (user#ID as events print it)"

        init(_ text: String) throws(ValidationError) {
            if text == "me" || text == "self" {
                self = .me
            } else if let id = PeerID(text) {
                self = .id(id)
            } else if let id = Int64(text), id > 0 {
                self = .id(.user(id))
            } else {
                // Telegram usernames: 4–32 of letters, digits and underscores (core.telegram.org/method/account.checkUsername).
                let name = text.hasPrefix("@") ? text.dropFirst() : Substring(text)
                guard (4...32).contains(name.count),
                      name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
                else { throw ValidationError("\(text): \(Self.usage)") }
                self = .username(String(name))
            }
        }

        func inputPeer(_ client: TelegramClient) async throws -> Api.InputPeer {
            switch self {
                case .me: return .inputPeerSelf
                case .id(let id): return try await client.inputPeer(for: id)
                case .username(let name): return try await client.inputPeer(for: client.resolve(username: name))
            }
        }
    }

    func runSend(logger: Logger) async throws {
        guard let text = more.first, more.count == 1 else {
            throw ValidationError("usage: mtcall send PEER TEXT [--html | --markdown]")
        }
        guard !(html && markdown) else { throw ValidationError("send: --html and --markdown exclude each other") }
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await reference.inputPeer(client)
            let markup: Markup = html ? .html(text) : markdown ? .markdown(text) : .plain(text)
            // A mention by id goes as inputMessageEntityMentionName when the peer cache knows the user's hash.
            let sent = try await client.sendMessage(to: peer, formatted: markup, mentionedUser: { id in
                try? await client.inputUser(for: .user(id))
            })
            Self.printLine(TLJSONWriter.json(sent), output)
        }
    }

    func runHistory(logger: Logger) async throws {
        guard more.isEmpty else { throw ValidationError("usage: mtcall history PEER [--limit N]") }
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await reference.inputPeer(client)
            for try await message in client.history(of: peer, options: PagingOptions(limit: limit)) {
                Self.printLine(TLJSONWriter.json(message), output)
            }
        }
    }

    func runDialogs(logger: Logger) async throws {
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            for try await item in client.dialogs(options: PagingOptions(limit: limit)) {
                Self.printLine(TLJSONWriter.json(item.dialog), output)
            }
        }
    }

    /// The typed events for --timeout seconds (or until interrupted, with --follow), one line each: the kind, the
    /// peers as `user#ID` (a PEER `send` takes), and the payload.
    func runEvents(logger: Logger) async throws {
        let seconds = follow ? nil : timeout, output = output
        try await followingUpdates(logger: logger) { client, _ in
            try await client.connect()
            try await Self.printLines(of: client.events, for: seconds, output) { Self.json($0) }
        }
    }

    /// Each element of `stream` as one line, for `seconds`, or for as long as the stream lasts when nil.
    static func printLines<Element: Sendable>(of stream: AsyncStream<Element>, for seconds: Int?, _ output: OutputFormat,
                                              _ line: @escaping @Sendable (Element) -> JSONValue) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await element in stream { printLine(line(element), output) }
            }
            if let seconds { group.addTask { try await Task.sleep(for: .seconds(seconds)) } }
            _ = try await group.next()
            group.cancelAll()
        }
    }

    static func printLine(_ value: JSONValue, _ output: OutputFormat) {
        let text = output == .text ? TextOutput.line(value) : value.description
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func json(_ event: UpdateEvent) -> JSONValue {
        func peer(_ peer: EventPeer?) -> JSONValue { peer.map { .string($0.id.description) } ?? .null }
        switch event {
            case .newMessage(let e), .editedMessage(let e):
                let kind = if case .newMessage = event { "newMessage" } else { "editedMessage" }
                return .object([("event", .string(kind)), ("chat", peer(e.chat)), ("sender", peer(e.sender)),
                                ("outgoing", .bool(e.outgoing)), ("message", TLJSONWriter.json(e.message))])
            case .deletedMessages(let e):
                return .object([("event", .string("deletedMessages")), ("channel", peer(e.channel)),
                                ("ids", .array(e.ids.map { .number(String($0)) }))])
            case .readHistory(let e):
                return .object([("event", .string("readHistory")), ("chat", peer(e.chat)),
                                ("max_id", .number(String(e.maxID))), ("outbox", .bool(e.outbox))])
            case .userStatus(let e):
                return .object([("event", .string("userStatus")), ("user", peer(e.user)),
                                ("status", TLJSONWriter.json(e.status))])
            case .typing(let e):
                return .object([("event", .string("typing")), ("chat", peer(e.chat)), ("sender", peer(e.sender)),
                                ("action", TLJSONWriter.json(e.action))])
            case .callbackQuery(let e):
                return .object([("event", .string("callbackQuery")), ("chat", peer(e.chat)), ("sender", peer(e.sender)),
                                ("msg_id", .number(String(e.messageID))), ("query_id", .string(String(e.queryID))),
                                ("data", e.data.map { .string($0.map { String(format: "%02x", $0) }.joined()) } ?? .null)])
            case .participant(let e):
                return .object([("event", .string("participant")), ("chat", peer(e.chat)), ("user", peer(e.user)),
                                ("actor", peer(e.actor)), ("joined", .bool(e.joined)),
                                ("change", .string(String(describing: e.change)))])
            case .pinnedMessages(let e):
                return .object([("event", .string("pinnedMessages")), ("chat", peer(e.chat)),
                                ("ids", .array(e.ids.map { .number(String($0)) })), ("pinned", .bool(e.pinned))])
            case .album(let e):
                return .object([("event", .string("album")), ("chat", peer(e.chat)), ("sender", peer(e.sender)),
                                ("outgoing", .bool(e.outgoing)), ("grouped_id", .string(String(e.groupedID))),
                                ("messages", .array(e.messages.map { TLJSONWriter.json($0.message) }))])
            case .inlineQuery(let e):
                return .object([("event", .string("inlineQuery")), ("sender", peer(e.sender)),
                                ("query_id", .string(String(e.queryID))), ("query", .string(e.query)),
                                ("offset", .string(e.offset))])
            case .messageReactions(let e):
                return .object([("event", .string("messageReactions")), ("chat", peer(e.chat)),
                                ("msg_id", .number(String(e.messageID))),
                                ("reactions", json(e.reactions))])
        }
    }
}
