// The client's choice to run every connection over a temporary auth key bound to the permanent one (perfect forward
// secrecy, core.telegram.org/api/pfs): how long each temporary key lives, and how long before its expiry a new one
// replaces it. Off unless configured; `ClientConnection` makes and binds the keys, `MTProtoClient` rotates them.

/// How temporary keys are made and replaced.
public struct TemporaryKeyPolicy: Sendable, Hashable {
    /// Seconds a temporary key lives: the `expires_in` of its exchange.
    public var lifetime: Int32
    /// A key with less than this many seconds left is replaced by a new one before the next call goes out
    /// (and is not reused by a new connection).
    public var renewBefore: Int32

    /// - Parameters:
    ///   - lifetime: seconds, at least 1 (a day by default, as clients commonly choose).
    ///   - renewBefore: seconds, clamped to 0..<lifetime.
    public init(lifetime: Int32 = 86_400, renewBefore: Int32 = 3_600) {
        self.lifetime = max(1, lifetime)
        self.renewBefore = min(max(0, renewBefore), self.lifetime - 1)
    }

    /// Whether `key` has more than `renewBefore` seconds left at local time `now` (its expiry is in server time,
    /// so the key's clock offset is added).
    public func isFresh(_ key: TemporaryAuthKey, now: Double) -> Bool {
        Double(key.expiresAt) - (now + key.key.timeOffset) > Double(renewBefore)
    }
}

/// A DC's keys as a client keeps them: the permanent key, and with temporary keys the bound one in use.
public struct DCKeys: Sendable, Hashable {
    /// The permanent key; nil until an exchange made one.
    public var permanent: StoredAuthKey?
    /// The bound temporary key in use; nil without temporary keys or while a new one is made.
    public var temporary: TemporaryAuthKey?

    /// A DC's keys.
    public init(permanent: StoredAuthKey?, temporary: TemporaryAuthKey?) {
        self.permanent = permanent
        self.temporary = temporary
    }
}
