// `TelegramClient` through real proxies (microsocks for SOCKS5, tinyproxy for HTTP CONNECT, both with a user and
// password) to the test Telegram on loopback: every framing, plain, obfuscated2 and MTProxy (dd, ee) behind the
// proxy; a wrong password ends with the proxy's refusal; a proxy that accepts and never answers times out.
import Foundation
import MTProtoClient
import MTProtoTransport
import NIOCore
import NIOPosix
import TelegramApi
import TelegramClient
import Testing

@Suite struct ProxyClientTests {
    static let kinds: [ProxyConfiguration.Kind] = [.socks5, .httpConnect]
    static let transports = Fixture.transports.indices.filter { Fixture.transports[$0].1 != .proxy }

    @Test(arguments: kinds, transports)
    func everyTransportSignsInThroughTheProxy(kind: ProxyConfiguration.Kind, index: Int) async throws {
        let (framing, wrapping) = Fixture.transports[index]
        let telegram = try await LocalTelegram.start(seed: 700 + UInt64(index), proxySecret: wrapping.serverSecret)
        let log = try await RealProxy.with(kind) { proxy in
            let client = try telegram.client(transport: framing, obfuscation: wrapping.clientObfuscation,
                                             connectionProxy: proxy.configuration)
            // Through an MTProxy, Bob's PHONE_MIGRATE_1 takes the proxy path to DC 1 as well.
            let phone = wrapping == .dd || wrapping == .ee ? "9996610002" : "9996620001"
            let user = try await LocalTelegram.signIn(client, phone: phone)
            await client.close()
            guard case .user(let me) = user else { throw HarnessFailure(description: "no user") }
            #expect(me.phone == phone)
            return proxy.log
        }
        try await telegram.server.shutdown()
        if kind == .httpConnect {
            // tinyproxy logged the tunnel to the server's port (or the MTProxy port).
            let port = wrapping.serverSecret == nil ? telegram.server.ports[2] : telegram.server.proxyPort
            #expect(log.contains("CONNECT 127.0.0.1:\(port ?? 0) HTTP/1.1"), "\(log)")
        }
    }

    @Test(arguments: kinds)
    func aWrongPasswordFailsWithTheProxysRefusal(kind: ProxyConfiguration.Kind) async throws {
        let telegram = try await LocalTelegram.start(seed: 750)
        try await RealProxy.with(kind) { proxy in
            let client = try telegram.client(connectionProxy: proxy.withPassword("wrong"))
            do {
                _ = try await client.invoke(Api.functions.help.getNearestDc())
                Issue.record("a call went through with a wrong proxy password")
            } catch MTProtoClientError.proxy(let error) {
                switch (kind, error) {
                    case (.socks5, .authenticationFailed): break
                    // tinyproxy 1.11 answers wrong credentials with 401 (missing ones with 407).
                    case (.httpConnect, .httpRefused(status: 401, _)): break
                    default: Issue.record("unexpected proxy error \(error)")
                }
                #expect(error.description.contains(kind == .socks5 ? "refused the user name and password"
                                                                    : "credentials missing or wrong"))
            }
            await client.close()
        }
        try await telegram.server.shutdown()
    }

    /// A "proxy" that accepts TCP and never answers: the handshake fails after its timeout, naming the step.
    @Test func aSilentProxyTimesOut() async throws {
        let silent = try await ServerBootstrap(group: Fixture.timingLoops)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        let telegram = try await LocalTelegram.start(seed: 760)
        var proxy = ProxyConfiguration(kind: .socks5, host: "127.0.0.1", port: silent.localAddress?.port ?? 0)
        proxy.handshakeTimeout = .milliseconds(300)
        let client = try telegram.client(connectionProxy: proxy,
                                         taskExecutor: EventLoopTaskExecutor(Fixture.timingLoops.next()))
        // The proxy's own timeout names its stage; had it not fired, the call would end at the request timeout.
        await withTaskExecutorPreference(client.taskExecutor) {
            do {
                _ = try await client.invoke(Api.functions.help.getNearestDc())
                Issue.record("a call went through a silent proxy")
            } catch MTProtoClientError.proxy(let error) {
                #expect(error == .timedOut(stage: "waiting for the SOCKS5 method choice"))
            } catch {
                Issue.record("failed with \(error) instead of the proxy's timeout")
            }
        }
        await client.close()
        try await telegram.server.shutdown()
        try await silent.close()
    }
}
