// Connections cut mid-stream by the fault relay between `TelegramClient` and the test Telegram: pipelined calls
// through a relay that resets every connection after 4–64 KiB at an arbitrary byte (either way) and passes bytes in
// pieces of 1–4,096 bytes, over several seeds; each call answered, each request run once by the server. A message
// sent with a random_id, cut after the server stored it, exists once. The relay's own plan parsing and replay.
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import Synchronization
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

/// How many times the server ran each method.
final class MethodCounts: Sendable {
    let counts = Mutex<[String: Int]>([:])

    func record(_ report: MTProtoTestServer.ConnectionReport) {
        if case .event(.handled(let method, _, _)) = report.kind { counts.withLock { $0[method, default: 0] += 1 } }
    }

    subscript(method: String) -> Int { counts.withLock { $0[method] ?? 0 } }
}

@Suite struct RelayCutTests {
    /// Cuts every 4–64 KiB, in pieces of 1–4,096 bytes.
    static let cutting: RelayPlan = {
        var plan = RelayPlan()
        plan.cutAfter = 4096...65_536
        plan.pieceBytes = 1...4096
        return plan
    }()

    /// A client of DC 2 that reaches it through `relay`.
    static func client(through relay: FaultRelay, session: SessionConfiguration = SessionConfiguration())
        throws -> TelegramClient
    {
        TelegramClient(configuration: .init(
            app: .init(apiID: 1, apiHash: "test"), dcs: [2: DCAddress(host: "127.0.0.1", port: relay.port)],
            homeDC: 2, serverKeys: [try Fixture.rsaKey().publicKey], store: MemorySessionStore(),
            requestTimeout: .seconds(30), reconnect: .init(maxAttempts: 8), session: session))
    }

    /// Makes `total` calls, `window` at a time; how many returned true.
    static func pipelined(_ total: Int, window: Int, _ call: @escaping @Sendable () async throws -> Bool)
        async throws -> Int
    {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            var started = 0, answered = 0
            func start() {
                group.addTask(operation: call)
                started += 1
            }
            while started < min(window, total) { start() }
            while let right = try await group.next() {
                if right { answered += 1 }
                if started < total { start() }
            }
            return answered
        }
    }

    /// help.getNearestDc, answered as DC 2.
    static func nearestDcIs2(_ client: TelegramClient) async throws -> Bool {
        if case .nearestDc(let nearest) = try await client.invoke(Api.functions.help.getNearestDc()) {
            return nearest.thisDc == 2
        }
        return false
    }

    /// 3,000 calls, 100 in flight, through a relay that cuts every connection: every call answered with its own
    /// result, the server ran help.getNearestDc exactly 3,000 times, and the relay did cut.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func pipelinedCallsSurviveCutsMidStream(seed: UInt64) async throws {
        let counts = MethodCounts()
        let telegram = try await LocalTelegram.start(seed: 570 + seed, onEvent: counts.record)
        let relay = try await FaultRelay.start(upstreamPort: telegram.server.ports[2] ?? 0, plan: Self.cutting,
                                               seed: seed)
        let client = try Self.client(through: relay)
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        let total = 3_000
        let answered = try await Self.pipelined(total, window: 100) { try await Self.nearestDcIs2(client) }
        #expect(answered == total)
        #expect(counts["help.getNearestDc"] == total, "each request run once")
        #expect(relay.counts.cuts >= 2, "the relay cut \(relay.counts.cuts) connections")
        await client.close()
        await relay.shutdown()
        try await telegram.server.shutdown()
    }

    /// 500 messages with random_ids, 50 in flight, through a cutting relay: each stored once, in Saved Messages.
    @Test func sentMessagesAreStoredOnceAcrossCuts() async throws {
        let counts = MethodCounts()
        let telegram = try await LocalTelegram.start(seed: 580, onEvent: counts.record)
        let relay = try await FaultRelay.start(upstreamPort: telegram.server.ports[2] ?? 0,
                                               plan: try RelayPlan(parsing: "cut=4096-16384,piece=1-4096"), seed: 9)
        let client = try Self.client(through: relay)
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        let total = 500
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<total {
                if index >= 50 { try await group.next() }
                group.addTask {
                    _ = try await client.invoke(Api.functions.messages.sendMessage(
                        peer: .inputPeerSelf, message: "cut \(index)", randomId: Int64(index + 1)))
                }
            }
            try await group.waitForAll()
        }
        #expect(counts["messages.sendMessage"] == total, "each send run once")
        var texts: [String] = []
        var offset: Int32 = 0
        for _ in 0..<10 {
            let page = try await client.invoke(Api.functions.messages.getHistory(
                peer: .inputPeerSelf, offsetId: offset, offsetDate: 0, addOffset: 0, limit: 100, maxId: 0, minId: 0,
                hash: 0))
            let messages: [Api.Message]
            switch page {
            case .messages(let all): messages = all.messages
            case .messagesSlice(let slice): messages = slice.messages
            default: messages = []
            }
            for case .message(let message) in messages { texts.append(message.message) }
            guard case .message(let last)? = messages.last else { break }
            offset = last.id
        }
        #expect(texts.count == total)
        #expect(Set(texts).count == total)
        #expect(relay.counts.cuts >= 2, "the relay cut \(relay.counts.cuts) connections")
        await client.close()
        await relay.shutdown()
        try await telegram.server.shutdown()
    }

    /// 600 sends, 300 in flight, through a relay that cuts every 4–16 KiB: re-sending all 300 at once would fill
    /// each new connection before an answer got back, so none would ever be answered; a window of re-sends that
    /// opens with each answer gets every one answered, each run once.
    @Test func aBacklogLargerThanAConnectionCarriesDrains() async throws {
        let counts = MethodCounts()
        let telegram = try await LocalTelegram.start(seed: 582, onEvent: counts.record)
        let relay = try await FaultRelay.start(upstreamPort: telegram.server.ports[2] ?? 0,
                                               plan: try RelayPlan(parsing: "cut=4096-16384,piece=1-4096"), seed: 9)
        let client = try Self.client(through: relay)
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        let answered = try await Self.pipelined(600, window: 300) {
            let sent = try await client.invoke(Api.functions.messages.sendMessage(
                peer: .inputPeerSelf, message: "backlog", randomId: Int64.random(in: 1...Int64.max)))
            if case .updateShortSentMessage = sent { return true }
            if case .updates = sent { return true }
            return false
        }
        #expect(answered == 600)
        #expect(counts["messages.sendMessage"] == 600, "each send run once")
        #expect(relay.counts.cuts >= 10, "the relay cut \(relay.counts)")
        await client.close()
        await relay.shutdown()
        try await telegram.server.shutdown()
    }

    /// The server closes the connection after storing the message and before answering (the cut between the two):
    /// the client's call still returns the message, which exists once.
    @Test func aSendCutBeforeItsAnswerIsStoredOnce() async throws {
        var faults = FaultPlan()
        faults.closeOnceOn = ["messages.sendMessage"]
        let counts = MethodCounts()
        let telegram = try await LocalTelegram.start(seed: 581, faults: faults, onEvent: counts.record)
        let client = try telegram.client()
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        let sent = try await client.invoke(Api.functions.messages.sendMessage(
            peer: .inputPeerSelf, message: "once", randomId: 77))
        #expect(telegram.server.contexts[2]?.faults.closeOnceOn.isEmpty == true, "the connection was cut")
        switch sent {
        case .updates, .updateShortSentMessage: break
        default: Issue.record("not the sent message: \(sent)")
        }
        #expect(counts["messages.sendMessage"] == 1)
        let page = try await client.invoke(Api.functions.messages.getHistory(
            peer: .inputPeerSelf, offsetId: 0, offsetDate: 0, addOffset: 0, limit: 10, maxId: 0, minId: 0, hash: 0))
        guard case .messages(let messages) = page else {
            Issue.record("\(page)")
            return
        }
        #expect(messages.messages.count == 1)
        await client.close()
        try await telegram.server.shutdown()
    }
}

@Suite struct RelayPlanTests {
    @Test func specIsRead() throws {
        let plan = try RelayPlan(parsing: "cut=4096-65536, piece=1-4096,delay=0-0.003,stall=0.5:2,duplicate-first=64")
        #expect(plan.cutAfter == 4096...65536 && plan.pieceBytes == 1...4096 && plan.delay == 0...0.003)
        #expect(plan.stallProbability == 0.5 && plan.stallSeconds == 2 && plan.duplicateFirstBytes == 64)
        #expect(try RelayPlan(parsing: "cut=100").cutAfter == 100...100)
    }

    @Test(arguments: ["cut", "cut=0-10", "cut=10-5", "piece=a-b", "delay=0-61", "stall=2:1", "stall=0.5",
                      "duplicate-first=-1", "flood=1"])
    func badSpecsAreRefused(spec: String) {
        #expect(throws: RelayPlan.SpecError.self) { try RelayPlan(parsing: spec) }
    }

    /// The same seed cuts each connection at the same byte.
    @Test func cutsReplayFromTheSeed() async throws {
        func cuts(seed: UInt64) async throws -> [Int] {
            let telegram = try await LocalTelegram.start(seed: 590)
            let relay = try await FaultRelay.start(upstreamPort: telegram.server.ports[2] ?? 0,
                                                   plan: try RelayPlan(parsing: "cut=3000-6000,piece=1-64"), seed: seed)
            let client = try RelayCutTests.client(through: relay)
            for _ in 0..<100 { _ = try await client.invoke(Api.functions.help.getNearestDc()) }
            await client.close()
            await relay.shutdown()
            try await telegram.server.shutdown()
            // Connections the client closed itself end without a cut; those cut are cut where the seed says.
            return relay.reports.filter { $0.cutTowardServer != nil }.sorted { $0.connection < $1.connection }
                .map { $0.clientBytes + $0.serverBytes }
        }
        let first = try await cuts(seed: 4)
        #expect(first.count >= 2)
        #expect(try await cuts(seed: 4).prefix(2) == first.prefix(2))
    }
}
