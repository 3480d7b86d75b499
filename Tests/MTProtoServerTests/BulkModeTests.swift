// A connection whose answers are large runs on `BulkWork`'s lower-priority threads, and comes back to its event loop
// when its answers are small again; its calls are answered in order either way. Which thread ran each handler is
// read from the thread's own scheduling policy, recorded by the handlers, not timed.
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import MTProtoTransport
import MTProtoTransportNIO
import Synchronization
import TLRuntime
import TelegramApi
import Testing

@Suite struct BulkModeTests {
    @Test func bulkThreadsRunBelowTheOthers() async throws {
        #if os(Linux)
        #expect(BulkWork.isCurrentThreadLowered() == false)
        // Every loop of the group, each asked in turn.
        for loop in BulkWork.group.makeIterator() {
            #expect(try await loop.submit { BulkWork.isCurrentThreadLowered() }.get() == true)
        }
        #endif
    }

    @Test func aConnectionWithLargeAnswersRunsOnBulkThreadsAndComesBack() async throws {
        #if os(Linux)
        // Each handler notes its method and whether the thread it ran on was lowered.
        let ran = Mutex<[(String, Bool)]>([])
        var handlers = RPCHandlers(registry: Api.registry)
        // Large: 300,000 bytes (above the 128 KiB that puts a connection in bulk mode), random so that the
        // server does not gzip them; small: 4.
        let part = SeededRandom(seed: 5600).bytes(300_000)
        handlers.register("help.getNearestDc") { _ throws(RPCError) in
            ran.withLock { $0.append(("large", BulkWork.isCurrentThreadLowered() ?? false)) }
            return part
        }
        handlers.register("help.getConfig") { _ throws(RPCError) in
            ran.withLock { $0.append(("small", BulkWork.isCurrentThreadLowered() ?? false)) }
            return [1, 2, 3, 4]
        }
        let server = try await MTProtoTestServer.start(.init(
            rsaKeys: [try Fixture.rsaKey()], handlers: handlers, dcIDs: [2], random: SeededRandom(seed: 5601)))
        let client = MTProtoClient(configuration: .init(
            host: "127.0.0.1", port: server.ports[2] ?? 0, connection: .init(
                transport: TransportConfiguration(kind: .intermediate), serverKeys: [try Fixture.rsaKey().publicKey],
                dcID: 2), requestTimeout: .seconds(30)))
        try await client.connect()
        let large = Api.functions.help.getNearestDc().1.bytes
        let small = Api.functions.help.getConfig().1.bytes

        // One at a time, so each read carries one call: large (on the loop; the connection goes bulk), small (away,
        // and its small answer brings the connection back), small (on the loop), large (on the loop, bulk again),
        // large (away).
        var answers: [[UInt8]] = []
        for body in [large, small, small, large, large] {
            answers.append(try await client.invoke(raw: body))
        }
        #expect(answers == [part, [1, 2, 3, 4], [1, 2, 3, 4], part, part])
        let log = ran.withLock { $0 }
        #expect(log.map(\.0) == ["large", "small", "small", "large", "large"])
        #expect(log.map(\.1) == [false, true, false, false, true], "\(log)")

        // Many at once, large and small mixed: every answer arrives, each the right one.
        let mixed = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0..<40 {
                group.addTask { (index, try await client.invoke(raw: index % 3 == 0 ? small : large)) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(mixed.count == 40)
        #expect(mixed.allSatisfy { $0.value == ($0.key % 3 == 0 ? [1, 2, 3, 4] : part) })
        await client.close()
        try await server.shutdown()
        #endif
    }
}
