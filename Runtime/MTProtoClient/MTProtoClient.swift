// The async/await client of one DC over SwiftNIO: a TCP connection driven by `ClientConnection`, many calls in flight
// at once, each matched to its answer, and reconnects with jittered exponential backoff that carry the session (its
// id, pending requests, salts) over to the new connection. With temporary keys (core.telegram.org/api/pfs) it also
// replaces the key before it expires (calls wait while the old one drains, then a new key is made and bound) and
// makes a new one when the server no longer knows it (−404), sending the calls in flight again under it; when the
// server no longer knows the permanent key (`.permanentKeyUnknown`), both keys are made anew. DC routing
// and migrations build on it (`TelegramClient`).
import Foundation
import MTProto
import MTProtoCrypto
import MTProtoTransport
import NIOCore
import NIOPosix
import Synchronization
import TLRuntime

/// Why a call or the connection failed.
public enum MTProtoClientError: Error, Sendable, CustomStringConvertible {
    /// A call was made on a client that is not connected and will not reconnect.
    case notConnected
    /// The connection ended for good (after the reconnect attempts, or with an error reconnecting cannot fix).
    case connection(ClientConnectionError)
    /// The session failed in a way it cannot recover from (see `SessionError`).
    case session(SessionError)
    /// The server answered with `rpc_error`.
    case rpc(RPCError)
    /// The session gave up on the request (see `RequestFailure`).
    case request(RequestFailure)
    /// The answer did not parse as the call's result type.
    case decoding(TLDecodingError)
    /// No answer came within the call's timeout (`requestTimeout` unless the call named one).
    case timeout
    /// The calling task was cancelled; the session told the server to drop the answer (`rpc_drop_answer`).
    case cancelled
    /// The connection closed before the answer came.
    case closed
    /// The SOCKS5 or HTTP CONNECT proxy refused or failed the tunnel (the error names its reply).
    case proxy(ProxyError)

    /// A one-line account of the error.
    public var description: String {
        switch self {
            case .notConnected: "not connected"
            case .connection(let error): "connection: \(error)"
            case .session(let error): "session: \(error)"
            case .rpc(let error): "\(error)"
            case .request(let failure): "request failed: \(failure)"
            case .decoding(let error): "bad answer: \(error)"
            case .timeout: "timed out"
            case .cancelled: "cancelled"
            case .closed: "connection closed"
            case .proxy(let error): "\(error)"
        }
    }
}

/// One MTProto connection to one DC over SwiftNIO: connects, makes or loads the auth key, runs calls over the
/// encrypted session, and reconnects with backoff, carrying the session and its pending calls to the new
/// connection.
///
/// Calls come from any task; many may be in flight at once. `TelegramClient` keeps one per DC.
public actor MTProtoClient {
    /// Where to connect and how: the address, the connection's settings, timeouts, the store and the reconnect policy.
    public struct Configuration: Sendable {
        /// The DC's host name or IP address.
        public var host: String
        /// The DC's TCP port.
        public var port: Int
        /// The connection, including `temporaryKeys` (nil: every session runs on the permanent key).
        public var connection: ClientConnection.Configuration
        /// How long `invoke` waits for an answer unless the call names its own timeout.
        public var requestTimeout: Duration
        /// Where the keys are kept: loaded on `connect` (a stored key skips the exchange), saved when they change,
        /// unless `keysChanged` takes them.
        public var store: (any AuthKeyStore)?
        /// `FLOOD_WAIT_X` (and `FLOOD_PREMIUM_WAIT_X`, `SLOWMODE_WAIT_X`) up to this many seconds is waited out and
        /// the call sent again (at most `maxFloodWaitRetries` times); longer waits are thrown as `.rpc`.
        public var floodWaitThreshold: Int
        /// How many times one call waits out a flood wait and is sent again before the error is thrown (3 by default).
        public var maxFloodWaitRetries: Int
        /// Bytes put in front of the first request on every connection: `TelegramClient` puts
        /// `invokeWithLayer` + `initConnection` there (both end with the wrapped query, so a prefix suffices).
        public var firstRequestPrefix: [UInt8]
        /// When and how often a lost connection is opened again.
        public var reconnect: ReconnectPolicy
        /// Called with the DC's keys whenever they change (a permanent key made, a temporary key bound or
        /// replaced), before waiting calls go out on them; `TelegramClient` keeps them this way. When nil they go
        /// to `store`.
        public var keysChanged: (@Sendable (DCKeys) async throws -> Void)?
        /// The local clock, Unix seconds. Tests pass one they can advance.
        public var clock: @Sendable () -> Double
        /// Randomness for exchanges, sessions, ping ids and reconnect jitter.
        public var random: any RandomSource
        /// A SOCKS5 or HTTP CONNECT proxy every connection is opened through, to `host`:`port` (nil: directly).
        public var proxy: ProxyConfiguration?
        /// What opens each connection's channel (``TCPDialer`` by default; a test passes one in memory).
        public var dialer: any ChannelDialer

        /// A configuration for one DC; every setting but the address and connection has a default.
        public init(host: String, port: Int, connection: ClientConnection.Configuration,
                    requestTimeout: Duration = .seconds(30), store: (any AuthKeyStore)? = nil,
                    floodWaitThreshold: Int = 60, maxFloodWaitRetries: Int = 3, firstRequestPrefix: [UInt8] = [],
                    reconnect: ReconnectPolicy = ReconnectPolicy(),
                    keysChanged: (@Sendable (DCKeys) async throws -> Void)? = nil,
                    clock: @escaping @Sendable () -> Double = MTProtoClient.wallClock,
                    random: any RandomSource = SystemRandom(), proxy: ProxyConfiguration? = nil,
                    dialer: any ChannelDialer = TCPDialer()) {
            self.host = host
            self.dialer = dialer
            self.proxy = proxy
            self.port = port
            self.connection = connection
            self.requestTimeout = requestTimeout
            self.store = store
            self.floodWaitThreshold = floodWaitThreshold
            self.maxFloodWaitRetries = maxFloodWaitRetries
            self.firstRequestPrefix = firstRequestPrefix
            self.reconnect = reconnect
            self.keysChanged = keysChanged
            self.clock = clock
            self.random = random
        }
    }

    /// When and how often a lost connection is opened again: attempt n waits a uniformly random time in
    /// 0…min(maxDelay, initialDelay·2ⁿ) ("full jitter", so many clients cut off at once do not return at once).
    /// One exception: a connection that was lost after the server had sent on it, while calls wait for answers, is
    /// opened again at once; the waits start with the next attempt, after a failure to connect.
    public struct ReconnectPolicy: Sendable {
        /// Attempts after a loss before calls in flight fail; 0 turns reconnecting off.
        public var maxAttempts: Int
        /// The longest wait before the first attempt (the cap for attempt 0).
        public var initialDelay: Duration
        /// The cap on any attempt's wait.
        public var maxDelay: Duration

        /// A policy; the defaults wait up to 0.2 s, 0.4 s, 0.8 s, … capped at 30 s, for 8 attempts.
        public init(maxAttempts: Int = 8, initialDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(30)) {
            self.maxAttempts = maxAttempts
            self.initialDelay = initialDelay
            self.maxDelay = maxDelay
        }

        /// The wait before attempt `attempt` (0-based), drawn from `random`.
        public func delay(attempt: Int, random: any RandomSource) -> Duration {
            let cap = min(maxDelay, initialDelay * (1 << min(attempt, 30)))
            return cap * random.unitInterval()
        }
    }

    /// Where the connection is. `ready` means calls go out now; calls made in the other states wait for it.
    public enum State: Sendable, Equatable {
        /// Opening TCP.
        case connecting
        /// TCP and the transport are up; the key exchange (and with temporary keys the binding) runs, or a known
        /// key's session starts.
        case connected
        /// The key is known and the session runs.
        case ready
        /// The connection was lost; attempt `attempt` starts after `retryIn`.
        case waitingForNetwork(attempt: Int, retryIn: Duration)
        /// Closed by `close()` or after the last reconnect attempt failed.
        case closed
    }

    /// A call waiting for its answer: its body (sent again under a new key if the old one is lost) and the
    /// session request it is now.
    private struct Call {
        let body: [UInt8]
        /// Unchecked (no allocation of its own per call): a call is taken out of `calls` before it is resumed,
        /// in every path (`finish`, `fail`, `resendWaitingCalls`), so it is resumed exactly once.
        let continuation: UnsafeContinuation<ArraySlice<UInt8>, any Error>
        var request: RequestID
    }

    /// A call as its caller queued it, before the actor sends it.
    private struct QueuedCall {
        let token: UInt64
        let body: [UInt8]
        let timeout: Duration
        let continuation: UnsafeContinuation<ArraySlice<UInt8>, any Error>
    }

    private struct Lane {
        var queued: [QueuedCall] = []
        /// A `takeQueuedCalls` job is on its way: later calls join its batch.
        var takeScheduled = false
        var nextToken: UInt64 = 0
        /// Set once with `failure`: calls made after it fail at once.
        var failure: MTProtoClientError?
    }

    /// The configuration the client was made with.
    public let configuration: Configuration
    /// Where the client's own tasks run (its connection's reader, reconnects, timers; frames are written there too):
    /// the event loop its connections use. Calls made from tasks that prefer it (`withTaskExecutorPreference`) stay
    /// on that thread.
    public nonisolated let taskExecutor: EventLoopTaskExecutor
    private var connection: ClientConnection?
    /// Deadlines of calls, ascending from `timeoutHead`; one timer task sleeps until the first instead of a
    /// task per call (a sleeping task per call was a tenth of a pipelined client's time).
    private var timeouts: [(deadline: ContinuousClock.Instant, token: UInt64)] = []
    private var timeoutHead = 0
    private var timeoutTimer: (task: Task<Void, Never>, deadline: ContinuousClock.Instant, id: UInt64)?
    private var timeoutTimerCount: UInt64 = 0
    /// The current connection's writer, once its opening bytes went out (nil: nothing may be written yet); bytes
    /// leave in the order they were framed (obfuscation depends on it).
    private var writer: FrameWriter?
    /// Whether the current connection's first request went out (with `firstRequestPrefix`).
    private var prefixed = false
    /// Whether the server sent anything on the current connection (a lost one that had is reopened at once).
    private var heardFrom = false
    private var channel: (any Channel)?
    /// Counts connections, so a lost one's teardown cannot touch its successor.
    private var generation = 0
    private var closing = false
    private var calls = IDMap<UInt64, Call>()
    private var callByRequest = IDMap<RequestID, UInt64>()
    /// `open()` waiting for its connection to report `.ready`.
    private var readiness: [CheckedContinuation<Void, any Error>] = []
    /// Calls taken from `lane` that wait for a ready connection (reconnecting, or a key being replaced).
    private var waiting: [QueuedCall] = []
    /// Calls made and not yet taken by the actor, and what callers must know without entering it.
    private nonisolated let lane = Mutex(Lane())
    private var failure: MTProtoClientError?
    /// The client's own tasks still running (each takes itself out when it ends), so reconnecting for a long
    /// time does not pile up the handles of finished ones.
    private var tasks: [UInt64: Task<Void, Never>] = [:]
    private var taskCount: UInt64 = 0
    private var ticking = false
    /// The calls in `calls` belong to a session that is gone (its key was): send them again once ready.
    private var resendCalls = false
    /// A temporary key is due for replacement: new calls wait until the calls in flight are answered.
    private var rotating = false
    /// The keys as last saved (or loaded), so only changes are saved.
    private var savedKeys: DCKeys?
    /// The key the session runs on, once known: the permanent key, or with temporary keys the bound temporary key.
    public private(set) var authKey: StoredAuthKey?
    /// The DC's permanent key, once known.
    public private(set) var permanentKey: StoredAuthKey?
    /// With temporary keys: the bound temporary key in use (nil while a new one is being made).
    public private(set) var temporaryKey: TemporaryAuthKey?
    /// Updates (`Api.Updates`, serialized) as the server pushes them.
    public nonisolated let updates: AsyncStream<[UInt8]>
    private let updatesSink: AsyncStream<[UInt8]>.Continuation
    /// The connection's current state; ``states`` yields every change.
    public private(set) var state: State = .connecting
    /// Every change of `state`, in order (the newest 64 are kept for a slow reader).
    public nonisolated let states: AsyncStream<State>
    private let statesSink: AsyncStream<State>.Continuation
    /// Connections opened, the first included.
    public private(set) var connectionCount = 0

    /// A client on one loop of `group`.
    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.init(configuration: configuration, taskExecutor: EventLoopTaskExecutor(group.next()))
    }

    /// A client whose connections and tasks run on `taskExecutor`'s loop (`TelegramClient` keeps all DCs on one).
    public init(configuration: Configuration, taskExecutor: EventLoopTaskExecutor) {
        self.configuration = configuration
        self.taskExecutor = taskExecutor
        (updates, updatesSink) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        (states, statesSink) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(64))
    }

    /// The wall clock, Unix seconds.
    public static let wallClock: @Sendable () -> Double = { Date().timeIntervalSince1970 }

    private func now() -> Double { configuration.clock() }
    private var random: any RandomSource { configuration.random }
    private var policy: TemporaryKeyPolicy? { configuration.connection.temporaryKeys }

    private func set(_ new: State) {
        guard new != state || new == .connecting else { return }
        state = new
        statesSink.yield(new)
    }

    /// Connects and waits until the session is up (after the key exchanges and the binding, unless stored keys
    /// were configured or found in `store`).
    public func connect() async throws {
        guard connection == nil, failure == nil else { return }
        var connectionConfiguration = configuration.connection
        if connectionConfiguration.storedKey == nil, let store = configuration.store {
            let stored = try await store.keys(for: connectionConfiguration.dcID)
            connectionConfiguration.storedKey = stored.permanent
            if connectionConfiguration.storedTemporaryKey == nil {
                connectionConfiguration.storedTemporaryKey = stored.temporary
            }
        }
        permanentKey = connectionConfiguration.storedKey
        savedKeys = DCKeys(permanent: permanentKey, temporary: policy == nil ? nil : connectionConfiguration.storedTemporaryKey)
        do {
            let first = try ClientConnection(configuration: connectionConfiguration, random: random, now: now())
            temporaryKey = first.temporaryKey
            connection = first
        } catch {
            throw MTProtoClientError.connection(error)
        }
        let saveFailure: (any Error)?
        do {
            do {
                saveFailure = try await open()
            } catch MTProtoClientError.connection(.permanentKeyUnknown) {
                // The stored permanent key is gone from the server (forgotten in `connectionEnded`): once more
                // with a new one.
                connection = try successor(resuming: false)
                saveFailure = try await open()
            }
        } catch {
            fail(error as? MTProtoClientError ?? .closed)
            throw error
        }
        if let saveFailure { throw saveFailure }
    }

    /// The server no longer knows the permanent key (see `ClientConnectionError.permanentKeyUnknown`): both keys
    /// are dropped, and the next connection makes new ones, saved as soon as they are bound.
    private func forgetPermanentKey() {
        permanentKey = nil
        temporaryKey = nil
        authKey = nil
    }

    /// Opens TCP and starts `connection` (new, or resuming a session) on it; returns once the session runs and
    /// its keys are saved (before any waiting call goes out on them). Returns why saving failed, if it did: the
    /// connection is up regardless.
    @discardableResult
    private func open() async throws -> (any Error)? {
        set(.connecting)
        let asyncChannel = try await openChannel()
        guard !closing, var connection else {
            try? await asyncChannel.channel.close()
            throw MTProtoClientError.closed
        }
        let resumed = connection.isReady
        let start: (bytes: [UInt8], events: [ClientConnection.Event])
        do {
            start = try connection.start(now: now())
        } catch {
            try? await asyncChannel.channel.close()
            throw MTProtoClientError.connection(error)
        }
        if resumed, authKey != nil {
            // Announce the session on this connection, so answers the server holds for it come here.
            _ = try? connection.ping(id: random.int64())
        }
        self.connection = connection
        channel = asyncChannel.channel
        generation += 1
        connectionCount += 1
        prefixed = false
        heardFrom = false
        set(.connected)
        let current = generation
        startTask { await self.run(asyncChannel, opening: start.bytes, generation: current) }
        if !ticking {
            ticking = true
            startTask { await self.tick() }
        }
        handle(start.events)
        if !connectionIsReady { try await withCheckedThrowingContinuation { readiness.append($0) } }
        var saveFailure: (any Error)?
        do {
            try await saveKeys()
        } catch {
            saveFailure = error
        }
        set(.ready)
        if resendCalls { resendWaitingCalls() }
        sendWaitingCalls()
        return saveFailure
    }

    /// Sends a generated call and returns its typed result: `try await client.invoke(Api.functions.help.getConfig())`.
    public nonisolated func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                                timeout: Duration? = nil) async throws -> T {
        let bytes = try await invokeInPlace(raw: call.1.bytes, timeout: timeout)
        do {
            return try call.2.parse(bytes: bytes)
        } catch {
            throw MTProtoClientError.decoding(error)
        }
    }

    /// Sends serialized request bytes and returns the serialized result. Short flood waits are waited out.
    public nonisolated func invoke(raw body: [UInt8], timeout: Duration? = nil) async throws -> [UInt8] {
        Array(try await invokeInPlace(raw: body, timeout: timeout))
    }

    /// `invoke(raw:)` with the result where it arrived: a slice of the decrypted frame, so a large result (a file
    /// part) is not copied on its way to the caller. Its indices are the frame's, not zero-based.
    public nonisolated(nonsending) func invokeInPlace(raw body: [UInt8],
                                                     timeout: Duration? = nil) async throws -> ArraySlice<UInt8> {
        var retries = 0
        while true {
            do {
                return try await send(body, timeout: timeout ?? configuration.requestTimeout)
            } catch MTProtoClientError.rpc(let error) {
                guard case .floodWait(let seconds) = error.kind, seconds <= configuration.floodWaitThreshold,
                      retries < configuration.maxFloodWaitRetries else { throw MTProtoClientError.rpc(error) }
                retries += 1
                try await Task.sleep(for: .seconds(seconds))
            }
        }
    }

    /// `invokeInPlace(raw:timeout:)` without waiting out flood waits: one attempt, for a caller with rules of its
    /// own (`TelegramClient`'s middleware chain).
    package nonisolated(nonsending) func invokeOnce(raw body: [UInt8],
                                                   timeout: Duration? = nil) async throws -> ArraySlice<UInt8> {
        try await send(body, timeout: timeout ?? configuration.requestTimeout)
    }

    /// One attempt: the answer, or why there is none. The call is queued in `lane` without entering the actor
    /// (an actor hop under a task executor preference is a round trip through the event loop's queue each way);
    /// the actor takes what is queued in one job (`takeQueuedCalls`) and the answer resumes the caller directly.
    /// `nonisolated(nonsending)` (here and in `invokeInPlace`): it runs on the caller's executor, as nothing in it
    /// needs another, instead of switching to the generic executor on entry and after the answer; each switch asks
    /// the task for its executor preference under a lock (~5 % of a pipelined client).
    private nonisolated(nonsending) func send(_ body: [UInt8], timeout: Duration) async throws -> ArraySlice<UInt8> {
        let token = lane.withLock { lane in
            lane.nextToken &+= 1
            return lane.nextToken
        }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                enum Next { case wait, take, fail(any Error) }
                let next = lane.withLock { lane -> Next in
                    if let failure = lane.failure { return .fail(failure) }
                    // Checked under the lock: a cancellation after this finds the call queued (`onCancel`).
                    if Task.isCancelled { return .fail(MTProtoClientError.cancelled) }
                    lane.queued.append(QueuedCall(token: token, body: body, timeout: timeout,
                                                  continuation: continuation))
                    if lane.takeScheduled { return .wait }
                    lane.takeScheduled = true
                    return .take
                }
                switch next {
                    case .wait: break
                    case .take: Task(executorPreference: taskExecutor) { await self.takeQueuedCalls() }
                    case .fail(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let queued = lane.withLock { lane -> QueuedCall? in
                guard let index = lane.queued.firstIndex(where: { $0.token == token }) else { return nil }
                return lane.queued.remove(at: index)
            }
            if let queued {
                queued.continuation.resume(throwing: MTProtoClientError.cancelled)
            } else {
                Task(executorPreference: taskExecutor) { await self.cancel(call: token) }
            }
        }
    }

    /// Sends the calls queued in `lane`, or keeps them in `waiting` until the connection is ready (reconnecting, or
    /// a key being replaced).
    private func takeQueuedCalls() {
        let taken = lane.withLock { lane in
            lane.takeScheduled = false
            defer { lane.queued.removeAll(keepingCapacity: true) }
            return lane.queued
        }
        if rotationDue() { beginRotation() }
        waiting += taken
        sendWaitingCalls()
    }

    /// Sends the calls in `waiting` if the connection is ready for them.
    private func sendWaitingCalls() {
        guard !waiting.isEmpty else { return }
        if let failure { return fail(failure) }
        guard connectionIsReady, !rotating else {
            // Before `connect()` (or once it failed) nothing will send them.
            if connection == nil { failWaiting(.notConnected) }
            return
        }
        let sending = waiting
        waiting.removeAll()
        let now = ContinuousClock.now
        for call in sending {
            let body = prefixedIfFirst(call.body)
            do {
                guard let request = try withConnection({ try $0.send(body) }) ?? nil else {
                    call.continuation.resume(throwing: MTProtoClientError.notConnected)
                    continue
                }
                prefixed = true
                calls[call.token] = Call(body: body, continuation: call.continuation, request: request)
                callByRequest[request] = call.token
                addTimeout(call.token, at: now + call.timeout)
            } catch {
                call.continuation.resume(throwing: (error as? SessionError).map(MTProtoClientError.session) ?? error)
            }
        }
        flush()
    }

    /// A call's task was cancelled after its call left `lane`: it is dropped wherever it is.
    private func cancel(call token: UInt64) {
        if let index = waiting.firstIndex(where: { $0.token == token }) {
            waiting.remove(at: index).continuation.resume(throwing: MTProtoClientError.cancelled)
        } else {
            finish(call: token, with: .failure(MTProtoClientError.cancelled), drop: true)
        }
    }

    /// The first request of a connection carries `firstRequestPrefix` (after a binding too: initConnection must
    /// be repeated for every new temporary key, core.telegram.org/api/pfs).
    private func prefixedIfFirst(_ body: [UInt8]) -> [UInt8] {
        !prefixed && !configuration.firstRequestPrefix.isEmpty ? configuration.firstRequestPrefix + body : body
    }

    private func failWaiting(_ error: MTProtoClientError) {
        let failed = waiting
        waiting.removeAll()
        for call in failed { call.continuation.resume(throwing: error) }
    }

    /// Closes the connection; calls in flight fail with `.closed`. Call it when done: the connection's own tasks
    /// (its reader, timers) hold the client, so one never closed stays connected after the last reference is gone.
    public func close() async {
        closing = true
        fail(.closed)
        try? await channel?.close()
        for task in tasks.values { task.cancel() }
        tasks.removeAll()
    }

    /// Drops the TCP connection as a network failure would (for tests of reconnecting); the client reconnects.
    package func dropConnection() async {
        try? await channel?.close()
    }

    // MARK: Driving the connection

    private func run(_ asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, opening: [UInt8], generation: Int) async {
        do {
            // Bytes go out through `writer`, straight to the channel; the async channel is only read.
            try await asyncChannel.executeThenClose { inbound, _ in
                self.startWriting(opening, on: asyncChannel.channel, generation: generation)
                for try await buffer in inbound {
                    // A bulk read (file parts) is decrypted on Swift's global pool, so the loop goes on reading
                    // the socket meanwhile; answers to small calls stay on the loop (no thread switch each). Not
                    // on `BulkWork`: under `SCHED_IDLE` a client on busy cores starved its own parts until they
                    // timed out (FileTransferTests with two CPU-bound processes beside it, 2026-12-03). The read is
                    // handed over as NIO's buffer: frames are copied out of it once.
                    let alive = buffer.readableBytes < Self.bulkRead
                        ? self.receive(buffer)
                        : await Task.detached { await self.receive(buffer) }.value
                    guard alive else { break }
                }
            }
        } catch {}
        connectionEnded(generation: generation)
    }

    /// Reads at least this long are handed to the global pool (see `run`): a 512 KB file part arrives in reads of
    /// up to 1 MiB, a hundred small answers in a few KB.
    private static let bulkRead = 64 << 10

    /// A connection ended. If an `open()` is waiting for it, that open fails (its caller retries or gives up).
    /// Otherwise, unless the client is closing or nothing can help, reconnecting starts; calls made meanwhile wait.
    private func connectionEnded(generation ended: Int) {
        guard ended == generation, !closing, failure == nil else { return }
        writer = nil
        channel = nil
        let lost = connection
        if case .permanentKeyUnknown? = lost?.failure { forgetPermanentKey() }
        if !readiness.isEmpty {
            let error = lost?.failure.map(MTProtoClientError.connection) ?? .closed
            let waiting = readiness
            readiness.removeAll()
            for waiter in waiting { waiter.resume(throwing: error) }
            return
        }
        switch lost?.failure {
            case .server(let code)?:
                // −404 for a temporary key: it expired or the server forgot it (core.telegram.org/api/pfs); make
                // a new one. For a permanent key (and other codes) a new connection with it cannot help.
                guard code == -404, policy != nil, lost?.temporaryKey != nil, permanentKey != nil else {
                    fail(.connection(.server(code: code)))
                    return
                }
                temporaryKey = nil
            case .bindingRefused(let error)?:
                fail(.connection(.bindingRefused(error)))
                return
            case .permanentKeyUnknown?:
                // Forgotten above; the next connection makes a new permanent key, then a temporary one.
                startTask { await self.reconnect() }
                return
            case .bindingFailed(let why)?:
                fail(.connection(.bindingFailed(why)))
                return
            default:
                break
        }
        guard authKey != nil, configuration.reconnect.maxAttempts > 0 else {
            fail(.closed)
            return
        }
        startTask { await self.reconnect() }
    }

    /// The connection to try next: the lost session carried on (unless `resuming` is false or its key is gone),
    /// or with temporary keys a new connection that makes and binds a temporary key (reusing `temporaryKey` if
    /// set), whose session gets the calls in flight again.
    private func successor(resuming: Bool = true) throws(MTProtoClientError) -> ClientConnection {
        var next = configuration.connection
        next.storedKey = permanentKey
        next.storedTemporaryKey = temporaryKey
        let keyGone = if case .server? = connection?.failure { true } else { false }
        if resuming, !keyGone, let session = connection?.resumableSession {
            do {
                return try ClientConnection(configuration: next, resuming: session, random: random, now: now())
            } catch {
                throw .connection(error)
            }
        }
        guard policy != nil else { throw .closed }
        let fresh: ClientConnection
        do {
            fresh = try ClientConnection(configuration: next, random: random, now: now())
        } catch {
            throw .connection(error)
        }
        resendCalls = resendCalls || !calls.isEmpty
        return fresh
    }

    private func reconnect() async {
        // Calls waiting on a connection that worked until it was cut: every moment waited is theirs.
        let atOnce = heardFrom && !(calls.isEmpty && waiting.isEmpty)
        for attempt in 0..<configuration.reconnect.maxAttempts {
            let delay = atOnce && attempt == 0 ? .zero : configuration.reconnect.delay(attempt: attempt, random: random)
            set(.waitingForNetwork(attempt: attempt + 1, retryIn: delay))
            try? await Task.sleep(for: delay)
            if closing || failure != nil { return }
            do {
                connection = try successor()
            } catch {
                fail(error)
                return
            }
            do {
                try await open()
                return
            } catch {
                if closing || failure != nil { return }
            }
        }
        fail(.closed)
    }

    // MARK: Temporary keys

    /// Whether the temporary key in use has less than `renewBefore` left.
    private func rotationDue() -> Bool {
        guard let policy, let key = temporaryKey, !rotating, !closing, failure == nil, connectionIsReady
        else { return false }
        return !policy.isFresh(key, now: now())
    }

    /// Stops new calls; once the calls in flight are answered (or time out) the key is replaced.
    private func beginRotation() {
        rotating = true
        if calls.isEmpty { startTask { await self.rotate() } }
    }

    /// Replaces the temporary key: the old connection is closed (its end is not a loss), a new one makes and
    /// binds a new key, and the waiting calls go out on it. The old key is forgotten.
    private func rotate() async {
        guard rotating, !closing, failure == nil else { return }
        generation += 1
        writer = nil
        let old = channel
        channel = nil
        try? await old?.close()
        temporaryKey = nil
        rotating = false
        do {
            connection = try successor(resuming: false)
        } catch {
            fail(error)
            return
        }
        do {
            try await open()
        } catch {
            if closing || failure != nil { return }
            startTask { await self.reconnect() }
        }
    }

    /// Sends every waiting call again in the new session (its first carrying `firstRequestPrefix`).
    private func resendWaitingCalls() {
        resendCalls = false
        callByRequest.removeAll()
        for token in calls.keys.sorted() {
            guard var call = calls[token], connection != nil else { continue }
            do {
                let body = prefixedIfFirst(call.body)
                guard let id = try withConnection({ try $0.send(body) }) ?? nil else {
                    throw MTProtoClientError.notConnected
                }
                prefixed = true
                call.request = id
                calls[token] = call
                callByRequest[id] = token
            } catch {
                calls[token] = nil
                call.continuation.resume(throwing: (error as? SessionError).map(MTProtoClientError.session) ?? error)
            }
        }
        flush()
    }

    /// Saves the keys if they changed: through `keysChanged`, else into `store`.
    private func saveKeys() async throws {
        let keys = DCKeys(permanent: permanentKey, temporary: temporaryKey)
        guard keys != savedKeys else { return }
        let dc = configuration.connection.dcID
        if let keysChanged = configuration.keysChanged {
            try await keysChanged(keys)
        } else if let store = configuration.store {
            try await store.saveKeys(keys, for: dc, address: DCAddress(host: configuration.host, port: configuration.port))
        }
        savedKeys = keys
    }

    /// Connection `generation` is read: its opening bytes go out first, then what the session has queued. (A
    /// connection already replaced writes nothing: its bytes must not reach its successor's stream.)
    private func startWriting(_ opening: [UInt8], on channel: any Channel, generation: Int) {
        guard generation == self.generation else { return }
        let writer = FrameWriter(channel)
        self.writer = writer
        if !opening.isEmpty { writer.write(opening) }
        flush()
    }

    /// Feeds received bytes to the connection; false once it has failed.
    private func receive(_ buffer: ByteBuffer) -> Bool {
        let now = now()
        let received: (bytes: [UInt8], events: [ClientConnection.Event])
        do throws(ClientConnectionError) {
            guard let result = try withConnection({ connection throws(ClientConnectionError) in
                try buffer.withUnsafeReadableBytes { bytes throws(ClientConnectionError) in
                    try connection.receive(bytes: bytes, now: now)
                }
            }) else { return false }
            received = result
        } catch {
            return false
        }
        heardFrom = true
        if !received.bytes.isEmpty { writer?.write(received.bytes) }
        handle(received.events)
        return true
    }

    /// Sends what the session has due (acks, state queries, resends) at its deadlines, and starts a key
    /// replacement that has come due while no call was made.
    private func tick() async {
        while !Task.isCancelled && failure == nil {
            let wait = connection?.nextDeadline.map { min(1, max(0.01, $0 - now())) } ?? 1
            try? await Task.sleep(for: .seconds(wait))
            if rotationDue() { beginRotation() }
            if let deadline = connection?.nextDeadline, deadline <= now() { flush() }
        }
    }

    private func addTimeout(_ token: UInt64, at deadline: ContinuousClock.Instant) {
        // Calls mostly share one timeout, so a new deadline is nearly always the last.
        var index = timeouts.endIndex
        while index > timeoutHead, timeouts[index - 1].deadline > deadline { index -= 1 }
        timeouts.insert((deadline, token), at: index)
        // Deadlines of finished calls stay until the timer passes them or they outnumber the calls in flight;
        // then they go at once (amortized O(1) per call, where dropping them as calls finished cost a lookup each).
        if timeouts.count - timeoutHead > 2 * calls.count + 64 {
            timeouts = timeouts[timeoutHead...].filter { calls[$0.token] != nil }
            timeoutHead = 0
        }
        if index == timeoutHead || timeoutTimer == nil { armTimeoutTimer() }
    }

    /// Makes the timer wake at the first deadline of a call still in flight (a timer already due no later is
    /// kept; one due for a finished call wakes, finds nothing to do, and moves on).
    private func armTimeoutTimer() {
        while timeoutHead < timeouts.count, calls[timeouts[timeoutHead].token] == nil { timeoutHead += 1 }
        guard timeoutHead < timeouts.count else {
            timeouts.removeAll(keepingCapacity: true)
            timeoutHead = 0
            timeoutTimer?.task.cancel()
            timeoutTimer = nil
            return
        }
        let next = timeouts[timeoutHead].deadline
        if let timer = timeoutTimer, timer.deadline <= next { return }
        timeoutTimer?.task.cancel()
        timeoutTimerCount += 1
        let id = timeoutTimerCount
        let task = Task(executorPreference: taskExecutor) { [weak self] in
            do { try await Task.sleep(until: next, clock: .continuous) } catch { return }
            await self?.expireTimeouts(timer: id)
        }
        timeoutTimer = (task, next, id)
    }

    /// Fails every call past its deadline with `.timeout` and drops its request.
    private func expireTimeouts(timer id: UInt64) {
        guard timeoutTimer?.id == id else { return }
        timeoutTimer = nil
        let now = ContinuousClock.now
        while timeoutHead < timeouts.count, timeouts[timeoutHead].deadline <= now {
            let token = timeouts[timeoutHead].token
            timeoutHead += 1
            finish(call: token, with: .failure(MTProtoClientError.timeout), drop: true)
        }
        if timeoutHead > 256, timeoutHead * 2 > timeouts.count {
            timeouts.removeFirst(timeoutHead)
            timeoutHead = 0
        }
        armTimeoutTimer()
    }

    /// Seals and writes what the session has due. Calls go out from `takeQueuedCalls`, once per batch of calls
    /// queued together: one container in one frame (one encryption, one write) instead of a frame and a write each.
    private func flush() {
        guard let writer else { return }
        let now = now()
        let pieces: [[UInt8]]
        do {
            guard let flushed = try withConnection({ try $0.flushPieces(now: now) }) else { return }
            pieces = flushed
        } catch {
            // Failed while sending (or an HTTP response overdue, found at a deadline): closing the channel ends
            // the reader, which ends the connection as for a failure it read.
            channel?.close(promise: nil)
            return
        }
        if !pieces.isEmpty { writer.write(pieces: pieces) }
    }

    /// Runs `body` on the connection where it is stored, or returns nil without one. Copying it out and back in
    /// would leave two references to each table of its session while `body` mutates them, so every call would
    /// copy them all (copy-on-write): measured as a fifth of a pipelined client's time. Moving it out and back
    /// (`take()`) copies its bytes twice (about 5 % of the time); a mutating call through `?.` works in place.
    private func withConnection<T, E: Error>(_ body: (inout ClientConnection) throws(E) -> T) throws(E) -> T? {
        try connection?.applying(body)
    }

    /// Starts one of the client's own tasks on its loop; `close()` cancels it.
    private func startTask(_ operation: sending @escaping () async -> Void) {
        taskCount += 1
        let id = taskCount
        // It cannot end before it is stored: taking itself out needs this actor, which is busy until then.
        tasks[id] = Task(executorPreference: taskExecutor) {
            await operation()
            await self.taskEnded(id)
        }
    }

    private func taskEnded(_ id: UInt64) {
        tasks[id] = nil
    }

    /// How many of the client's own tasks (connection readers, reconnects, key replacements, the deadline ticker)
    /// are running: a few, however often it reconnected.
    public var runningTasks: Int { tasks.count }

    /// Whether the connection is ready for calls. Read in place: `connection?.isReady` copied the whole connection
    /// (its session's tables included) on every call.
    private var connectionIsReady: Bool {
        withConnection { $0.isReady } ?? false
    }

    private func handle(_ events: [ClientConnection.Event]) {
        for event in events {
            switch event {
                case .ready(let key, _):
                    authKey = key
                    if policy == nil { permanentKey = key }
                    let waiting = readiness
                    readiness.removeAll()
                    for waiter in waiting { waiter.resume() }
                case .permanentKeyCreated(let key): permanentKey = key
                case .temporaryKeyBound(let key): temporaryKey = key
                case .session(.result(let id, let body)): finish(request: id, with: .success(body))
                case .session(.rpcError(let id, let error)): finish(request: id, with: .failure(MTProtoClientError.rpc(error)))
                case .session(.failed(let id, let why)): finish(request: id, with: .failure(MTProtoClientError.request(why)))
                case .session(.update(let body, _)): updatesSink.yield(body)
                case .session, .rejectedFrame: break
            }
        }
        flush()
    }

    private func finish(request: RequestID, with result: Result<ArraySlice<UInt8>, any Error>) {
        guard let token = callByRequest[request] else { return }
        finish(call: token, with: result)
    }

    private func finish(call token: UInt64, with result: Result<ArraySlice<UInt8>, any Error>, drop: Bool = false) {
        guard let call = calls.removeValue(forKey: token) else { return }
        callByRequest[call.request] = nil
        if drop, withConnection({ $0.cancel(call.request) }) != nil { flush() }
        call.continuation.resume(with: result)
        if rotating, calls.isEmpty { startTask { await self.rotate() } }
    }

    private func fail(_ error: MTProtoClientError) {
        if failure == nil { failure = error }
        let inFlight = calls
        calls.removeAll()
        callByRequest.removeAll()
        armTimeoutTimer()
        for (_, call) in inFlight { call.continuation.resume(throwing: error) }
        for waiter in readiness { waiter.resume(throwing: error) }
        readiness.removeAll()
        let reason = failure ?? error
        let queued = lane.withLock { lane in
            if lane.failure == nil { lane.failure = reason }
            defer { lane.queued.removeAll() }
            return lane.queued
        }
        for call in queued { call.continuation.resume(throwing: error) }
        failWaiting(error)
        updatesSink.finish()
        writer = nil
        set(.closed)
        statesSink.finish()
    }
}

extension ClientConnection {
    /// `body` on this connection in place (see `MTProtoClient.withConnection`).
    fileprivate mutating func applying<T, E: Error>(_ body: (inout ClientConnection) throws(E) -> T) throws(E) -> T {
        try body(&self)
    }
}

/// Runs tasks that prefer it on one event loop: `MTProtoClient`'s own tasks, and calls made inside
/// `withTaskExecutorPreference(client.taskExecutor)`, reach the client and its socket without changing threads.
public final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the executor runs jobs on.
    public let eventLoop: any EventLoop
    /// Jobs enqueued on the loop's own thread, run together by one `execute`: NIO allocates a closure and takes its
    /// task lock for every `execute`, and a pipelined call enqueues two or three jobs.
    private let local: NIOLoopBoundBox<LocalJobs>

    private struct LocalJobs {
        var queued: [UnownedJob] = []
        /// The emptied array of the last batch, kept for its capacity.
        var spare: [UnownedJob] = []
        var drainScheduled = false
    }

    /// An executor running jobs on `eventLoop`.
    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        local = .makeBoxSendingValue(LocalJobs(), as: LocalJobs.self, eventLoop: eventLoop)
    }

    /// Runs `job` on the event loop: at once in a batch when called on the loop's thread, otherwise through
    /// `EventLoop.execute`.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard eventLoop.inEventLoop else {
            eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
            return
        }
        let scheduleDrain = local.withValue { jobs in
            jobs.queued.append(job)
            defer { jobs.drainScheduled = true }
            return !jobs.drainScheduled
        }
        if scheduleDrain { eventLoop.execute { self.drain() } }
    }

    /// Runs the jobs queued so far in order. Jobs they enqueue wait for the next drain, behind the loop's I/O and
    /// tasks already scheduled, so a chain of jobs cannot starve the channel.
    private func drain() {
        var batch = local.withValue { jobs in
            jobs.drainScheduled = false
            // Both arrays stay uniquely referenced, so appends and the reuse below do not copy.
            var batch: [UnownedJob] = []
            swap(&batch, &jobs.spare)
            swap(&batch, &jobs.queued)
            return batch
        }
        let executor = asUnownedTaskExecutor()
        for job in batch { job.runSynchronously(on: executor) }
        batch.removeAll(keepingCapacity: true)
        local.withValue { $0.spare = batch }
    }
}

/// Writes a connection's frames in the order they were made, from whichever thread the client runs on: frames queue
/// here and are written on the channel's loop by one drain at a time — at once when the client is already on that
/// loop, otherwise in one loop task per batch. (A plain `channel.write` runs at once on the loop but hops from other
/// threads, so two frames made on different threads could pass each other.)
final class FrameWriter: Sendable {
    private let channel: any Channel
    private let queue = Mutex<(frames: [ByteBuffer], draining: Bool)>(([], false))

    init(_ channel: any Channel) {
        self.channel = channel
    }

    func write(_ bytes: [UInt8]) {
        write(pieces: [bytes])
    }

    /// Pieces written back to back, copied into buffers that NIO does not round up (`buffers(copying:)`).
    func write(pieces: [[UInt8]]) {
        let buffers = channel.allocator.buffers(copying: pieces)
        let start = queue.withLock { queue in
            queue.frames += buffers
            let idle = !queue.draining
            queue.draining = true
            return idle
        }
        guard start else { return }
        if channel.eventLoop.inEventLoop {
            drain()
        } else {
            channel.eventLoop.execute { self.drain() }
        }
    }

    /// On the loop: writes what is queued, in order, and flushes.
    private func drain() {
        let frames = queue.withLock { queue in
            defer { queue = ([], false) }
            return queue.frames
        }
        for frame in frames { channel.write(frame, promise: nil) }
        channel.flush()
    }
}
