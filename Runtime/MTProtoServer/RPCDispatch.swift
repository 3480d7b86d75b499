// RPC dispatch by method, found by constructor ID. A typed handler (`on(_:_:)`) names its function by a request type of
// a generated server module, which reads the call and types its result; a dynamic one (`register(_:_:)`) by name, and
// reads the registry's `TLRequest`. The wrappers every client sends on its first call (`invokeWithLayer`,
// `initConnection`, `invokeWithoutUpdates`, `invokeAfterMsg(s)`) are peeled off with the registry the server was given
// (the API layer's, so this target needs none), and the innermost call goes to its handler. Unknown methods are
// answered `rpc_error` 400 METHOD_NOT_IMPLEMENTED, never silence; undecodable ones 400 INPUT_METHOD_INVALID
// (core.telegram.org/api/errors).
import MTProto
import Synchronization
import TLRuntime

/// Where a request came from and where it arrived: what a handler needs besides the request.
public struct RPCCall: Sendable {
    /// The innermost call, wrappers removed, read by the registry's dynamic reader (a typed handler gets its typed
    /// request as its argument; this reads the same bytes again when asked).
    public var request: TLRequest { inner.request }
    let inner: RPCHandlers.Inner
    /// The wrappers removed, outermost first (e.g. `["invokeWithLayer", "initConnection"]`).
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

/// Handlers by method name (`help.getConfig`), and the registry requests are decoded with.
public struct RPCHandlers: Sendable {
    /// The registry requests are decoded with (`Api.registry` for the test Telegram).
    public let registry: TLRegistry
    /// The handlers by method name.
    public private(set) var handlers: [String: RPCHandler] = [:]
    /// Wrappers nested deeper than this are refused (each is a call holding a call).
    public var maxWrapperDepth = 8

    /// Whether a call subscribes its session to updates: any but a file query (`upload.*`) or one wrapped in
    /// `invokeWithoutUpdates` (core.telegram.org/method/invokeWithoutUpdates).
    public static func subscribesToUpdates(method: String, wrappers: [String]) -> Bool {
        !method.hasPrefix("upload.") && !wrappers.contains("invokeWithoutUpdates")
    }

    /// Wrappers unwrapped before dispatch: their `query` field is the real call.
    public static let wrapperNames: Set<String> = [
        "invokeWithLayer", "initConnection", "invokeWithoutUpdates", "invokeAfterMsg", "invokeAfterMsgs",
    ]

    /// The handlers again by the method's constructor ID, with its name: a request is dispatched without making
    /// its name and hashing it (with SipHash, twice with `wrapperNames`), which a pipelined run paid per call.
    private var byID = IDMap<UInt32, Registered>()
    /// `wrapperNames`' IDs in `registry`; a handful, so a linear scan.
    private let wrapperIDs: [UInt32]

    struct Registered: Sendable {
        let name: String
        let handler: RPCHandler
        /// For a typed handler: its request type, which the call's bytes are parsed into before the handler runs.
        let typed: (any TLTypedRequest.Type)?
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

        /// The dynamic reader's request: the typed path never made one, so it is read from the bytes when asked. The
        /// bytes parsed as the typed request, which covers the same schema, so this reads them too; an empty request
        /// of the function stands in should it not.
        var request: TLRequest {
            if let dynamic { return dynamic }
            if let parsed = (try? registry.parseRequest(bytes: bytes)) ?? nil { return parsed }
            return TLRequest(definition: registry.functionDefinition(for: constructorID) ?? "unknown#0 = Unknown;",
                             arguments: [])
        }
    }

    /// No handlers, decoding with `registry`.
    public init(registry: TLRegistry) {
        self.registry = registry
        wrapperIDs = Self.wrapperNames.compactMap { registry.functionID(named: $0) }
    }

    /// Registers (or replaces) the handler for `method`, named as in the schema (`help.getConfig`).
    public mutating func register(_ method: String, _ handler: @escaping RPCHandler) {
        handlers[method] = handler
        if let id = registry.functionID(named: method) {
            byID[id] = Registered(name: method, handler: handler, typed: nil)
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

    /// A typed handler as the table keeps it: `answer` gets the call's typed request and writes the answer.
    static func typed<Request: TLTypedRequest>(
        _ request: Request.Type, _ answer: @escaping @Sendable (RPCCall, Request) throws(RPCError) -> [UInt8]
    ) -> Registered {
        let erased: RPCHandler = { call throws(RPCError) in
            guard let typed = call.inner.typed as? Request else { throw Self.invalidInput }
            return try answer(call, typed)
        }
        return Registered(name: Request.tlFunctionName, handler: erased, typed: Request.self)
    }

    private mutating func add(_ registered: Registered) {
        handlers[registered.name] = registered.handler
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
        /// The innermost call, as the registry's dynamic reader reads it.
        public var request: TLRequest { inner.request }
        let inner: Inner
        /// The innermost call's constructor ID.
        public var constructorID: UInt32 { inner.constructorID }
        /// The innermost call, boxed.
        public var bytes: [UInt8] { inner.bytes }
        /// The wrappers removed, outermost first.
        public let wrappers: [String]
        /// `invokeWithLayer.layer`, when there was one.
        public let layer: Int32?
        /// The innermost call's name (`request.name`, kept).
        public let method: String
        /// Its handler, when one is registered.
        let handler: RPCHandler?
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
        if !wrapperIDs.contains(first), let registered = registered(for: first), let type = registered.typed {
            guard let typed = try? type.parse(bytes: body) else { return ("?", .failure(Self.invalidInput)) }
            let inner = Inner(dynamic: nil, typed: typed, raw: body, registry: registry)
            return (registered.name, .success(Decoded(inner: inner, wrappers: [], layer: nil, method: registered.name,
                                                      handler: registered.handler)))
        }
        guard var request = try? registry.parseRequest(bytes: body) else {
            return ("?", .failure(Self.invalidInput))
        }
        var wrappers: [String] = []
        var layer: Int32?
        while wrapperIDs.contains(request.constructorID) {
            let name = request.name
            guard wrappers.count < maxWrapperDepth, case .object(let inner)? = request["query"],
                  let next = inner as? TLRequest
            else { return (name, .failure(Self.invalidInput)) }
            if name == "invokeWithLayer", case .int(let value)? = request["layer"] { layer = value }
            wrappers.append(name)
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
        return (name, .success(Decoded(inner: inner, wrappers: wrappers, layer: layer, method: name,
                                       handler: registered?.handler)))
    }

    /// Runs a decoded call's handler: the serialized result, or the `rpc_error` to send.
    public func run(_ decoded: Decoded, authKeyID: UInt64, temporaryKeyID: UInt64? = nil, sessionID: Int64,
                    messageID: Int64, endpoint: ServerEndpoint, dcs: [ServerEndpoint],
                    now: Double) -> Result<[UInt8], RPCError> {
        guard let handler = decoded.handler else {
            return .failure(RPCError(code: 400, message: "METHOD_NOT_IMPLEMENTED"))
        }
        let call = RPCCall(inner: decoded.inner, wrappers: decoded.wrappers, layer: decoded.layer,
                           authKeyID: authKeyID, temporaryKeyID: temporaryKeyID, sessionID: sessionID,
                           messageID: messageID, endpoint: endpoint, dcs: dcs, now: now)
        do {
            return .success(try handler(call))
        } catch {
            return .failure(error)
        }
    }

    /// Decodes a request body and answers it: the innermost method's name (`?` when the body does not decode)
    /// and the serialized result, or the `rpc_error` to send.
    public func dispatch(body: [UInt8], authKeyID: UInt64, sessionID: Int64, messageID: Int64,
                         endpoint: ServerEndpoint, dcs: [ServerEndpoint], now: Double) -> (method: String, result: Result<[UInt8], RPCError>) {
        let (method, decoded) = decode(body: body)
        switch decoded {
        case .failure(let error):
            return (method, .failure(error))
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
