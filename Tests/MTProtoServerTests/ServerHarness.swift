// An in-process client for `ServerConnection`: the existing `ClientTransport`, `AuthKeyExchange.Client` and client
// `Session` wired to one server connection in memory, seeded and with a fixed clock, so every test replays.
import Foundation
import MTProto
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import NIOPosix
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

extension RPCOutcome {
    /// The answer of a handler that answers at once; a pending one reads as an error no handler sends.
    var now: Result<[UInt8], RPCError> { answer ?? .failure(RPCError(code: 0, message: "ANSWERS_LATER")) }
}

struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
}

enum Fixture {
    static let now: Double = 1_700_000_000
    static let key = "0123456789abcdef0123456789abcdef"

    /// Loops for tests that bound how long something takes: in a whole `swift test` other suites' heavy work on the
    /// shared singleton loops held a connection for 47 s, and on the cooperative pool for 50 s.
    static let timingLoops = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    /// The obfuscations a server listener can be configured for, with the client configuration that speaks it.
    enum Wrapping: String, CaseIterable, CustomStringConvertible {
        case plain, obfuscated2, proxy, dd, ee

        var description: String { rawValue }

        var serverSecret: MTProxySecret? {
            switch self {
            case .plain, .obfuscated2: nil
            case .proxy: try? MTProxySecret(parsing: Fixture.key)
            case .dd: try? MTProxySecret(parsing: "dd" + Fixture.key)
            case .ee: try? MTProxySecret(parsing: "ee" + Fixture.key + "6c6f63616c686f7374")  // "localhost"
            }
        }

        var clientObfuscation: TransportConfiguration.Obfuscation {
            switch self {
            case .plain: .none
            case .obfuscated2: .obfuscated2
            case .proxy, .dd, .ee: serverSecret.map { .mtproxy($0) } ?? .none
            }
        }
    }

    /// Every (framing, wrapping) a client can use: full framing exists only unobfuscated, and `dd`/`ee` secrets
    /// force padded intermediate.
    static let transports: [(TransportKind, Wrapping)] = {
        var all: [(TransportKind, Wrapping)] = TransportKind.allCases.map { ($0, .plain) }
        for wrapping in [Wrapping.obfuscated2, .proxy] {
            all += TransportKind.allCases.filter { $0 != .full }.map { ($0, wrapping) }
        }
        return all + [(.paddedIntermediate, .dd), (.paddedIntermediate, .ee)]
    }()

    static func rsaKey() throws -> RSAPrivateKey {
        guard let n = testKey?["n"], let d = testKey?["d"] else {
            throw HarnessFailure(description: "Fixtures/vectors/crypto_vectors.json has no rsa_test_key")
        }
        return try RSAPrivateKey(modulusDecimal: n, publicExponentDecimal: "65537", privateExponentDecimal: d)
    }

    static func context(wrapping: Wrapping = .plain, seed: UInt64 = 1, limits: ServerLimits = ServerLimits(),
                        handlers: RPCHandlers = TestTelegram.handlers()) throws -> ServerContext {
        ServerContext(
            exchange: try .init(keys: [try rsaKey()], dcID: 2),
            transport: ServerTransportConfiguration(secret: wrapping.serverSecret, maximumPadding: 3),
            handlers: handlers, endpoint: ServerEndpoint(dcID: 2, host: "127.0.0.1", port: 4430), limits: limits,
            random: SeededRandom(seed: seed))
    }

    /// crypto_vectors.json's deterministic 2048-bit test key (never for real use).
    static let testKey: [String: String]? = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/vectors/crypto_vectors.json")
        guard let data = try? Data(contentsOf: file),
              let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let key = root["rsa_test_key"] as? [String: Any] else { return nil }
        return key.compactMapValues { $0 as? String }
    }()
}

/// One client connected to one `ServerConnection`, both in memory.
struct Pair {
    var server: ServerConnection
    var transport: ClientTransport
    var exchange: AuthKeyExchange.Client
    var session: Session?
    /// Everything the server reported, in order.
    var events: [ServerConnectionEvent] = []
    /// Transport error codes the client received (−404).
    var transportErrors: [Int32] = []
    /// Quick-ack tokens the client received.
    var quickAcks: [UInt32] = []
    /// The handlers' work the server handed out to run (calls answered later).
    var awaiting: [AwaitedAnswer] = []
    let random: SeededRandom
    var now = Fixture.now

    /// - Parameter temporaryKeyLifetime: makes the exchange's key a temporary one living this many seconds.
    init(context: ServerContext, kind: TransportKind = .intermediate, wrapping: Fixture.Wrapping = .plain, seed: UInt64,
         temporaryKeyLifetime: Int32? = nil) throws {
        random = SeededRandom(seed: seed &+ 1000)
        server = ServerConnection(context: context, now: Fixture.now)
        transport = try ClientTransport(
            configuration: TransportConfiguration(kind: kind, obfuscation: wrapping.clientObfuscation, dcId: 2),
            random: random, unixTime: Int32(Fixture.now))
        exchange = AuthKeyExchange.Client(
            configuration: .init(keys: [try Fixture.rsaKey().publicKey], dcID: 2, temporaryKeyLifetime: temporaryKeyLifetime),
            random: random)
    }

    /// Sends a payload through the client transport; returns the client frames decoded from the server's answer.
    mutating func deliver(_ payload: [UInt8], quickAck: Bool = false) throws -> [[UInt8]] {
        try deliverRaw(try transport.send(payload, quickAck: quickAck))
    }

    /// Feeds raw bytes to the server and decodes its answer with the client transport.
    mutating func deliverRaw(_ bytes: [UInt8]) throws -> [[UInt8]] {
        let output = server.receive(bytes, now: now)
        events += output.events
        awaiting += output.awaiting
        guard !output.outbound.isEmpty else { return [] }
        var frames: [[UInt8]] = []
        let decoded = try transport.receive(output.outbound)
        for event in decoded.events {
            switch event {
            case .frame(let payload, _): frames.append(payload)
            case .transportError(let code): transportErrors.append(code)
            case .quickAck(let token): quickAcks.append(token)
            }
        }
        // Fake-TLS: the frames held until the ServerHello go out now.
        if !decoded.outbound.isEmpty { frames += try deliverRaw(decoded.outbound) }
        return frames
    }

    /// Runs `steps` round trips of the key exchange; returns the client's next message, not sent.
    mutating func exchangeMessage(after steps: Int) throws -> [UInt8] {
        var frame = exchange.start(now: now)
        for _ in 0..<steps {
            guard let answer = try deliver(frame).first,
                  case .send(let next) = try exchange.receive(frame: answer, now: now)
            else { throw HarnessFailure(description: "the exchange ended early") }
            frame = next
        }
        return frame
    }

    /// Runs the key exchange to the end and opens a client session on its key.
    mutating func handshake(salt: Int64? = nil) throws -> AuthKeyExchange.Client.Result {
        var frame = exchange.start(now: now)
        for _ in 0..<4 {
            guard let answer = try deliver(frame).first else { throw HarnessFailure(description: "no exchange answer") }
            switch try exchange.receive(frame: answer, now: now) {
            case .send(let next): frame = next
            case .done(let result):
                session = Session(role: .client, authKey: result.authKey, salt: salt ?? result.firstSalt,
                                  timeOffset: result.timeOffset, random: random)
                return result
            }
        }
        throw HarnessFailure(description: "the exchange did not finish in 4 round trips")
    }

    /// Sends `call` in the session and exchanges frames until it is answered (a bounded number of rounds).
    mutating func call<T>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>)) throws -> Result<T, RPCError> {
        switch try request({ try $0.send(call) }) {
        case .success(let bytes): .success(try call.2.parse(Buffer(bytes: bytes)))
        case .failure(let error): .failure(error)
        }
    }

    /// Queues a request with `make` and exchanges frames until it is answered (a bounded number of rounds): the
    /// result's bytes, or the `rpc_error`. A transport error from the server ends it with an error.
    mutating func request(_ make: (inout Session) throws -> RequestID) throws -> Result<[UInt8], RPCError> {
        guard var session else { throw HarnessFailure(description: "no session") }
        defer { self.session = session }
        let id = try make(&session)
        for _ in 0..<6 {
            for frame in session.outgoing(now: now) {
                for answer in try deliver(frame.bytes) {
                    for event in try session.receive(frame: answer, now: now) {
                        switch event {
                        case .result(id, let bytes): return .success(Array(bytes))
                        case .rpcError(id, let error): return .failure(error)
                        case .failed(id, let why): throw why
                        default: break
                        }
                    }
                }
                if let code = transportErrors.last { throw HarnessFailure(description: "transport error \(code)") }
            }
            now += 0.01
        }
        throw HarnessFailure(description: "no answer after 6 rounds")
    }
}

/// What every client sends first: the layer and the connection description around `help.getConfig`.
func firstCall() -> (FunctionDescription, Buffer, DeserializeFunctionResponse<Api.Config>) {
    firstCall(Api.functions.help.getConfig())
}

/// `query` inside `invokeWithLayer(initConnection(…))`, as a client's first call on a connection.
func firstCall<T>(_ query: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>))
    -> (FunctionDescription, Buffer, DeserializeFunctionResponse<T>) {
    Api.functions.invokeWithLayer(
        layer: Api.layer,
        query: Api.functions.initConnection(
            apiId: 1, deviceModel: "test", systemVersion: "linux", appVersion: "1.0", systemLangCode: "en",
            langPack: "", langCode: "en", query: query))
}
