// The history, search and dialog iterators on the test Telegram: 1,000 seeded messages paged both ways, each exactly
// once and in order, while the server answers pages with FLOOD_WAIT and cuts the connection mid-page; starts from an
// id and a date; search paging; dialogs with pinned chats first and each once (core.telegram.org/api/offsets).
import Foundation
import MTProto
import MTProtoClient
import MTProtoServer
import TelegramApi
import TelegramClient
import Testing

/// Alice and Bob with `count` messages between them (Alice's box ids 1…count, dated `start` + id − 1).
struct SeededChat {
    static let start: Int32 = 1_600_000_000
    let telegram: LocalTelegram
    let counter: MethodCounter
    let alice: TelegramClient
    let bob: Api.InputPeer

    static func make(seed: UInt64, count: Int = 1_000, floodWaitThreshold: Int = 60) async throws -> SeededChat {
        let counter = MethodCounter()
        let telegram = try await LocalTelegram.start(seed: seed, onEvent: counter.record)
        guard let alice = telegram.service.user(phone: "9996620001"), let bob = telegram.service.user(phone: "9996610002")
        else { throw HarnessFailure(description: "no accounts") }
        try telegram.service.seedHistory(between: alice, and: bob, count: count, startDate: start)
        let client = try telegram.client(floodWaitThreshold: floodWaitThreshold, followsUpdates: false)
        _ = try await LocalTelegram.signIn(client, phone: "9996620001")
        let peer = try await client.inputPeer(for: try await client.resolve(username: "bob_test"))
        return SeededChat(telegram: telegram, counter: counter, alice: client, bob: peer)
    }

    func close() async throws {
        await alice.close()
        try await telegram.server.shutdown()
    }

    /// Every id the sequence yields, in order; after `faultAt` items, the next page is answered FLOOD_WAIT_1 until
    /// 1.5 s have passed.
    func ids(_ sequence: MessageSequence, floodAfter faultAt: Int? = nil) async throws -> [Int32] {
        var ids: [Int32] = []
        for try await message in sequence {
            ids.append(message.id)
            if ids.count == faultAt {
                telegram.server.faults.errors["messages.getHistory"] = RPCError(code: 420, message: "FLOOD_WAIT_1")
                let server = telegram.server
                Task {
                    try await Task.sleep(for: .milliseconds(1_500))
                    server.faults.errors["messages.getHistory"] = nil
                }
            }
        }
        return ids
    }
}

@Suite struct IteratorTests {
    /// The client throws every flood wait (threshold 0), so the iterator's own waiting is what carries it through.
    @Test(arguments: [false, true])
    func aThousandMessagesComeOnceAndInOrderAcrossFloodWaitsAndAReset(reverse: Bool) async throws {
        let chat = try await SeededChat.make(seed: reverse ? 311 : 312, floodWaitThreshold: 0)
        chat.telegram.server.faults.closeOnceOn = ["messages.getHistory"]
        let connections = chat.counter.count("connections")
        let ids = try await chat.ids(chat.alice.history(of: chat.bob, reverse: reverse), floodAfter: 250)
        let expected = reverse ? Array(Int32(1)...1_000) : Array((Int32(1)...1_000).reversed())
        #expect(ids.count == 1_000)
        #expect(ids == expected)
        #expect(chat.counter.count("messages.getHistory", error: "FLOOD_WAIT_1") >= 1)
        // The connection the first page was sent on was cut; the page came over a new one.
        #expect(chat.counter.count("connections") > connections)
        // Ten full pages, and the empty one that ends it (besides the refused ones, and the cut page if it ran twice).
        let pages = chat.counter.count("messages.getHistory") - chat.counter.count("messages.getHistory", error: "FLOOD_WAIT_1")
        #expect((11...12).contains(pages))
        try await chat.close()
    }

    @Test func historyStartsFromAnIdOrADateEitherWay() async throws {
        let chat = try await SeededChat.make(seed: 313)
        let date = SeededChat.start + 500  // message 501's date
        let options = PagingOptions(pageSize: 37)
        #expect(try await chat.ids(chat.alice.history(of: chat.bob, from: .id(300), options: options))
                    == Array((Int32(1)...299).reversed()))
        #expect(try await chat.ids(chat.alice.history(of: chat.bob, from: .id(300), reverse: true, options: options))
                    == Array(Int32(301)...1_000))
        #expect(try await chat.ids(chat.alice.history(of: chat.bob, from: .date(date), options: options))
                    == Array((Int32(1)...500).reversed()))
        #expect(try await chat.ids(chat.alice.history(of: chat.bob, from: .date(date), reverse: true, options: options))
                    == Array(Int32(501)...1_000))
        #expect(try await chat.ids(chat.alice.history(of: chat.bob, options: PagingOptions(pageSize: 7, limit: 10)))
                    == Array((Int32(991)...1_000).reversed()))
        try await chat.close()
    }

    @Test func searchPagesThroughTheMatches() async throws {
        let chat = try await SeededChat.make(seed: 314)
        // "message 99", and "message 990"…"message 999".
        let found = try await chat.ids(chat.alice.search(in: chat.bob, query: "MESSAGE 99", options: PagingOptions(pageSize: 3)))
        #expect(found == Array((Int32(990)...999).reversed()) + [99])
        #expect(chat.counter.count("messages.search") == 4)
        try await chat.close()
    }

    /// Four private chats and a group, two pinned, paged two at a time: pinned first (newest pin first), then
    /// newest first, each once.
    @Test func dialogsComePinnedFirstAndEachOnce() async throws {
        let chat = try await SeededChat.make(seed: 315, count: 4)
        let service = chat.telegram.service
        var others: [PeerID] = []
        for (phone, name) in [("9996620003", "carol_test"), ("9996620004", "dave_test"), ("9996620005", "erin_test")] {
            try service.addUser(phone: phone, firstName: name, username: name)
            let peer = try await chat.alice.resolve(username: name)
            _ = try await PeerCacheClientTests.send(chat.alice, to: try await chat.alice.inputPeer(for: peer), "to \(name)")
            others.append(peer)
        }
        // The group is dated by its creation: a second later than the messages, so it sorts first among the unpinned.
        try await Task.sleep(for: .milliseconds(1_100))
        let created = try await chat.alice.invoke(Api.functions.channels.createChannel(megagroup: true, title: "G", about: ""))
        guard case .updates(let made) = created, case .channel(let group)? = made.chats.first else {
            throw HarnessFailure(description: "\(created)")
        }
        let bob = PeerID.user(try #require(service.user(phone: "9996610002")))
        for pinned in [bob, others[0]] {
            _ = try await chat.alice.invoke(Api.functions.messages.toggleDialogPin(
                pinned: true, peer: .inputDialogPeer(.init(peer: try await chat.alice.inputPeer(for: pinned)))))
        }
        var items: [DialogItem] = []
        for try await item in chat.alice.dialogs(options: PagingOptions(pageSize: 2)) { items.append(item) }
        // Carol pinned last comes first; then the group (made last), then Erin and Dave (same second: the newer
        // message first).
        #expect(items.map(\.peer) == [others[0], bob, .channel(group.id), others[2], others[1]])
        #expect(items.map(\.pinned) == [true, true, false, false, false])
        #expect(items.allSatisfy { $0.topMessage != nil || $0.peer.kind == .channel })
        var unpinned: [PeerID] = []
        for try await item in chat.alice.dialogs(excludePinned: true, options: PagingOptions(pageSize: 2)) {
            unpinned.append(item.peer)
        }
        #expect(unpinned == [.channel(group.id), others[2], others[1]])
        try await chat.close()
    }
}
