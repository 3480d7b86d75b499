// Real proxy servers from Debian's packages (microsocks for SOCKS5, tinyproxy for HTTP CONNECT; .ci/run installs
// both), each started with its own configuration on a free loopback port and stopped by the test that started it.
import Foundation
import MTProtoTransport

final class RealProxy: @unchecked Sendable {
    let configuration: ProxyConfiguration
    private let process: Process
    private let directory: URL

    static let username = "alice"
    static let password = "s3cret-proxy"

    /// Starts the proxy of `kind` requiring `username`/`password`, and waits (at most 20 s) until it accepts.
    static func start(_ kind: ProxyConfiguration.Kind) async throws -> RealProxy {
        let port = try freeLoopbackPort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        switch kind {
            case .socks5:
                process.executableURL = try binary("microsocks")
                process.arguments = ["-i", "127.0.0.1", "-p", "\(port)", "-u", username, "-P", password]
            case .httpConnect:
                let config = directory.appendingPathComponent("tinyproxy.conf")
                try """
                    Port \(port)
                    Listen 127.0.0.1
                    Timeout 60
                    MaxClients 64
                    LogLevel Connect
                    LogFile "\(directory.appendingPathComponent("tinyproxy.log").path)"
                    BasicAuth \(username) \(password)
                    """.write(to: config, atomically: true, encoding: .utf8)
                process.executableURL = try binary("tinyproxy")
                process.arguments = ["-d", "-c", config.path]
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let proxy = RealProxy(configuration: ProxyConfiguration(kind: kind, host: "127.0.0.1", port: port,
                                                                username: username, password: password),
                              process: process, directory: directory)
        let deadline = ContinuousClock.now + .seconds(20)
        while !accepts(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                await proxy.stop()
                throw HarnessFailure(description: "\(kind) proxy did not start listening on 127.0.0.1:\(port)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return proxy
    }

    /// Runs `body` with a proxy of `kind` started for it, and stops the proxy afterwards, also when `body` throws.
    static func with<T>(_ kind: ProxyConfiguration.Kind, _ body: (RealProxy) async throws -> T) async throws -> T {
        let proxy = try await start(kind)
        do {
            let result = try await body(proxy)
            await proxy.stop()
            return result
        } catch {
            await proxy.stop()
            throw error
        }
    }

    private init(configuration: ProxyConfiguration, process: Process, directory: URL) {
        self.configuration = configuration
        self.process = process
        self.directory = directory
    }

    /// The same proxy with another password.
    func withPassword(_ password: String) -> ProxyConfiguration {
        var configuration = configuration
        configuration.password = password
        return configuration
    }

    /// tinyproxy's log of connections (empty for microsocks, which keeps none).
    var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("tinyproxy.log"), encoding: .utf8)) ?? ""
    }

    /// SIGTERM, then SIGKILL if the proxy still runs after 5 s; waits without blocking a thread of the
    /// cooperative pool (`waitUntilExit` would, and the tests running beside this one would stall).
    func stop() async {
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    private static func binary(_ name: String) throws -> URL {
        for directory in ["/usr/bin", "/usr/sbin", "/usr/local/bin"] {
            let url = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw HarnessFailure(description: "\(name) is not installed (.ci/run installs it: apt-get install \(name))")
    }

    /// A port the kernel just gave out and took back (bind to 0, read it, close).
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessFailure(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw HarnessFailure(description: "bind/getsockname failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
