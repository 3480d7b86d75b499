// `mtrelay`: the fault relay (`FaultRelay`) as a command, for interop scripts that put a hostile link between a
// client and `mtserver`. Prints one JSON line when listening, one line per connection as it ends on standard error,
// the totals as a JSON line on exit; stops on SIGINT/SIGTERM or after `--timeout` seconds.
import ArgumentParser
import Dispatch
import Foundation
import MTProtoServer

@main
struct MTRelay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mtrelay",
        abstract: "Relay TCP connections on 127.0.0.1 to a server, cutting, splitting, delaying and stalling them.",
        discussion: """
            When listening it prints {"port": N} on standard output. Each connection draws its cut point, pieces, \
            delays and stall from --seed and its number (from 1, in the order accepted), so a run replays. As a \
            connection ends it prints `connection N: client→server B bytes, server→client B bytes[, cut]` on \
            standard error; on exit {"connections": N, "cuts": N, "bytes": N} on standard output.

            Example (cut every 4–64 KiB, pieces of 1–4,096 bytes, up to 3 ms before each):
              mtrelay --to 127.0.0.1:4430 --seed 7 --plan cut=4096-65536,piece=1-4096,delay=0-0.003
            """)

    @Option(help: "The server to relay to, HOST:PORT.")
    var to: String

    @Option(help: "Port to listen on, on 127.0.0.1 (0 picks a free one).")
    var port: Int = 0

    @Option(help: "What to do to each connection: cut=MIN-MAX (bytes, both ways together), piece=MIN-MAX (bytes), delay=MIN-MAX (seconds per piece), stall=P:SECONDS (once per connection, with probability P), duplicate-first=BYTES (the client's first bytes sent twice).")
    var plan: String = ""

    @Option(help: "Seed of every draw.")
    var seed: UInt64 = 0

    @Option(help: "Stop after this many seconds (0: run until SIGINT/SIGTERM).")
    var timeout: Double = 0

    func validate() throws {
        do { _ = try RelayPlan(parsing: plan) } catch { throw ValidationError("\(error)") }
        guard Self.address(to) != nil else { throw ValidationError("--to must be HOST:PORT") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard timeout >= 0, timeout <= 86_400 else { throw ValidationError("--timeout must be 0...86400") }
    }

    static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65_535).contains(port), colon > text.startIndex else { return nil }
        return (String(text[..<colon]), port)
    }

    func run() async throws {
        guard let upstream = Self.address(to) else { throw ValidationError("--to must be HOST:PORT") }
        let relay = try await FaultRelay.start(listenPort: port, upstreamHost: upstream.host,
                                               upstreamPort: upstream.port, plan: try RelayPlan(parsing: plan),
                                               seed: seed) { report in
            let cut = report.cutTowardServer.map { $0 ? ", cut toward the server" : ", cut toward the client" } ?? ""
            FileHandle.standardError.write(Data(("connection \(report.connection): client→server "
                + "\(report.clientBytes) bytes, server→client \(report.serverBytes) bytes\(cut)\n").utf8))
        }
        FileHandle.standardOutput.write(Data("{\"port\": \(relay.port)}\n".utf8))
        await Self.stopSignal(timeout: timeout)
        await relay.shutdown()
        let counts = relay.counts
        FileHandle.standardOutput.write(Data(("{\"connections\": \(counts.connections), \"cuts\": \(counts.cuts), "
            + "\"bytes\": \(counts.bytes)}\n").utf8))
    }

    /// Returns on SIGINT, SIGTERM, or after `timeout` seconds when it is positive.
    static func stopSignal(timeout: Double) async {
        let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.yield() }
            source.resume()
            return source
        }
        if timeout > 0 { DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { stop.yield() } }
        for await _ in stopped { break }
        for source in sources { source.cancel() }
    }
}
