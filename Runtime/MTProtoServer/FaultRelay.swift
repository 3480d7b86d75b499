// A TCP relay that mistreats the connections it carries, for tests of clients and servers whose connections die
// mid-stream: it cuts a connection with a reset after a number of bytes (counted both ways, so the cut lands at an
// arbitrary byte of either direction, inside a frame or not), passes bytes on in pieces after delays, stalls, and
// can send a connection's first bytes twice. Every choice comes from a seed and the connection's number, so a failing
// run replays. Loopback tests only; bounded: a direction holding more than `maxQueuedBytes` stops reading.
import MTProto
import MTProtoCrypto
import NIOCore
import NIOPosix
import Synchronization

/// What a `FaultRelay` does to each connection.
public struct RelayPlan: Sendable, Hashable {
    /// The connection is reset after between these many bytes (both directions counted together); nil: never.
    public var cutAfter: ClosedRange<Int>?
    /// Bytes are passed on in pieces of a size drawn from this range.
    public var pieceBytes: ClosedRange<Int> = 1...65_536
    /// Each piece waits a time drawn from this range first, in seconds (pieces keep their order).
    public var delay: ClosedRange<Double> = 0...0
    /// The probability that a connection stalls once, at a random byte before its cut (or its first 64 KiB).
    public var stallProbability: Double = 0
    /// How long a stall lasts, seconds.
    public var stallSeconds: Double = 0
    /// The client's first bytes sent to the server twice (0: none).
    public var duplicateFirstBytes = 0

    /// Passes everything on unchanged.
    public init() {}

    /// Why a plan specification was refused.
    public struct SpecError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The item refused (`cut=5`).
        public let item: String
        /// Why.
        public let reason: String
        /// `relay plan 'ITEM': REASON`.
        public var description: String { "relay plan '\(item)': \(reason)" }
    }

    /// Reads comma-separated items: `cut=MIN-MAX` (bytes), `piece=MIN-MAX` (bytes), `delay=MIN-MAX` (seconds),
    /// `stall=P:SECONDS`, `duplicate-first=BYTES`; e.g. `cut=4096-65536,piece=1-4096,delay=0-0.003`.
    public init(parsing spec: String) throws(SpecError) {
        func range<T: Comparable & LosslessStringConvertible>(_ item: String, _ value: String, _ bounds: ClosedRange<T>)
            throws(SpecError) -> ClosedRange<T>
        {
            let parts = value.split(separator: "-", maxSplits: 1).map(String.init)
            guard let low = parts.first.flatMap(T.init), let high = (parts.count == 2 ? T(parts[1]) : low),
                  low <= high, bounds.contains(low), bounds.contains(high)
            else { throw SpecError(item: item, reason: "expected MIN-MAX within \(bounds)") }
            return low...high
        }
        for item in spec.split(separator: ",").map({ String($0).trimmingCharacters(in: .whitespaces) })
        where !item.isEmpty {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw SpecError(item: item, reason: "expected NAME=VALUE") }
            switch parts[0] {
            case "cut": cutAfter = try range(item, parts[1], 1...(1 << 40))
            case "piece": pieceBytes = try range(item, parts[1], 1...(1 << 24))
            case "delay": delay = try range(item, parts[1], 0.0...60.0)
            case "stall":
                let fields = parts[1].split(separator: ":").map(String.init)
                guard fields.count == 2, let p = Double(fields[0]), (0...1).contains(p),
                      let seconds = Double(fields[1]), (0...600).contains(seconds)
                else { throw SpecError(item: item, reason: "expected stall=P:SECONDS, P in 0...1, SECONDS in 0...600") }
                stallProbability = p
                stallSeconds = seconds
            case "duplicate-first":
                guard let bytes = Int(parts[1]), (0...(1 << 20)).contains(bytes) else {
                    throw SpecError(item: item, reason: "expected duplicate-first=BYTES, 0...1048576")
                }
                duplicateFirstBytes = bytes
            default:
                throw SpecError(item: item, reason: "unknown item (cut, piece, delay, stall, duplicate-first)")
            }
        }
    }
}

/// A loopback TCP relay in front of a server that applies a `RelayPlan` to every connection (see the file's
/// comment). Start it with `start(listeningOn:to:plan:seed:)`, point the client at `port`, `shutdown()` when done.
public final class FaultRelay: Sendable {
    /// How one connection ended, for logs and tests.
    public struct Report: Sendable, Hashable {
        /// The connection's number, from 1 in the order they were accepted.
        public let connection: Int
        /// Bytes passed on from the client and from the server.
        public let clientBytes: Int, serverBytes: Int
        /// Set when the relay cut it: the direction the last byte passed went (true: client to server).
        public let cutTowardServer: Bool?
    }

    /// What the relay did so far.
    public struct Counts: Sendable, Hashable {
        /// Connections accepted.
        public var connections = 0
        /// Connections the relay cut.
        public var cuts = 0
        /// Bytes passed on, both ways.
        public var bytes = 0
    }

    /// The loopback port clients connect to.
    public let port: Int
    /// The plan every connection follows.
    public let plan: RelayPlan
    /// The seed the plan's draws start from.
    public let seed: UInt64
    /// Bytes one direction may hold before the relay stops reading from its sender.
    public static let maxQueuedBytes = 8 << 20
    private let channel: any Channel
    private let state: Mutex<(counts: Counts, reports: [Report])>
    private let onReport: @Sendable (Report) -> Void

    private init(port: Int, plan: RelayPlan, seed: UInt64, channel: any Channel,
                 onReport: @escaping @Sendable (Report) -> Void) {
        self.port = port
        self.plan = plan
        self.seed = seed
        self.channel = channel
        state = Mutex((Counts(), []))
        self.onReport = onReport
    }

    /// Listens on `host`:`listenPort` (0: any free port) and relays each connection to `upstreamHost`:`upstreamPort`.
    /// `onReport` is called as each connection ends.
    public static func start(host: String = "127.0.0.1", listenPort: Int = 0, upstreamHost: String = "127.0.0.1",
                             upstreamPort: Int, plan: RelayPlan, seed: UInt64,
                             group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                             onReport: @escaping @Sendable (Report) -> Void = { _ in }) async throws -> FaultRelay {
        let box = RelayBox()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { inbound in
                inbound.eventLoop.makeCompletedFuture {
                    guard let relay = box.relay.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                    let number = relay.state.withLock { state in
                        state.counts.connections += 1
                        return state.counts.connections
                    }
                    let link = RelayLink(relay: relay, number: number, eventLoop: inbound.eventLoop)
                    try inbound.pipeline.syncOperations.addHandler(RelaySide(link: link, side: 0))
                    link.attach(inbound, side: 0)
                    link.connectUpstream(host: upstreamHost, port: upstreamPort)
                }
            }
            .bind(host: host, port: listenPort).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw ChannelError.unknownLocalAddress
        }
        let relay = FaultRelay(port: port, plan: plan, seed: seed, channel: channel, onReport: onReport)
        box.relay.withLock { $0 = relay }
        return relay
    }

    /// What the relay did so far.
    public var counts: Counts { state.withLock { $0.counts } }

    /// How each connection that ended went, in the order they ended.
    public var reports: [Report] { state.withLock { $0.reports } }

    /// Stops listening (connections open now are left to end).
    public func shutdown() async {
        try? await channel.close()
    }

    fileprivate func ended(_ report: Report) {
        state.withLock { state in
            if report.cutTowardServer != nil { state.counts.cuts += 1 }
            state.counts.bytes += report.clientBytes + report.serverBytes
            state.reports.append(report)
        }
        onReport(report)
    }
}

/// The relay, once bound, for connections accepted from then on.
private final class RelayBox: Sendable {
    let relay = Mutex<FaultRelay?>(nil)
}

/// One relayed connection: both channels, on one event loop, and what is on its way each way. Side 0 is the
/// client, side 1 the server.
private final class RelayLink {
    let relay: FaultRelay
    let number: Int
    let eventLoop: any EventLoop
    let random: SeededRandom
    var channels: [(any Channel)?] = [nil, nil]
    /// Pieces waiting to go toward each side, oldest first, with the delay each waits.
    var queues: [[(bytes: [UInt8], delay: Double)]] = [[], []]
    var queued = [0, 0]
    var pumping = [false, false]
    var passed = [0, 0]
    let cutAt: Int?
    var stallAt: Int?
    var duplicateLeft: Int
    var duplicated: [UInt8] = []
    var done = false

    init(relay: FaultRelay, number: Int, eventLoop: any EventLoop) {
        self.relay = relay
        self.number = number
        self.eventLoop = eventLoop
        // Each connection draws from its own sequence, so what one does does not shift another's draws.
        let random = SeededRandom(seed: relay.seed &+ UInt64(number) &* 0x9e37_79b9_7f4a_7c15)
        self.random = random
        let plan = relay.plan
        cutAt = plan.cutAfter.map { Int(random.next() % UInt64($0.count)) + $0.lowerBound }
        if plan.stallProbability > 0, random.unitInterval() < plan.stallProbability {
            stallAt = Int(random.next() % UInt64(max(1, cutAt ?? 65_536)))
        }
        duplicateLeft = plan.duplicateFirstBytes
    }

    func attach(_ channel: any Channel, side: Int) {
        channels[side] = channel
        pump(toward: side)
    }

    func connectUpstream(host: String, port: Int) {
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        ClientBootstrap(group: eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RelaySide(link: bound.value, side: 1))
                }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                let link = bound.value
                switch result {
                case .success(let channel):
                    if link.done { channel.close(promise: nil) } else { link.attach(channel, side: 1) }
                case .failure:
                    link.finish(cut: nil)
                }
            }
    }

    /// Bytes read from `side`, on their way to the other.
    func received(_ bytes: [UInt8], from side: Int) {
        guard !done else { return }
        let target = 1 - side
        var bytes = bytes
        if side == 0, duplicateLeft > 0 {
            let head = bytes.prefix(duplicateLeft)
            duplicated += head
            duplicateLeft -= head.count
            if duplicateLeft == 0 || head.count < bytes.count {
                bytes = duplicated + bytes
                duplicateLeft = 0
                duplicated = []
            }
        }
        let plan = relay.plan
        var offset = 0
        while offset < bytes.count {
            let size = min(bytes.count - offset, draw(plan.pieceBytes))
            let delay = plan.delay.upperBound > 0
                ? plan.delay.lowerBound + random.unitInterval() * (plan.delay.upperBound - plan.delay.lowerBound) : 0
            queues[target].append((Array(bytes[offset..<offset + size]), delay))
            offset += size
        }
        queued[target] += bytes.count
        if queued[target] > FaultRelay.maxQueuedBytes { setReading(side, false) }
        pump(toward: target)
    }

    /// Back-pressure: a direction holding too much stops reading from its sender until half of it is sent.
    private func setReading(_ side: Int, _ on: Bool) {
        guard let channel = channels[side] else { return }
        channel.setOption(ChannelOptions.autoRead, value: on).whenComplete { _ in }
    }

    private func draw(_ range: ClosedRange<Int>) -> Int {
        range.count == 1 ? range.lowerBound : Int(random.next() % UInt64(range.count)) + range.lowerBound
    }

    /// Sends the next piece toward `side` once its delay is over, then the one after it.
    func pump(toward side: Int) {
        guard !done, !pumping[side], let channel = channels[side], !queues[side].isEmpty else { return }
        pumping[side] = true
        let total = passed[0] + passed[1]
        var wait = queues[side][0].delay
        if let stall = stallAt, total >= stall {
            stallAt = nil
            wait += relay.plan.stallSeconds
        }
        if wait > 0 {
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            eventLoop.scheduleTask(in: .nanoseconds(Int64(wait * 1e9))) {
                bound.value.pumping[side] = false
                bound.value.sendPiece(toward: side, on: channel)
            }
        } else {
            pumping[side] = false
            sendPiece(toward: side, on: channel)
        }
    }

    private func sendPiece(toward side: Int, on channel: any Channel) {
        guard !done, !queues[side].isEmpty else { return }
        var piece = queues[side].removeFirst().bytes
        queued[side] -= piece.count
        if queued[side] <= FaultRelay.maxQueuedBytes / 2 {
            setReading(1 - side, true)
        }
        var cutting = false
        if let cutAt, passed[0] + passed[1] + piece.count >= cutAt {
            piece = Array(piece.prefix(cutAt - passed[0] - passed[1]))
            cutting = true
        }
        // `passed` counts by the side the bytes came from.
        passed[1 - side] += piece.count
        let buffer = channel.allocator.buffer(bytes: piece)
        if cutting {
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            channel.writeAndFlush(buffer).whenComplete { _ in bound.value.finish(cut: side == 1) }
            return
        }
        channel.writeAndFlush(buffer, promise: nil)
        pump(toward: side)
    }

    /// Ends the connection: with a reset on both sides when cut, else by closing them.
    func finish(cut towardServer: Bool?) {
        guard !done else { return }
        done = true
        for case let channel? in channels {
            if towardServer != nil, let socket = channel as? any SocketOptionProvider {
                // SO_LINGER 0: close sends RST and drops what is unsent, as a dead link or a middlebox does.
                socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
        }
        relay.ended(.init(connection: number, clientBytes: passed[0], serverBytes: passed[1],
                          cutTowardServer: towardServer))
    }

    /// One side closed: what is still queued toward the other goes first, then it closes too.
    func closed(side: Int) {
        guard !done else { return }
        let other = 1 - side
        if queues[other].isEmpty || channels[other] == nil {
            finish(cut: nil)
        } else {
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            eventLoop.scheduleTask(in: .milliseconds(50)) { bound.value.closed(side: side) }
        }
    }
}

/// Reads one side of a relayed connection into its link.
private final class RelaySide: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let link: RelayLink
    let side: Int

    init(link: RelayLink, side: Int) {
        self.link = link
        self.side = side
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        link.received(buffer.readBytes(length: buffer.readableBytes) ?? [], from: side)
    }

    func channelInactive(context: ChannelHandlerContext) {
        link.closed(side: side)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension RelaySide: Sendable {}
