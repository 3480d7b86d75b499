// SHA-256 over data that arrives in pieces (a file read part by part), so it never needs to be held whole.
import COpenSSL

/// An incremental SHA-256: `update` with each piece in order, then `finish` once.
public final class SHA256Stream {
    private let context: OpaquePointer?

    /// A hash of nothing yet.
    public init() {
        context = EVP_MD_CTX_new()
        if let context { EVP_DigestInit_ex(context, EVP_sha256(), nil) }
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Hashes the next piece.
    public func update(_ bytes: [UInt8]) {
        guard let context else { return }
        bytes.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    /// The digest of every piece so far (32 bytes); the stream is done after it.
    public func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        if let context { out.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(context, $0.baseAddress, &length) } }
        return out
    }
}
