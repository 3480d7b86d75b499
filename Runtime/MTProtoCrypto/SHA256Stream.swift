// SHA-256 over data that arrives in pieces (a file read part by part), so it never needs to be held whole.

/// An incremental SHA-256: `update` with each piece in order, then `finish` once.
public final class SHA256Stream {
    private let hasher = Backend.SHA256Hasher()

    /// A hash of nothing yet.
    public init() {}

    /// Hashes the next piece.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { hasher.update($0) }
    }

    /// The digest of every piece so far (32 bytes); the stream is done after it.
    public func finish() -> [UInt8] { hasher.finish() }
}
