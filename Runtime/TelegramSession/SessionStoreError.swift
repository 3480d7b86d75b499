// What a session store reports: the file, the schema version, or the row that is not what the store writes.

/// Why a session store failed.
public enum SessionStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file could not be created or restricted to its owner.
    case file(path: String, reason: String)
    /// SQLite refused a statement (the disk is full, the file is locked or is not a database).
    case database(path: String, reason: String)
    /// The file was written by a newer version of this store (its schema is `version`; this one reads up to
    /// `newest`): it is left as it is.
    case unsupportedVersion(path: String, version: Int, newest: Int)
    /// A value that is not what the store writes (the file is damaged, or someone else's): `location` names the
    /// table and row, `reason` what is wrong with it.
    case corrupt(path: String, location: String, reason: String)

    /// A one-line account of the error.
    public var description: String {
        switch self {
            case let .file(path, reason): "session file \(path): \(reason)"
            case let .database(path, reason): "session file \(path): \(reason)"
            case let .unsupportedVersion(path, version, newest):
                "session file \(path): schema version \(version) is newer than this store's (\(newest))"
            case let .corrupt(path, location, reason): "session file \(path), \(location): \(reason)"
        }
    }
}
