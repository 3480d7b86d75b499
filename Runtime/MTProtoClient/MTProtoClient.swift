// The async/await client over SwiftNIO: one TCP connection driven by `ClientConnection`, many calls in flight at
// once, each matched to its answer. This is the first layer of the SDK client; reconnects, DC routing, flood waits
// and persistence build on it.
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
        /// How long `invoke` waits for an answer.
        public var requestTimeout: Duration
        /// Where the auth key is kept: loaded on `connect` (a stored key skips the exchange), saved when a new
        /// key is agreed.
        public var store: (any SessionStore)?
        /// `FLOOD_WAIT_X` (and `FLOOD_PREMIUM_WAIT_X`, `SLOWMODE_WAIT_X`) up to this many seconds is waited out and
        /// the call sent again (at most `maxFloodWaitRetries` times); longer waits are thrown as `.rpc`.
        public var floodWaitThreshold: Int
        public var maxFloodWaitRetries: Int

        public init(host: String, port: Int, connection: ClientConnection.Configuration,
                    requestTimeout: Duration = .seconds(30), store: (any SessionStore)? = nil,
                    floodWaitThreshold: Int = 60, maxFloodWaitRetries: Int = 3) {
            self.host = host
            self.port = port
            self.connection = connection
            self.requestTimeout = requestTimeout
            self.store = store
            self.floodWaitThreshold = floodWaitThreshold
            self.maxFloodWaitRetries = maxFloodWaitRetries
        }
    }

    public let configuration: Configuration
    private let group: any EventLoopGroup
    private var connection: ClientConnection?
    /// Bytes to write, in the order the connection produced them (the obfuscation stream depends on it).
    private let outgoing: AsyncStream<[UInt8]>
    private let outgoingSink: AsyncStream<[UInt8]>.Continuation
    private var writing = false
    private var channel: (any Channel)?
    private var waiting: [RequestID: CheckedContinuation<[UInt8], any Error>] = [:]
    private var readiness: [CheckedContinuation<Void, any Error>] = []
    private var failure: MTProtoClientError?
    private var tasks: [Task<Void, Never>] = []
    /// The key in use, once known; persist it to reconnect without a new exchange.
    public private(set) var authKey: StoredAuthKey?
    /// Updates (`Api.Updates`, serialized) as the server pushes them.
    public nonisolated let updates: AsyncStream<[UInt8]>
    private let updatesSink: AsyncStream<[UInt8]>.Continuation

    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
        (updates, updatesSink) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        (outgoing, outgoingSink) = AsyncStream.makeStream(of: [UInt8].self)
    }

    static func now() -> Double { Date().timeIntervalSince1970 }

    /// Connects and waits until the session is up (after a key exchange, unless a stored key was configured).
    public func connect() async throws {
        var connectionConfiguration = configuration.connection
        if connectionConfiguration.storedKey == nil, let store = configuration.store {
            connectionConfiguration.storedKey = try await store.load().permanentKeys[connectionConfiguration.dcID]
        }
        let asyncChannel = try await ClientBootstrap(group: group)
            .connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        channel = asyncChannel.channel
        var connection: ClientConnection
        let start: (bytes: [UInt8], events: [ClientConnection.Event])
        do {
            connection = try ClientConnection(configuration: connectionConfiguration, random: SystemRandom(),
                                              now: Self.now())
            start = try connection.start(now: Self.now())
        } catch {
            try? await asyncChannel.channel.close()
            throw MTProtoClientError.connection(error)
        }
        self.connection = connection
        tasks.append(Task { await self.run(asyncChannel, opening: start.bytes) })
        tasks.append(Task { await self.tick() })
        handle(start.events)
        if authKey == nil {
            try await withCheckedThrowingContinuation { readiness.append($0) }
            if let store = configuration.store, let key = authKey {
                var state = try await store.load()
                state.permanentKeys[connectionConfiguration.dcID] = key
                state.addresses[connectionConfiguration.dcID] = DCAddress(host: configuration.host,
                                                                          port: configuration.port)
                try await store.save(state)
            }
        }
    }

    /// Sends a generated call and returns its typed result: `try await client.invoke(Api.functions.help.getConfig())`.
    public func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>)) async throws -> T {
        let bytes = try await invoke(raw: call.1.bytes)
        do {
            return try call.2.parse(bytes: bytes)
        } catch {
            throw MTProtoClientError.decoding(error)
        }
    }

    /// Sends serialized request bytes and returns the serialized result. Short flood waits are waited out.
    public func invoke(raw body: [UInt8]) async throws -> [UInt8] {
        var retries = 0
        while true {
            do {
                return try await send(body)
            } catch MTProtoClientError.rpc(let error) {
                guard case .floodWait(let seconds) = error.kind, seconds <= configuration.floodWaitThreshold,
                      retries < configuration.maxFloodWaitRetries else { throw MTProtoClientError.rpc(error) }
                retries += 1
                try await Task.sleep(for: .seconds(seconds))
            }
        }
    }

    /// One attempt: the answer, or why there is none.
    private func send(_ body: [UInt8]) async throws -> [UInt8] {
        if let failure { throw failure }
        guard var connection else { throw MTProtoClientError.notConnected }
        let request: RequestID
        do {
            guard let id = try connection.send(body) else { throw MTProtoClientError.notConnected }
            request = id
        } catch let error as SessionError {
            throw MTProtoClientError.session(error)
        }
        self.connection = connection
        let timeout = configuration.requestTimeout
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
        fail(.closed)
        try? await channel?.close()
        for task in tasks { task.cancel() }
        tasks.removeAll()
    }

    // MARK: Driving the connection

    private func run(_ asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, opening: [UInt8]) async {
        let outgoing = self.outgoing
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
        fail(.closed)
    }

    private func startWriting(_ opening: [UInt8]) {
        writing = true
        if !opening.isEmpty { outgoingSink.yield(opening) }
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
            fail(.connection(error))
            return false
        }
        self.connection = connection
        if !received.bytes.isEmpty { outgoingSink.yield(received.bytes) }
        handle(received.events)
        return true
    }

    /// Sends what the session has due (acks, state queries) at its deadlines.
    private func tick() async {
        while !Task.isCancelled && failure == nil {
            try? await Task.sleep(for: .milliseconds(200))
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
            fail(.connection(error))
            return
        }
        self.connection = connection
        if !bytes.isEmpty { outgoingSink.yield(bytes) }
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
        outgoingSink.finish()
    }
}
