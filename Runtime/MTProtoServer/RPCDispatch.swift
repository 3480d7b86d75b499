// RPC dispatch by method, found by constructor ID. A typed handler (`on(_:_:)`) names its function by a request type of
// a generated server module, which reads the call and types its result; a dynamic one (`register(_:_:)`) by name, and
// reads the registry's `TLRequest`. The wrappers clients put around calls (`invokeWithLayer`, `initConnection`,
// `invokeWithoutUpdates`, `invokeAfterMsg(s)`, `invokeWithTakeout` and the rest of api.tl's `query:!X = X` functions)
// are known by constructor ID and read with the registry the server was given (the API layer's, so this target needs
// none), and the innermost call goes to its handler. Unknown methods are answered `rpc_error` 400
// METHOD_NOT_IMPLEMENTED, never silence; undecodable ones 400 INPUT_METHOD_INVALID (core.telegram.org/api/errors).
// A handler that answers later (`on(_:timeout:_:)`) gives the connection an `RPCPendingCall` to run; the connection
// keeps the request pending and serves the rest meanwhile (ServerConnection.swift).
import MTProto
import Synchronization
import TLRuntime

/// Where a request came from and where it arrived: what a handler needs besides the request.
public struct RPCCall: Sendable {
    /// The innermost call, wrappers removed, read by the registry's dynamic reader (a typed handler gets its typed
    /// request as its argument; this reads the same bytes again when asked). Throws 400 INPUT_METHOD_INVALID, which
    /// a handler passes on as its answer, when the registry cannot read the call (its function is not in the
    /// registry's layer).
    public var request: TLRequest {
        get throws(RPCError) { try inner.request }
    }
    let inner: RPCHandlers.Inner
    /// The wrappers removed, by name, outermost first (`invokeWithLayer`, then `initConnection`, say).
    public let wrappers: [String]
    /// `invokeWithLayer.layer`, when the request carried one.
    public let layer: Int32?
    /// The key whose authorization the call runs under: the key it arrived under, or for a temporary key bound with
    /// `auth.bindTempAuthKey` the permanent key it stands for (core.telegram.org/api/pfs).
    public let authKeyID: UInt64
    /// The temporary key the call arrived under, when it was one (`authKeyID` is then its permanent key if bound).
    public let temporaryKeyID: UInt64?
    /// The session_id the request came in.
    public let sessionID: Int64
    /// The msg_id the client sent the request under.
    public let messageID: Int64
    /// The server the request reached.
    public let endpoint: ServerEndpoint
    /// Every DC of the cluster (this one included), by id: what `help.getConfig` lists.
    public let dcs: [ServerEndpoint]
    /// The server's clock (Unix seconds) when the request arrived.
    public let now: Double
}

/// A DC as clients see it.
public struct ServerEndpoint: Sendable, Hashable {
    /// The DC's id.
    public var dcID: Int32
    /// The host clients connect to.
    public var host: String
    /// The port clients connect to.
    public var port: Int
    /// The IPv6 address the DC also listens on (same port), listed in `help.getConfig` as its `ipv6` option.
    public var ipv6Host: String?

    /// An endpoint; `ipv6Host`, when given, is listed beside `host` in `help.getConfig`.
    public init(dcID: Int32, host: String, port: Int, ipv6Host: String? = nil) {
        self.dcID = dcID
        self.host = host
        self.port = port
        self.ipv6Host = ipv6Host
    }
}

/// The DCs of a cluster, shared by their servers; a listener fills in its port once bound.
public final class DCDirectory: Sendable {
    private let state: Mutex<[ServerEndpoint]>

    /// A directory of `endpoints`, kept sorted by DC id.
    public init(_ endpoints: [ServerEndpoint]) { state = Mutex(endpoints.sorted { $0.dcID < $1.dcID }) }

    /// Adds or replaces the endpoint of `endpoint.dcID`.
    public func update(_ endpoint: ServerEndpoint) {
        state.withLock { endpoints in
            endpoints.removeAll { $0.dcID == endpoint.dcID }
            endpoints.append(endpoint)
            endpoints.sort { $0.dcID < $1.dcID }
        }
    }

    /// Every DC, by id ascending.
    public var endpoints: [ServerEndpoint] { state.withLock { $0 } }
}

/// The DCs an MTProxy listener forwards to, by id; filled once every DC's context exists.
public final class DCRouting: Sendable {
    private let state = Mutex<[Int32: ServerContext]>([:])

    /// An empty routing table.
    public init() {}

    /// Sets the contexts of every DC, replacing what was set.
    public func set(_ contexts: [Int32: ServerContext]) { state.withLock { $0 = contexts } }

    /// The context of `dcID`, or nil when the cluster has no such DC.
    public func context(for dcID: Int32) -> ServerContext? { state.withLock { $0[dcID] } }
}

/// Answers one call with the serialized result (a boxed TL value), or throws the `rpc_error` to send.
public typealias RPCHandler = @Sendable (RPCCall) throws(RPCError) -> [UInt8]

/// Answers one call of `Request` with its result, or throws the `rpc_error` to send.
public typealias RPCTypedHandler<Request: TLTypedRequest> =
    @Sendable (RPCCall, Request) throws(RPCError) -> Request.Result

/// Answers one call of `Request` when it is ready: it may suspend (until another session's request comes, say) while
/// the server serves the connection's other requests. Its task is cancelled when the answer is no longer awaited
/// (timed out, the connection or session gone).
public typealias RPCLaterTypedHandler<Request: TLTypedRequest> =
    @Sendable (RPCCall, Request) async throws(RPCError) -> Request.Result

/// How long a handler that answers later may take, and the `rpc_error` the server answers for it when it takes longer.
public struct AnswerTimeout: Sendable, Hashable {
    /// Seconds from the call's arrival; nil for the server's `ServerLimits.pendingAnswerTimeout`.
    public var seconds: Double?
    /// The answer at the timeout: `RPCError.timeout` (-503 Timeout, Telegram's answer when a call's handler does not
    /// finish in time), or the method's own, such as 400 BOT_RESPONSE_TIMEOUT for
    /// `messages.getBotCallbackAnswer` (core.telegram.org/method/messages.getBotCallbackAnswer).
    public var error: RPCError

    /// A timeout of `seconds` (the server's default when nil) answered with `error`.
    public init(seconds: Double? = nil, error: RPCError = .timeout) {
        self.seconds = seconds
        self.error = error
    }

    /// The server's default timeout, answered -503 Timeout.
    public static let standard = AnswerTimeout()
}

/// The errors the server answers for handlers that answer later.
extension RPCError {
    /// -503 Timeout: what Telegram answers when a call's handler did not answer in time
    /// (core.telegram.org/api/errors, "Other error codes").
    public static let timeout = RPCError(code: -503, message: "Timeout")
    /// 500 PENDING_ANSWERS_TOO_MANY: a call for a handler that answers later, past `ServerLimits`'
    /// `maxPendingAnswersPerConnection` or `maxPendingAnswers`.
    public static let pendingAnswersTooMany = RPCError(code: 500, message: "PENDING_ANSWERS_TOO_MANY")
}

/// A call whose handler answers later: the connection hands it to its driver to run, and takes the answer back.
public struct RPCPendingCall: Sendable {
    /// How long the answer may take, and what is answered when it takes longer.
    public let timeout: AnswerTimeout
    let body: @Sendable () async throws(RPCError) -> [UInt8]

    /// Runs the handler: the serialized result, or the `rpc_error` to send.
    public func run() async -> Result<[UInt8], RPCError> {
        do throws(RPCError) {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}

/// What running a call's handler gave: its answer, or a call that answers later.
public enum RPCOutcome: Sendable {
    /// The serialized result, or the `rpc_error` to send.
    case answered(Result<[UInt8], RPCError>)
    /// A handler that answers later: run it, and send what it returns.
    case later(RPCPendingCall)

    /// The answer, when it is one now.
    public var answer: Result<[UInt8], RPCError>? {
        if case .answered(let result) = self { return result }
        return nil
    }
}

/// Handlers by method name (`help.getConfig`), and the registry requests are decoded with.
public struct RPCHandlers: Sendable {
    /// The registry requests are decoded with (`Api.registry` for the test Telegram).
    public let registry: TLRegistry
    /// The handlers by method name.
    public private(set) var handlers: [String: RPCHandler] = [:]
    /// Wrappers nested deeper than this are refused (each is a call holding a call).
    public var maxWrapperDepth = 8

    /// Whether a call subscribes its session to updates: any but a file query (the `upload` namespace) or one
    /// wrapped in `invokeWithoutUpdates` (core.telegram.org/method/invokeWithoutUpdates).
    public static func subscribesToUpdates(_ decoded: Decoded) -> Bool {
        !decoded.method.hasPrefix("upload.") && !decoded.wrapperIDs.contains(invokeWithoutUpdatesID)
    }

    /// The functions whose last field, `query:!X`, is the real call, by constructor ID (api.tl's lines
    /// `invokeAfterMsg#cb9f372d` to `invokeWithReCaptcha#adbb0f94`, unchanged across layers;
    /// core.telegram.org/api/invoking). A handful, so a linear scan.
    public static let wrapperIDs: [UInt32] = [
        0xda9b_0d0d,  // invokeWithLayer#da9b0d0d {X:Type} layer:int query:!X = X;
        0xc1cd_5ea9,  // initConnection#c1cd5ea9 {X:Type} flags:# api_id:int … query:!X = X;
        0xcb9f_372d,  // invokeAfterMsg#cb9f372d {X:Type} msg_id:long query:!X = X;
        0x3dc4_b4f0,  // invokeAfterMsgs#3dc4b4f0 {X:Type} msg_ids:Vector<long> query:!X = X;
        invokeWithoutUpdatesID,
        0x3652_75f2,  // invokeWithMessagesRange#365275f2 {X:Type} range:MessageRange query:!X = X;
        0xaca9_fd2e,  // invokeWithTakeout#aca9fd2e {X:Type} takeout_id:long query:!X = X;
        0xdd28_9f8e,  // invokeWithBusinessConnection#dd289f8e {X:Type} connection_id:string query:!X = X;
        0x1df9_2984,  // invokeWithGooglePlayIntegrity#1df92984 {X:Type} nonce:string token:string query:!X = X;
        0x0dae_54f8,  // invokeWithApnsSecret#0dae54f8 {X:Type} nonce:string secret:string query:!X = X;
        0xadbb_0f94,  // invokeWithReCaptcha#adbb0f94 {X:Type} token:string query:!X = X;
    ]
    /// invokeWithLayer#da9b0d0d {X:Type} layer:int query:!X = X; (its first field is the layer).
    static let invokeWithLayerID: UInt32 = 0xda9b_0d0d
    /// invokeWithoutUpdates#bf9459b7 {X:Type} query:!X = X;
    static let invokeWithoutUpdatesID: UInt32 = 0xbf94_59b7

    /// The handlers again by the method's constructor ID, with its name: a request is dispatched without making
    /// its name and hashing it (with SipHash), which a pipelined run paid per call.
    private var byID = IDMap<UInt32, Registered>()

    struct Registered: Sendable {
        let name: String
        let answer: Answer
        /// For a typed handler: its request type, which the call's bytes are parsed into before the handler runs.
        let typed: (any TLTypedRequest.Type)?
    }

    /// How a handler answers: at once, or later (it may suspend), within a timeout.
    enum Answer: Sendable {
        case now(RPCHandler)
        case later(@Sendable (RPCCall) async throws(RPCError) -> [UInt8], AnswerTimeout)
    }

    /// The innermost call as it was decoded: the dynamic reader's request (wrapped calls, methods without a typed
    /// handler), or the typed one, and its bytes.
    struct Inner: Sendable {
        let dynamic: TLRequest?
        let typed: (any TLTypedRequest)?
        /// The call boxed as it arrived; nil when it came wrapped or compressed (then `dynamic` writes it when asked).
        let raw: [UInt8]?
        let registry: TLRegistry

        /// The call boxed, as it arrived or as its wrapper held it.
        var bytes: [UInt8] { raw ?? dynamic?.boxedBytes ?? [] }

        var constructorID: UInt32 {
            if let dynamic { return dynamic.constructorID }
            return RPCHandlers.constructorID(of: bytes)
        }

        /// The dynamic reader's request: the typed path never made one, so it is read from the bytes when asked.
        /// The bytes parsed as the typed request; when the registry does not read them too (its layer lacks the
        /// function, or reads it otherwise), the call is refused as an undecodable one is.
        var request: TLRequest {
            get throws(RPCError) {
                if let dynamic { return dynamic }
                guard let parsed = (try? registry.parseRequest(bytes: bytes)) ?? nil else {
                    throw RPCHandlers.invalidInput
                }
                return parsed
            }
        }
    }

    /// No handlers, decoding with `registry`.
    public init(registry: TLRegistry) {
        self.registry = registry
    }

    /// Registers (or replaces) the handler for `method`, named as in the schema (`help.getConfig`).
    public mutating func register(_ method: String, _ handler: @escaping RPCHandler) {
        handlers[method] = handler
        if let id = registry.functionID(named: method) {
            byID[id] = Registered(name: method, answer: .now(handler), typed: nil)
        }
    }

    /// Registers (or replaces) the handler for `request`'s function: it gets the call's arguments as the typed
    /// request, and its result, of the function's result type, is written as the answer.
    ///
    /// ```swift
    /// handlers.on(Api.functions.help.GetNearestDc.self) { call, _ in
    ///     .nearestDc(.init(country: "ZZ", thisDc: call.endpoint.dcID, nearestDc: call.endpoint.dcID))
    /// }
    /// ```
    public mutating func on<Request: TLTypedRequest>(_ request: Request.Type,
                                                     _ handler: @escaping RPCTypedHandler<Request>) {
        add(Self.typed(request) { call, typed throws(RPCError) in Request.resultBytes(try handler(call, typed)) })
    }

    /// Registers (or replaces) a handler for `request`'s function that answers when it is ready: it may suspend
    /// while the connection's other requests are served, until `timeout`, when the server answers for it.
    ///
    /// ```swift
    /// handlers.on(Api.functions.messages.GetBotCallbackAnswer.self,
    ///             timeout: AnswerTimeout(error: RPCError(code: 400, message: "BOT_RESPONSE_TIMEOUT"))) { _, request in
    ///     await answers.next(for: request.msgId)
    /// }
    /// ```
    public mutating func on<Request: TLTypedRequest>(_ request: Request.Type, timeout: AnswerTimeout,
                                                     _ handler: @escaping RPCLaterTypedHandler<Request>) {
        add(Self.typedLater(request, timeout: timeout, handler))
    }

    /// A typed handler as the table keeps it: `answer` gets the call's typed request and writes the answer.
    static func typed<Request: TLTypedRequest>(
        _ request: Request.Type, _ answer: @escaping @Sendable (RPCCall, Request) throws(RPCError) -> [UInt8]
    ) -> Registered {
        let erased: RPCHandler = { call throws(RPCError) in
            guard let typed = call.inner.typed as? Request else { throw Self.invalidInput }
            return try answer(call, typed)
        }
        return Registered(name: Request.tlFunctionName, answer: .now(erased), typed: Request.self)
    }

    /// A typed handler that answers later, as the table keeps it.
    static func typedLater<Request: TLTypedRequest>(
        _ request: Request.Type, timeout: AnswerTimeout, _ handler: @escaping RPCLaterTypedHandler<Request>
    ) -> Registered {
        let erased: @Sendable (RPCCall) async throws(RPCError) -> [UInt8] = { call async throws(RPCError) in
            guard let typed = call.inner.typed as? Request else { throw Self.invalidInput }
            return Request.resultBytes(try await handler(call, typed))
        }
        return Registered(name: Request.tlFunctionName, answer: .later(erased, timeout), typed: Request.self)
    }

    private mutating func add(_ registered: Registered) {
        if case .now(let handler) = registered.answer { handlers[registered.name] = handler }
        if let type = registered.typed { byID[type.tlConstructorID] = registered }
    }

    /// Handlers that take the place of these (or add to them) while the server runs: a test's own answer for one
    /// method. Looked up before this table on every call.
    public var overrides: RPCOverrides?

    private func registered(for id: UInt32) -> Registered? {
        overrides?.registered(for: id) ?? byID[id]
    }

    /// Registers a handler for `request`'s function that writes its result itself, for an answer too large to build
    /// as a value first (a file part, written once rather than copied into a value and out of it). The compiler
    /// checks the request's fields, not the result: the bytes must be a boxed `Request.Result`.
    public mutating func onWritingResult<Request: TLTypedRequest>(
        _ request: Request.Type, _ handler: @escaping @Sendable (RPCCall, Request) throws(RPCError) -> [UInt8]
    ) {
        add(Self.typed(request, handler))
    }

    /// A request body decoded, its wrappers peeled off.
    public struct Decoded: Sendable {
        /// The innermost call, as the registry's dynamic reader reads it (throws as `RPCCall.request` does).
        public var request: TLRequest {
            get throws(RPCError) { try inner.request }
        }
        let inner: Inner
        /// The innermost call's constructor ID.
        public var constructorID: UInt32 { inner.constructorID }
        /// The innermost call, boxed.
        public var bytes: [UInt8] { inner.bytes }
        /// The wrappers removed, outermost first.
        public let wrappers: [String]
        /// The wrappers' constructor IDs, outermost first.
        public let wrapperIDs: [UInt32]
        /// `invokeWithLayer.layer`, when there was one.
        public let layer: Int32?
        /// The innermost call's name (`request.name`, kept).
        public let method: String
        /// Its handler, when one is registered.
        let handler: Registered?
    }

    static let invalidInput = RPCError(code: 400, message: "INPUT_METHOD_INVALID")

    /// The first little-endian word of a boxed value: its constructor ID (0 for fewer than four bytes).
    static func constructorID(of bytes: [UInt8]) -> UInt32 {
        guard bytes.count >= 4 else { return 0 }
        return UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// Decodes a request body and removes its wrappers: the innermost method's name (`?` when the body does not
    /// decode) and the call, or the `rpc_error` to answer. A call for a typed handler that comes unwrapped is read
    /// only by its typed request; wrapped and compressed ones, and the rest, by the registry's dynamic reader.
    public func decode(body: [UInt8]) -> (method: String, decoded: Result<Decoded, RPCError>) {
        let first = Self.constructorID(of: body)
        if !Self.wrapperIDs.contains(first), let registered = registered(for: first), let type = registered.typed {
            guard let typed = try? type.parse(bytes: body) else { return ("?", .failure(Self.invalidInput)) }
            let inner = Inner(dynamic: nil, typed: typed, raw: body, registry: registry)
            return (registered.name, .success(Decoded(inner: inner, wrappers: [], wrapperIDs: [], layer: nil,
                                                      method: registered.name, handler: registered)))
        }
        guard var request = try? registry.parseRequest(bytes: body) else {
            return ("?", .failure(Self.invalidInput))
        }
        var wrappers: [String] = [], wrapperIDs: [UInt32] = []
        var layer: Int32?
        while Self.wrapperIDs.contains(request.constructorID) {
            // `query:!X` is every wrapper's last field; invokeWithLayer's first is the layer (see `wrapperIDs`).
            let id = request.constructorID
            guard wrappers.count < maxWrapperDepth, case .object(let inner)? = request.arguments.last?.1,
                  let next = inner as? TLRequest
            else { return (request.name, .failure(Self.invalidInput)) }
            if id == Self.invokeWithLayerID, case .int(let value)? = request.arguments.first?.1 { layer = value }
            wrappers.append(request.name)
            wrapperIDs.append(id)
            request = next
        }
        let registered = registered(for: request.constructorID)
        let name = registered?.name ?? request.name
        let raw = wrappers.isEmpty && first != TLConstructorID.gzipPacked ? body : nil
        var typed: (any TLTypedRequest)?
        if let type = registered?.typed {
            guard let parsed = try? type.parse(bytes: raw ?? request.boxedBytes) else {
                return (name, .failure(Self.invalidInput))
            }
            typed = parsed
        }
        let inner = Inner(dynamic: request, typed: typed, raw: raw, registry: registry)
        return (name, .success(Decoded(inner: inner, wrappers: wrappers, wrapperIDs: wrapperIDs, layer: layer,
                                       method: name, handler: registered)))
    }

    /// Runs a decoded call's handler: the serialized result or the `rpc_error` to send, or, for a handler that
    /// answers later, the call to run for it.
    public func run(_ decoded: Decoded, authKeyID: UInt64, temporaryKeyID: UInt64? = nil, sessionID: Int64,
                    messageID: Int64, endpoint: ServerEndpoint, dcs: [ServerEndpoint],
                    now: Double) -> RPCOutcome {
        guard let handler = decoded.handler else {
            return .answered(.failure(RPCError(code: 400, message: "METHOD_NOT_IMPLEMENTED")))
        }
        let call = RPCCall(inner: decoded.inner, wrappers: decoded.wrappers, layer: decoded.layer,
                           authKeyID: authKeyID, temporaryKeyID: temporaryKeyID, sessionID: sessionID,
                           messageID: messageID, endpoint: endpoint, dcs: dcs, now: now)
        switch handler.answer {
        case .now(let answer):
            do {
                return .answered(.success(try answer(call)))
            } catch {
                return .answered(.failure(error))
            }
        case .later(let answer, let timeout):
            return .later(RPCPendingCall(timeout: timeout) { () async throws(RPCError) -> [UInt8] in
                try await answer(call)
            })
        }
    }

    /// Decodes a request body and answers it: the innermost method's name (`?` when the body does not decode)
    /// and what its handler gave (`run`'s outcome), or the `rpc_error` to send.
    public func dispatch(body: [UInt8], authKeyID: UInt64, sessionID: Int64, messageID: Int64,
                         endpoint: ServerEndpoint, dcs: [ServerEndpoint], now: Double) -> (method: String, outcome: RPCOutcome) {
        let (method, decoded) = decode(body: body)
        switch decoded {
        case .failure(let error):
            return (method, .answered(.failure(error)))
        case .success(let call):
            return (method, run(call, authKeyID: authKeyID, sessionID: sessionID, messageID: messageID,
                                endpoint: endpoint, dcs: dcs, now: now))
        }
    }
}

/// Typed handlers that replace an `RPCHandlers`' own, or add methods it lacks, while its server runs: set as its
/// `overrides`, each takes effect from the next call on.
///
/// ```swift
/// overrides.on(Api.functions.messages.SendMessage.self) { _, _ throws(RPCError) in
///     throw RPCError(code: 420, message: "FLOOD_WAIT_5")
/// }
/// ```
public final class RPCOverrides: Sendable {
    private let table = Mutex<[UInt32: RPCHandlers.Registered]>([:])

    /// No overrides.
    public init() {}

    /// Answers `request`'s function with `handler` from now on, in place of any other handler for it.
    public func on<Request: TLTypedRequest>(_ request: Request.Type, _ handler: @escaping RPCTypedHandler<Request>) {
        let registered = RPCHandlers.typed(request) { call, typed throws(RPCError) in
            Request.resultBytes(try handler(call, typed))
        }
        table.withLock { $0[Request.tlConstructorID] = registered }
    }

    /// Answers `request`'s function with `handler`, which answers when it is ready (see
    /// `RPCHandlers.on(_:timeout:_:)`), from now on, in place of any other handler for it.
    public func on<Request: TLTypedRequest>(_ request: Request.Type, timeout: AnswerTimeout,
                                            _ handler: @escaping RPCLaterTypedHandler<Request>) {
        let registered = RPCHandlers.typedLater(request, timeout: timeout, handler)
        table.withLock { $0[Request.tlConstructorID] = registered }
    }

    /// Removes the override of `request`'s function: the handler it replaced (if any) answers again.
    public func remove<Request: TLTypedRequest>(_ request: Request.Type) {
        _ = table.withLock { $0.removeValue(forKey: Request.tlConstructorID) }
    }

    /// Removes every override.
    public func removeAll() { table.withLock { $0.removeAll() } }

    func registered(for id: UInt32) -> RPCHandlers.Registered? {
        table.withLock { $0.isEmpty ? nil : $0[id] }
    }
}
