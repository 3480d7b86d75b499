// `mtcall`: one API call from the command line, through `TelegramClient`. The request is tl-json (the `tl` tool's
// format) with the method's name, the result is printed as tl-json read by the method's result type, and an
// `rpc_error` is printed as `error: CODE MESSAGE` with exit status 1. With --session the key, home DC and addresses
// persist in an SQLite file, so later calls skip the handshake and stay logged in. With --temp-keys every connection
// runs over a temporary key bound to the permanent one (perfect forward secrecy).
import ArgumentParser
import Foundation
import Logging
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoTransport
import TLJSON
import TLRuntime
import TLSchema
import TelegramApi
import TelegramClient
import TelegramSession

@main
struct MTCall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mtcall",
        abstract: "Call one Telegram API method and print the result as tl-json.",
        discussion: """
            METHOD is the schema's name (help.getConfig, messages.sendMessage); TL-JSON-PARAMS its arguments as a \
            JSON object in the tl-json format of Fixtures/corpus/README.md (longs as strings, bytes as hex, \
            constructors as {"_": "name", ...}); --output text prints results for reading. A failure prints `error: …` \
            (an rpc_error as `error: CODE MESSAGE`) and `hint: …` lines naming the next step, and exits 1; a usage \
            error (a flag, a file a flag names, tl-json, a PEER, --phone for another account than --session's) exits \
            64.

            Examples (against `mtserver --generate-key --dcs 2 --user 9996620001:Alice::alice_test`, whose ready \
            line gives the ports and the public key, saved to key.pem; or save the whole line to ready.json and \
            give --mtserver ready.json in place of --server and --rsa-key):
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem help.getNearestDc
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite \\
                --phone 9996620001 --code 22222 users.getUsers '{"id": [{"_": "inputUserSelf"}]}'
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite messages.sendMessage \\
                '{"peer": {"_": "inputPeerSelf"}, "message": "hello", "random_id": "42"}'
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite --temp-keys 3600 \\
                users.getUsers '{"id": [{"_": "inputUserSelf"}]}'
              mtcall --dc 2 --test --api-id ID --api-hash HASH help.getConfig
                  (Telegram's test DC 2 and its built-in key; ID and HASH are your app's, from my.telegram.org)

            With --temp-keys SECONDS (perfect forward secrecy, core.telegram.org/api/pfs) the permanent key is only \
            used to bind: each connection makes a temporary key living SECONDS, sends auth.bindTempAuthKey over \
            it, then the call. With --session the bound key is kept and reused by later runs until a quarter of \
            its life (at most an hour) is left; then a new one is made and bound.

            METHOD `secret-chat` starts an interactive secret-chat session instead of one call: commands on standard \
            input (`request @bob`, `send CHAT TEXT`, `sendfile CHAT PATH`, `rekey CHAT`, `help`), events as JSON \
            lines on standard output; the chats' keys and state persist in --session.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite secret-chat

            METHOD `login` signs in and keeps the key in --session: it asks on the terminal for the phone, the code \
            and the cloud password (echo off) unless --phone, --code and --password give them; --bot-token signs \
            a bot in. `qr-login` prints a tg://login URL (and its QR code on standard error) and waits for another \
            app to accept it. `password` sets (--new-password), changes (with --password) or removes \
            (--new-password '') the cloud password.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite login

            METHOD `updates` follows the account's updates for --timeout seconds instead (updates.getState or \
            getDifference, and each channel's getChannelDifference, as TelegramClient does) and prints each \
            `Updates` as one tl-json line, in order and once. With --session the update boxes are kept, so the next \
            run prints what came while none ran.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session bob.sqlite --timeout 10 updates

            METHODs `send PEER TEXT`, `history PEER [--limit N]`, `dialogs [--limit N]` and `events` use the session's \
            peer cache (PEER: me, @username, or user:ID / channel:ID / chat:ID it knows, also as user#ID, the way \
            `events` prints peers; `upload --to` takes the same): send a message (plain, or \
            with --html or --markdown its formatting becomes message entities), print a \
            chat's messages newest first or the dialogs one tl-json line each, or print the typed events (new, \
            edited and deleted messages, reads, status, typing, callback and inline queries, participants) for --timeout seconds \
            (with --follow, until interrupted).
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite send bob_test 'hello'
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite send bob_test --html '<b>hi</b>'
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite history bob_test --limit 20

            METHODs `edit PEER MESSAGE_ID TEXT` (with --html or --markdown), `delete PEER MESSAGE_ID... \
            [--for-me]`, `forward FROM_PEER MESSAGE_ID... --to PEER [--drop-author]`, `pin PEER MESSAGE_ID \
            [--unpin]` and `read PEER [MESSAGE_ID]` change messages the way apps do (ids as `history` prints \
            them); an edited or forwarded message prints as one tl-json line, the others what they did.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite edit bob_test 7 --html '<b>hi</b>'
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite forward bob_test 7 8 --to me
            METHODs `members CHAT [--filter F] [--limit N]`, `ban CHAT USER [--until UNIX]`, `promote CHAT USER \
            [--rights R,...] [--title T]` and `join LINK` manage groups and channels: print each member once as one \
            JSON line (past the 200-a-page cap; F is all, admins, bots, banned, restricted, contacts or \
            search:QUERY), ban a user, make one an admin, join by an invite link (https://t.me/+HASH, \
            t.me/joinchat/HASH). CHAT and USER are PEERs; a chat the cache does not know is looked up in the dialogs.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite members channel:2000000001 \
                --filter admins
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session bob.sqlite join https://t.me/+AbCdEf

            METHODs `press PEER MESSAGE_ID (--data TEXT | --button ROW,COLUMN)`, `inline BOT QUERY [--send \
            RESULT_ID [--to PEER]]` and `bot [--alert]` talk to bots: press an inline button of a bot's message and \
            print the bot's answer; print a bot's inline results one JSON line each (and send one); or, signed in \
            with --bot-token, run a bot for --timeout seconds (with --follow, until interrupted) that answers each \
            private text with it and an inline keyboard, each press with a notification, each inline query with two \
            articles, printing a JSON line for each.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite press echo_bot 7 --button 0,0
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite inline echo_bot 'hello'

            METHOD `title CHAT TEXT` renames a group or channel (Telegram's CHAT_ADMIN_REQUIRED without the right).

            METHOD `react PEER MESSAGE_ID EMOJI` sets the account's reaction on a message (EMOJI: one emoji, or \
            custom:DOCUMENT_ID for a custom emoji); `react PEER MESSAGE_ID --remove` takes it back. Either prints the \
            message's reactions as they now are.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite react bob_test 7 👍

            METHOD `upload` takes a FILE instead of TL-JSON-PARAMS and prints its InputFile; with --to PEER it sends \
            it as a document and prints {"location", "dc", "size", "sha256", "seconds"}, which METHOD `download` \
            takes with --out PATH. Progress goes to standard error (a bar on a terminal). --no-digest leaves out \
            "sha256" (and the file's second read it costs), for timing the transfer's own CPU.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session bob.sqlite upload movie.mp4 --to @alice_test
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session bob.sqlite download "$LINE" --out copy.mp4

            METHOD `send-file PEER PATH` sends a photo, video, audio file, voice note or document (by extension, or \
            --as KIND) with --caption TEXT (--html, --markdown); each --album PATH adds a file to send them together \
            as one album (2 to 10). A video's duration and size are read from it unless --duration, --width and \
            --height give them. Progress goes to standard error; each message sent prints as one tl-json line.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session bob.sqlite send-file @alice_test a.jpg \
                --caption '<b>one</b>' --html --album b.jpg --album clip.mp4

            METHOD `download-media PEER MESSAGE_ID` downloads the message's photo or document into --out PATH \
            (default: the document's name, or photo-ID.jpg, in the current directory): --size largest (default), \
            smallest, stripped (the thumbnail the message carries, made a JPEG without a download) or a type letter \
            (s, m, x…; for a document, its thumbnails). An expired file reference is renewed by fetching the message \
            again. Progress goes to standard error; then {"path", "size", "sha256"} prints as one JSON line.
              mtcall --server 127.0.0.1:PORT --rsa-key key.pem --session alice.sqlite download-media bob_test 7 \
                --out cat.jpg
            """,
        version: SwiftMTProto.version)

    @Option(help: "A server's address, HOST:PORT (a local mtserver); its DC is --dc. Other DCs come from help.getConfig.")
    var server: String?

    @Option(name: .customLong("mtserver"),
            help: "A file holding the line mtserver printed when ready: --dc's port and the key come from it, in place of --server and --rsa-key.")
    var mtserverReady: String?

    @Option(help: "The DC to start on: Telegram's (production, or --test) unless --server is given.")
    var dc: Int32 = 2

    @Flag(help: "Telegram's test DCs and key instead of production.")
    var test = false

    @Option(name: .customLong("rsa-key"), help: "PEM file with the server's RSA public key (default: Telegram's).")
    var rsaKey: String?

    @Option(help: "Transport framing: abridged, intermediate, padded, full; or http (the HTTP transport, POST /api to --server).")
    var transport: String = "intermediate"

    @Flag(help: "Obfuscate the transport (obfuscated2).")
    var obfuscated = false

    @Option(help: "A proxy: socks5://[USER:PASS@]HOST:PORT or http://[USER:PASS@]HOST:PORT (HTTP CONNECT); or an MTProxy, HOST:PORT with --proxy-secret. Give one of each to reach the MTProxy through the other.")
    var proxy: [String] = []

    @Option(name: .customLong("proxy-secret"), help: "The MTProxy secret in hex: 32 digits, 'dd' + 32, or 'ee' + 32 + domain.")
    var proxySecret: String?

    @Option(help: "SQLite file keeping the auth keys, home DC and addresses (created mode 0600).")
    var session: String?

    @Option(name: .customLong("temp-keys"),
            help: "Run over temporary keys of this lifetime in seconds, bound to the permanent key (perfect forward secrecy).")
    var tempKeys: Int32?

    @Option(help: "Sign in with this test number (99966XYYYY) before the call, unless --session is signed in to it already.")
    var phone: String?

    @Flag(name: .customLong("switch-account"),
          help: "With --phone: sign --session in to that number even when it is signed in to another account.")
    var switchAccount = false

    @Option(help: "The login code for --phone (five X digits on test DCs).")
    var code: String?

    @Option(help: "The account's cloud password, for --phone (`login` asks it with echo off when not given).")
    var password: String?

    @Option(name: .customLong("bot-token"), help: "Sign in as a bot with this token (METHOD `login`).")
    var botToken: String?

    @Option(name: .customLong("new-password"), help: "METHOD `password`: the new cloud password; empty removes it.")
    var newPassword: String?

    @Option(help: "METHOD `password`: the new password's hint.")
    var hint: String?

    @Option(name: .customLong("api-id"), help: "Your app's api_id (my.telegram.org); any number for mtserver.")
    var apiID: Int32 = 1

    @Option(name: .customLong("api-hash"), help: "Your app's api_hash.")
    var apiHash: String = "mtcall"

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Int = 30

    @Option(help: "Send the call this many times, up to 100 in flight on one connection (a load test); prints the last result, and the calls per second on standard error.")
    var `repeat`: Int = 1

    @Option(help: "Open this many clients, each with its own connection and key, and make the call on each once a second for --load-seconds (a load test, without --session); prints one JSON line: calls answered and failed, latency p50/p99/max in ms.")
    var connections: Int?

    @Option(name: .customLong("load-seconds"), help: "--connections: how many seconds the load runs.")
    var loadSeconds: Int = 60

    @Flag(help: "Log what the client does on standard error.")
    var verbose = false

    @Option(help: "How results print: json (tl-json, one value a line, for scripts) or text (names, peers as user#ID, dates in UTC).")
    var output: OutputFormat = .json

    @Flag(help: "events, updates: print until interrupted instead of for --timeout seconds.")
    var follow = false

    @Argument(help: "The method, e.g. help.getConfig; secret-chat for an interactive secret-chat session; updates to print the account's updates for --timeout seconds; upload FILE or download LOCATION (see --help's discussion).")
    var method: String

    @OptionGroup(title: "Files (upload, download)")
    var files: FileOptions

    @OptionGroup(title: "Chats (members, ban, promote, title, react)")
    var chats: ChatOptions

    @OptionGroup(title: "Media (send-file, download-media)")
    var media: MediaOptions

    @OptionGroup(title: "Bots (press, inline, bot)")
    var bots: BotOptions

    @Argument(help: "Its arguments as a tl-json object (default {}); for send, send-file, history, edit, delete, pin, read and press, the PEER; for forward, the PEER forwarded from; for inline, the BOT.")
    var params: String = "{}"

    @Argument(help: "send's TEXT; send-file's PATH; edit's MESSAGE_ID and TEXT; the MESSAGE_IDs of delete, forward, pin and read; press's MESSAGE_ID; inline's QUERY; react's MESSAGE_ID and EMOJI; title's TEXT; download-media's MESSAGE_ID.")
    var more: [String] = []

    @Option(help: "history and dialogs: print at most this many items.")
    var limit: Int?

    @Flag(help: "send, edit: TEXT is HTML (<b>, <i>, <a href>, <code>, <pre>, <tg-spoiler>, <blockquote>, …).")
    var html = false

    @Flag(help: "send, edit: TEXT is Telegram's MarkdownV2 (the Bot API's rules, escapes with \\).")
    var markdown = false

    @Flag(name: .customLong("for-me"), help: "delete: only for this account (default: for everyone).")
    var forMe = false

    @Flag(name: .customLong("drop-author"), help: "forward: as new messages, without the \"forwarded from\" header.")
    var dropAuthor = false

    @Flag(help: "pin: unpin instead.")
    var unpin = false

    @Flag(help: "forward, pin: without a notification.")
    var silent = false

    func validate() throws {
        if mtserverReady != nil, server != nil || rsaKey != nil {
            throw ValidationError("--mtserver gives the address and the key: leave out --server and --rsa-key")
        }
        if method != "login", (phone == nil) != (code == nil) { throw ValidationError("--phone and --code go together") }
        try validateProxies()
        if !(1...1_000_000).contains(`repeat`) { throw ValidationError("--repeat must be 1...1000000") }
        if let connections {
            guard (1...5_000).contains(connections) else { throw ValidationError("--connections must be 1...5000") }
            guard (1...3_600).contains(loadSeconds) else {
                throw ValidationError("--load-seconds must be 1...3600")
            }
            guard session == nil, `repeat` == 1, phone == nil else {
                throw ValidationError("--connections opens clients of its own: leave out --session, --repeat and --phone")
            }
        }
        if let tempKeys, !(60...31_536_000).contains(tempKeys) {
            throw ValidationError("--temp-keys must be 60...31536000 seconds")
        }
        if Self.transportKind(transport) == nil, transport != "http" {
            throw ValidationError("--transport must be abridged, intermediate, padded, full or http")
        }
        if transport == "http", obfuscated || proxySecret != nil {
            throw ValidationError("--transport http is not obfuscated (no --obfuscated or --proxy-secret)")
        }
    }

    static func transportKind(_ name: String) -> TransportKind? {
        switch name {
            case "abridged": .abridged
            case "intermediate": .intermediate
            case "padded": .paddedIntermediate
            case "full": .full
            default: nil
        }
    }

    static func address(_ text: String, flag: String) throws -> DCAddress {
        guard let parsed = HostPort(parsing: text) else { throw ValidationError("\(flag) must be HOST:PORT or [IPV6]:PORT") }
        return DCAddress(host: parsed.host, port: parsed.port)
    }

    func run() async throws {
        var logger = Logger(label: "mtcall")
        logger.logLevel = verbose ? .debug : .error
        if method == "secret-chat" { return try await runSecretChat(logger: logger) }
        if method == "updates" { return try await runUpdates(logger: logger) }
        if method == "upload" { return try await runUpload(logger: logger) }
        if method == "download" { return try await runDownload(logger: logger) }
        if ["login", "qr-login", "password"].contains(method) { return try await runSignInCommand(logger: logger) }
        switch method {
            case "send": return try await runSend(logger: logger)
            case "history": return try await runHistory(logger: logger)
            case "dialogs": return try await runDialogs(logger: logger)
            case "events": return try await runEvents(logger: logger)
            case "edit": return try await runEdit(logger: logger)
            case "delete": return try await runDelete(logger: logger)
            case "forward": return try await runForward(logger: logger)
            case "pin": return try await runPin(logger: logger)
            case "read": return try await runRead(logger: logger)
            case "members": return try await runMembers(logger: logger)
            case "ban": return try await runBan(logger: logger)
            case "promote": return try await runPromote(logger: logger)
            case "join": return try await runJoin(logger: logger)
            case "send-file": return try await runSendFile(logger: logger)
            case "press": return try await runPress(logger: logger)
            case "inline": return try await runInline(logger: logger)
            case "bot": return try await runBot(logger: logger)
            case "react": return try await runReact(logger: logger)
            case "title": return try await runTitle(logger: logger)
            case "download-media": return try await runDownloadMedia(logger: logger)
            default: guard more.isEmpty else { throw ValidationError("unexpected arguments: \(more)") }
        }
        let schema = Checker.check(file: "api.tl", text: Api.schemaSource)
        // The request, as the schema's encoder writes it from tl-json.
        guard case .object(var members) = try parse(params, what: "TL-JSON-PARAMS") else {
            throw ValidationError("TL-JSON-PARAMS must be a JSON object")
        }
        members.removeAll { $0.0 == "_" }
        guard let function = schema.functions.first(where: { $0.name == method }) else {
            throw ValidationError("no method '\(method)' in layer \(Api.layer)")
        }
        let body: [UInt8]
        do {
            body = try TLJSONEncoder(schemas: [schema]).encode(.object([("_", .string(method))] + members))
        } catch {
            throw ValidationError("\(method): \(error)")
        }
        let resultType = try ValueType.parse(function.result.description, schemas: [schema])

        if let connections { return try await runConnections(connections, seconds: loadSeconds, body: body, logger: logger) }
        let (client, store) = try await makeClient(logger: logger, followsUpdates: false)
        let outcome: Result<[UInt8], any Error>
        do {
            if let phone, let code { try await signIn(client, phone: phone, code: code, store: store) }
            var last = try await client.invoke(raw: body)
            if `repeat` > 1 {
                let started = ContinuousClock.now
                last = try await Self.pipeline(client, body: body, count: `repeat` - 1, window: 100) ?? last
                let seconds = (ContinuousClock.now - started) / .seconds(1)
                FileHandle.standardError.write(Data(String(format: "%d calls in %.3f s: %.0f calls/s\n", `repeat` - 1,
                                                           seconds, Double(`repeat` - 1) / seconds).utf8))
            }
            outcome = .success(last)
        } catch {
            outcome = .failure(error)
        }
        await client.close()
        try await store?.close()
        switch outcome {
            case .success(let bytes):
                let value = try TypedDecoder(registry: Api.registry).decode(resultType, bytes: bytes)
                Self.printLine(TLJSONWriter.json(value), output)
            case .failure(let error):
                try fail(error)
        }
    }

    /// The client the flags describe, with its SQLite store when --session is given. A one-shot call does not follow
    /// the account's updates (no `updates.getState` or `getDifference` beside it); a secret chat does.
    func makeClient(logger: Logger, followsUpdates: Bool) async throws -> (TelegramClient, SQLiteSessionStore?) {
        let local = try readyLineServer()
        let keys: [RSAPublicKey]
        if let local {
            keys = [local.key]
        } else if let rsaKey {
            guard let pem = try? String(contentsOfFile: rsaKey, encoding: .utf8) else {
                throw ValidationError("--rsa-key \(rsaKey): no such file, or not readable text (mtserver prints its "
                                      + "public key in its ready line as \"public_key\")")
            }
            do {
                keys = [try RSAPublicKey(pem: pem)]
            } catch {
                throw ValidationError("--rsa-key \(rsaKey): not an RSA public key in PEM: \(error)")
            }
        } else {
            keys = [try test ? TelegramDCs.testKey() : TelegramDCs.productionKey()]
        }
        var dcs = test ? TelegramDCs.test : TelegramDCs.production
        if let server { dcs = [dc: try Self.address(server, flag: "--server")] }
        if let local { dcs = [dc: local.address] }
        var obfuscation: TransportConfiguration.Obfuscation = obfuscated ? .obfuscated2 : .none
        var proxyAddress: DCAddress?
        if let proxy = mtproxyFlag, let proxySecret {
            proxyAddress = try Self.address(proxy, flag: "--proxy")
            obfuscation = .mtproxy(try MTProxySecret(parsing: proxySecret))
        }
        var store: SQLiteSessionStore?
        if let session { store = try await SQLiteSessionStore.open(path: session) }
        var configuration = TelegramClient.Configuration(
            app: .init(apiID: apiID, apiHash: apiHash), dcs: dcs, homeDC: dc, serverKeys: keys,
            transport: Self.transportKind(transport) ?? .intermediate, obfuscation: obfuscation, proxy: proxyAddress,
            store: store, logger: logger, requestTimeout: .seconds(timeout),
            temporaryKeys: tempKeys.map { TemporaryKeyPolicy(lifetime: $0, renewBefore: min(3600, $0 / 4)) },
            followsUpdates: followsUpdates, connectionProxy: try connectionProxy())
        // --transport http: the HTTP transport to --server (any of mtserver's DC ports); the Host is set per DC.
        if transport == "http" { configuration.httpTransport = HTTPTransportOptions(host: "") }
        let client = TelegramClient(configuration: configuration)
        return (client, store)
    }

    func runSecretChat(logger: Logger) async throws {
        try await followingUpdates(logger: logger) { client, store in
            try await SecretChatSession(client: client, store: store).run()
        }
    }

    /// `mtcall updates`: every `Updates` the client yields for --timeout seconds, one tl-json line each.
    func runUpdates(logger: Logger) async throws {
        let seconds = follow ? nil : timeout, output = output
        try await followingUpdates(logger: logger) { client, _ in
            try await client.connect()
            try await Self.printLines(of: client.updates, for: seconds, output) { TLJSONWriter.json($0) }
        }
    }

    /// A client that follows the account's updates (unless `follows` is false), signed in when --phone is given,
    /// running `body`; then closed (which saves its update boxes and peers), and an error printed and exit status 1
    /// if anything failed.
    func followingUpdates(logger: Logger, follows: Bool = true,
                          _ body: (TelegramClient, SQLiteSessionStore?) async throws -> Void) async throws {
        let (client, store) = try await makeClient(logger: logger, followsUpdates: follows)
        var failure: (any Error)?
        do {
            if let phone, let code { try await signIn(client, phone: phone, code: code, store: store) }
            try await body(client, store)
        } catch {
            failure = error
        }
        await client.close()
        try await store?.close()
        if let failure { try fail(failure) }
    }

    /// `count` calls with at most `window` in flight; returns the last answer. The calls run on the client's own
    /// event loop (`taskExecutor`), so none of them changes threads on its way to the socket and back.
    static func pipeline(_ client: TelegramClient, body: [UInt8], count: Int, window: Int) async throws -> [UInt8]? {
        try await withTaskExecutorPreference(client.taskExecutor) {
            try await withThrowingTaskGroup(of: ArraySlice<UInt8>.self) { group in
                var started = 0
                var last: ArraySlice<UInt8>?
                while started < min(window, count) {
                    group.addTask { try await client.invokeInPlace(raw: body) }
                    started += 1
                }
                while let answer = try await group.next() {
                    last = answer
                    if started < count {
                        group.addTask { try await client.invokeInPlace(raw: body) }
                        started += 1
                    }
                }
                return last.map { Array($0) }
            }
        }
    }

    func parse(_ text: String, what: String) throws -> JSONValue {
        do {
            return try JSONParser.parse(text)
        } catch {
            throw ValidationError("\(what): \(error)")
        }
    }

    /// Signs in as --phone. A --session that holds a key may be signed in already: to that number, nothing is done
    /// (no code is spent); to another account, only with --switch-account, so a mistyped --session never silently
    /// becomes someone else's.
    func signIn(_ client: TelegramClient, phone: String, code: String, store: SQLiteSessionStore?) async throws {
        if try await signedIn(client, as: phone, store: store) != nil { return }
        _ = try await client.signIn(phone: phone, prompts: Self.prompts(code: code, password: password))
    }

    /// The account --session is signed in to when that is `phone`'s; nil when it is signed in to none, or (with
    /// --switch-account) to another. Throws a usage error for another account without --switch-account.
    func signedIn(_ client: TelegramClient, as phone: String, store: SQLiteSessionStore?) async throws -> Api.User? {
        // A store without a key is signed in to nothing: no call to find out.
        guard let store, let session, try await !store.load().permanentKeys.isEmpty,
              let current = try await Self.signedInUser(client) else { return nil }
        let digits = { (text: String) in text.filter(\.isNumber) }
        if digits(current.phone ?? "") == digits(phone) { return .user(current) }
        guard switchAccount else {
            throw ValidationError("--session \(session) is signed in as \(current.phone ?? "user:\(current.id)"), not "
                                  + "\(phone): leave out --phone to use that account, give another --session, or add "
                                  + "--switch-account to sign this one in as \(phone)")
        }
        return nil
    }

    /// The account the client's key is signed in to, or nil when it is signed in to none (a 401).
    static func signedInUser(_ client: TelegramClient) async throws -> Api.User.Cons_user? {
        do {
            let users = try await client.invoke(Api.functions.users.getUsers(id: [.inputUserSelf]))
            guard case .user(let user)? = users.first else { return nil }
            return user
        } catch MTProtoClientError.rpc(let error) where error.kind == .unauthorized {
            return nil
        }
    }
}
