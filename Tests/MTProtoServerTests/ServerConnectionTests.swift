// The server role in process: for every transport a client can speak, a key exchange and the first call a client
// makes, answered; an unknown key answered with −404; the server's bounds.
import MTProto
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

@Suite struct ServerConnectionTests {
    @Test(arguments: Fixture.transports.indices)
    func handshakeThenGetConfig(index: Int) throws {
        let (kind, wrapping) = Fixture.transports[index]
        let context = try Fixture.context(wrapping: wrapping, seed: UInt64(index))
        var pair = try Pair(context: context, kind: kind, wrapping: wrapping, seed: UInt64(index))
        let result = try pair.handshake()
        #expect(context.keys.entry(id: result.authKey.idValue)?.key == result.authKey)
        #expect(pair.server.negotiated?.kind == kind, "\(kind) \(wrapping)")
        #expect(pair.server.negotiated?.obfuscated == (wrapping != .plain))
        #expect(pair.server.negotiated?.fakeTLS == (wrapping == .ee))

        guard case .success(.config(let config)) = try pair.call(firstCall()) else {
            Issue.record("help.getConfig was not answered with a config")
            return
        }
        #expect(config.thisDc == 2)
        guard case .dcOption(let option)? = config.dcOptions.first else {
            Issue.record("no DC option")
            return
        }
        #expect(option.ipAddress == "127.0.0.1" && option.port == 4430)
        #expect(pair.events.contains(.handled(method: "help.getConfig",
                                              SessionKey(authKeyID: result.authKey.idValue,
                                                         sessionID: pair.session?.sessionID ?? 0), error: nil)))
        #expect(context.sessions.count == 1)
        #expect(pair.server.closed == nil)
    }

    /// Telethon's first message carries salt 0: the session answers bad_server_salt and the resend is answered.
    @Test func saltZeroIsCorrected() throws {
        let context = try Fixture.context()
        var pair = try Pair(context: context, kind: .intermediate, wrapping: .plain, seed: 7)
        _ = try pair.handshake(salt: 0)
        guard case .success(.config) = try pair.call(firstCall()) else {
            Issue.record("not answered after bad_server_salt")
            return
        }
    }

    @Test func unknownMethodIsAnsweredNotImplemented() throws {
        var pair = try Pair(context: try Fixture.context(), kind: .abridged, wrapping: .plain, seed: 8)
        _ = try pair.handshake()
        let answer = try pair.call(Api.functions.invokeWithLayer(layer: Api.layer,
                                                                 query: Api.functions.help.getCdnConfig()))
        guard case .failure(let error) = answer else {
            Issue.record("an unregistered method was answered with a result")
            return
        }
        #expect(error.code == 400 && error.message == "METHOD_NOT_IMPLEMENTED")
    }

    @Test func handlersSeeTheUnwrappedCall() throws {
        var handlers = RPCHandlers(registry: Api.registry)
        handlers.register("help.getNearestDc") { call throws(RPCError) in
            guard call.wrappers == ["invokeWithLayer", "initConnection"], call.layer == Api.layer else {
                throw RPCError(code: 500, message: "WRAPPERS_LOST")
            }
            return TestTelegram.serialized(Api.NearestDc.nearestDc(.init(country: "ZZ", thisDc: 2, nearestDc: 3)))
        }
        var pair = try Pair(context: try Fixture.context(handlers: handlers), kind: .full, wrapping: .plain, seed: 9)
        _ = try pair.handshake()
        let answer = try pair.call(Api.functions.invokeWithLayer(
            layer: Api.layer,
            query: Api.functions.initConnection(
                apiId: 1, deviceModel: "d", systemVersion: "s", appVersion: "a", systemLangCode: "en", langPack: "",
                langCode: "en", query: Api.functions.help.getNearestDc())))
        guard case .success(.nearestDc(let nearest)) = answer else {
            Issue.record("not answered: \(answer)")
            return
        }
        #expect(nearest.nearestDc == 3)
    }

    /// Handlers are registered by name and found by constructor ID: the latest registration wins, a name the
    /// registry does not know is never dispatched to, and an unregistered method keeps its name.
    @Test func dispatchByConstructorID() throws {
        #expect(Api.registry.functionID(named: "help.getNearestDc") == 0x1fb3_3026)
        #expect(Api.registry.functionID(named: "help.noSuchMethod") == nil)
        var handlers = RPCHandlers(registry: Api.registry)
        handlers.register("help.getNearestDc") { _ throws(RPCError) in throw RPCError(code: 500, message: "FIRST") }
        handlers.register("help.getNearestDc") { _ throws(RPCError) in throw RPCError(code: 500, message: "SECOND") }
        handlers.register("help.noSuchMethod") { _ throws(RPCError) in throw RPCError(code: 500, message: "STRAY") }
        let endpoint = ServerEndpoint(dcID: 2, host: "127.0.0.1", port: 4002)
        func dispatch<T>(_ function: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>))
            -> (String, Result<[UInt8], RPCError>) {
            let (method, outcome) = handlers.dispatch(body: function.1.bytes, authKeyID: 1, sessionID: 1,
                                                      messageID: 4, endpoint: endpoint, dcs: [endpoint], now: 0)
            return (method, outcome.now)
        }
        let (method, result) = dispatch(Api.functions.invokeWithLayer(layer: Api.layer,
                                                                      query: Api.functions.help.getNearestDc()))
        #expect(method == "help.getNearestDc")
        #expect(result == .failure(RPCError(code: 500, message: "SECOND")))
        let (other, unanswered) = dispatch(Api.functions.help.getCdnConfig())
        #expect(other == "help.getCdnConfig")
        #expect(unanswered == .failure(RPCError(code: 400, message: "METHOD_NOT_IMPLEMENTED")))
        let decoded = try handlers.decode(body: Api.functions.help.getNearestDc().1.bytes).decoded.get()
        #expect(try decoded.request.constructorID == 0x1fb3_3026)
    }

    @Test(arguments: [TransportKind.abridged, .intermediate, .paddedIntermediate, .full])
    func unknownAuthKeyGetsMinus404(kind: TransportKind) throws {
        let context = try Fixture.context()
        var pair = try Pair(context: context, kind: kind, wrapping: .plain, seed: 10)
        let stranger = try AuthKey(SeededRandom(seed: 99).bytes(256))
        var session = Session(role: .client, authKey: stranger, salt: 1, random: SeededRandom(seed: 100))
        _ = try session.send(firstCall())
        for frame in session.outgoing(now: pair.now) { _ = try pair.deliver(frame.bytes) }
        #expect(pair.transportErrors == [-404])
        #expect(pair.server.closed == .unknownAuthKey(stranger.idValue))
        #expect(context.sessions.count == 0)
        // Nothing more is read from a closed connection.
        #expect(pair.server.receive([1, 2, 3, 4], now: pair.now).outbound.isEmpty)
    }

    /// A client whose key the server lost (or never had, as Telethon's unpadded keys) re-handshakes on a new
    /// connection and is served.
    @Test func rehandshakeAfterMinus404() throws {
        let context = try Fixture.context()
        var first = try Pair(context: context, kind: .intermediate, wrapping: .obfuscated2, seed: 11)
        let key = try first.handshake()
        context.keys.remove(id: key.authKey.idValue)
        do {
            _ = try first.call(firstCall())
            Issue.record("a call on a forgotten key was answered")
        } catch {
            #expect(error is HarnessFailure)
        }
        #expect(first.transportErrors == [-404])
        var second = try Pair(context: context, kind: .intermediate, wrapping: .obfuscated2, seed: 12)
        _ = try second.handshake()
        guard case .success(.config) = try second.call(firstCall()) else {
            Issue.record("the new key was not served")
            return
        }
    }

    /// A key exchange for a DC this port does not serve ends with −404 before the close, so the client can say
    /// why instead of seeing the connection drop.
    @Test func anExchangeForAnotherDCIsAnsweredMinus404() throws {
        var pair = try Pair(context: try Fixture.context(), kind: .intermediate, seed: 13)
        pair.exchange = AuthKeyExchange.Client(configuration: .init(keys: [try Fixture.rsaKey().publicKey], dcID: 3),
                                               random: pair.random)
        let reqDHParams = try pair.exchangeMessage(after: 1)
        #expect(try pair.deliver(reqDHParams).isEmpty)
        #expect(pair.transportErrors == [-404])
        #expect(pair.server.closed == .exchange(AuthKeyExchangeError(.reqDHParams, .dcMismatch(3))))
    }

    /// A frame sent with the quick-ack bit is acknowledged at once with the token the client's session expects.
    @Test(arguments: [TransportKind.abridged, .intermediate, .paddedIntermediate])
    func quickAckIsAnswered(kind: TransportKind) throws {
        var pair = try Pair(context: try Fixture.context(), kind: kind, wrapping: .obfuscated2, seed: 15)
        let key = try pair.handshake()
        var configuration = SessionConfiguration()
        configuration.quickAcks = true
        var session = Session(role: .client, authKey: key.authKey, salt: key.firstSalt, timeOffset: key.timeOffset,
                              configuration: configuration, random: SeededRandom(seed: 16))
        let id = try session.send(firstCall())
        let frames = session.outgoing(now: pair.now)
        let token = try #require(frames.first?.quickAckToken)
        _ = try pair.deliver(frames[0].bytes, quickAck: true)
        #expect(pair.quickAcks == [token])
        guard case .acknowledged(let ids)? = session.receiveQuickAck(token).first else {
            Issue.record("the token did not acknowledge the request")
            return
        }
        #expect(ids.contains(id))  // with the get_future_salts the session packed beside it
    }

    /// An update pushed into a session outside any request goes out on the connection's next flush.
    @Test func pushedUpdateIsFlushed() throws {
        let context = try Fixture.context()
        var pair = try Pair(context: context, kind: .intermediate, wrapping: .plain, seed: 17)
        let key = try pair.handshake()
        guard case .success = try pair.call(firstCall()) else { throw HarnessFailure(description: "no config") }
        var session = try #require(pair.session)
        let sessionKey = SessionKey(authKeyID: key.authKey.idValue, sessionID: session.sessionID)
        #expect(pair.server.sessionKeys == [sessionKey])
        let update = TestTelegram.serialized(Api.Updates.updatesTooLong)
        #expect(context.sessions.withExisting(sessionKey) { $0.push(update) } != nil)
        let output = pair.server.flush(now: pair.now)
        var received: [[UInt8]] = []
        for case .frame(let payload, _) in try pair.transport.receive(output.outbound).events {
            for case .update(let bytes, _) in try session.receive(frame: payload, now: pair.now) { received.append(bytes) }
        }
        #expect(received == [update])
    }

    @Test func keysAndSessionsAreBounded() throws {
        var limits = ServerLimits()
        limits.maxAuthKeys = 2
        limits.maxSessionsPerKey = 2
        let context = try Fixture.context(limits: limits)
        var keys: [AuthKey] = []
        for seed in 20..<23 as Range<UInt64> {
            var pair = try Pair(context: context, kind: .abridged, wrapping: .plain, seed: seed)
            keys.append(try pair.handshake().authKey)
        }
        #expect(context.keys.count == 2)
        #expect(context.keys.entry(id: keys[0].idValue) == nil, "the oldest key goes first")
        // Three sessions on one key: the least recently used is forgotten.
        var pair = try Pair(context: context, kind: .abridged, wrapping: .plain, seed: 30)
        let key = try pair.handshake()
        for seed in 31..<34 as Range<UInt64> {
            pair.session = Session(role: .client, authKey: key.authKey, salt: key.firstSalt, timeOffset: key.timeOffset,
                                   random: SeededRandom(seed: seed))
            guard case .success = try pair.call(firstCall()) else {
                Issue.record("session \(seed) not served")
                return
            }
        }
        #expect(context.sessions.count == 2)
    }

    @Test func exchangesPerConnectionAreBounded() throws {
        var limits = ServerLimits()
        limits.maxExchangesPerConnection = 1
        var pair = try Pair(context: try Fixture.context(limits: limits), kind: .abridged, wrapping: .plain, seed: 40)
        _ = try pair.handshake()
        pair.exchange = AuthKeyExchange.Client(configuration: pair.exchange.configuration, random: pair.random)
        _ = try pair.deliver(pair.exchange.start(now: pair.now))
        #expect(pair.server.closed == .tooManyExchanges(limit: 1))
    }

    @Test func idleConnectionsClose() throws {
        var limits = ServerLimits()
        limits.idleTimeout = 10
        var server = ServerConnection(context: try Fixture.context(limits: limits), now: Fixture.now)
        #expect(server.nextDeadline == Fixture.now + 10)
        #expect(server.tick(now: Fixture.now + 5).close == nil)
        #expect(server.tick(now: Fixture.now + 10).close == .idle(seconds: 10))
        #expect(server.nextDeadline == nil)
    }
}
