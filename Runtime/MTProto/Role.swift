// Which end of a connection a state machine plays. The exchange and the session are written once and run in
// either role; the role decides msg_id residues, the KDF direction and which service messages are answered.
import MTProtoCrypto

/// The end of an MTProto connection a state machine plays.
public enum Role: Sendable, Hashable {
    /// The end that makes the key and sends requests.
    case client
    /// The end that answers them.
    case server

    /// The direction of the messages this end sends (x = 0 for a client, 8 for a server in the 2.0 KDF).
    public var outgoing: MessageDirection { self == .client ? .client : .server }

    /// The direction of the messages this end receives.
    public var incoming: MessageDirection { self == .client ? .server : .client }
}
