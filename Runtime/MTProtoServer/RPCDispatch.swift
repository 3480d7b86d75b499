// RPC dispatch by method (registered by name, found by constructor ID). A request body is decoded with the registry
// the server was given (the API layer's, so this target needs none), the wrappers every client sends on its first call
// (`invokeWithLayer`, `initConnection`, `invokeWithoutUpdates`, `invokeAfterMsg(s)`) are peeled off, and the innermost
// call goes to the handler registered for its name. Unknown methods are answered `rpc_error` 400
// METHOD_NOT_IMPLEMENTED, never silence; undecodable ones 400 INPUT_METHOD_INVALID (core.telegram.org/api/errors).
import MTProto
import Synchronization
import TLRuntime

/// Where a request came from and where it arrived: what a handler needs besides the request.
public struct RPCCall: Sendable {
    /// The innermost call, wrappers removed.
    public let request: TLRequest
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

    private struct Registered: Sendable {
        let name: String
        let handler: RPCHandler
    }

    /// No handlers, decoding with `registry`.
    public init(registry: TLRegistry) {
        self.registry = registry
        wrapperIDs = Self.wrapperNames.compactMap { registry.functionID(named: $0) }
    }

    /// Registers (or replaces) the handler for `method`, named as in the schema (`help.getConfig`).
    public mutating func register(_ method: String, _ handler: @escaping RPCHandler) {
        handlers[method] = handler
        if let id = registry.functionID(named: method) { byID[id] = Registered(name: method, handler: handler) }
    }

    /// A request body decoded, its wrappers peeled off.
    public struct Decoded: Sendable {
        /// The innermost call.
        public let request: TLRequest
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

    /// Decodes a request body and removes its wrappers: the innermost method's name (`?` when the body does not
    /// decode) and the call, or the `rpc_error` to answer.
    public func decode(body: [UInt8]) -> (method: String, decoded: Result<Decoded, RPCError>) {
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
        let registered = byID[request.constructorID]
        let name = registered?.name ?? request.name
        return (name, .success(Decoded(request: request, wrappers: wrappers, layer: layer, method: name,
                                       handler: registered?.handler)))
    }

    /// Runs a decoded call's handler: the serialized result, or the `rpc_error` to send.
    public func run(_ decoded: Decoded, authKeyID: UInt64, temporaryKeyID: UInt64? = nil, sessionID: Int64,
                    messageID: Int64, endpoint: ServerEndpoint, dcs: [ServerEndpoint],
                    now: Double) -> Result<[UInt8], RPCError> {
        guard let handler = decoded.handler else {
            return .failure(RPCError(code: 400, message: "METHOD_NOT_IMPLEMENTED"))
        }
        let call = RPCCall(request: decoded.request, wrappers: decoded.wrappers, layer: decoded.layer,
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
