// `TelegramClient` against the test Telegram on loopback: a login that moves the home DC (with DC 1's address learned
// from help.getConfig), a download that follows FILE_MIGRATE with an exported authorization, flood waits below and
// above the threshold, cancellation, a connection reset mid-request survived by reconnecting, a client reopened from
// its SQLite file without a new handshake, and many pipelined calls under every fault the server injects.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TLRuntime
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

/// A two-DC test Telegram with Alice (home DC 2) and Bob (home DC 1), and clients for it.
struct LocalTelegram {
    let service: TestTelegramService
    let server: MTProtoTestServer

    static func start(seed: UInt64, faults: FaultPlan = FaultPlan(), proxySecret: MTProxySecret? = nil,
                      clock: @escaping @Sendable () -> Double = ServerContext.wallClock,
                      limits: TestTelegramService.Limits = TestTelegramService.Limits(),
                      onEvent: @escaping @Sendable (MTProtoTestServer.ConnectionReport) -> Void = { _ in },
                      announcesMembers: Bool = false, serverLimits: ServerLimits = ServerLimits()) async throws
        -> LocalTelegram {
        let service = TestTelegramService(limits: limits, random: SeededRandom(seed: seed),
                                          announcesMembers: announcesMembers)
        try service.addUser(phone: "9996620001", firstName: "Alice", username: "alice_test")
        try service.addUser(phone: "9996610002", firstName: "Bob", username: "bob_test")
        var configuration = MTProtoTestServer.Configuration(
            rsaKeys: [try Fixture.rsaKey()], handlers: service.handlers(), dcIDs: [1, 2], proxySecret: proxySecret,
            random: SeededRandom(seed: seed + 1))
        configuration.limits = serverLimits
        configuration.faults = faults
        configuration.faultSeed = seed
        configuration.clock = clock
        configuration.onEvent = onEvent
        let server = try await MTProtoTestServer.start(configuration)
        service.attach(server)
        return LocalTelegram(service: service, server: server)
    }

    /// A client that knows only DC `dc`'s address, its home until a migration moves it (the other DC's address
    /// comes from help.getConfig when a migration needs it).
    func client(store: (any SessionStore)? = MemorySessionStore(), transport: TransportKind = .intermediate,
                obfuscation: TransportConfiguration.Obfuscation = .none,
                session: SessionConfiguration = SessionConfiguration(), floodWaitThreshold: Int = 60,
                temporaryKeys: TemporaryKeyPolicy? = nil, followsUpdates: Bool = true,
                clock: @escaping @Sendable () -> Double = MTProtoClient.wallClock,
                connectionProxy: ProxyConfiguration? = nil, middlewares: [any InvokeMiddleware] = [],
                taskExecutor: EventLoopTaskExecutor? = nil, dc: Int32 = 2) throws -> TelegramClient {
        var proxy: DCAddress?
        if case .mtproxy = obfuscation { proxy = DCAddress(host: "127.0.0.1", port: server.proxyPort ?? 0) }
        var configuration = TelegramClient.Configuration(
            app: .init(apiID: 1, apiHash: "test"), dcs: [dc: DCAddress(host: "127.0.0.1", port: server.ports[dc] ?? 0)],
            homeDC: dc, serverKeys: [try Fixture.rsaKey().publicKey], transport: transport, obfuscation: obfuscation,
            proxy: proxy, store: store,
            requestTimeout: .seconds(30), floodWaitThreshold: floodWaitThreshold,
            reconnect: .init(maxAttempts: 8, initialDelay: .milliseconds(20), maxDelay: .milliseconds(200)), session: session,
            temporaryKeys: temporaryKeys, followsUpdates: followsUpdates, clock: clock, connectionProxy: connectionProxy)
        configuration.middlewares = middlewares
        return TelegramClient(configuration: configuration, taskExecutor: taskExecutor)
    }

    static func signIn(_ client: TelegramClient, phone: String) async throws -> Api.User {
        guard case .sentCode(let sent) = try await client.invoke(Api.functions.auth.sendCode(
            phoneNumber: phone, apiId: 1, apiHash: "test", settings: .codeSettings(.init())))
        else { throw HarnessFailure(description: "no code") }
        let code = String(repeating: String(phone.dropFirst(5).prefix(1)), count: 5)
        guard case .authorization(let authorization) = try await client.invoke(Api.functions.auth.signIn(
            phoneNumber: phone, phoneCodeHash: sent.phoneCodeHash, phoneCode: code))
        else { throw HarnessFailure(description: "sign-up required") }
        if await client.configuration.followsUpdates { try await followingUpdates(client) }
        return authorization.user
    }

    /// Returns once the client's `updates.getState` after a sign-in has answered. What another account sends
    /// before that is already in the state it gets, so it is never delivered as an update (as with Telegram): a
    /// test that waits for an event must not send first.
    static func followingUpdates(_ client: TelegramClient) async throws {
        for _ in 0..<3_000 {  // 30 s at most: a bound against a hang, not a timing
            if await client.updateBox != nil { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessFailure(description: "updates.getState unanswered after the sign-in")
    }
}

@Suite struct TelegramClientTests {
    /// Every framing × {plain, obfuscated2, MTProxy dd, MTProxy ee}: a login on DC 2 and a call, and for the
    /// proxies a login whose PHONE_MIGRATE_1 goes through the proxy to DC 1 (the DC id rides in the header).
    @Test(arguments: Fixture.transports.indices)
    func everyTransportLogsInAndCalls(index: Int) async throws {
        let (kind, wrapping) = Fixture.transports[index]
        guard wrapping != .proxy else { return }  // the plain-secret proxy is the dd/ee path without its framing rule
        let telegram = try await LocalTelegram.start(seed: 40 + UInt64(index), proxySecret: wrapping.serverSecret)
        let client = try telegram.client(transport: kind, obfuscation: wrapping.clientObfuscation)
        let phone = wrapping == .dd || wrapping == .ee ? "9996610002" : "9996620001"
        let user = try await LocalTelegram.signIn(client, phone: phone)
        guard case .user(let me) = user else { throw HarnessFailure(description: "\(user)") }
        #expect(me.phone == phone)
        guard case .nearestDc(let nearest) = try await client.invoke(Api.functions.help.getNearestDc()) else { return }
        #expect(nearest.thisDc == (phone == "9996610002" ? 1 : 2))
        await client.close()
        try await telegram.server.shutdown()
    }

    /// 10,000 calls pipelined (500 in flight) while the server drops, duplicates and reorders frames, rotates salts,
    /// sends every bad_msg_notification code, resets the session and cuts the connection mid-request. Every call
    /// ends exactly once with its own typed answer, and none of the 1,000 sends among them ran twice (a send the
    /// server ran before it lost the session is refused as RANDOM_ID_DUPLICATE when resent, never stored twice).
    @Test func tenThousandPipelinedCallsUnderEveryFault() async throws {
        var faults = FaultPlan()
        faults.dropOutgoing = 0.02
        faults.duplicateOutgoing = 0.02
        faults.reorderOutgoing = 0.05
        let telegram = try await LocalTelegram.start(seed: 36, faults: faults)
        var session = SessionConfiguration()
        // Frames dropped inside a live connection (not a TCP failure mode, but this test's fault) are found by
        // state queries; the server answers at once, so waiting 30 s on an acknowledged request is not needed.
        session.stateRequestAfter = 0.3
        session.answerTimeout = 2
        let client = try telegram.client(session: session)
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        let server = telegram.server
        let context = try #require(server.contexts[2])
        let total = 10_000, window = 500
        let states = client.states
        let reconnects = Task {
            var count = 0
            for await change in states where change.state == .ready { count += 1 }
            return count - 1
        }
        // The faults that act once, spread over the run by the count of answers (not by time, which a fast run
        // outpaces): round r after (r + 1) eighths of the calls are answered.
        func sabotage(round: Int) {
            for key in context.sessions.allKeys {
                switch round {
                    case 0: context.rotateSalts(authKeyID: key.authKeyID, now: Date().timeIntervalSince1970)
                    case 1: context.injectBadMessages([16, 17, 32, 33, 48], into: key)
                    case 2: context.resetSession(key)
                    case 3: server.faults.closeOnceOn = ["help.getNearestDc"]
                    default: context.injectBadMessages([48], into: key)
                }
            }
        }
        var rounds = 0
        var answered = 0, sends = 0
        try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            var next = 0
            func add(_ index: Int) {
                group.addTask {
                    switch index % 10 {
                        case 0:
                            let result: Api.Updates
                            do {
                                result = try await client.invoke(Api.functions.messages.sendMessage(
                                    peer: .inputPeerSelf, message: "n\(index)", randomId: Int64(index) + 1))
                            } catch MTProtoClientError.rpc(let error) where error.message == "RANDOM_ID_DUPLICATE" {
                                // The server lost the session (the reset) after running the send: the resend is
                                // refused by its random_id, so it ran once, and the caller is told so.
                                return (index, true)
                            }
                            guard case .updates(let updates) = result,
                                  case .updateMessageID(let id)? = updates.updates.first, id.randomId == Int64(index) + 1
                            else { throw HarnessFailure(description: "send \(index): \(result)") }
                            return (index, true)
                        case 1...4:
                            guard case .state = try await client.invoke(Api.functions.updates.getState()) else {
                                throw HarnessFailure(description: "getState \(index)")
                            }
                        default:
                            guard case .nearestDc(let nearest) = try await client.invoke(Api.functions.help.getNearestDc()),
                                  nearest.thisDc == 2 else { throw HarnessFailure(description: "getNearestDc \(index)") }
                    }
                    return (index, false)
                }
            }
            while next < min(window, total) { add(next); next += 1 }
            var seen = Set<Int>()
            while let (index, isSend) = try await group.next() {
                #expect(seen.insert(index).inserted)
                answered += 1
                if isSend { sends += 1 }
                if rounds < 6, answered == (rounds + 1) * total / 8 {
                    sabotage(round: rounds)
                    rounds += 1
                }
                if next < total { add(next); next += 1 }
            }
        }
        #expect(answered == total && sends == total / 10 && rounds == 6)
        // Saved Messages hold each send once.
        let history = try await client.invoke(Api.functions.messages.getHistory(
            peer: .inputPeerSelf, offsetId: 0, offsetDate: 0, addOffset: 0, limit: 1, maxId: 0, minId: 0, hash: 0))
        guard case .messagesSlice(let slice) = history else { throw HarnessFailure(description: "\(history)") }
        #expect(slice.count == Int32(total / 10))
        await client.close()
        // The connection cut happened and was survived by reconnecting.
        #expect(context.faults.closeOnceOn.isEmpty)
        #expect(await reconnects.value >= 1)
        try await telegram.server.shutdown()
    }

    @Test func loginMovesTheHomeDCAndDownloadsFollowFileMigrate() async throws {
        let telegram = try await LocalTelegram.start(seed: 31)
        let aliceStore = MemorySessionStore(), bobStore = MemorySessionStore()
        let alice = try telegram.client(store: aliceStore), bob = try telegram.client(store: bobStore)
        _ = try await LocalTelegram.signIn(alice, phone: "9996620001")
        let bobUser = try await LocalTelegram.signIn(bob, phone: "9996610002")
        // PHONE_MIGRATE_1 moved Bob home to DC 1, whose address came from help.getConfig; the store keeps it.
        #expect(await bob.homeDC == 1)
        let bobState = await bobStore.load()
        #expect(bobState.homeDC == 1 && bobState.permanentKeys.keys.sorted() == [1, 2])
        #expect(await alice.homeDC == 2)

        // Alice uploads 300 KB to her DC and sends it to Bob.
        let data = SeededRandom(seed: 5).bytes(300_000)
        let part = 128 * 1024
        for (index, start) in stride(from: 0, to: data.count, by: part).enumerated() {
            _ = try await alice.invoke(Api.functions.upload.saveFilePart(
                fileId: 9, filePart: Int32(index), bytes: Array(data[start..<min(start + part, data.count)])))
        }
        guard case .user(let bobInfo) = bobUser else { return }
        let small = Api.InputMedia.inputMediaUploadedDocument(.init(
            file: .inputFile(.init(id: 9, parts: 3, name: "a.bin", md5Checksum: Hex.encode(Hash.md5(data)))),
            mimeType: "application/octet-stream", attributes: []))
        // Alice's own access hash for Bob (hashes differ per account).
        let bobPeer = try await alice.inputPeer(for: try await alice.resolve(username: "bob_test"))
        guard case .inputPeerUser(let resolved) = bobPeer, resolved.userId == bobInfo.id else {
            throw HarnessFailure(description: "\(bobPeer)")
        }
        let sent = try await alice.invoke(Api.functions.messages.sendMedia(peer: bobPeer, media: small, message: "",
                                                                            randomId: 1))
        guard case .updates(let updates) = sent, case .updateNewMessage(let new)? = updates.updates.last,
              case .message(let message) = new.message, case .messageMediaDocument(let document)? = message.media,
              case .document(let file)? = document.document
        else { throw HarnessFailure(description: "\(sent)") }

        // Bob asks his home DC 1; FILE_MIGRATE_2 sends the call to DC 2 after an authorization transfer.
        let location = Api.InputFileLocation.inputDocumentFileLocation(.init(
            id: file.id, accessHash: file.accessHash, fileReference: file.fileReference, thumbSize: ""))
        var downloaded: [UInt8] = []
        for offset in stride(from: 0, to: data.count, by: 131_072) {
            guard case .file(let chunk) = try await bob.invoke(Api.functions.upload.getFile(
                location: location, offset: Int64(offset), limit: 131_072))
            else { return }
            downloaded += chunk.bytes
        }
        #expect(downloaded == data)
        #expect(await bob.connectedDCs == [1, 2])
        await alice.close()
        await bob.close()
        try await telegram.server.shutdown()
    }

    @Test func floodWaitsBelowTheThresholdAreWaitedOutAndAboveAreThrown() async throws {
        let telegram = try await LocalTelegram.start(seed: 32)
        let client = try telegram.client(floodWaitThreshold: 5)
        _ = try await client.invoke(Api.functions.help.getNearestDc())
        telegram.server.faults.errors["help.getNearestDc"] = RPCError(code: 420, message: "FLOOD_WAIT_30")
        await #expect {
            _ = try await client.invoke(Api.functions.help.getNearestDc())
        } throws: { error in
            guard case MTProtoClientError.rpc(let rpc) = error else { return false }
            return rpc.kind == .floodWait(seconds: 30)
        }
        // Served once: the client waits a second and its retry is answered. (Lifting a standing error by a timer
        // raced the request: when it reached the server after the timer, the call never waited.)
        telegram.server.faults.errors.removeAll()
        telegram.server.faults.errorsOnce["help.getNearestDc"] = RPCError(code: 420, message: "FLOOD_WAIT_1")
        let started = ContinuousClock.now
        _ = try await client.invoke(Api.functions.help.getNearestDc())
        #expect(ContinuousClock.now - started >= .milliseconds(900))
        #expect(telegram.server.contexts.values.contains { $0.faults.errorsOnce.isEmpty }, "the error was served")
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func cancellingTheCallingTaskEndsTheCall() async throws {
        let telegram = try await LocalTelegram.start(seed: 33)
        let client = try telegram.client()
        _ = try await client.invoke(Api.functions.help.getNearestDc())
        telegram.server.faults.delayOutgoing = 1
        telegram.server.faults.delaySeconds = 20
        let call = Task { try await client.invoke(Api.functions.help.getConfig()) }
        try await Task.sleep(for: .milliseconds(100))
        call.cancel()
        // Not cancelled, the call would be answered after the server's 20 s delay, and this would fail.
        await #expect {
            _ = try await call.value
        } throws: { error in
            if case MTProtoClientError.cancelled = error { return true }
            return false
        }
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func aConnectionResetMidRequestIsSurvived() async throws {
        let telegram = try await LocalTelegram.start(seed: 34)
        let client = try telegram.client()
        let states = client.states
        let watcher = Task {
            var seen: [MTProtoClient.State] = []
            for await change in states {
                seen.append(change.state)
                if seen.filter({ $0 == .ready }).count >= 2 { break }
            }
            return seen
        }
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        telegram.server.faults.closeOnceOn = ["messages.getDialogs"]
        let dialogs = try await client.invoke(Api.functions.messages.getDialogs(
            offsetDate: 0, offsetId: 0, offsetPeer: .inputPeerEmpty, limit: 10, hash: 0))
        guard case .dialogs = dialogs else { throw HarnessFailure(description: "\(dialogs)") }
        #expect(telegram.server.faults.closeOnceOn.isEmpty || telegram.server.contexts[2]?.faults.closeOnceOn.isEmpty == true)
        let seen = try await TestServerTests.within(10) { await watcher.value }
        #expect(Array(seen.prefix(3)) == [.connecting, .connected, .ready])
        #expect(seen.contains { if case .waitingForNetwork = $0 { true } else { false } })
        #expect(seen.last == .ready)
        await client.close()
        try await telegram.server.shutdown()
    }

    @Test func aClientReopenedFromSQLiteNeedsNoHandshake() async throws {
        let telegram = try await LocalTelegram.start(seed: 35)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tc-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let firstStore = try await SQLiteSessionStore.open(path: path)
        let first = try telegram.client(store: firstStore)
        _ = try await LocalTelegram.signIn(first, phone: "9996610002")
        await first.close()
        try await firstStore.close()
        let keys = telegram.server.contexts.mapValues(\.keys.count)
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)

        let store = try await SQLiteSessionStore.open(path: path)
        let reopened = try telegram.client(store: store)
        let users = try await reopened.invoke(Api.functions.users.getUsers(id: [.inputUserSelf]))
        guard case .user(let me)? = users.first else { throw HarnessFailure(description: "\(users)") }
        #expect(me.phone == "9996610002")
        #expect(await reopened.homeDC == 1)
        #expect(telegram.server.contexts.mapValues(\.keys.count) == keys)
        await reopened.close()
        try await store.close()
        try await telegram.server.shutdown()
    }
}
