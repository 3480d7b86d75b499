// The async/await client of one DC over SwiftNIO: a TCP connection driven by `ClientConnection`, many calls in flight
// at once, each matched to its answer, and reconnects with jittered exponential backoff that carry the session (its
// id, pending requests, salts) over to the new connection. DC routing and migrations build on it (`TelegramClient`).
import Foundation
import MTProto
import MTProtoCrypto
import NIOCore
import NIOPosix
import TLRuntime

/// Why a call or the connection failed.
public enum MTProtoClientError: Error, Sendable, CustomStringConvertible {
    case notConnected
    case connection(ClientConnectionError)
    case session(SessionError)
    /// The server answered with `rpc_error`.
    case rpc(RPCError)
    /// The session gave up on the request (see `RequestFailure`).
    case request(RequestFailure)
    /// The answer did not parse as the call's result type.
    case decoding(TLDecodingError)
    case timeout
    case cancelled
    /// The connection closed before the answer came.
    case closed

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
        }
    }
}

public actor MTProtoClient {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var connection: ClientConnection.Configuration
        /// How long `invoke` waits for an answer unless the call names its own timeout.
        public var requestTimeout: Duration
        /// Where the auth key is kept: loaded on `connect` (a stored key skips the exchange), saved when a new
        /// key is agreed.
        public var store: (any SessionStore)?
        /// `FLOOD_WAIT_X` (and `FLOOD_PREMIUM_WAIT_X`, `SLOWMODE_WAIT_X`) up to this many seconds is waited out and
        /// the call sent again (at most `maxFloodWaitRetries` times); longer waits are thrown as `.rpc`.
        public var floodWaitThreshold: Int
        public var maxFloodWaitRetries: Int
        /// Bytes put in front of the first request on every connection: `TelegramClient` puts
        /// `invokeWithLayer` + `initConnection` there (both end with the wrapped query, so a prefix suffices).
        public var firstRequestPrefix: [UInt8]
        public var reconnect: ReconnectPolicy

        public init(host: String, port: Int, connection: ClientConnection.Configuration,
                    requestTimeout: Duration = .seconds(30), store: (any SessionStore)? = nil,
                    floodWaitThreshold: Int = 60, maxFloodWaitRetries: Int = 3, firstRequestPrefix: [UInt8] = [],
                    reconnect: ReconnectPolicy = ReconnectPolicy()) {
            self.host = host
            self.port = port
            self.connection = connection
            self.requestTimeout = requestTimeout
            self.store = store
            self.floodWaitThreshold = floodWaitThreshold
            self.maxFloodWaitRetries = maxFloodWaitRetries
            self.firstRequestPrefix = firstRequestPrefix
            self.reconnect = reconnect
        }
    }

    /// When and how often a lost connection is opened again: attempt n waits a uniformly random time in
    /// 0…min(maxDelay, initialDelay·2ⁿ) ("full jitter", so many clients cut off at once do not return at once).
    public struct ReconnectPolicy: Sendable {
        /// Attempts after a loss before calls in flight fail; 0 turns reconnecting off.
        public var maxAttempts: Int
        public var initialDelay: Duration
        public var maxDelay: Duration

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
        /// Opening TCP and the transport (and the key exchange when there is no key yet).
        case connecting
        /// The key is known and the session runs.
        case ready
        /// The connection was lost; attempt `attempt` starts after `retryIn`.
        case waitingForNetwork(attempt: Int, retryIn: Duration)
        /// Closed by `close()` or after the last reconnect attempt failed.
        case closed
    }

    public let configuration: Configuration
    private let group: any EventLoopGroup
    private var connection: ClientConnection?
    /// The current connection's writer; bytes leave in the order they were framed (obfuscation depends on it).
    private var outgoingSink: AsyncStream<[UInt8]>.Continuation?
    private var writing = false
    /// Whether the current connection's first request went out (with `firstRequestPrefix`).
    private var prefixed = false
    private var channel: (any Channel)?
    /// Counts connections, so a lost one's teardown cannot touch its successor.
    private var generation = 0
    private var closing = false
    private var waiting: [RequestID: CheckedContinuation<[UInt8], any Error>] = [:]
    private var readiness: [CheckedContinuation<Void, any Error>] = []
    private var failure: MTProtoClientError?
    private var tasks: [Task<Void, Never>] = []
    private let random = SystemRandom()
    /// The key in use, once known; persist it to reconnect without a new exchange.
    public private(set) var authKey: StoredAuthKey?
    /// Updates (`Api.Updates`, serialized) as the server pushes them.
    public nonisolated let updates: AsyncStream<[UInt8]>
    private let updatesSink: AsyncStream<[UInt8]>.Continuation
    public private(set) var state: State = .connecting
    /// Every change of `state`, in order (the newest 64 are kept for a slow reader).
    public nonisolated let states: AsyncStream<State>
    private let statesSink: AsyncStream<State>.Continuation
    /// Connections opened, the first included.
    public private(set) var connectionCount = 0

    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
        (updates, updatesSink) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        (states, statesSink) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(64))
    }

    static func now() -> Double { Date().timeIntervalSince1970 }

    private func set(_ new: State) {
        guard new != state || new == .connecting else { return }
        state = new
        statesSink.yield(new)
    }

    /// Connects and waits until the session is up (after a key exchange, unless a stored key was configured).
    public func connect() async throws {
        guard connection == nil, failure == nil else { return }
        var connectionConfiguration = configuration.connection
        if connectionConfiguration.storedKey == nil, let store = configuration.store {
            connectionConfiguration.storedKey = try await store.load().permanentKeys[connectionConfiguration.dcID]
        }
        do {
            connection = try ClientConnection(configuration: connectionConfiguration, random: random, now: Self.now())
        } catch {
            throw MTProtoClientError.connection(error)
        }
        do {
            try await open()
        } catch {
            fail(.closed)
            throw error
        }
        if let store = configuration.store, let key = authKey, connectionConfiguration.storedKey == nil {
            var state = try await store.load()
            state.permanentKeys[connectionConfiguration.dcID] = key
            state.addresses[connectionConfiguration.dcID] = DCAddress(host: configuration.host, port: configuration.port)
            try await store.save(state)
        }
    }

    /// Opens TCP and starts `connection` (new, or resuming a session) on it; returns once the session runs.
    private func open() async throws {
        set(.connecting)
        let asyncChannel = try await ClientBootstrap(group: group)
            .connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        guard !closing, var connection else {
            try? await asyncChannel.channel.close()
            throw MTProtoClientError.closed
        }
        let resumed = connection.session != nil
        let start: (bytes: [UInt8], events: [ClientConnection.Event])
        do {
            start = try connection.start(now: Self.now())
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
        let (outgoing, sink) = AsyncStream.makeStream(of: [UInt8].self)
        outgoingSink = sink
        let current = generation
        tasks.append(Task { await self.run(asyncChannel, outgoing: outgoing, opening: start.bytes, generation: current) })
        if tasks.count == 1 { tasks.append(Task { await self.tick() }) }
        handle(start.events)
        if authKey == nil { try await withCheckedThrowingContinuation { readiness.append($0) } }
        set(.ready)
    }

    /// Sends a generated call and returns its typed result: `try await client.invoke(Api.functions.help.getConfig())`.
    public func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                    timeout: Duration? = nil) async throws -> T {
        let bytes = try await invoke(raw: call.1.bytes, timeout: timeout)
        do {
            return try call.2.parse(bytes: bytes)
        } catch {
            throw MTProtoClientError.decoding(error)
        }
    }

    /// Sends serialized request bytes and returns the serialized result. Short flood waits are waited out.
    public func invoke(raw body: [UInt8], timeout: Duration? = nil) async throws -> [UInt8] {
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

    /// One attempt: the answer, or why there is none. While a lost connection is being replaced the request
    /// waits in the session and goes out on the new connection.
    private func send(_ body: [UInt8], timeout: Duration) async throws -> [UInt8] {
        if let failure { throw failure }
        guard var connection else { throw MTProtoClientError.notConnected }
        let request: RequestID
        do {
            let payload = !prefixed && !configuration.firstRequestPrefix.isEmpty ? configuration.firstRequestPrefix + body : body
            guard let id = try connection.send(payload) else { throw MTProtoClientError.notConnected }
            prefixed = true
            request = id
        } catch let error as SessionError {
            throw MTProtoClientError.session(error)
        }
        self.connection = connection
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.finish(request, with: .failure(MTProtoClientError.timeout), drop: true)
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiting[request] = continuation
                flush()
            }
        } onCancel: {
            Task { await self.finish(request, with: .failure(MTProtoClientError.cancelled), drop: true) }
        }
    }

    /// Closes the connection; calls in flight fail with `.closed`.
    public func close() async {
        closing = true
        fail(.closed)
        try? await channel?.close()
        for task in tasks { task.cancel() }
        tasks.removeAll()
    }

    /// Drops the TCP connection as a network failure would (for tests of reconnecting); the client reconnects.
    public func dropConnection() async {
        try? await channel?.close()
    }

    // MARK: Driving the connection

    private func run(_ asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, outgoing: AsyncStream<[UInt8]>,
                     opening: [UInt8], generation: Int) async {
        do {
            try await asyncChannel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // One writer, so bytes leave in the order they were framed.
                    group.addTask {
                        for await bytes in outgoing { try await outbound.write(ByteBuffer(bytes: bytes)) }
                    }
                    self.startWriting(opening)
                    for try await var buffer in inbound {
                        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
                        guard self.receive(bytes) else { break }
                    }
                    group.cancelAll()
                }
            }
        } catch {}
        connectionEnded(generation: generation)
    }

    /// A connection ended. Unless the client is closing (or never had a key), the session moves to a fresh
    /// connection object at once (requests made meanwhile queue in it) and reconnecting starts.
    private func connectionEnded(generation ended: Int) {
        guard ended == generation, !closing, failure == nil else { return }
        writing = false
        outgoingSink?.finish()
        outgoingSink = nil
        channel = nil
        if case .failed(.server(code: let code), _)? = connection.map({ $0.phase }) {
            // −404 and friends: the server does not know this key; a new connection with it cannot help.
            fail(.connection(.server(code: code)))
            return
        }
        guard authKey != nil, configuration.reconnect.maxAttempts > 0, let session = connection?.resumableSession else {
            fail(.closed)
            return
        }
        do {
            connection = try ClientConnection(configuration: configuration.connection, resuming: session, random: random,
                                              now: Self.now())
        } catch {
            fail(.connection(error))
            return
        }
        prefixed = false
        tasks.append(Task { await self.reconnect() })
    }

    private func reconnect() async {
        for attempt in 0..<configuration.reconnect.maxAttempts {
            let delay = configuration.reconnect.delay(attempt: attempt, random: random)
            set(.waitingForNetwork(attempt: attempt + 1, retryIn: delay))
            try? await Task.sleep(for: delay)
            if closing || failure != nil { return }
            do {
                try await open()
                return
            } catch {
                continue
            }
        }
        fail(.closed)
    }

    private func startWriting(_ opening: [UInt8]) {
        writing = true
        if !opening.isEmpty { outgoingSink?.yield(opening) }
        flush()
    }

    /// Feeds received bytes to the connection; false once it has failed.
    private func receive(_ bytes: [UInt8]) -> Bool {
        guard var connection else { return false }
        let received: (bytes: [UInt8], events: [ClientConnection.Event])
        do throws(ClientConnectionError) {
            received = try connection.receive(bytes, now: Self.now())
        } catch {
            self.connection = connection
            if authKey == nil { fail(.connection(error)) }
            return false
        }
        self.connection = connection
        if !received.bytes.isEmpty { outgoingSink?.yield(received.bytes) }
        handle(received.events)
        return true
    }

    /// Sends what the session has due (acks, state queries, resends) at its deadlines.
    private func tick() async {
        while !Task.isCancelled && failure == nil {
            let wait = connection?.nextDeadline.map { min(1, max(0.01, $0 - Self.now())) } ?? 1
            try? await Task.sleep(for: .seconds(wait))
            if let deadline = connection?.nextDeadline, deadline <= Self.now() { flush() }
        }
    }

    private func flush() {
        guard var connection, writing else { return }
        let bytes: [UInt8]
        do {
            bytes = try connection.flush(now: Self.now())
        } catch {
            self.connection = connection
            return  // the reader sees the failure and ends the connection
        }
        self.connection = connection
        if !bytes.isEmpty { outgoingSink?.yield(bytes) }
    }

    private func handle(_ events: [ClientConnection.Event]) {
        for event in events {
            switch event {
                case .ready(let key, _):
                    authKey = key
                    for waiter in readiness { waiter.resume() }
                    readiness.removeAll()
                case .session(.result(let id, let body)): finish(id, with: .success(body))
                case .session(.rpcError(let id, let error)): finish(id, with: .failure(MTProtoClientError.rpc(error)))
                case .session(.failed(let id, let why)): finish(id, with: .failure(MTProtoClientError.request(why)))
                case .session(.update(let body, _)): updatesSink.yield(body)
                case .session, .rejectedFrame: break
            }
        }
        flush()
    }

    private func finish(_ request: RequestID, with result: Result<[UInt8], any Error>, drop: Bool = false) {
        guard let continuation = waiting.removeValue(forKey: request) else { return }
        if drop, var connection {
            connection.cancel(request)
            self.connection = connection
            flush()
        }
        continuation.resume(with: result)
    }

    private func fail(_ error: MTProtoClientError) {
        if failure == nil { failure = error }
        for (_, continuation) in waiting { continuation.resume(throwing: error) }
        waiting.removeAll()
        for waiter in readiness { waiter.resume(throwing: error) }
        readiness.removeAll()
        updatesSink.finish()
        outgoingSink?.finish()
        set(.closed)
        statesSink.finish()
    }
}
