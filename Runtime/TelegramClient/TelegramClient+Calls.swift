// Calling the API: `invoke` and its raw forms run a call through the middleware chain (Middleware.swift) to the
// home DC, or to the DC a migration names, and note its result for the update sequence and the peer cache
// (core.telegram.org/api/invoking, /api/datacenter).
import MTProtoClient
import TLRuntime
import TelegramApi

extension TelegramClient {
    /// Runs a call on the home DC, following migrations; returns its typed result or throws `MTProtoClientError`
    /// (`.rpc(RPCError)` for an `rpc_error`) or `TelegramClientError`.
    public nonisolated func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                                timeout: Duration? = nil) async throws -> T {
        let result = try Self.parse(await run(Invocation(body: call.1.bytes, function: call.0, timeout: timeout)),
                                    with: call.2)
        await noteResult(result, of: call.0)
        return result
    }

    /// Runs a call on a given DC (downloads from where a file lives), logging the account in there first if needed.
    public func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>), onDC dc: Int32,
                                    timeout: Duration? = nil) async throws -> T {
        try await load()
        let invocation = Invocation(body: call.1.bytes, function: call.0, dc: dc == homeDC ? nil : dc, timeout: timeout)
        let result = try Self.parse(await run(invocation), with: call.2)
        noteResult(result, of: call.0)
        return result
    }

    /// A serialized request in, the serialized result out, with the same routing as `invoke`. The result is not
    /// read: updates it carries do not reach `updates` (a pts it moves is found as a gap and fetched).
    public nonisolated func invoke(raw body: [UInt8], timeout: Duration? = nil) async throws -> [UInt8] {
        Array(try await invokeInPlace(raw: body, timeout: timeout))
    }

    /// `invoke(raw:)` with the result where it arrived: a slice of the decrypted frame (indices not zero-based), so
    /// a large result is not copied on its way here.
    public nonisolated(nonsending) func invokeInPlace(raw body: [UInt8],
                                                     timeout: Duration? = nil) async throws -> ArraySlice<UInt8> {
        try await run(Invocation(body: body, timeout: timeout))
    }

    /// Runs a call through the middleware chain. With only the built-in middlewares, which act on errors alone, a
    /// call to the connected home DC is sent first and enters the chain only if it fails, with that answer given
    /// back at the chain's end: the same outcome, without the chain's async levels on every call (each a frame and
    /// an executor check on the way back: ~10 % of a pipelined call's CPU).
    @inline(__always)
    nonisolated(nonsending) func run(_ invocation: Invocation) async throws -> ArraySlice<UInt8> {
        guard chain.actsOnErrorsOnly, invocation.dc == nil, let home = homeClient.withLock({ $0 }) else {
            return try await chain.run(invocation, from: 0, client: self)
        }
        do {
            return try await home.invokeOnce(raw: invocation.body, timeout: invocation.timeout)
        } catch MTProtoClientError.rpc(let error) {
            var failed = invocation
            failed.answered = AnsweredOnce(error)
            return try await chain.run(failed, from: 0, client: self)
        }
    }

    /// Where a call leaves the middleware chain: to the home DC's connection without entering this actor when it
    /// is connected, else through the actor (connecting first, or to another DC).
    nonisolated(nonsending) func send(_ invocation: Invocation) async throws -> ArraySlice<UInt8> {
        if let error = invocation.answered?.take() { throw MTProtoClientError.rpc(error) }
        if invocation.dc == nil, let home = homeClient.withLock({ $0 }) {
            return try await home.invokeOnce(raw: invocation.body, timeout: invocation.timeout)
        }
        return try await routed(invocation)
    }

    func routed(_ invocation: Invocation) async throws -> ArraySlice<UInt8> {
        try await load()
        let dc = invocation.dc ?? homeDC
        let body = dc == homeDC ? invocation.body : Self.withoutUpdates(invocation.body)
        return try await client(for: dc).invokeOnce(raw: body, timeout: invocation.timeout)
    }

    nonisolated static func parse<T>(_ bytes: ArraySlice<UInt8>, with parser: DeserializeFunctionResponse<T>) throws -> T {
        do {
            return try parser.parse(bytes: bytes)
        } catch {
            throw MTProtoClientError.decoding(error)
        }
    }

    /// Logs the home DC's account in on `dc` (core.telegram.org/api/datacenter#authorization-transfer).
    func authorize(on dc: Int32) async throws {
        guard dc != homeDC else { return }
        let exported = try await client(for: homeDC).invoke(Api.functions.auth.exportAuthorization(dcId: dc))
        guard case .exportedAuthorization(let transfer) = exported else { return }
        _ = try await client(for: dc).invoke(Api.functions.invokeWithoutUpdates(
            query: Api.functions.auth.importAuthorization(id: transfer.id, bytes: transfer.bytes)))
    }

    /// `body` inside `invokeWithoutUpdates`: calls on a DC other than the home one do not subscribe its session to
    /// updates (core.telegram.org/method/invokeWithoutUpdates), which reach the client on its home DC's connection;
    /// otherwise the server may push the same updates over both.
    nonisolated static func withoutUpdates(_ body: [UInt8]) -> [UInt8] {
        withoutUpdatesPrefix + body
    }

    /// `invokeWithoutUpdates` without its query, which it ends with.
    static let withoutUpdatesPrefix: [UInt8] = {
        let probe = Api.functions.help.getConfig()
        return Array(Api.functions.invokeWithoutUpdates(query: probe).1.bytes.dropLast(probe.1.bytes.count))
    }()

}
