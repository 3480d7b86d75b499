// The updates driver against a host of the test's own: it makes its calls through the host's `invoke`, hands what is
// in order to the host's `deliver`, and saves the boxes to the session store, with no client and no server.
import Logging
import MTProtoClient
import NIOPosix
import TLRuntime
import TelegramApi
@testable import TelegramClient
import TelegramSession
import Testing

/// A host that answers each call with the bytes given for its method and records the calls and deliveries.
private actor RecordingHost: UpdatesHost {
    let updatesDriver: UpdatesDriver
    private let answers: [String: [UInt8]]
    private(set) var calls: [String] = []
    private(set) var delivered: [Api.Updates] = []
    private let deliveries: AsyncStream<Api.Updates>.Continuation
    /// Each delivery, for a test to wait on.
    nonisolated let deliveredStream: AsyncStream<Api.Updates>

    init(follows: Bool = true, store: any SessionStore, answers: [String: [UInt8]] = [:]) {
        updatesDriver = UpdatesDriver(follows: follows, store: store, logger: Logger(label: "UpdatesDriverTests"),
                                      taskExecutor: EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next()))
        self.answers = answers
        (deliveredStream, deliveries) = AsyncStream.makeStream(of: Api.Updates.self)
    }

    nonisolated func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                         timeout: Duration?) async throws -> T {
        let answer = await called(call.0.name)
        return try call.2.parse(bytes: answer[...])
    }

    private func called(_ name: String) -> [UInt8] {
        calls.append(name)
        return answers[name] ?? []
    }

    func deliver(_ updates: Api.Updates) {
        delivered.append(updates)
        deliveries.yield(updates)
    }

    func reportState() {}

    func start(box: UpdateBox?) { updatesDriver.start(box: box, channels: [:]) }
    func homeReady() { updatesDriver.homeReady(in: self) }
    func receive(_ updates: Api.Updates) { updatesDriver.receive(updates, in: self) }
    func note<T>(_ result: T, of request: FunctionDescription) { updatesDriver.noteResult(result, of: request, in: self) }
    func stop() async { await updatesDriver.stop(in: self) }
    var box: UpdateBox? { updatesDriver.box }
}

@Suite struct UpdatesDriverTests {
    static func bytes(_ value: some TLSerializable) -> [UInt8] {
        let buffer = Buffer()
        value.serialize(buffer, true)
        return buffer.bytes
    }

    static func message(_ text: String, id: Int32) -> Api.Message {
        .message(.init(id: id, peerId: .peerUser(.init(userId: 7)), date: 100, message: text))
    }

    /// A restored box is caught up with `updates.getDifference` through the host when the home DC is ready; what
    /// the difference brings is delivered, and the box it reaches is saved before `stop` returns.
    @Test func catchesUpThroughTheHostAndSavesTheBox() async throws {
        let store = MemorySessionStore()
        let difference = Api.updates.Difference.difference(.init(
            newMessages: [Self.message("missed", id: 11)], newEncryptedMessages: [], otherUpdates: [], chats: [],
            users: [], state: .state(.init(pts: 11, qts: 0, date: 60, seq: 6, unreadCount: 0))))
        let host = RecordingHost(store: store, answers: ["updates.getDifference": Self.bytes(difference)])
        await host.start(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 5))
        await host.homeReady()
        var deliveries = host.deliveredStream.makeAsyncIterator()
        let delivered = try #require(await deliveries.next())
        guard case .updates(let batch) = delivered, case .updateNewMessage(let new)? = batch.updates.first,
              case .message(let message) = new.message else {
            Issue.record("expected the missed message, got \(delivered)")
            return
        }
        #expect(message.message == "missed")
        #expect(await host.calls == ["updates.getDifference"])
        #expect(await host.box == UpdateBox(pts: 11, qts: 0, date: 60, seq: 6))
        await host.stop()
        #expect(await store.load().updateBox == UpdateBox(pts: 11, qts: 0, date: 60, seq: 6))
    }

    /// Not following: pushed updates and results that are `Api.Updates` are handed out as they come, and nothing
    /// is asked of the server, not even when the home DC is ready.
    @Test func notFollowingHandsOutUncheckedAndCallsNothing() async throws {
        let host = RecordingHost(follows: false, store: MemorySessionStore())
        let gap = Api.Updates.updates(.init(updates: [.updateNewMessage(.init(
            message: Self.message("far ahead", id: 90), pts: 90, ptsCount: 1))], users: [], chats: [], date: 100, seq: 0))
        await host.start(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 0))
        await host.homeReady()
        await host.receive(gap)
        await host.note(gap, of: Api.functions.updates.getState().0)
        #expect(await host.delivered.count == 2)
        #expect(await host.calls.isEmpty)
        #expect(await host.box == UpdateBox(pts: 10, qts: 0, date: 50, seq: 0))
    }

    /// A log-out ends the sequence: the box is gone and saved as none.
    @Test func logOutSavesNoBox() async throws {
        let store = MemorySessionStore()
        await store.save([.updateBox(UpdateBox(pts: 10, qts: 0, date: 50, seq: 0))])
        let host = RecordingHost(store: store)
        await host.start(box: UpdateBox(pts: 10, qts: 0, date: 50, seq: 0))
        await host.note(Api.auth.LoggedOut.loggedOut(.init()), of: Api.functions.auth.logOut().0)
        #expect(await host.box == nil)
        await host.stop()
        #expect(await store.load().updateBox == nil)
        #expect(await host.calls.isEmpty)
    }
}
