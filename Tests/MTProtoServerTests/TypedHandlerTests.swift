// Typed handlers: a call's bytes read into the function's typed request, the handler's typed result written as the
// answer, wrappers and compression peeled off first; and a test's own handlers (`TestTelegramService.on`) taking the
// place of the test Telegram's while it serves.
import MTProto
import MTProtoServer
import Synchronization
import TLRuntime
import TelegramApi
import TelegramApiServer
import TestTelegram
import Testing

@Suite struct TypedHandlerTests {
    static let endpoint = ServerEndpoint(dcID: 2, host: "127.0.0.1", port: 4002)

    static func dispatch(_ handlers: RPCHandlers, _ body: [UInt8]) -> (String, Result<[UInt8], RPCError>) {
        let (method, outcome) = handlers.dispatch(body: body, authKeyID: 1, sessionID: 1, messageID: 4,
                                                  endpoint: endpoint, dcs: [endpoint], now: 1_700_000_000)
        return (method, outcome.now)
    }

    static func dispatch<T>(_ handlers: RPCHandlers,
                            _ function: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>))
        -> (String, Result<T, RPCError>) {
        let (method, answer) = dispatch(handlers, function.1.bytes)
        return (method, answer.flatMap { bytes in
            var reader = BufferReader(bytes: bytes)
            do {
                return .success(try function.2.parse(&reader))
            } catch {
                return .failure(RPCError(code: 0, message: "UNREADABLE \(error)"))
            }
        })
    }

    @Test func aTypedHandlerReadsTheArgumentsAndItsResultIsTheAnswer() throws {
        var handlers = RPCHandlers(registry: Api.registry)
        handlers.on(Api.functions.langpack.GetStrings.self) { call, request in
            request.keys.map { .langPackString(.init(key: $0, value: "\(request.langCode):\(call.endpoint.dcID)")) }
        }
        let function = Api.functions.langpack.getStrings(langPack: "tdesktop", langCode: "de", keys: ["a", "b"])
        let (method, answer) = Self.dispatch(handlers, function)
        #expect(method == "langpack.getStrings")
        let strings = try answer.get()
        #expect(strings.count == 2)
        guard case .langPackString(let first)? = strings.first else {
            Issue.record("not a string: \(strings)")
            return
        }
        #expect(first.key == "a" && first.value == "de:2")
    }

    /// The same handler behind `invokeWithLayer` + `initConnection`, behind `gzip_packed`, and both.
    @Test func wrappedAndCompressedCallsReachTheTypedHandler() throws {
        var handlers = RPCHandlers(registry: Api.registry)
        handlers.on(Api.functions.help.GetAppConfig.self) { call, request in
            .appConfig(.init(hash: request.hash &+ Int32(call.wrappers.count), config: .jsonNull))
        }
        let inner = Api.functions.help.getAppConfig(hash: 40)
        let wrapped = Api.functions.invokeWithLayer(layer: Api.layer, query: Api.functions.initConnection(
            apiId: 1, deviceModel: "d", systemVersion: "s", appVersion: "a", systemLangCode: "en", langPack: "",
            langCode: "en", query: inner))
        let bodies: [(String, [UInt8], Int32)] = [
            ("plain", inner.1.bytes, 40), ("wrapped", wrapped.1.bytes, 42),
            ("compressed", GZip.packedObject(inner.1.bytes), 40),
            ("compressed and wrapped", GZip.packedObject(wrapped.1.bytes), 42),
        ]
        for (what, body, hash) in bodies {
            let (method, answer) = Self.dispatch(handlers, body)
            #expect(method == "help.getAppConfig", "\(what)")
            var reader = BufferReader(bytes: try answer.get())
            guard case .appConfig(let config) = try Api.help.AppConfig.parse(&reader) else {
                Issue.record("\(what): not an appConfig")
                continue
            }
            #expect(config.hash == hash, "\(what)")
        }
    }

    /// The server knows the wrappers and the methods it treats apart by constructor ID: each ID is the schema's
    /// function of that name, every wrapper's last field is its `query:!X`, and a call inside the rarer ones
    /// (`invokeWithTakeout`, `invokeAfterMsgs`) reaches its handler as one inside `invokeWithLayer` does.
    @Test func wrappersAndSpecialMethodsAreKnownByConstructorID() throws {
        for id in RPCHandlers.wrapperIDs {
            let definition = try #require(Api.registry.functionDefinition(for: id), "\(id)")
            #expect("\(definition)".hasSuffix("query:!X = X;"), "\(definition)")
        }
        #expect(Set(RPCHandlers.wrapperIDs.compactMap { Api.registry.functionDefinition(for: $0) }.map { "\($0)" }).count
                == RPCHandlers.wrapperIDs.count)
        let unbound = ["auth.bindTempAuthKey", "help.getConfig", "help.getNearestDc"]
        #expect(ServerContext.methodsWithoutBinding == Set(unbound.compactMap { Api.registry.functionID(named: $0) }))

        var handlers = RPCHandlers(registry: Api.registry)
        handlers.on(Api.functions.help.GetAppConfig.self) { call, request in
            .appConfig(.init(hash: request.hash &+ Int32(call.wrappers.count), config: .jsonNull))
        }
        let inner = Api.functions.help.getAppConfig(hash: 40)
        let wrapped = Api.functions.invokeWithTakeout(takeoutId: 9, query: Api.functions.invokeAfterMsgs(
            msgIds: [1, 2], query: Api.functions.invokeWithoutUpdates(query: inner)))
        guard case .appConfig(let config) = try Self.dispatch(handlers, wrapped).1.get() else {
            Issue.record("not an appConfig")
            return
        }
        #expect(config.hash == 43)
        let decoded = try handlers.decode(body: wrapped.1.bytes).decoded.get()
        #expect(decoded.wrappers == ["invokeWithTakeout", "invokeAfterMsgs", "invokeWithoutUpdates"])
        #expect(!RPCHandlers.subscribesToUpdates(decoded))
        #expect(RPCHandlers.subscribesToUpdates(try handlers.decode(body: inner.1.bytes).decoded.get()))
    }

    /// A call whose bytes do not read as its function's request is refused as Telegram refuses it, before the
    /// handler runs; the dynamic view of a typed call reads the same arguments.
    @Test func malformedCallsNeverReachTheHandler() throws {
        var handlers = RPCHandlers(registry: Api.registry)
        let calls = Mutex(0)
        handlers.on(Api.functions.contacts.ResolveUsername.self) { call, request in
            calls.withLock { $0 += 1 }
            #expect((try? (try call.request).argument("username", as: String.self)) == request.username)
            return .resolvedPeer(.init(peer: .peerUser(.init(userId: 1)), chats: [], users: []))
        }
        let good = Api.functions.contacts.resolveUsername(username: "alice_test").1.bytes
        #expect((try? Self.dispatch(handlers, good).1.get()) != nil)
        for cut in [4, 8, good.count - 1] {
            let (_, answer) = Self.dispatch(handlers, Array(good.prefix(cut)))
            #expect(answer == .failure(RPCError(code: 400, message: "INPUT_METHOD_INVALID")), "cut at \(cut)")
        }
        let trailing = Self.dispatch(handlers, good + [0, 0, 0, 0]).1
        #expect(trailing == .failure(RPCError(code: 400, message: "INPUT_METHOD_INVALID")))
        #expect(calls.withLock { $0 } == 1)
    }

    /// A test replaces one method of the running test Telegram, adds one it lacks, and removes both again.
    @Test func aTestOverridesAndAddsMethodsOfTheTestTelegram() throws {
        let service = TestTelegramService()
        let handlers = service.handlers()   // as a running server holds them
        let nearest = Api.functions.help.getNearestDc()
        guard case .success(.nearestDc(let own)) = Self.dispatch(handlers, nearest).1 else {
            Issue.record("help.getNearestDc not answered")
            return
        }
        #expect(own.country == "ZZ")

        service.on(Api.functions.help.GetNearestDc.self) { _, _ throws(RPCError) in
            throw RPCError(code: 420, message: "FLOOD_WAIT_5")
        }
        #expect(Self.dispatch(handlers, nearest.1.bytes).1 == .failure(RPCError(code: 420, message: "FLOOD_WAIT_5")))

        let promo = Api.functions.help.getPromoData()
        #expect(Self.dispatch(handlers, promo.1.bytes).1 == .failure(RPCError(code: 400, message: "METHOD_NOT_IMPLEMENTED")))
        service.on(Api.functions.help.GetPromoData.self) { call, _ in
            .promoDataEmpty(.init(expires: Int32(call.now) + 3600))
        }
        guard case .success(.promoDataEmpty(let empty)) = Self.dispatch(handlers, promo).1 else {
            Issue.record("help.getPromoData not answered by the test's handler")
            return
        }
        #expect(empty.expires == 1_700_003_600)
        // Behind the wrappers a client's first call carries, too.
        let wrapped = Api.functions.invokeWithLayer(layer: Api.layer, query: promo)
        #expect((try? Self.dispatch(handlers, wrapped).1.get()) != nil)

        service.removeHandler(for: Api.functions.help.GetNearestDc.self)
        service.removeHandler(for: Api.functions.help.GetPromoData.self)
        guard case .success(.nearestDc) = Self.dispatch(handlers, nearest).1 else {
            Issue.record("the test Telegram's own handler did not come back")
            return
        }
        #expect(Self.dispatch(handlers, promo.1.bytes).1 == .failure(RPCError(code: 400, message: "METHOD_NOT_IMPLEMENTED")))
    }
}
