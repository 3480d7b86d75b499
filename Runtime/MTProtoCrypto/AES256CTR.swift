// AES-256-CTR as a running stream (obfuscated2 and MTProxy need it): the backend keeps the partial keystream block
// between updates, so data may arrive in any chunking.

/// A stateful AES-256-CTR keystream. Encryption and decryption are the same operation; the keystream
/// continues across calls. The IV is the initial 128-bit big-endian counter block.
///
/// Not thread-safe: one instance belongs to one direction of one connection.
public final class AES256CTR: @unchecked Sendable {
    private let keystream: Backend.Keystream

    /// - Parameters:
    ///   - key: 32 bytes.
    ///   - iv: 16 bytes, the initial counter block.
    public init(key: [UInt8], iv: [UInt8]) throws(CryptoError) {
        guard key.count == 32 else { throw .invalidKeyLength(what: "AES-256-CTR key", expected: 32, actual: key.count) }
        guard iv.count == 16 else { throw .invalidIVLength(what: "AES-256-CTR IV", expected: 16, actual: iv.count) }
        keystream = try Backend.Keystream(key: key, iv: iv)
    }

    /// XORs `data` with the next `data.count` keystream bytes.
    public func process(_ data: inout [UInt8]) {
        data.withUnsafeMutableBytes { process($0) }
    }

    /// XORs `buffer` in place with the next `buffer.count` keystream bytes.
    public func process(_ buffer: UnsafeMutableRawBufferPointer) {
        keystream.process(buffer)
    }
}
