// The test Telegram's server role: handshakes per second and RPCs per second over loopback TCP (MTProtoClient against
// MTProtoTestServer, one process), each beside the same work with the same sans-IO client and server connections
// passing bytes in memory, so the ratio is what sockets, NIO and the client actor cost. And the memory an idle,
// logged-in session holds on the server, with 1,000 of them open.
import Benchmark
import BenchmarkSupport
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TLRuntime
import TelegramApi
import TestTelegram

/// A client and a server connection joined in memory: bytes go straight from one to the other.
struct MemoryPair {
    var client: ClientConnection
    var server: ServerConnection
    let now = Date().timeIntervalSince1970

    init(context: ServerContext, key: RSAPrivateKey) throws {
        client = try ClientConnection(
            configuration: .init(transport: TransportConfiguration(kind: .intermediate), serverKeys: [key.publicKey], dcID: 2),
            random: SystemRandom(), now: now)
        server = ServerConnection(context: context, now: now)
        let events = try pump(client.start(now: now).bytes)
        guard events.contains(where: { if case .ready = $0 { true } else { false } }) else {
            throw BenchmarkFailure(description: "no key: \(events)")
        }
    }

    /// Delivers client bytes and everything that follows until both sides are quiet; returns the client's events.
    mutating func pump(_ bytes: [UInt8]) throws -> [ClientConnection.Event] {
        var toServer = bytes
        var events: [ClientConnection.Event] = []
        for _ in 0..<64 where !toServer.isEmpty {
            let output = server.receive(toServer, now: now)
            if let close = output.close { throw BenchmarkFailure(description: "server closed: \(close)") }
            let (back, more) = try client.receive(output.outbound, now: now)
            events += more
            toServer = back + (try client.flush(now: now))
        }
        return events
    }

    /// Sends `bodies` and returns the results in request order.
    mutating func call(_ bodies: [[UInt8]]) throws -> [[UInt8]] {
        var ids: [RequestID] = []
        for body in bodies {
            guard let id = try client.send(body) else { throw BenchmarkFailure(description: "not ready") }
            ids.append(id)
        }
        var results: [RequestID: [UInt8]] = [:]
        for event in try pump(try client.flush(now: now)) {
            switch event {
                case .session(.result(let id, let bytes)): results[id] = Array(bytes)
                case .session(.rpcError(_, let error)): throw BenchmarkFailure(description: "\(error)")
                default: break
            }
        }
        return try ids.map { id in
            guard let result = results[id] else { throw BenchmarkFailure(description: "unanswered") }
            return result
        }
    }
}

func serverContext(key: RSAPrivateKey, handlers: RPCHandlers, limits: ServerLimits = ServerLimits()) throws -> ServerContext {
    ServerContext(exchange: try .init(keys: [key], dcID: 2), transport: ServerTransportConfiguration(),
                  handlers: handlers, endpoint: ServerEndpoint(dcID: 2, host: "127.0.0.1", port: 0), limits: limits)
}

let nearestDc = Api.functions.help.getNearestDc().1.bytes
/// RPCs per iteration of the RPC benchmarks (their throughput is batches per second).
let batch = 100

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], warmupIterations: 2,
                                           maxDuration: .seconds(5), maxIterations: 1_000)
    // A missing fixture fails every benchmark with the loader's error.
    let loaded = Result { try testKey() }

    Benchmark("handshake: client and server connections in memory (baseline)") { benchmark in
        let key = try loaded.get()
        let context = try serverContext(key: key, handlers: TestTelegram.handlers())
        for _ in benchmark.scaledIterations { blackHole(try MemoryPair(context: context, key: key)) }
    }

    Benchmark("handshake: MTProtoClient.connect to MTProtoTestServer over loopback TCP") { benchmark in
        let key = try loaded.get()
        let server = try await MTProtoTestServer.start(.init(rsaKeys: [key], handlers: TestTelegram.handlers()))
        let configuration = MTProtoClient.Configuration(
            host: "127.0.0.1", port: server.port,
            connection: .init(transport: TransportConfiguration(kind: .intermediate), serverKeys: [key.publicKey], dcID: 2))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let client = MTProtoClient(configuration: configuration)
            try await client.connect()
            await client.close()
        }
        benchmark.stopMeasurement()
        try await server.shutdown()
    }

    Benchmark("\(batch) x help.getNearestDc: connections in memory (baseline)") { benchmark in
        let key = try loaded.get()
        let context = try serverContext(key: key, handlers: TestTelegram.handlers())
        var pair = try MemoryPair(context: context, key: key)
        let bodies = [[UInt8]](repeating: nearestDc, count: batch)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try pair.call(bodies)) }
    }

    Benchmark("\(batch) x help.getNearestDc in flight: MTProtoClient over loopback TCP") { benchmark in
        let key = try loaded.get()
        let server = try await MTProtoTestServer.start(.init(rsaKeys: [key], handlers: TestTelegram.handlers()))
        let client = MTProtoClient(configuration: .init(
            host: "127.0.0.1", port: server.port,
            connection: .init(transport: TransportConfiguration(kind: .intermediate), serverKeys: [key.publicKey], dcID: 2)))
        try await client.connect()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<batch {
                    group.addTask { blackHole(try await client.invoke(Api.functions.help.getNearestDc())) }
                }
                try await group.waitForAll()
            }
        }
        benchmark.stopMeasurement()
        await client.close()
        try await server.shutdown()
    }

    // Each session: a key, a session on it, a logged-in user; then the client goes away and the server keeps them.
    Benchmark("memory per idle logged-in session, 1,000 open",
              configuration: .init(metrics: [.custom("bytes per session")], warmupIterations: 0, maxIterations: 1)) { benchmark in
        let key = try loaded.get()
        let service = TestTelegramService(random: SystemRandom())
        var limits = ServerLimits()
        limits.maxAuthKeys = 2_000
        limits.maxSessions = 2_000
        let context = try serverContext(key: key, handlers: service.handlers(), limits: limits)
        let count = 1_000
        var pairs: [MemoryPair] = []
        pairs.reserveCapacity(count)
        // Warm what every session shares (registries, caches) before the baseline.
        var warm = try MemoryPair(context: context, key: key)
        blackHole(try warm.call([nearestDc]))
        let before = residentBytes()
        for index in 0..<count {
            let phone = "99966" + "2" + String(format: "%04d", index)
            try service.addUser(phone: phone, firstName: "U\(index)")
            var pair = try MemoryPair(context: context, key: key)
            let sendCode = Api.functions.auth.sendCode(phoneNumber: phone, apiId: 1, apiHash: "x", settings: .codeSettings(.init()))
            let sent = try sendCode.2.parse(bytes: try pair.call([sendCode.1.bytes])[0])
            guard case .sentCode(let code) = sent else { throw BenchmarkFailure(description: "\(sent)") }
            _ = try pair.call([Api.functions.auth.signIn(phoneNumber: phone, phoneCodeHash: code.phoneCodeHash,
                                                         phoneCode: "22222").1.bytes])
            pairs.append(pair)
        }
        pairs.removeAll()  // the clients and connections go; the server's keys, sessions and users stay
        let after = residentBytes()
        guard context.sessions.count == count + 1 else { throw BenchmarkFailure(description: "sessions: \(context.sessions.count)") }
        benchmark.measurement(.custom("bytes per session"), (after - before) / count)
    }
}
