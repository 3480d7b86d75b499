// The store that keeps a session for the life of the process.
import MTProtoClient

/// Keeps the session in memory, for the life of the process.
public actor MemorySessionStore: SessionStore {
    private var state: SessionState

    /// A store holding `state` (empty by default).
    public init(_ state: SessionState = SessionState()) { self.state = state }

    /// The state as last saved.
    public func load() -> SessionState { state }

    /// Applies `changes` in order.
    public func save(_ changes: [SessionChange]) {
        for change in changes { state.apply(change) }
    }

    /// The keys kept for `dc`.
    public func keys(for dc: Int32) -> DCKeys {
        DCKeys(permanent: state.permanentKeys[dc], temporary: state.temporaryKeys[dc])
    }
}
