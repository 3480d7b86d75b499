// msg_id rules, core.telegram.org/mtproto/description#message-identifier-msg-id: approximately unixtime × 2^32,
// strictly increasing within a session; a client's ids are divisible by 4, a server's are 1 mod 4 for a
// response to a client message and 3 mod 4 otherwise.

/// Issues msg_ids from a clock the caller passes in, corrected by the offset to the peer's clock.
public struct MessageIDGenerator: Sendable {
    /// Which end issues the ids: a client's are divisible by 4, a server's are 1 or 3 mod 4.
    public let role: Role
    /// Seconds to add to the local clock to get the server's (learned from the key exchange and from
    /// `bad_msg_notification` 16/17). Always 0 for a server.
    public var timeOffset: Double
    /// The last id issued; the next one is strictly greater.
    public private(set) var last: Int64 = 0

    /// A generator for `role`; a server's clock offset is always 0.
    public init(role: Role, timeOffset: Double = 0) {
        self.role = role
        self.timeOffset = role == .server ? 0 : timeOffset
    }

    /// The msg_id for a message sent at local time `now` (seconds since 1970). `isResponse` matters only for a
    /// server: a response to a client message gets residue 1, anything else residue 3.
    public mutating func next(now: Double, isResponse: Bool = false) -> Int64 {
        let residue: Int64 = switch role {
            case .client: 0
            case .server: isResponse ? 1 : 3
        }
        var id = (MessageIDGenerator.rawID(at: now + timeOffset) & ~3) | residue
        if id <= last {
            // Same or earlier clock reading: step past the last id, keeping the residue.
            id = ((last &+ 4) & ~3) | residue
        }
        last = id
        return id
    }

    /// unixtime × 2^32 plus the fraction of the second in the low 32 bits, for a time in seconds.
    public static func rawID(at time: Double) -> Int64 {
        guard time.isFinite, time > 0, time < Double(Int32.max) else { return 0 }
        let seconds = time.rounded(.down)
        let fraction = UInt64(((time - seconds) * 4_294_967_296).rounded(.down)) & 0xffff_ffff
        return Int64(seconds) << 32 | Int64(fraction)
    }

    /// The time (seconds since 1970) a msg_id claims.
    public static func time(of messageID: Int64) -> Double {
        Double(messageID >> 32) + Double(UInt64(UInt32(truncatingIfNeeded: messageID))) / 4_294_967_296
    }
}
