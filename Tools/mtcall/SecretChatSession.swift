// `mtcall … secret-chat`: an interactive secret-chat session for scripts and people. Commands arrive on standard
// input, one per line; everything that happens is printed as one JSON object per line on standard output, so a
// script (Tests/Interop/secret_chat_interop.py) can drive a conversation and check each step.
import Foundation
import MTProtoClient
import MTProtoCrypto
import SecretChats
import TelegramApi
import TelegramClient
import TelegramSession
import TLRuntime

struct SecretChatSession {
    static let help = """
        Commands (one per line):
          request @USERNAME [LAYER]   ask a user for a secret chat (our layer at most LAYER: 8 46 73 101 144)
          accept CHAT [LAYER]         accept a requested chat
          autoaccept                  accept every request from now on
          send CHAT TEXT              send a text message
          sendfile CHAT PATH          encrypt, upload and send a file
          action CHAT ttl SECONDS | read IDS | delete IDS | screenshot IDS | flush   (IDS comma-separated)
          typing CHAT on|off          messages.setEncryptedTyping
          rekey CHAT                  re-key now
          layer CHAT LAYER            change our layer and notify the peer
          discard CHAT                end the chat
          state CHAT                  print the chat's layer, sequence numbers and key fingerprint
          quit
        Events are JSON lines: {"event": "ready"|"message"|"layer"|"rekeyed"|..., "chat": ID, ...}. Received
        files are saved in the current directory as secret-CHAT-RANDOMID-NAME.
        """

    let client: TelegramClient
    let manager: SecretChatManager
    let output = Output()

    /// Serializes writes to standard output across the tasks below.
    final class Output: @unchecked Sendable {
        private let lock = NSLock()
        private var accepting = false
        var autoAccept: Bool {
            get { lock.withLock { accepting } }
            set { lock.withLock { accepting = newValue } }
        }
        func emit(_ fields: [String: Any]) {
            guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
            lock.lock()
            FileHandle.standardOutput.write(data + Data("\n".utf8))
            lock.unlock()
        }
    }

    init(client: TelegramClient, store: (any SessionStore)?) async throws {
        self.client = client
        manager = try await SecretChatManager(client: client, options: .init(store: store))
    }

    func run() async throws {
        // Connect and learn our own id before listening, so updates start flowing.
        let me = try await client.invoke(Api.functions.users.getUsers(id: [.inputUserSelf]))
        if case .user(let u)? = me.first { output.emit(["event": "started", "user": String(u.id)]) }
        let manager = self.manager, client = self.client, output = self.output
        let updates = Task {
            for await update in client.updates {
                do { try await manager.handle(update) } catch { output.emit(["event": "error", "error": "\(error)"]) }
            }
        }
        let events = Task {
            for await event in manager.events { await Self.report(event, manager: manager, output: output) }
        }
        defer {
            updates.cancel()
            events.cancel()
        }
        for await line in Self.standardInputLines() {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let command = words.first else { continue }
            if command == "quit" { break }
            do {
                try await execute(command, Array(words.dropFirst()), line: line)
            } catch {
                output.emit(["event": "error", "command": command, "error": "\(error)"])
            }
        }
        // Let queued events print before the process ends.
        try? await Task.sleep(for: .milliseconds(200))
    }

    private func execute(_ command: String, _ args: [String], line: String) async throws {
        func chat(_ i: Int) throws -> Int32 {
            guard args.count > i, let id = Int32(args[i]) else { throw SecretChatError.invalidState("\(command): CHAT missing") }
            return id
        }
        func layer(_ i: Int) throws -> SecretLayer? {
            guard args.count > i else { return nil }
            guard let n = Int32(args[i]), let l = SecretLayer(rawValue: n) else {
                throw SecretChatError.invalidState("LAYER must be one of 8 46 73 101 144")
            }
            return l
        }
        switch command {
        case "request":
            // The same PEER as everywhere in mtcall; a secret chat is with a user other than this account.
            guard let text = args.first else { throw SecretChatError.invalidState("request PEER (@username or user:ID)") }
            let peer: PeerID
            switch try MTCall.PeerReference(text) {
                case .id(let id): peer = id
                case .username(let name): peer = try await client.resolve(username: name)
                case .me: throw SecretChatError.invalidState("a secret chat needs another user than me")
            }
            guard peer.kind == .user else { throw SecretChatError.invalidState("\(text) is not a user") }
            let id = try await manager.requestChat(with: try await client.inputUser(for: peer), maxLayer: try layer(1))
            output.emit(["event": "waiting", "chat": id])
        case "accept":
            try await manager.accept(chatID: try chat(0), maxLayer: try layer(1))
        case "autoaccept":
            output.autoAccept = true
        case "send":
            let id = try chat(0)
            let text = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).dropFirst(2).first.map(String.init) ?? ""
            let randomID = try await manager.send(chatID: id, text: text)
            output.emit(["event": "sent", "chat": id, "random_id": String(randomID)])
        case "sendfile":
            let id = try chat(0)
            guard args.count > 1 else { throw SecretChatError.invalidState("sendfile CHAT PATH") }
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: args[1])))
            let randomID = try await manager.sendFile(chatID: id, bytes: bytes,
                                                      fileName: URL(fileURLWithPath: args[1]).lastPathComponent,
                                                      mimeType: "application/octet-stream")
            output.emit(["event": "sent", "chat": id, "random_id": String(randomID), "sha256": Hex.encode(Hash.sha256(bytes))])
        case "action":
            let id = try chat(0)
            guard args.count > 1 else { throw SecretChatError.invalidState("action CHAT KIND [VALUE]") }
            let ids = args.count > 2 ? args[2].split(separator: ",").compactMap { Int64($0) } : []
            let action: SecretServiceAction
            switch args[1] {
            case "ttl": action = .setMessageTTL(args.count > 2 ? Int32(args[2]) ?? 0 : 0)
            case "read": action = .readMessages(ids)
            case "delete": action = .deleteMessages(ids)
            case "screenshot": action = .screenshotMessages(ids)
            case "flush": action = .flushHistory
            default: throw SecretChatError.invalidState("unknown action \(args[1])")
            }
            try await manager.send(chatID: id, action: action)
        case "typing":
            try await manager.setTyping(chatID: try chat(0), args.count > 1 && args[1] == "on")
        case "rekey":
            try await manager.rekey(chatID: try chat(0))
        case "layer":
            guard let l = try layer(1) else { throw SecretChatError.invalidState("layer CHAT LAYER") }
            try await manager.setMaxLayer(chatID: try chat(0), l)
        case "discard":
            try await manager.discard(chatID: try chat(0))
        case "state":
            let id = try chat(0)
            guard let state = await manager.chat(id) else { throw SecretChatError.unknownChat(id) }
            output.emit(["event": "state", "chat": id, "layer": state.layer.rawValue, "phase": state.phase.rawValue,
                         "in_seq_no": state.inSeqNo, "out_seq_no": state.outSeqNo,
                         "fingerprint": String(state.keyFingerprint),
                         "visualization": Hex.encode(state.keyVisualization)])
        case "help":
            FileHandle.standardError.write(Data((Self.help + "\n").utf8))
        default:
            throw SecretChatError.invalidState("unknown command \(command) (try help)")
        }
    }

    /// Lines of standard input, read on a thread of their own so the blocking read holds no task thread.
    static func standardInputLines() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine() { sink.yield(line) }
            sink.finish()
        }
        thread.start()
        return stream
    }

    static func report(_ event: SecretChatEvent, manager: SecretChatManager, output: Output) async {
        switch event {
        case .requested(let id, let user):
            output.emit(["event": "requested", "chat": id, "user": String(user)])
            if output.autoAccept {
                do { try await manager.accept(chatID: id) } catch { output.emit(["event": "error", "error": "\(error)"]) }
            }
        case .ready(let id, let fingerprint):
            let visualization = await manager.chat(id)?.keyVisualization ?? []
            output.emit(["event": "ready", "chat": id, "fingerprint": String(fingerprint),
                         "visualization": Hex.encode(visualization)])
        case .layerChanged(let id, let layer):
            output.emit(["event": "layer", "chat": id, "layer": layer.rawValue])
        case .message(let id, let message):
            var fields: [String: Any] = ["event": "message", "chat": id, "layer": message.payload.layer.rawValue,
                                         "random_id": String(message.payload.randomID)]
            if let seq = message.sequence { fields["seq"] = seq }
            if let text = message.payload.text { fields["text"] = text }
            if let action = message.payload.action { fields["action"] = "\(action)" }
            if let document = message.payload.document {
                do {
                    let bytes = try await manager.download(message)
                    let path = "secret-\(id)-\(message.payload.randomID)-\(document.fileName.isEmpty ? "file" : document.fileName)"
                    try Data(bytes).write(to: URL(fileURLWithPath: path))
                    fields["file"] = path
                    fields["sha256"] = Hex.encode(Hash.sha256(bytes))
                } catch {
                    fields["file_error"] = "\(error)"
                }
            }
            output.emit(fields)
        case .rekeyed(let id, let fingerprint):
            output.emit(["event": "rekeyed", "chat": id, "fingerprint": String(fingerprint)])
        case .rekeyAborted(let id, let exchange):
            output.emit(["event": "rekey_aborted", "chat": id, "exchange": String(exchange)])
        case .resendRequested(let id, let start, let end):
            output.emit(["event": "resend_requested", "chat": id, "start": start, "end": end])
        case .resent(let id, let start, let end):
            output.emit(["event": "resent", "chat": id, "start": start, "end": end])
        case .discarded(let id):
            output.emit(["event": "discarded", "chat": id])
        case .aborted(let id, let error):
            output.emit(["event": "aborted", "chat": id, "error": "\(error)"])
        case .dropped(let id, let error):
            output.emit(["event": "dropped", "chat": id, "error": "\(error)"])
        }
    }
}
