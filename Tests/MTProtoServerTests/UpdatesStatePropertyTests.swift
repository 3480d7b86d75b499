// The update sequence's promise checked on random runs against a model server: every message the server makes — in
// the common box and in three channels — reaches the app exactly once and in order, however the network drops,
// duplicates and reorders pushes, however the fetches are sliced, fail or come late, and whatever
// `updateChannelTooLong`s arrive (core.telegram.org/api/updates). Each run is one seed: a failure names it, and
// `runs(seed:)` replays it.
import TelegramApi
import TelegramClient
import TelegramSession
import Testing

@Suite struct UpdatesStatePropertyTests {
    /// A small deterministic generator (xorshift64*), so a seed replays.
    struct Random {
        var state: UInt64
        init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    }

    /// What the model server holds: the common box's messages and each channel's, by pts (one message per pts).
    struct Server {
        static let channels: [Int64] = [101, 102, 103]
        static let limit = 3
        var commonPts: Int32 = 10
        var channelPts: [Int64: Int32] = [101: 5, 102: 5, 103: 5]

        static func hash(_ channel: Int64) -> Int64 { channel &* 7 }

        // The messages and channels of the rule tests, each message's id its pts.
        static func channelMessage(_ channel: Int64, _ pts: Int32) -> Api.Message {
            ChannelUpdatesStateTests.message("c\(channel).\(pts)", channel: channel, id: pts)
        }

        static func commonMessage(_ pts: Int32) -> Api.Message { UpdatesStateTests.message("m\(pts)", id: pts) }

        static func chat(_ channel: Int64) -> Api.Chat { ChannelUpdatesStateTests.channel(channel, hash: hash(channel)) }

        mutating func newCommon() -> Api.Update {
            commonPts += 1
            return .updateNewMessage(.init(message: Self.commonMessage(commonPts), pts: commonPts, ptsCount: 1))
        }

        mutating func newChannel(_ channel: Int64) -> Api.Update {
            let pts = (channelPts[channel] ?? 0) + 1
            channelPts[channel] = pts
            return .updateNewChannelMessage(.init(message: Self.channelMessage(channel, pts), pts: pts, ptsCount: 1))
        }

        func difference(from pts: Int32) -> Api.updates.Difference {
            let end = min(commonPts, pts + Int32(Self.limit))
            let messages = pts < end ? (pts + 1...end).map(Self.commonMessage) : []
            let state = Api.updates.State.state(.init(pts: end, qts: 0, date: 1, seq: 0, unreadCount: 0))
            guard end < commonPts else {
                return .difference(.init(newMessages: messages, newEncryptedMessages: [], otherUpdates: [], chats: [],
                                         users: [], state: state))
            }
            return .differenceSlice(.init(newMessages: messages, newEncryptedMessages: [], otherUpdates: [], chats: [],
                                          users: [], intermediateState: state))
        }

        func channelDifference(_ channel: Int64, from pts: Int32) -> Api.updates.ChannelDifference {
            let top = channelPts[channel] ?? 0
            guard pts < top else { return .channelDifferenceEmpty(.init(final: true, pts: top, timeout: 30)) }
            let end = min(top, pts + Int32(Self.limit))
            return .channelDifference(.init(final: end == top, pts: end, timeout: end == top ? 30 : nil,
                                            newMessages: (pts + 1...end).map { Self.channelMessage(channel, $0) },
                                            otherUpdates: [], chats: [Self.chat(channel)], users: []))
        }
    }

    /// What the app was given: message texts per box, in order.
    struct Delivered {
        var common: [Int32] = []
        var channels: [Int64: [Int32]] = [:]

        mutating func take(_ actions: [UpdatesAction]) {
            for case .deliver(let updates) in actions {
                guard case .updates(let c) = updates else { continue }
                for update in c.updates {
                    switch update {
                        case .updateNewMessage(let u): if case .message(let m) = u.message { common.append(m.id) }
                        case .updateNewChannelMessage(let u):
                            if case .message(let m) = u.message, case .peerChannel(let p) = m.peerId {
                                channels[p.channelId, default: []].append(m.id)
                            }
                        default: break
                    }
                }
            }
        }
    }

    enum Fetch: Equatable {
        case common(pts: Int32)
        case channel(Int64, pts: Int32)
    }

    /// One run: `steps` random events, then a quiet end where everything still queued arrives and every fetch is
    /// answered. Returns a description of what broke, nil if nothing did.
    static func runs(seed: UInt64, steps: Int = 300) -> String? {
        var random = Random(seed: seed)
        var server = Server()
        var machine = UpdatesState(
            box: UpdateBox(pts: 10, qts: 0, date: 1, seq: 0),
            channels: Dictionary(uniqueKeysWithValues: Server.channels.map { ($0, ChannelBox(pts: 5, accessHash: Server.hash($0))) }),
            maxPending: 8)
        var delivered = Delivered()
        var network: [Api.Updates] = []
        var fetches: [Fetch] = []
        var now = 0.0
        var wrongHash: Int64?

        func perform(_ actions: [UpdatesAction]) {
            delivered.take(actions)
            for action in actions {
                switch action {
                    case .getDifference(let box): fetches.append(.common(pts: box.pts))
                    case .getChannelDifference(let id, let hash, let pts):
                        if hash != Server.hash(id) { wrongHash = id }
                        fetches.append(.channel(id, pts: pts))
                    case .getState, .differenceTooLong, .channelDifferenceTooLong, .deliver: break
                }
            }
        }
        func send(_ updates: [Api.Update], chats: [Api.Chat]) {
            let container = Api.Updates.updates(.init(updates: updates, users: [], chats: chats, date: 1, seq: 0))
            if random.chance(15) { return }  // dropped
            network.append(container)
            if random.chance(10) { network.append(container) }  // duplicated
        }
        func answer(_ index: Int, fail: Bool) {
            let fetch = fetches.remove(at: index)
            switch fetch {
                case .common(let pts):
                    perform(fail ? machine.fetchFailed(now: now) : machine.receiveDifference(server.difference(from: pts), now: now))
                case .channel(let id, let pts):
                    perform(fail ? machine.channelFetchFailed(channelID: id, now: now)
                                 : machine.receiveChannelDifference(server.channelDifference(id, from: pts), channelID: id,
                                                                    now: now))
            }
        }

        for _ in 0..<steps {
            switch random.below(10) {
                case 0, 1:
                    send([server.newCommon()], chats: [])
                case 2, 3, 4:
                    let channel = Server.channels[random.below(3)]
                    send([server.newChannel(channel)], chats: [Server.chat(channel)])
                case 5:
                    let channel = Server.channels[random.below(3)]
                    send([server.newCommon(), server.newChannel(channel)], chats: [Server.chat(channel)])
                case 6, 7:
                    // Arrives out of order: any queued container.
                    if !network.isEmpty { perform(machine.receive(network.remove(at: random.below(network.count)), now: now)) }
                case 8:
                    now += Double(random.below(8)) / 10
                    perform(machine.tick(now: now))
                default:
                    if random.chance(20) {
                        let channel = Server.channels[random.below(3)]
                        let tooLong = Api.Update.updateChannelTooLong(.init(channelId: channel, pts: server.channelPts[channel]))
                        perform(machine.receive(.updates(.init(updates: [tooLong], users: [], chats: [], date: 1, seq: 0)),
                                                now: now))
                    } else if !fetches.isEmpty {
                        answer(random.below(fetches.count), fail: random.chance(10))
                    }
            }
        }
        // The quiet end: what is queued arrives; the server then says, as its getDifference would, which boxes moved.
        while !network.isEmpty { perform(machine.receive(network.removeFirst(), now: now)) }
        perform(machine.catchUp())
        for channel in Server.channels {
            let tooLong = Api.Update.updateChannelTooLong(.init(channelId: channel, pts: server.channelPts[channel]))
            perform(machine.receive(.updates(.init(updates: [tooLong], users: [], chats: [], date: 1, seq: 0)), now: now))
        }
        for _ in 0..<10_000 {
            if !fetches.isEmpty {
                answer(0, fail: false)
            } else if let deadline = machine.gapDeadline {
                now = max(now, deadline)
                perform(machine.tick(now: now))
            } else {
                break
            }
        }
        if let wrongHash { return "seed \(seed): channel \(wrongHash) fetched with a wrong access hash" }
        if !fetches.isEmpty || machine.gapDeadline != nil || machine.isFetching {
            return "seed \(seed): not quiet at the end (fetches \(fetches), deadline \(String(describing: machine.gapDeadline)))"
        }
        let common = Array(11...max(10, server.commonPts))
        if delivered.common != (server.commonPts > 10 ? common : []) {
            return "seed \(seed): common box delivered \(delivered.common), the server made 11...\(server.commonPts)"
        }
        for channel in Server.channels {
            let top = server.channelPts[channel] ?? 5
            let expected = top > 5 ? Array(6...top) : []
            if delivered.channels[channel, default: []] != expected {
                return "seed \(seed): channel \(channel) delivered \(delivered.channels[channel, default: []]), the server made 6...\(top)"
            }
            if machine.channels[channel]?.pts != top {
                return "seed \(seed): channel \(channel)'s box at \(String(describing: machine.channels[channel]?.pts)), not \(top)"
            }
        }
        if machine.box?.pts != server.commonPts { return "seed \(seed): common box at \(String(describing: machine.box))" }
        return nil
    }

    @Test func everyMessageReachesTheAppOnceAndInOrder() {
        var failures: [String] = []
        for seed in UInt64(1)...500 {
            if let failure = Self.runs(seed: seed) { failures.append(failure) }
        }
        #expect(failures.isEmpty, "\(failures.count) of 500 runs broke; first: \(failures.prefix(3))")
    }

    /// A hostile server: any pts and pts_count (the extremes too), channels without end, differences that go
    /// backwards or say nothing, failures of every kind, in any order (200 seeds of 400 steps, in a debug build,
    /// where an arithmetic overflow traps). Nothing traps, the boxes stay within `maxChannels`, no input makes the
    /// machine ask more than a handful of fetches at once, and the gap deadline stays a time.
    @Test func hostileInputNeitherTrapsNorGrowsWithoutBound() {
        let extremes: [Int32] = [.min, -1, 0, 1, 2, 5, 6, 7, 100, .max - 1, .max]
        for seed in UInt64(1)...200 {
            var random = Random(seed: seed)
            var machine = UpdatesState(box: UpdateBox(pts: 5, qts: 0, date: 1, seq: 0), maxPending: 4, maxChannels: 8)
            var now = 0.0
            func number() -> Int32 {
                random.chance(30) ? extremes[random.below(extremes.count)] : Int32(random.below(20))
            }
            func channel() -> Int64 { Int64(random.below(random.chance(80) ? 4 : 1_000)) }
            var worst = 0
            for _ in 0..<400 {
                let actions: [UpdatesAction]
                switch random.below(9) {
                    case 0, 1, 2:
                        let id = channel()
                        let update = Api.Update.updateNewChannelMessage(.init(
                            message: Server.channelMessage(id, number()), pts: number(), ptsCount: number()))
                        actions = machine.receive(.updates(.init(updates: [update], users: [],
                                                                 chats: random.chance(50) ? [Server.chat(id)] : [],
                                                                 date: number(), seq: 0)), now: now)
                    case 3:
                        let update = Api.Update.updateChannelTooLong(.init(channelId: channel(),
                                                                           pts: random.chance(50) ? number() : nil))
                        actions = machine.receive(.updates(.init(updates: [update], users: [], chats: [], date: 1, seq: 0)),
                                                  now: now)
                    case 4:
                        actions = machine.receive(pts: number(), ptsCount: number(), channelID: random.chance(50) ? channel() : nil,
                                                  now: now)
                    case 5:
                        let id = channel()
                        let difference: Api.updates.ChannelDifference = switch random.below(3) {
                            case 0: .channelDifferenceEmpty(.init(final: random.chance(50), pts: number()))
                            case 1: .channelDifference(.init(final: random.chance(50), pts: number(),
                                                             newMessages: [Server.channelMessage(id, number())],
                                                             otherUpdates: [], chats: [Server.chat(id)], users: []))
                            default: .channelDifferenceTooLong(.init(
                                dialog: .dialog(.init(peer: .peerChannel(.init(channelId: id)), topMessage: 1,
                                                      readInboxMaxId: 0, readOutboxMaxId: 0, unreadCount: 0,
                                                      unreadMentionsCount: 0, unreadReactionsCount: 0,
                                                      unreadPollVotesCount: 0, notifySettings: .peerNotifySettings(.init()),
                                                      pts: random.chance(50) ? number() : nil)),
                                messages: [], chats: [], users: []))
                        }
                        actions = machine.receiveChannelDifference(difference, channelID: id, now: now)
                    case 6:
                        actions = machine.channelFetchFailed(channelID: channel(), permanent: random.chance(30), now: now)
                    case 7:
                        actions = machine.receive(.updates(.init(updates: [.updateNewMessage(.init(
                            message: Server.commonMessage(number()), pts: number(), ptsCount: number()))],
                            users: [], chats: [], date: number(), seq: number())), now: now)
                    default:
                        now += Double(random.below(30)) / 10
                        actions = machine.tick(now: now)
                }
                worst = max(worst, actions.filter { if case .deliver = $0 { false } else { true } }.count)
            }
            #expect(machine.channels.count <= 8, "seed \(seed): \(machine.channels.count) channel boxes")
            #expect(worst <= 16, "seed \(seed): \(worst) fetches asked at once")
            if let deadline = machine.gapDeadline { #expect(deadline.isFinite && deadline >= 0, "seed \(seed)") }
        }
    }
}
