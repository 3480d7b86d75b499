// A local test Telegram with one signed-in user and that user's client, for the benchmarks of the SDK client.
import BenchmarkSupport
import MTProtoClient
import MTProtoServer
import MTProtoCrypto
import NIOCore
import TelegramApi
import TelegramClient
import TestTelegram

/// The test Telegram's service and server, and the signed-in client of its one user.
public struct SignedIn: Sendable {
    public let service: TestTelegramService
    public let server: MTProtoTestServer
    public let client: TelegramClient
    /// The server's key, for more clients.
    public let serverKey: RSAPublicKey

    /// Starts a server with the user +9996620001 under `limits` and signs their client in. The client runs on `loop`,
    /// as in a process of its own: on one of the server's loops, its work and the server's would share a thread.
    public static func start(key: RSAPrivateKey, limits: TestTelegramService.Limits, followsUpdates: Bool = true,
                             loop: any EventLoop) async throws -> SignedIn {
        let service = TestTelegramService(limits: limits)
        try service.addUser(phone: "9996620001", firstName: "Bench")
        var serverLimits = ServerLimits()
        serverLimits.maxQueuedBytes = 64 << 20
        let server = try await MTProtoTestServer.start(.init(rsaKeys: [key], handlers: service.handlers(),
                                                             limits: serverLimits))
        service.attach(server)
        let client = try await signIn(port: server.port, key: key.publicKey, followsUpdates: followsUpdates, loop: loop)
        return SignedIn(service: service, server: server, client: client, serverKey: key.publicKey)
    }

    /// Another client of the same user, signed in, on `loop`.
    public func anotherClient(followsUpdates: Bool = true, loop: any EventLoop) async throws -> TelegramClient {
        try await Self.signIn(port: server.port, key: serverKey, followsUpdates: followsUpdates, loop: loop)
    }

    private static func signIn(port: Int, key: RSAPublicKey, followsUpdates: Bool,
                               loop: any EventLoop) async throws -> TelegramClient {
        let client = TelegramClient(configuration: .init(
            app: .init(apiID: 1, apiHash: "bench"), dcs: [2: DCAddress(host: "127.0.0.1", port: port)],
            serverKeys: [key], followsUpdates: followsUpdates), taskExecutor: EventLoopTaskExecutor(loop))
        guard case .sentCode(let code) = try await client.invoke(Api.functions.auth.sendCode(
            phoneNumber: "9996620001", apiId: 1, apiHash: "bench", settings: .codeSettings(.init())))
        else { throw BenchmarkFailure(description: "no code") }
        _ = try await client.invoke(Api.functions.auth.signIn(phoneNumber: "9996620001", phoneCodeHash: code.phoneCodeHash,
                                                              phoneCode: "22222"))
        return client
    }

    /// Closes the client, then the server.
    public func close() async throws {
        await client.close()
        try await server.shutdown()
    }
}
