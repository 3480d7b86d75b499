// `mtcall --connections N`: a load of N clients on one server, each with its own connection and key, making the
// call once a second for --load-seconds, every call's latency kept; what the test Telegram's concurrency and
// memory are measured against (Benchmarks/connection_load.py).
import Foundation
import Logging
import TelegramClient

extension MTCall {
    /// The clients opened at once: each opening is a key exchange (RSA and 2048-bit DH on both sides).
    static let openingAtOnce = 16

    /// Opens `count` clients, makes the call `body` on each once a second for `duration` seconds (spread over each
    /// second by the client's index), closes them and prints one JSON line: calls, answered, failed, the latency
    /// percentiles in milliseconds and the seconds the opening took.
    func runConnections(_ count: Int, seconds duration: Int, body: [UInt8], logger: Logger) async throws {
        let openStarted = ContinuousClock.now
        var clients: [TelegramClient] = []
        clients.reserveCapacity(count)
        do {
            try await withThrowingTaskGroup(of: TelegramClient.self) { group in
                var started = 0
                func open() {
                    started += 1
                    group.addTask {
                        let (client, _) = try await makeClient(logger: logger, followsUpdates: false)
                        do {
                            _ = try await client.invokeInPlace(raw: body)
                        } catch {
                            await client.close()
                            throw error
                        }
                        return client
                    }
                }
                while started < min(Self.openingAtOnce, count) { open() }
                while let client = try await group.next() {
                    clients.append(client)
                    if started < count { open() }
                }
            }
        } catch {
            for client in clients { await client.close() }
            throw error
        }
        let opening = (ContinuousClock.now - openStarted) / .seconds(1)
        FileHandle.standardError.write(Data(String(format: "%d connections open in %.1f s\n", count, opening).utf8))

        // Every client's latencies in ms, nil for a call that failed.
        let start = ContinuousClock.now + .milliseconds(200)
        let latencies = await withTaskGroup(of: [Double?].self) { group in
            for (index, client) in clients.enumerated() {
                let offset = Duration.milliseconds(1_000 * index / count)
                group.addTask {
                    var kept: [Double?] = []
                    kept.reserveCapacity(duration)
                    for second in 0..<duration {
                        try? await Task.sleep(until: start + .seconds(second) + offset, clock: .continuous)
                        let sent = ContinuousClock.now
                        do {
                            _ = try await client.invokeInPlace(raw: body)
                            kept.append((ContinuousClock.now - sent) / .milliseconds(1))
                        } catch {
                            kept.append(nil)
                        }
                    }
                    return kept
                }
            }
            var all: [Double?] = []
            for await kept in group { all += kept }
            return all
        }
        for client in clients { await client.close() }

        let answered = latencies.compactMap { $0 }.sorted()
        func percentile(_ p: Double) -> Double {
            answered.isEmpty ? 0 : answered[min(answered.count - 1, Int((Double(answered.count) * p).rounded(.up)) - 1)]
        }
        let line = String(format: #"{"connections": %d, "seconds": %d, "calls": %d, "answered": %d, "failed": %d, "#
                          + #""p50_ms": %.2f, "p99_ms": %.2f, "max_ms": %.2f, "open_seconds": %.2f}"#,
                          count, duration, latencies.count, answered.count, latencies.count - answered.count,
                          percentile(0.5), percentile(0.99), answered.last ?? 0, opening)
        print(line)
    }
}
