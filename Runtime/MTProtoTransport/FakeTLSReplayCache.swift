// The ClientHello digests a fake-TLS server has accepted, so a recorded hello replayed by a censor probing for
// proxies is refused (as MTProxy does): a digest is kept as long as a hello carrying it could pass the clock check,
// and the number kept is bounded. Shared by every connection of a listener, hence locked.
import Synchronization

/// Seen ClientHello digests, for `ServerTransport`'s fake-TLS handshake.
public final class FakeTLSReplayCache: Sendable {
    /// Digests kept at most; past it the oldest is forgotten (a replay of it then passes if still in the window).
    public let capacity: Int
    private let state = Mutex<(seen: Set<[UInt8]>, order: [(digest: [UInt8], expires: Int64)], head: Int)>(([], [], 0))

    /// A cache remembering up to `capacity` digests (at least 1).
    public init(capacity: Int = 65_536) { self.capacity = max(1, capacity) }

    /// Records `digest`, seen at `now`, kept until `expires`; false when it was already recorded (a replay).
    public func insert(_ digest: [UInt8], now: Int64, expires: Int64) -> Bool {
        state.withLock { state in
            // Drop what expired, and the oldest past the capacity; compact the queue now and then.
            while state.head < state.order.count,
                  state.order[state.head].expires < now || state.order.count - state.head >= capacity {
                state.seen.remove(state.order[state.head].digest)
                state.head += 1
            }
            if state.head > 1024, state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            guard state.seen.insert(digest).inserted else { return false }
            state.order.append((digest, expires))
            return true
        }
    }

    /// Digests held now.
    public var count: Int { state.withLock { $0.seen.count } }
}
