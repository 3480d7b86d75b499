// Fault injection for tests of clients: what the server does wrong on purpose, seeded so a failing run replays. A
// `FaultPlan` applies to every connection of a server and can be changed while it runs; one-shot faults on a session
// (bad_msg_notification codes, a forgotten session, rotated salts) go through `ServerContext`.
import Foundation
import MTProto
import MTProtoCrypto
import Synchronization

/// Faults applied to every connection of a server.
public struct FaultPlan: Sendable {
    /// Probability (0…1) that an outgoing encrypted frame is dropped, sent twice, or swapped with the next one.
    public var dropOutgoing: Double = 0
    /// Probability (0…1) that an outgoing encrypted frame is sent twice.
    public var duplicateOutgoing: Double = 0
    /// Probability (0…1) that an outgoing encrypted frame is swapped with the next one.
    public var reorderOutgoing: Double = 0
    /// Methods answered with this error instead of their handler (`FLOOD_WAIT_5`, `PHONE_MIGRATE_3`…).
    public var errors: [String: RPCError] = [:]
    /// Like `errors`, but only a method's first arrival on each DC is answered with the error; later arrivals run
    /// its handler (a `FLOOD_WAIT_1` that a client waits out and then gets through). Each DC of a cluster draws its
    /// own.
    public var errorsOnce: [String: RPCError] = [:]
    /// Probability that an outgoing encrypted frame is held back for `delaySeconds` before it is sent.
    public var delayOutgoing: Double = 0
    /// How long a delayed frame is held, seconds.
    public var delaySeconds: Double = 1
    /// Methods whose arrival closes the connection before the answer is sent: the call runs and its answer waits in
    /// the session for the client's next connection, as on Telegram.
    public var closeOn: Set<String> = []
    /// Like `closeOn`, but only the first arrival of each method on a DC closes its connection (a reset mid-run
    /// that the client must survive; its resent request is then answered). Each DC of a cluster draws its own.
    public var closeOnceOn: Set<String> = []
    /// The N-th ordinary encrypted message (counting from 1) the test Telegram relays since it started
    /// (`messages.sendEncrypted`; service and file messages are not counted, since their number depends on the
    /// peers' timing) is lost: its sender gets the usual answer, the recipient nothing, no qts is taken and its
    /// random_id is not kept, so the sender's resend goes through. For tests of a secret chat healing a gap by asking
    /// for a resend (core.telegram.org/api/end-to-end/seq_no). Applied by `TestTelegramService`, which reads it from
    /// the first DC.
    public var dropEncryptedMessage: Int?
    /// The N-th message (counting from 1) sent with `messages.sendMessage`/`sendMedia` since the test Telegram
    /// started is stored, logged with its pts and answered to its sender, but not pushed to its recipient (in a
    /// channel, to any other member), whose next update then shows a pts gap to heal with `updates.getDifference`
    /// (`updates.getChannelDifference` in a channel; core.telegram.org/api/updates).
    /// Applied by `TestTelegramService`, which reads it from the first DC.
    public var withholdMessagePush: Int?
    /// A photo's or document's file reference is renewed each time this many bytes of it have been served with it
    /// (`upload.getFile`): parts asked with the old one are answered `FILE_REFERENCE_EXPIRED`, as Telegram answers
    /// when a reference ages, and the message fetched again carries the new one (core.telegram.org/api/file_reference).
    /// Applied by `TestTelegramService`, which reads it from the first DC.
    public var expireFileReferenceEvery: Int64?

    /// No faults.
    public init() {}

    /// Why a fault specification was refused.
    public struct SpecError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The specification item that was refused (`drop=2`).
        public let item: String
        /// Why it was refused.
        public let reason: String
        /// `fault 'ITEM': REASON`.
        public var description: String { "fault '\(item)': \(reason)" }
    }

    /// Reads `mtserver --faults`: comma-separated items `drop=P`, `duplicate=P`, `reorder=P` (P in 0…1),
    /// `delay=P:SECONDS`, `error=METHOD:CODE:MESSAGE` (e.g. `error=help.getConfig:420:FLOOD_WAIT_5`),
    /// `error-once=METHOD:CODE:MESSAGE`, `close=METHOD`, `close-once=METHOD`, `drop-encrypted=N`, `withhold-push=N`
    /// and `expire-reference=BYTES`.
    public init(parsing spec: String) throws(SpecError) {
        for item in spec.split(separator: ",").map({ String($0).trimmingCharacters(in: .whitespaces) })
        where !item.isEmpty {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw SpecError(item: item, reason: "expected NAME=VALUE") }
            let value = parts[1]
            switch parts[0] {
            case "drop", "duplicate", "reorder":
                guard let probability = Double(value), (0...1).contains(probability) else {
                    throw SpecError(item: item, reason: "the probability must be a number in 0...1")
                }
                switch parts[0] {
                case "drop": dropOutgoing = probability
                case "duplicate": duplicateOutgoing = probability
                default: reorderOutgoing = probability
                }
            case "error", "error-once":
                let fields = value.split(separator: ":", maxSplits: 2).map(String.init)
                guard fields.count == 3, let code = Int32(fields[1]), !fields[2].isEmpty else {
                    throw SpecError(item: item, reason: "expected \(parts[0])=METHOD:CODE:MESSAGE")
                }
                if parts[0] == "error" {
                    errors[fields[0]] = RPCError(code: code, message: fields[2])
                } else {
                    errorsOnce[fields[0]] = RPCError(code: code, message: fields[2])
                }
            case "delay":
                let fields = value.split(separator: ":").map(String.init)
                guard fields.count == 2, let probability = Double(fields[0]), (0...1).contains(probability),
                      let seconds = Double(fields[1]), (0...600).contains(seconds)
                else { throw SpecError(item: item, reason: "expected delay=P:SECONDS, P in 0...1, SECONDS in 0...600") }
                delayOutgoing = probability
                delaySeconds = seconds
            case "close":
                closeOn.insert(value)
            case "close-once":
                closeOnceOn.insert(value)
            case "drop-encrypted":
                guard let n = Int(value), n >= 1 else {
                    throw SpecError(item: item, reason: "expected drop-encrypted=N, N ≥ 1")
                }
                dropEncryptedMessage = n
            case "withhold-push":
                guard let n = Int(value), n >= 1 else {
                    throw SpecError(item: item, reason: "expected withhold-push=N, N ≥ 1")
                }
                withholdMessagePush = n
            case "expire-reference":
                guard let bytes = Int64(value), bytes >= 1 else {
                    throw SpecError(item: item, reason: "expected expire-reference=BYTES, BYTES ≥ 1")
                }
                expireFileReferenceEvery = bytes
            default:
                throw SpecError(item: item, reason: "unknown fault (drop, duplicate, reorder, delay, error, "
                                    + "error-once, close, close-once, drop-encrypted, withhold-push, "
                                    + "expire-reference)")
            }
        }
    }
}

/// A server's fault plan and the seeded source its draws come from.
final class FaultState: Sendable {
    let plan: Mutex<FaultPlan>
    let random: any RandomSource

    init(plan: FaultPlan, seed: UInt64) {
        self.plan = Mutex(plan)
        random = SeededRandom(seed: seed)
    }

    /// True with probability `probability`.
    func draw(_ probability: Double) -> Bool {
        guard probability > 0 else { return false }
        return random.unitInterval() < probability
    }

    /// What the plan does to a request for `method`: the error it is answered with instead of its handler's result
    /// (from `errors`, or from `errorsOnce`, which gives it up), and whether its arrival closes the connection (every
    /// arrival for `closeOn`, the first for `closeOnceOn`).
    func faults(for method: String) -> (error: RPCError?, closes: Bool) {
        plan.withLock { plan in
            // Each checked for emptiness first: hashing every request's method name was 1.2–1.6 % of the test
            // server's samples in a pipelined run.
            var error: RPCError?
            if !plan.errors.isEmpty { error = plan.errors[method] }
            if error == nil, !plan.errorsOnce.isEmpty { error = plan.errorsOnce.removeValue(forKey: method) }
            let closes = (!plan.closeOn.isEmpty && plan.closeOn.contains(method))
                || (!plan.closeOnceOn.isEmpty && plan.closeOnceOn.remove(method) != nil)
            return (error, closes)
        }
    }

    /// Applies drop, duplicate, delay and reorder to the frames of one flush: the frames to send now, and those
    /// held back with the delay to add to now.
    func shape(_ frames: [[UInt8]]) -> (now: [[UInt8]], delayed: [[UInt8]], delay: Double) {
        let plan = plan.withLock { $0 }
        guard plan.dropOutgoing > 0 || plan.duplicateOutgoing > 0 || plan.reorderOutgoing > 0 || plan.delayOutgoing > 0
        else { return (frames, [], 0) }
        var out: [[UInt8]] = []
        var delayed: [[UInt8]] = []
        for frame in frames where !draw(plan.dropOutgoing) {
            if draw(plan.delayOutgoing) {
                delayed.append(frame)
                continue
            }
            out.append(frame)
            if draw(plan.duplicateOutgoing) { out.append(frame) }
        }
        var index = 0
        while index + 1 < out.count {
            if draw(plan.reorderOutgoing) {
                out.swapAt(index, index + 1)
                index += 1
            }
            index += 1
        }
        return (out, delayed, plan.delaySeconds)
    }
}

extension ServerContext {
    /// The faults applied from now on.
    public var faults: FaultPlan {
        get { faultState.plan.withLock { $0 } }
        set { faultState.plan.withLock { $0 = newValue } }
    }

    /// The next frames of this session are answered with these `bad_msg_notification` codes (48 sends
    /// `bad_server_salt`), one each. False if the session is unknown.
    @discardableResult
    public func injectBadMessages(_ codes: [Int32], into key: SessionKey) -> Bool {
        sessions.withExistingEntry(key) { $0.refusals += codes } != nil
    }

    /// Forgets the session's state as a restarted server would: its next message gets `new_session_created`.
    @discardableResult
    public func resetSession(_ key: SessionKey) -> Bool {
        sessions.withExisting(key) { $0.forgetState() } != nil
    }

    /// Replaces the salts of an auth key now (early rotation): messages with an older salt get `bad_server_salt`.
    /// Returns the new current salt, or nil if the key is unknown.
    @discardableResult
    public func rotateSalts(authKeyID: UInt64, now: Double) -> Int64? {
        let salt = faultState.random.int64()
        let schedule = SaltSchedule.hourly(first: salt, start: now, random: faultState.random)
        guard keys.replaceSalts(id: authKeyID, with: schedule) else { return nil }
        for key in sessions.keys(authKeyID: authKeyID) { sessions.withExisting(key) { $0.rotateSalts(schedule) } }
        return salt
    }
}
