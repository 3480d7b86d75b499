// `mtcall send PEER TEXT`, `history PEER`, `dialogs` and `events`: the SDK's peer cache, iterators and typed events
// from the command line. PEER is `me`, a username (with or without "@"), or `user:ID`/`channel:ID`/`chat:ID` (or a
// bare user id) that the session's peer cache knows. Items print as one tl-json line each.
import ArgumentParser
import Foundation
import Logging
import MTProtoClient
import TLJSON
import TelegramApi
import TelegramClient
import TelegramFormatting


extension MTCall {
    /// The peer a command-line PEER names.
    static func peer(_ text: String, client: TelegramClient) async throws -> Api.InputPeer {
        if text == "me" || text == "self" { return .inputPeerSelf }
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        let id: PeerID?
        switch (parts.count, parts.first) {
            case (2, "user"): id = Int64(parts[1]).map(PeerID.user)
            case (2, "channel"): id = Int64(parts[1]).map(PeerID.channel)
            case (2, "chat"): id = Int64(parts[1]).map(PeerID.chat)
            case (1, _): id = Int64(text).map(PeerID.user)
            default: throw ValidationError("PEER must be me, a username, user:ID, channel:ID or chat:ID")
        }
        if let id { return try await client.inputPeer(for: id) }
        let resolved = try await client.resolve(username: text)
        return try await client.inputPeer(for: resolved)
    }

    func runSend(logger: Logger) async throws {
        guard let text = more.first, more.count == 1 else {
            throw ValidationError("usage: mtcall send PEER TEXT [--html | --markdown]")
        }
        guard !(html && markdown) else { throw ValidationError("send: --html and --markdown exclude each other") }
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await Self.peer(params, client: client)
            let markup: Markup = html ? .html(text) : markdown ? .markdown(text) : .plain(text)
            // A mention by id goes as inputMessageEntityMentionName when the peer cache knows the user's hash.
            let sent = try await client.sendMessage(to: peer, formatted: markup, mentionedUser: { id in
                try? await client.inputUser(for: .user(id))
            })
            Self.printLine(TLJSONWriter.json(sent))
        }
    }

    func runHistory(logger: Logger) async throws {
        guard more.isEmpty else { throw ValidationError("usage: mtcall history PEER [--limit N]") }
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await Self.peer(params, client: client)
            for try await message in client.history(of: peer, options: PagingOptions(limit: limit)) {
                Self.printLine(TLJSONWriter.json(message))
            }
        }
    }

    func runDialogs(logger: Logger) async throws {
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            for try await item in client.dialogs(options: PagingOptions(limit: limit)) {
                Self.printLine(TLJSONWriter.json(item.dialog))
            }
        }
    }

    /// The typed events for --timeout seconds, one JSON line each: the kind, the peers by id, and the payload.
    func runEvents(logger: Logger) async throws {
        let seconds = timeout
        try await followingUpdates(logger: logger) { client, _ in
            try await client.connect()
            try await Self.printLines(of: client.events, for: seconds) { Self.json($0) }
        }
    }

    /// Each element of `stream` as one JSON line, for `seconds`.
    static func printLines<Element: Sendable>(of stream: AsyncStream<Element>, for seconds: Int,
                                              _ line: @escaping @Sendable (Element) -> JSONValue) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await element in stream { printLine(line(element)) }
            }
            group.addTask { try await Task.sleep(for: .seconds(seconds)) }
            _ = try await group.next()
            group.cancelAll()
        }
    }

    static func printLine(_ value: JSONValue) {
        FileHandle.standardOutput.write(Data((value.description + "\n").utf8))
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
                                ("actor", peer(e.actor)), ("joined", .bool(e.joined))])
        }
    }
}
