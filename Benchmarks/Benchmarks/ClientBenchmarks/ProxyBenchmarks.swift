// Pipelined calls through a real SOCKS5 proxy (microsocks, from Debian's package, with a user and password) against
// the same calls made directly, in one run on one server: the relay is the only difference. Target: through the
// proxy ≥ 0.8× the direct calls per second.
import Benchmark
import BenchmarkSupport
import Foundation
import MTProtoClient
import MTProtoServer
import MTProtoTransport
import TelegramApi
import TestTelegram
#if canImport(Glibc)
import Glibc
#endif

let pipelinedCalls = 20_000
let callsInFlight = 100

/// `pipelinedCalls` `help.getNearestDc` calls, `callsInFlight` at a time, on one connected client.
func pipeline(_ client: MTProtoClient) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var sent = 0
        func call() {
            group.addTask { _ = try await client.invoke(Api.functions.help.getNearestDc()) }
            sent += 1
        }
        for _ in 0..<callsInFlight { call() }
        while try await group.next() != nil {
            if sent < pipelinedCalls { call() }
        }
    }
}

/// 127.0.0.1:`port` as a socket address.
func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return address
}

/// A loopback TCP port nobody listens on right now (bound to port 0, read back, closed).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchmarkFailure(description: "socket: errno \(errno)") }
    defer { close(fd) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
        }
    }
    guard bound else { throw BenchmarkFailure(description: "bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// microsocks on a free loopback port with a user and password; `stop()` ends it.
final class Microsocks: Sendable {
    let process: Process
    let port: Int

    init() async throws {
        port = try freeLoopbackPort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/microsocks")
        process.arguments = ["-i", "127.0.0.1", "-p", "\(port)", "-u", "bench", "-P", "bench"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BenchmarkFailure(description: "cannot start /usr/bin/microsocks (apt-get install microsocks): \(error)")
        }
        // Ready once it accepts a connection; at most 5 s.
        for _ in 0..<100 {
            if Self.accepts(port: port) { return }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        stop()
        throw BenchmarkFailure(description: "microsocks did not start listening on 127.0.0.1:\(port)")
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    var configuration: ProxyConfiguration {
        ProxyConfiguration(kind: .socks5, host: "127.0.0.1", port: port, username: "bench", password: "bench")
    }

    /// SIGKILL: the child inherits this process's signal mask, in which SIGTERM is blocked (seen in
    /// /proc/PID/status), so `terminate()` would leave it running and `waitUntilExit()` waiting.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// One client straight to the server and one through microsocks, both connected for the whole run; every iteration
/// times a pipeline on each, back to back, alternating which goes first, so the machine's load shifts both alike.
let proxyBenchmarks: @Sendable () -> Void = {
    let directRate = BenchmarkMetric.custom("direct, calls/s")
    let proxiedRate = BenchmarkMetric.custom("through microsocks, calls/s")
    let ratio = BenchmarkMetric.custom("through microsocks ÷ direct ×1000")
    Benchmark("pipelined help.getNearestDc ×\(pipelinedCalls), \(callsInFlight) in flight, through microsocks "
              + "(SOCKS5, user and password) against direct, interleaved",
              configuration: .init(metrics: [directRate, proxiedRate, ratio], warmupIterations: 1,
                                   maxDuration: .seconds(60), maxIterations: 20)) { benchmark in
        let key = try testKey()
        let server = try await MTProtoTestServer.start(.init(rsaKeys: [key], handlers: TestTelegram.handlers()))
        let socks = try await Microsocks()
        func client(through proxy: ProxyConfiguration?) async throws -> MTProtoClient {
            let client = MTProtoClient(configuration: .init(
                host: "127.0.0.1", port: server.port,
                connection: .init(transport: TransportConfiguration(kind: .intermediate), serverKeys: [key.publicKey],
                                  dcID: 2),
                proxy: proxy), taskExecutor: EventLoopTaskExecutor(clientLoop.next()))
            try await client.connect()
            return client
        }
        let direct = try await client(through: nil), proxied = try await client(through: socks.configuration)
        let clock = ContinuousClock()
        var proxiedFirst = false
        for _ in benchmark.scaledIterations {
            proxiedFirst.toggle()
            let directTime, proxiedTime: Duration
            if proxiedFirst {
                proxiedTime = try await clock.measure { try await pipeline(proxied) }
                directTime = try await clock.measure { try await pipeline(direct) }
            } else {
                directTime = try await clock.measure { try await pipeline(direct) }
                proxiedTime = try await clock.measure { try await pipeline(proxied) }
            }
            benchmark.measurement(directRate, Int(Double(pipelinedCalls) / (directTime / .seconds(1))))
            benchmark.measurement(proxiedRate, Int(Double(pipelinedCalls) / (proxiedTime / .seconds(1))))
            benchmark.measurement(ratio, Int(1000 * (directTime / proxiedTime)))
        }
        await direct.close()
        await proxied.close()
        socks.stop()
        try await server.shutdown()
    }
}
