// `mtserver`: the test Telegram as a command. Binds loopback, prints one JSON line when ready (ports, the public key
// PEM, its fingerprint, the proxy secret), logs connections with swift-log on standard error, and stops on
// SIGINT/SIGTERM or after `--timeout` seconds.
import ArgumentParser
import Dispatch
import Foundation
import Logging
import MTProto
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TLRuntime
import TestTelegram

@main
struct MTServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mtserver",
        abstract: "Run a local test Telegram server (MTProto server role) on 127.0.0.1.",
        discussion: """
            When ready it prints one JSON line on standard output: "port" (the first DC's), "ports" (by DC id), \
            "proxy_port" (with --secret; it forwards to the DC a client names), "http_port" (the HTTP transport, \
            POST /api), "dc", \
            "public_key" (PKCS#1 PEM), "fingerprint", "secret". Clients load public_key as the server's RSA key \
            and connect to 127.0.0.1:port with any transport (abridged, intermediate, padded intermediate, full, \
            obfuscated2), or to proxy_port through MTProxy with the secret. Logs go to standard error.

            Examples:
              mtserver --generate-key --secret dd0123456789abcdef0123456789abcdef
              mtserver --generate-key --dcs 2 --user 9996620001:Alice::alice_test --user 9996610002:Bob::bob_test
              mtserver --generate-key --threads 1   # all connections on one thread
              mtserver --rsa-key key.pem --port 4430 --timeout 60 --seed 7 \\
                --faults drop=0.05,error=help.getConfig:420:FLOOD_WAIT_3
            """,
        version: SwiftMTProto.version)

    @Option(help: "TCP port for direct connections (0 picks a free one).")
    var port: Int = 0

    @Option(help: "TCP port of the MTProxy listener when --secret is given (0 picks a free one).")
    var proxyPort: Int = 0

    @Option(help: "TCP port of a listener for the first DC that serves only the HTTP transport (POST /api; 0 picks a free one), printed as \"http_port\". Every DC's port serves HTTP too.")
    var httpPort: Int = 0

    @Option(name: .customLong("rsa-key"), help: "PEM file with the server's RSA private key.")
    var rsaKey: String?

    @Flag(help: "Generate a fresh 2048-bit RSA key (its public PEM is printed in the JSON line).")
    var generateKey = false

    @Option(help: "MTProxy secret in hex: 32 hex digits (plain), 'dd' + 32 (padded intermediate), or 'ee' + 32 + hex domain (fake-TLS).")
    var secret: String?

    @Option(help: "Stop after this many seconds (0: run until SIGINT/SIGTERM).")
    var timeout: Double = 0

    @Option(help: "Faults to inject, comma-separated: drop=P, duplicate=P, reorder=P, delay=P:SECONDS (outgoing frames, P in 0...1), error=METHOD:CODE:MESSAGE, error-once=METHOD:CODE:MESSAGE (the first call on each DC only), close=METHOD (every call closes its connection), close-once=METHOD (the first call only), drop-encrypted=N (the N-th messages.sendEncrypted relayed is answered but never delivered), withhold-push=N (the N-th message sent is stored but not pushed), expire-reference=BYTES (a photo's or document's file reference is renewed each time BYTES of it were downloaded). Draws are seeded by --seed.")
    var faults: String?

    @Option(help: "Seed the server's randomness (nonces, salts, padding) so a run replays; not for real keys.")
    var seed: UInt64?

    @Option(help: "The DC id of a single-DC server (it also accepts clients naming any other DC).")
    var dc: Int32 = 2

    @Option(help: "Also listen on this IPv6 address, on the same ports, listed in help.getConfig as the DCs' ipv6 options (printed as \"ipv6_host\"); 'none' to listen on 127.0.0.1 only.")
    var ipv6: String = "::1"

    @Option(help: "Run DCs 1...N, each on its own port (printed under \"ports\"); --port is DC 1's.")
    var dcs: Int32 = 1

    @Option(name: .customLong("user"), help: ArgumentHelp(
        "Register an account: PHONE[:FIRST[:LAST[:USERNAME[:PASSWORD[:HINT]]]]] (repeatable). Phones are test numbers 99966XYYYY; the code is five X digits and X the home DC when it exists; PASSWORD sets a cloud password with its HINT.",
        valueName: "account"))
    var users: [String] = []

    @Option(name: .customLong("seed-history"), help: ArgumentHelp(
        "Store COUNT messages between two --user accounts before serving, alternating senders, one second apart and ending now: PHONE:PHONE:COUNT (repeatable; for paging through history).",
        valueName: "chat"))
    var seedHistory: [String] = []
    @Option(name: .customLong("seed-supergroup"), help: ArgumentHelp(
        "Make a supergroup owned by a --user account with COUNT new members (\"Member 1\"…, usernames member1…) and BOTS new bots before serving: PHONE:COUNT[:BOTS[:TITLE]] (repeatable; for paging through members).",
        valueName: "group"))
    var seedSupergroups: [String] = []
    @Option(name: .customLong("bot"), help: ArgumentHelp(
        "Register a bot signed in to with its token: ID:SECRET[:USERNAME] (repeatable; the username defaults to bot<ID>_bot).",
        valueName: "token"))
    var bots: [String] = []
    @Option(name: .customLong("file-limit-mb"),
            help: "Megabytes of unfinished uploads per account and of stored files in all (default 64 and 512).")
    var fileLimitMB: Int?

    @Option(help: "Event-loop threads the connections are spread over, each connection's crypto on its own thread's loop (default: one per core).")
    var threads: Int?

    @Option(name: .customLong("session-lifetime"),
            help: "Seconds a session is kept after its last connection closed (default 600; never less than until every message it received is 300 s old); a client coming back later gets new_session_created. Auth keys are kept regardless.")
    var sessionLifetime: Double?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard (rsaKey != nil) != generateKey else { throw ValidationError("give exactly one of --rsa-key PEM and --generate-key") }
        guard timeout >= 0 else { throw ValidationError("--timeout must be 0 or more") }
        guard (1...16).contains(dcs) else { throw ValidationError("--dcs must be 1...16") }
        if let fileLimitMB, !(1...16_384).contains(fileLimitMB) { throw ValidationError("--file-limit-mb must be 1...16384") }
        if let threads, !(1...256).contains(threads) { throw ValidationError("--threads must be 1...256") }
        if let sessionLifetime, !(sessionLifetime >= 0) { throw ValidationError("--session-lifetime must be 0 or more") }
    }

    func run() async throws {
        var logger = Logger(label: "mtserver")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        // What the flags name is checked before anything listens: a bad one is a usage error (exit 64), in words.
        let pem: String
        if let rsaKey {
            guard let text = try? String(contentsOfFile: rsaKey, encoding: .utf8) else {
                throw ValidationError("--rsa-key \(rsaKey): no such file, or not readable text (or use --generate-key)")
            }
            pem = text
        } else {
            pem = try RSAKeys.generatePEM()
        }
        let key: RSAPrivateKey
        do {
            key = try RSAPrivateKey(pem: pem)
        } catch {
            throw ValidationError("--rsa-key \(rsaKey ?? ""): not an RSA private key in PEM: \(error)")
        }
        let proxySecret: MTProxySecret?
        do {
            proxySecret = try secret.map { text throws(TransportError) in try MTProxySecret(parsing: text) }
        } catch {
            throw ValidationError("--secret: \(error)")
        }
        let random: any RandomSource = seed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        var limits = TestTelegramService.Limits()
        if let fileLimitMB {
            limits.maxUploadBytesPerAccount = fileLimitMB << 20
            limits.maxStoredFileBytes = fileLimitMB << 20
        }
        let service = TestTelegramService(limits: limits, random: random)
        for user in users {
            let fields = user.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            do {
                try service.addUser(phone: fields[0], firstName: fields.count > 1 && !fields[1].isEmpty ? fields[1] : "Test",
                                    lastName: fields.count > 2 ? fields[2] : "",
                                    username: fields.count > 3 && !fields[3].isEmpty ? fields[3] : nil)
                if fields.count > 4, !fields[4].isEmpty {
                    try service.setPassword(phone: fields[0], password: fields[4], hint: fields.count > 5 ? fields[5] : nil)
                }
            } catch {
                throw ValidationError("--user \(user): \(error.message)")
            }
        }
        try Self.seed(seedHistory, into: service)
        try Self.seed(supergroups: seedSupergroups, into: service)
        for bot in bots {
            let fields = bot.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 2 else { throw ValidationError("--bot \(bot): give ID:SECRET[:USERNAME]") }
            do {
                let username = fields.count > 2 && !fields[2].isEmpty ? fields[2] : "bot\(fields[0])_bot"
                try service.addBot(token: fields[0] + ":" + fields[1], firstName: username, username: username)
            } catch {
                throw ValidationError("--bot \(bot): \(error.message)")
            }
        }
        var configuration = MTProtoTestServer.Configuration(
            rsaKeys: [key], handlers: service.handlers(), port: port, proxyPort: proxyPort,
            dcIDs: dcs == 1 ? [dc] : Array(1...dcs),
            proxySecret: proxySecret, random: random, onEvent: { [logger] report in Self.log(report, to: logger) })
        do {
            configuration.faults = try faults.map { try FaultPlan(parsing: $0) } ?? FaultPlan()
        } catch {
            throw ValidationError("--faults: \(error)")
        }
        configuration.faultSeed = seed ?? 0
        configuration.ipv6Host = ipv6 == "none" ? nil : ipv6
        configuration.httpPort = httpPort
        if let threads { configuration.threads = threads }
        if let sessionLifetime { configuration.limits.detachedSessionLifetime = sessionLifetime }
        let server = try await MTProtoTestServer.start(configuration)
        service.attach(server)

        let ready = Ready(port: server.port, ports: Dictionary(uniqueKeysWithValues: server.ports.map { ("\($0.key)", $0.value) }),
                          proxy_port: server.proxyPort, http_port: server.httpPort, dc: dcs == 1 ? dc : 1,
                          public_key: key.publicKey.pkcs1PEM,
                          fingerprint: RSAPublicKey.hexFingerprint(key.publicKey.fingerprint),
                          secret: proxySecret?.hexString, ipv6_host: configuration.ipv6Host)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Unbuffered, so a parent reading the pipe sees the line at once.
        FileHandle.standardOutput.write(try encoder.encode(ready) + Data("\n".utf8))
        logger.info("listening on 127.0.0.1:\(server.port)\(server.proxyPort.map { ", MTProxy on \($0)" } ?? "")\(server.httpPort.map { ", HTTP on \($0)" } ?? "")")

        let reason = await Self.waitForStop(timeout: timeout)
        logger.info("stopping: \(reason)")
        try await server.shutdown()
    }

    struct Ready: Encodable {
        let port: Int
        let ports: [String: Int]
        let proxy_port: Int?
        let http_port: Int?
        let dc: Int32
        let public_key: String
        let fingerprint: String
        let secret: String?
        let ipv6_host: String?
    }

    static func log(_ report: MTProtoTestServer.ConnectionReport, to logger: Logger) {
        let id = report.connection
        switch report.kind {
        case .opened(let remote):
            logger.debug("connection \(id) opened from \(remote)")
        case .closed(let reason?):
            logger.info("connection \(id) closed: \(reason)")
        case .closed(nil):
            logger.debug("connection \(id) closed by the client")
        case .event(.handled(let method, let key, let error?)):
            logger.info("connection \(id) session \(key.sessionID): \(method) -> \(error)")
        case .event(let event):
            logger.debug("connection \(id): \(event)")
        }
    }

    /// Waits for SIGINT, SIGTERM or the timeout; returns which.
    static func waitForStop(timeout: Double) async -> String {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let queue = DispatchQueue(label: "mtserver.signals")
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(name) }
            source.resume()
            sources.append(source)
        }
        defer { sources.forEach { $0.cancel() } }
        if timeout > 0 {
            Task {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                continuation.yield("timeout after \(timeout) s")
            }
        }
        for await reason in stream { return reason }
        return "stream ended"
    }
}

extension MTServer {
    /// `--seed-history PHONE:PHONE:COUNT` items, in order.
    static func seed(_ chats: [String], into service: TestTelegramService) throws {
        for chat in chats {
            let fields = chat.split(separator: ":").map(String.init)
            guard fields.count == 3, let count = Int(fields[2]), let first = service.user(phone: fields[0]),
                  let second = service.user(phone: fields[1]) else {
                throw ValidationError("--seed-history \(chat): expected PHONE:PHONE:COUNT of two --user accounts")
            }
            let now = Int32(clamping: Int64(Date().timeIntervalSince1970))
            do {
                try service.seedHistory(between: first, and: second, count: count, startDate: now - Int32(clamping: count))
            } catch {
                throw ValidationError("--seed-history \(chat): \(error.message)")
            }
        }
    }

    /// `--seed-supergroup PHONE:COUNT[:BOTS[:TITLE]]` items, in order.
    static func seed(supergroups: [String], into service: TestTelegramService) throws {
        for group in supergroups {
            let fields = group.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            guard (2...4).contains(fields.count), let owner = service.user(phone: fields[0]), let count = Int(fields[1]),
                  let bots = fields.count > 2 ? Int(fields[2]) : 0 else {
                throw ValidationError("--seed-supergroup \(group): expected PHONE:COUNT[:BOTS[:TITLE]] of a --user account")
            }
            let now = Int32(clamping: Int64(Date().timeIntervalSince1970))
            do {
                _ = try service.seedSupergroup(owner: owner, title: fields.count > 3 ? fields[3] : "Seeded supergroup",
                                               members: count, bots: bots, date: now - Int32(clamping: count + bots + 1))
            } catch {
                throw ValidationError("--seed-supergroup \(group): \(error.message)")
            }
        }
    }
}
