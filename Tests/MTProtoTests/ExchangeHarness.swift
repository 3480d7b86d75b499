// Runs an AuthKeyExchange.Client against an AuthKeyExchange.Server in memory, optionally tampering with any message
// and recording the state of both machines before each delivery, so fault tests can resume from any point.
import MTProtoCrypto
@testable import MTProto

enum Exchange {
    typealias Client = AuthKeyExchange.Client
    typealias Server = AuthKeyExchange.Server

    enum Direction: Hashable, Sendable { case toServer, toClient }

    enum Outcome {
        case completed(Client.Result, Server.Result)
        case clientFailed(AuthKeyExchangeError)
        case serverFailed(AuthKeyExchangeError)
        /// The client reported a key without the server having finished: never allowed.
        case clientDoneAlone(Client.Result)
        /// The exchange did not end within the delivery bound: never allowed.
        case unbounded

        var completed: (client: Client.Result, server: Server.Result)? {
            if case let .completed(c, s) = self { (c, s) } else { nil }
        }

        var error: AuthKeyExchangeError? {
            switch self {
                case .clientFailed(let e), .serverFailed(let e): e
                default: nil
            }
        }
    }

    /// Both machines just before a message is delivered.
    struct Snapshot {
        let direction: Direction
        /// The message's index among those sent in its direction (0 = first).
        let index: Int
        let frame: [UInt8]
        let client: Client
        let server: Server
        let now: Double
        let sent: [Direction: Int]
        /// The server's result if it has already finished (its dh_gen_ok is the frame in flight).
        var serverResult: Server.Result?
    }

    static let start: Double = 1_700_000_000

    static func seededPair(_ seed: UInt64, client configuration: Client.Configuration,
                           server serverConfiguration: Server.Configuration) -> (Client, Server) {
        (Client(configuration: configuration, random: SeededRandom(seed: seed &* 2)),
         Server(configuration: serverConfiguration, random: SeededRandom(seed: seed &* 2 &+ 1)))
    }

    static func run(_ client: Client, _ server: Server, now: Double = start, record: Bool = false,
                    tamper: (Direction, Int, inout [UInt8]) -> Void = { _, _, _ in }) -> (Outcome, [Snapshot]) {
        var client = client
        let first = client.start(now: now)
        let snapshot = Snapshot(direction: .toServer, index: 0, frame: first, client: client, server: server, now: now,
                                sent: [.toServer: 1, .toClient: 0])
        return resume(snapshot, record: record, tamper: tamper)
    }

    /// Continues from `snapshot`, delivering its frame first (through `tamper`).
    static func resume(_ snapshot: Snapshot, record: Bool = false,
                       tamper: (Direction, Int, inout [UInt8]) -> Void = { _, _, _ in }) -> (Outcome, [Snapshot]) {
        var client = snapshot.client, server = snapshot.server, now = snapshot.now
        var direction = snapshot.direction, index = snapshot.index, frame = snapshot.frame, sent = snapshot.sent
        var serverResult = snapshot.serverResult
        var snapshots: [Snapshot] = []
        for _ in 0..<40 {
            if record {
                snapshots.append(Snapshot(direction: direction, index: index, frame: frame, client: client,
                                          server: server, now: now, sent: sent, serverResult: serverResult))
            }
            tamper(direction, index, &frame)
            now += 0.05
            switch direction {
                case .toServer:
                    do {
                        switch try server.receive(frame: frame, now: now) {
                            case .send(let next): frame = next
                            case let .finished(next, result): (frame, serverResult) = (next, result)
                            case .refused(let next, _): frame = next
                        }
                    } catch {
                        return (.serverFailed(error), snapshots)
                    }
                    direction = .toClient
                case .toClient:
                    do {
                        switch try client.receive(frame: frame, now: now) {
                            case .send(let next): frame = next
                            case .done(let result):
                                guard let serverResult else { return (.clientDoneAlone(result), snapshots) }
                                return (.completed(result, serverResult), snapshots)
                        }
                    } catch {
                        return (.clientFailed(error), snapshots)
                    }
                    direction = .toServer
            }
            index = sent[direction, default: 0]
            sent[direction, default: 0] += 1
        }
        return (.unbounded, snapshots)
    }
}
