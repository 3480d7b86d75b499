// The test Telegram with its connections spread over several event-loop threads: many clients message each other at
// once, so handlers on different threads change the same accounts, message boxes and update queues, and push to
// sessions other threads carry. Counted, not timed: every call is answered, every message reaches its recipient's
// update stream exactly once, and the connections ran on more than one thread.
import Foundation
import MTProto
import MTProtoServer
import NIOCore
import NIOPosix
import Synchronization
import TelegramApi
import TelegramClient
import TelegramSession
import TestTelegram
import Testing

@Suite struct MultiThreadedServerTests {
    /// The event loops connections were opened on.
    final class Loops: Sendable {
        private let seen = Mutex<Set<ObjectIdentifier>>([])

        func record() {
            guard let loop = MultiThreadedEventLoopGroup.currentEventLoop else { return }
            seen.withLock { _ = $0.insert(ObjectIdentifier(loop)) }
        }

        var count: Int { seen.withLock { $0.count } }
    }

    @Test func clientsMessagingEachOtherOnFourThreadsGetEveryUpdateOnce() async throws {
        let people = 6, messagesPerPair = 6
        let service = TestTelegramService(random: SeededRandom(seed: 560))
        let phones = (0..<people).map { "99966200\(String(format: "%02d", $0 + 10))" }
        for (index, phone) in phones.enumerated() {
            try service.addUser(phone: phone, firstName: "P\(index)", username: "person\(index)")
        }
        let loops = Loops()
        var configuration = MTProtoTestServer.Configuration(
            rsaKeys: [try Fixture.rsaKey()], handlers: service.handlers(), dcIDs: [2],
            random: SeededRandom(seed: 561)) { report in
                if case .opened = report.kind { loops.record() }
            }
        configuration.threads = 4
        let server = try await MTProtoTestServer.start(configuration)
        service.attach(server)
        let telegram = LocalTelegram(service: service, server: server)

        var clients: [TelegramClient] = []
        var readers: [MessageReader] = []
        for phone in phones {
            let client = try telegram.client()
            _ = try await LocalTelegram.signIn(client, phone: phone)
            clients.append(client)
            readers.append(MessageReader(client))
        }
        // Each person's view of everyone else (access hashes are per viewer).
        var peers: [[Api.InputPeer]] = []
        for client in clients {
            var row: [Api.InputPeer] = []
            for other in 0..<people {
                row.append(try await client.inputPeer(for: try await client.resolve(username: "person\(other)")))
            }
            peers.append(row)
        }

        // Everyone writes to everyone else at once, one task per (sender, recipient).
        let answered = try await withThrowingTaskGroup(of: Int.self) { group in
            for sender in 0..<people {
                for recipient in 0..<people where recipient != sender {
                    let client = clients[sender], peer = peers[sender][recipient]
                    group.addTask {
                        for number in 0..<messagesPerPair {
                            _ = try await client.invoke(Api.functions.messages.sendMessage(
                                peer: peer, message: "\(sender)>\(recipient)#\(number)",
                                randomId: Int64(sender * 10_000 + recipient * 100 + number + 1)))
                        }
                        return messagesPerPair
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(answered == people * (people - 1) * messagesPerPair)

        let expectedEach = (people - 1) * messagesPerPair
        for (me, reader) in readers.enumerated() {
            // A reader's stream also holds what its client sent; what it received is addressed to it.
            var received: [String] = []
            for _ in 0..<3_000 where received.count < expectedEach {
                received = await reader.all().filter { $0.contains(">\(me)#") }
                if received.count < expectedEach { try await Task.sleep(for: .milliseconds(20)) }
            }
            try await Task.sleep(for: .milliseconds(200))
            received = await reader.all().filter { $0.contains(">\(me)#") }
            await reader.stop()
            let expected = Set((0..<people).filter { $0 != me }.flatMap { sender in
                (0..<messagesPerPair).map { "\(sender)>\(me)#\($0)" }
            })
            #expect(received.count == expectedEach, "person \(me) got \(received.count) of \(expectedEach)")
            #expect(Set(received) == expected, "person \(me): missing \(expected.subtracting(received).sorted())")
        }
        #expect(loops.count >= 2, "connections on \(loops.count) event loop(s)")
        for client in clients { await client.close() }
        try await server.shutdown()
    }
}
