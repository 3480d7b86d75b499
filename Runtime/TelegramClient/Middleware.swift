// `TelegramClient.invoke` runs every call through an ordered chain of middlewares: the configuration's own
// (logging, metrics, rate limits, retry rules), then the built-in ones, `MigrationMiddleware` and
// `FloodWaitMiddleware`, then the connection of the DC the call is for. Each middleware sees the call on its way
// out and its answer or error on the way back, and may send it on again, elsewhere, or not at all.
import MTProto
import MTProtoClient
import Synchronization
import TLRuntime

/// A call on its way through a ``TelegramClient/TelegramClient``'s middleware chain.
public struct Invocation: Sendable {
    /// The serialized request, boxed (function ID first).
    public var body: [UInt8]
    /// The request as built, for its name and parameters; nil for calls made with
    /// ``TelegramClient/TelegramClient/invoke(raw:timeout:)``.
    public var function: FunctionDescription?
    /// The DC the call goes to; nil for the home DC (a call that follows `PHONE_MIGRATE`, `USER_MIGRATE` and
    /// `NETWORK_MIGRATE` along with the account).
    public var dc: Int32?
    /// How long the call waits for its answer; nil for the configuration's `requestTimeout`.
    public var timeout: Duration?
    /// The answer the home DC already gave this call outside the chain (`TelegramClient.run`), which the chain's
    /// end gives back once instead of sending the call again.
    var answered: AnsweredOnce?

    /// A call of `body` to `dc` (nil: the home DC).
    public init(body: [UInt8], function: FunctionDescription? = nil, dc: Int32? = nil, timeout: Duration? = nil) {
        self.body = body
        self.function = function
        self.dc = dc
        self.timeout = timeout
    }
}

/// One step of the chain every ``TelegramClient/TelegramClient/invoke(_:timeout:)`` runs through.
///
/// A middleware gets the call and the rest of the chain, `next`; it returns the serialized result (from `next` or
/// its own) or throws. It may call `next` more than once (a retry), change the call first (another DC, another
/// timeout), or not call it at all (a cache, a rate limit that refuses). It runs on the caller's task and may be
/// called from many at once.
///
/// The configuration's ``TelegramClient/TelegramClient/Configuration/middlewares`` run first, in order, the first
/// one outermost; then ``MigrationMiddleware`` and ``FloodWaitMiddleware``, so a user's middleware sees each call
/// once, however many migrations and flood waits it took.
public protocol InvokeMiddleware: Sendable {
    /// Runs `invocation`, mostly by passing it to `next`. It runs on the caller's executor; a witness declared
    /// without `nonisolated(nonsending)` satisfies it too, and switches executors on the way in and out.
    nonisolated(nonsending) func invoke(_ invocation: Invocation, next: Invoker) async throws -> ArraySlice<UInt8>
}

/// The rest of a middleware chain: call it to send the call on.
public struct Invoker: Sendable {
    let chain: MiddlewareChain
    let index: Int
    /// The client the call is made with.
    public let client: TelegramClient

    /// Runs `invocation` through the rest of the chain and returns its serialized result.
    public nonisolated(nonsending) func callAsFunction(_ invocation: Invocation) async throws -> ArraySlice<UInt8> {
        try await chain.run(invocation, from: index, client: client)
    }
}

/// A client's middlewares in the order they run; the call leaves the last one for its DC's connection.
final class MiddlewareChain: Sendable {
    private let middlewares: [any InvokeMiddleware]
    /// Only the built-in middlewares, which act on a call's error alone: a call may go to the home DC first and
    /// enter the chain only when it fails (`TelegramClient.run`).
    let actsOnErrorsOnly: Bool

    init(_ middlewares: [any InvokeMiddleware], actsOnErrorsOnly: Bool) {
        self.middlewares = middlewares
        self.actsOnErrorsOnly = actsOnErrorsOnly
    }

    nonisolated(nonsending) func run(_ invocation: Invocation, from index: Int,
                                     client: TelegramClient) async throws -> ArraySlice<UInt8> {
        guard index < middlewares.count else { return try await client.send(invocation) }
        return try await middlewares[index].invoke(invocation, next: Invoker(chain: self, index: index + 1,
                                                                             client: client))
    }
}

/// An error the home DC answered a call with before it entered the chain, taken by the first attempt that reaches
/// the chain's end.
final class AnsweredOnce: Sendable {
    private let error: Mutex<RPCError?>

    init(_ error: RPCError) {
        self.error = Mutex(error)
    }

    /// The error, the first time; nil after.
    func take() -> RPCError? {
        error.withLock { error in
            defer { error = nil }
            return error
        }
    }
}

/// Waits out short flood waits and sends the call again (built in, after the configuration's middlewares).
///
/// `FLOOD_WAIT_X`, `FLOOD_PREMIUM_WAIT_X` and `SLOWMODE_WAIT_X` up to `threshold` seconds are waited out, at most
/// `maxRetries` times per call; a longer wait, or one more, is thrown as `MTProtoClientError.rpc`.
public struct FloodWaitMiddleware: InvokeMiddleware {
    /// The longest wait, in seconds, that is waited out.
    public var threshold: Int
    /// How many waits one call waits out before the error is thrown.
    public var maxRetries: Int

    /// Waits up to `threshold` seconds waited out, `maxRetries` times per call.
    public init(threshold: Int, maxRetries: Int = 3) {
        self.threshold = threshold
        self.maxRetries = maxRetries
    }

    /// Sends the call, and again after each flood wait short enough.
    public nonisolated(nonsending) func invoke(_ invocation: Invocation,
                                               next: Invoker) async throws -> ArraySlice<UInt8> {
        var retries = 0
        while true {
            do {
                return try await next(invocation)
            } catch MTProtoClientError.rpc(let error) {
                guard case .floodWait(let seconds) = error.kind, seconds <= threshold, retries < maxRetries
                else { throw MTProtoClientError.rpc(error) }
                retries += 1
                try await Task.sleep(for: .seconds(seconds))
            }
        }
    }
}

/// Follows `*_MIGRATE_X` answers (built in, after the configuration's middlewares;
/// core.telegram.org/api/datacenter).
///
/// `PHONE_MIGRATE`, `USER_MIGRATE` and `NETWORK_MIGRATE` move the account's home DC (kept in the store) and send
/// the call there, for a call to the home DC; a call to a given DC throws them. `FILE_MIGRATE` and
/// `STATS_MIGRATE` log the account in on the DC named (`auth.exportAuthorization`, `auth.importAuthorization`)
/// and send the call there. A call to another DC answered `AUTH_KEY_UNREGISTERED` (or another 401) is sent again,
/// once, after the same transfer. More than `maxMigrations` in a row fail with
/// ``TelegramClientError/tooManyMigrations(last:)``.
public struct MigrationMiddleware: InvokeMiddleware {
    /// How many migrations one call follows.
    public var maxMigrations: Int

    /// Follows up to `maxMigrations` migrations per call.
    public init(maxMigrations: Int) {
        self.maxMigrations = maxMigrations
    }

    /// Sends the call, and again wherever a migration says.
    public nonisolated(nonsending) func invoke(_ invocation: Invocation,
                                               next: Invoker) async throws -> ArraySlice<UInt8> {
        let client = next.client
        let followsHome = invocation.dc == nil
        var call = invocation
        var imported = false
        var last: RPCError?
        for _ in 0...maxMigrations {
            do {
                return try await next(call)
            } catch MTProtoClientError.rpc(let error) {
                last = error
                switch error.kind {
                    case .migrate(let kind, let target):
                        let target = Int32(clamping: target)
                        client.configuration.logger.info("\(error.message): to DC \(target)")
                        switch kind {
                            case .phone, .user, .network:
                                guard followsHome else { throw MTProtoClientError.rpc(error) }
                                try await client.setHome(target)
                                call.dc = nil
                            case .file, .stats:
                                try await client.authorize(on: target)
                                imported = true
                                call.dc = target
                        }
                    case .unauthorized where !imported:
                        // A DC the account was never imported to: export from home, import there, retry once.
                        guard let dc = call.dc, dc != (await client.homeDC) else { throw MTProtoClientError.rpc(error) }
                        try await client.authorize(on: dc)
                        imported = true
                    default:
                        throw MTProtoClientError.rpc(error)
                }
            }
        }
        throw TelegramClientError.tooManyMigrations(last: last ?? RPCError(code: 303, message: "MIGRATE"))
    }
}
