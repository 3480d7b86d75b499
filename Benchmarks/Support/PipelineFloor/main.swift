// What a pipelined call costs in Swift concurrency alone, with no protocol and no socket: the shape of
// `mtcall --repeat` (a child task per call, 100 in flight, all preferring one NIO event loop) calling through one or
// two actors (`TelegramClient` → `MTProtoClient`), each call registering a cancellation handler and suspending on
// an unsafe continuation, a flush task per batch, and the answers resumed by a task the loop starts later (as the
// connection's reader does). Prints calls per second and CPU time (all threads) per call:
//   swift build -c release --product PipelineFloor
//   .build/release/PipelineFloor [calls] [one|two]
import Foundation
import MTProtoClient
import NIOCore
import NIOPosix

/// Stands for `MTProtoClient` (on the client's own executor type): a call table keyed by token and by request, a
/// batch flushed once per turn.
actor Connection {
    let executor: EventLoopTaskExecutor
    var calls: [UInt64: UnsafeContinuation<[UInt8], any Error>] = [:]
    var tokenByRequest: [Int64: UInt64] = [:]
    var pending: [Int64] = []
    var next: UInt64 = 0
    var flushScheduled = false

    init(_ executor: EventLoopTaskExecutor) { self.executor = executor }

    func invoke(_ body: [UInt8]) async throws -> [UInt8] {
        next += 1
        let token = next, request = Int64(token) << 2
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                calls[token] = continuation
                tokenByRequest[request] = token
                pending.append(request)
                if !flushScheduled {
                    flushScheduled = true
                    Task(executorPreference: executor) { await self.flush() }
                }
            }
        } onCancel: {}
    }

    func flush() {
        flushScheduled = false
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        // The "server" answers the batch on a later turn of the loop.
        executor.eventLoop.execute { Task(executorPreference: self.executor) { await self.answer(batch) } }
    }

    func answer(_ batch: [Int64]) {
        for request in batch {
            guard let token = tokenByRequest.removeValue(forKey: request),
                  let continuation = calls.removeValue(forKey: token) else { continue }
            continuation.resume(returning: [1, 2, 3, 4])
        }
    }
}

/// Stands for `TelegramClient` in front of it.
actor Router {
    let connection: Connection
    init(_ connection: Connection) { self.connection = connection }
    func invoke(_ body: [UInt8]) async throws -> [UInt8] { try await connection.invoke(body) }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

nonisolated func pipeline(calls: Int, actors: Int, executor: EventLoopTaskExecutor) async throws {
    let connection = Connection(executor)
    let router = Router(connection)
    let body: [UInt8] = [0, 1, 2, 3, 4, 5, 6, 7]
    try await withTaskExecutorPreference(executor, isolation: nil) {
        try await withThrowingTaskGroup(of: [UInt8].self) { group in
            var started = 0
            func add() {
                if actors == 2 { group.addTask { try await router.invoke(body) } }
                else { group.addTask { try await connection.invoke(body) } }
                started += 1
            }
            while started < min(100, calls) { add() }
            while try await group.next() != nil { if started < calls { add() } }
        }
    }
}

let arguments = CommandLine.arguments.dropFirst()
let calls = arguments.first.flatMap { Int($0) } ?? 200_000
let actors = arguments.dropFirst().first == "one" ? 1 : 2
let executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
let cpu0 = cpuSeconds(), start = ContinuousClock.now
try await Task.detached { try await pipeline(calls: calls, actors: actors, executor: executor) }.value
let seconds = (ContinuousClock.now - start) / .seconds(1), cpu = cpuSeconds() - cpu0
print(String(format: "%d calls through %d actor(s): %.0f calls/s, %.2f µs CPU per call", calls, actors,
             Double(calls) / seconds, cpu * 1e6 / Double(calls)))
