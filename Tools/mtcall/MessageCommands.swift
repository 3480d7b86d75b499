// `mtcall edit`, `delete`, `forward`, `pin` and `read`: the SDK's message operations from the command line, on
// peers written as `send` takes them (PeerCommands.swift). An edited or forwarded message prints as one tl-json line
// (the `Message` Telegram returned); the others print what they did as one JSON object.
import ArgumentParser
import Foundation
import Logging
import TLJSON
import TelegramApi
import TelegramClient
import TelegramFormatting

extension MTCall {
    /// `edit PEER MESSAGE_ID TEXT [--html | --markdown]`.
    func runEdit(logger: Logger) async throws {
        let usage = "usage: mtcall edit PEER MESSAGE_ID TEXT [--html | --markdown]"
        guard more.count == 2 else { throw ValidationError(usage) }
        let id = try Self.messageID(more[0], usage: usage), markup = try markup(more[1])
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let edited = try await client.editMessage(id, in: try await reference.peerID(client), formatted: markup)
            Self.printLine(TLJSONWriter.json(edited.message), output)
        }
    }

    /// `delete PEER MESSAGE_ID… [--for-me]`.
    func runDelete(logger: Logger) async throws {
        let usage = "usage: mtcall delete PEER MESSAGE_ID... [--for-me]"
        guard !more.isEmpty else { throw ValidationError(usage) }
        let ids = try more.map { text throws(ValidationError) in try Self.messageID(text, usage: usage) }
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await reference.peerID(client)
            try await client.deleteMessages(ids, in: peer, forEveryone: !forMe)
            Self.printLine(.object([("deleted", Self.numbers(ids)), ("chat", .string(peer.description)),
                                    ("for_everyone", .bool(!forMe))]), output)
        }
    }

    /// `forward FROM_PEER MESSAGE_ID… --to PEER [--drop-author] [--silent]`: one line per new message.
    func runForward(logger: Logger) async throws {
        let usage = "usage: mtcall forward FROM_PEER MESSAGE_ID... --to PEER [--drop-author] [--silent]"
        guard !more.isEmpty, let to = files.to else { throw ValidationError(usage) }
        let ids = try more.map { text throws(ValidationError) in try Self.messageID(text, usage: usage) }
        let source = try PeerReference(params), destination = try PeerReference(to)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let forwarded = try await client.forwardMessages(ids, from: try await source.peerID(client),
                                                             to: try await destination.peerID(client),
                                                             dropAuthor: dropAuthor, silent: silent)
            for message in forwarded { Self.printLine(message.map { TLJSONWriter.json($0.message) } ?? .null, output) }
        }
    }

    /// `pin PEER MESSAGE_ID [--unpin] [--silent]`.
    func runPin(logger: Logger) async throws {
        let usage = "usage: mtcall pin PEER MESSAGE_ID [--unpin] [--silent]"
        guard more.count == 1 else { throw ValidationError(usage) }
        let id = try Self.messageID(more[0], usage: usage)
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await reference.peerID(client)
            if unpin {
                try await client.unpinMessage(id, in: peer)
            } else {
                try await client.pinMessage(id, in: peer, silent: silent)
            }
            Self.printLine(.object([(unpin ? "unpinned" : "pinned", .number(String(id))),
                                    ("chat", .string(peer.description))]), output)
        }
    }

    /// `read PEER [MESSAGE_ID]`: up to that message, or all of the chat.
    func runRead(logger: Logger) async throws {
        let usage = "usage: mtcall read PEER [MESSAGE_ID]"
        guard more.count <= 1 else { throw ValidationError(usage) }
        let id = try more.first.map { text throws(ValidationError) in try Self.messageID(text, usage: usage) }
        let reference = try PeerReference(params)
        try await followingUpdates(logger: logger, follows: false) { client, _ in
            let peer = try await reference.peerID(client)
            try await client.markRead(peer, upTo: id)
            Self.printLine(.object([("read", .string(peer.description)),
                                    ("max_id", id.map { .number(String($0)) } ?? .null)]), output)
        }
    }

    /// TEXT in the markup --html or --markdown names (plain without either).
    func markup(_ text: String) throws(ValidationError) -> Markup {
        guard !(html && markdown) else { throw ValidationError("--html and --markdown exclude each other") }
        return html ? .html(text) : markdown ? .markdown(text) : .plain(text)
    }

    static func messageID(_ text: String, usage: String) throws(ValidationError) -> Int32 {
        guard let id = Int32(text), id > 0 else {
            throw ValidationError("\(text): MESSAGE_ID must be a positive message id (\(usage))")
        }
        return id
    }

    static func numbers(_ ids: [Int32]) -> JSONValue { .array(ids.map { .number(String($0)) }) }
}

extension MTCall.PeerReference {
    /// The peer as the SDK's message operations take it: `me` is the account's own user.
    func peerID(_ client: TelegramClient) async throws -> PeerID {
        switch self {
            case .me:
                guard case .user(let me)? = try await client.invoke(Api.functions.users.getUsers(id: [.inputUserSelf])).first
                else { throw ValidationError("me: the account's own user did not come back") }
                return .user(me.id)
            case .id(let id): return id
            case .username(let name): return try await client.resolve(username: name)
        }
    }
}
