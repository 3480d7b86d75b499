// AES-256 in Infinite Garble Extension mode, as MTProto uses it (core.telegram.org/mtproto/description,
// "Defining AES Key and Initialization Vector"): c_i = E(p_i ⊕ c_{i−1}) ⊕ p_{i−1}. The 32-byte IV is
// c_0 ‖ p_0 (the MTProto / OpenSSL order).
//
// Implementations, picked per value (`Implementation`): where the CPU has AES instructions (AES-NI on x86, the ARMv8
// Cryptography Extensions on ARM64), the CAESNI target's loop (those instructions only, key schedule wiped after
// each call); elsewhere, and on request, the chaining composed
// around a crypto backend's AES (Backends/). OpenSSL 3 has no IGE in EVP (AES_ige_encrypt is deprecated and uses
// the slow non-AES-NI block code), swift-crypto has none at all, and IGE decryption chains AES *decryptions*, which
// no CBC, CTR or EVP mode computes.
//
// Encryption on a backend runs as one CBC pass. With y_i = c_i ⊕ p_{i−1} the IGE rule becomes
//     y_i = E(p_i ⊕ c_{i−1}) = E((p_i ⊕ p_{i−2}) ⊕ y_{i−1}),
// i.e. CBC over x_i = p_i ⊕ p_{i−2} with IV c_0 (taking p_{−1} = 0, so y_0 = c_0). So: pre-XOR, AES-CBC
// (OpenSSL's AES-NI code), post-XOR c_i = y_i ⊕ p_{i−1}. OpenSSL decryption runs one ECB block call per block
// on a reused context (about 0.7× CBC speed).
import CAESNI

/// AES-256-IGE with a fixed key and 32-byte IV. Each call starts from the IV; there is no state between calls.
public struct AES256IGE: Sendable {
    /// Who computes the AES rounds and the chaining.
    public enum Implementation: Sendable, Hashable, CaseIterable {
        /// Our AES-NI loop (CAESNI): x86 CPUs with AES-NI only.
        case aesni
        /// Our loop on the ARMv8 Cryptography Extensions (CAESNI): ARM64 CPUs with them (every Apple one; on Linux,
        /// those whose kernel reports AES).
        case armv8
        #if canImport(COpenSSL)
        /// The chaining composed around OpenSSL's EVP AES (the OpenSSL backend, Linux only).
        case openssl
        #endif
        /// The chaining composed around swift-crypto's AES (the portable backend): runs wherever that backend is
        /// compiled (`CryptoBackend.compiled`).
        case portable
    }

    /// The implementations this CPU and build can run: the CPU's loop where it has one, then the chaining of each
    /// compiled backend (`CryptoBackend.compiled`), the current one first. The first is the default.
    public static let available: [Implementation] = (caesni_available() != 0 ? [cpuLoop] : [])
        + CryptoBackend.compiled.map(\.chaining)

    /// The 32-byte key (16 or 24 only through the test-only initializer).
    public let key: [UInt8]
    /// The 32-byte IV: the initial previous-ciphertext block, then the initial previous-plaintext block.
    public let iv: [UInt8]
    /// The loop or chaining that runs this instance.
    public let implementation: Implementation

    /// - Parameters:
    ///   - key: 32 bytes.
    ///   - iv: 32 bytes: the initial "previous ciphertext" block, then the initial "previous plaintext" block.
    public init(key: [UInt8], iv: [UInt8]) throws(CryptoError) {
        try self.init(key: key, iv: iv, implementation: Self.available[0])
    }

    /// As `init(key:iv:)`, with the implementation chosen by the caller (tests and benchmarks pin each one).
    /// Throws `implementationUnavailable` for `.aesni` or `.armv8` on a CPU or build without it.
    public init(key: [UInt8], iv: [UInt8], implementation: Implementation) throws(CryptoError) {
        guard key.count == 32 else { throw .invalidKeyLength(what: "AES-256-IGE key", expected: 32, actual: key.count) }
        try self.init(anyKey: key, iv: iv, implementation: implementation)
    }

    /// Also accepts 16- and 24-byte keys; only for pinning the chaining with OpenSSL's AES-128 IGE test vectors.
    /// The AES-NI loop takes 16- and 32-byte keys, so a 24-byte key defaults to the current backend's chaining.
    init(anyKey key: [UInt8], iv: [UInt8], implementation: Implementation? = nil) throws(CryptoError) {
        guard [16, 24, 32].contains(key.count) else {
            throw .invalidKeyLength(what: "AES-IGE key", expected: 32, actual: key.count)
        }
        guard iv.count == 32 else { throw .invalidIVLength(what: "AES-IGE IV", expected: 32, actual: iv.count) }
        let aesniKey = key.count != 24
        let chosen = implementation ?? (aesniKey ? Self.available[0] : CryptoBackend.current.chaining)
        if chosen == .aesni || chosen == .armv8 {
            let name = chosen == .aesni ? "AES-NI" : "ARMv8 AES"
            guard Self.available.contains(chosen) else { throw .implementationUnavailable("\(name) on this CPU") }
            guard aesniKey else { throw .implementationUnavailable("\(name) IGE with a \(key.count)-byte key") }
        }
        guard chosen != .portable || CryptoBackend.compiled.contains(.portable) else {
            throw .implementationUnavailable(Self.portableMissing)
        }
        self.key = key
        self.iv = iv
        self.implementation = chosen
    }

    /// One-shot encryption with a fresh key and IV.
    public static func encrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) throws(CryptoError) -> [UInt8] {
        try AES256IGE(key: key, iv: iv).encrypt(plaintext)
    }

    /// One-shot decryption with a fresh key and IV.
    public static func decrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8]) throws(CryptoError) -> [UInt8] {
        try AES256IGE(key: key, iv: iv).decrypt(ciphertext)
    }

    /// The ciphertext of `plaintext`, whose length must be a multiple of 16.
    public func encrypt(_ plaintext: [UInt8]) throws(CryptoError) -> [UInt8] {
        try transformed(plaintext, encrypting: true)
    }

    /// The plaintext of `ciphertext`, whose length must be a multiple of 16.
    public func decrypt(_ ciphertext: [UInt8]) throws(CryptoError) -> [UInt8] {
        try transformed(ciphertext, encrypting: false)
    }

    /// Encrypts `data` in place. Its length must be a multiple of 16.
    public func encrypt(inPlace data: inout [UInt8]) throws(CryptoError) {
        let result: Result<Void, CryptoError> = data.withUnsafeMutableBytes { buffer in
            Result { () throws(CryptoError) in try encrypt(buffer) }
        }
        try result.get()
    }

    /// Decrypts `data` in place. Its length must be a multiple of 16.
    public func decrypt(inPlace data: inout [UInt8]) throws(CryptoError) {
        let result: Result<Void, CryptoError> = data.withUnsafeMutableBytes { buffer in
            Result { () throws(CryptoError) in try decrypt(buffer) }
        }
        try result.get()
    }

    /// Encrypts `buffer` in place. Its length must be a multiple of 16.
    public func encrypt(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        try run(buffer, encrypting: true)
    }

    /// Decrypts `buffer` in place. Its length must be a multiple of 16.
    public func decrypt(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        try run(buffer, encrypting: false)
    }

    /// IGE in place, one way or the other, with the implementation the value was made with.
    @inline(__always)
    private func run(_ buffer: UnsafeMutableRawBufferPointer, encrypting: Bool) throws(CryptoError) {
        guard buffer.count % 16 == 0 else { throw .notBlockAligned(length: buffer.count) }
        switch implementation {
        case .aesni, .armv8:
            try runAESNI(encrypting ? caesni_ige_encrypt : caesni_ige_decrypt, from: UnsafeRawBufferPointer(buffer),
                         to: buffer.baseAddress)
        #if canImport(COpenSSL)
        case .openssl:
            if encrypting {
                try OpenSSLBackend.igeEncrypt(key: key, iv: iv, buffer)
            } else {
                try OpenSSLBackend.igeDecrypt(key: key, iv: iv, buffer)
            }
        #endif
        case .portable:
            #if PortableCryptoBackend || !canImport(COpenSSL)
            if encrypting {
                try PortableBackend.igeEncrypt(key: key, iv: iv, buffer)
            } else {
                try PortableBackend.igeDecrypt(key: key, iv: iv, buffer)
            }
            #else
            throw .implementationUnavailable(Self.portableMissing)
            #endif
        }
    }

    static let portableMissing = "the portable backend (a Linux build compiles it with the package trait PortableCryptoBackend)"

    /// The CPU loop this build's architecture has (CAESNI: AESNIIGE.c on x86, ARMv8IGE.c on ARM64).
    static var cpuLoop: Implementation {
        #if arch(arm64)
        .armv8
        #else
        .aesni
        #endif
    }

    /// Whether `decrypt(_:hashingAfter:)` and `encrypt(_:hashing:after:)` hash in the same pass as the AES chain on
    /// this CPU (AES-NI and the SHA extensions).
    public static let hashesInOnePass = caesni_sha_available() != 0

    /// Decrypts `buffer` in place and returns SHA-256(`prefix` ‖ plaintext): MTProto 2.0 hashes every plaintext it
    /// decrypts to check msg_key. With AES-NI, a 32-byte key and a prefix of at most 64 bytes, on a CPU with the SHA
    /// extensions, both run in one pass at the cost of the decryption alone (the hash fills the AES chain's gaps);
    /// otherwise the plaintext is hashed after it is decrypted.
    public func decrypt(_ buffer: UnsafeMutableRawBufferPointer,
                        hashingAfter prefix: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        try decrypt(buffer, hashingAfter: prefix, onePass: true)
    }

    /// As `decrypt(_:hashingAfter:)`; `onePass: false` takes the two-pass path on any CPU (tests compare them).
    func decrypt(_ buffer: UnsafeMutableRawBufferPointer, hashingAfter prefix: UnsafeRawBufferPointer,
                 onePass: Bool) throws(CryptoError) -> [UInt8] {
        guard buffer.count % 16 == 0 else { throw .notBlockAligned(length: buffer.count) }
        guard onePass, takesOnePass(prefix) else {
            try decrypt(buffer)
            return Hash.sha256(prefix, UnsafeRawBufferPointer(buffer))
        }
        let data = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
        return try runHashing(buffer.count) { key, iv, digest in
            caesni_ige_decrypt_sha256(key, iv, prefix.baseAddress?.assumingMemoryBound(to: UInt8.self), prefix.count,
                                      data, data, buffer.count, digest)
        }
    }

    /// Encrypts `buffer` in place and returns SHA-256(`prefix` ‖ `next`) of another buffer: an MTProto 2.0 sender
    /// must hash a message before it can encrypt it (its AES key comes from the hash), so with several to send it
    /// encrypts one while hashing the next. Where `decrypt(_:hashingAfter:)` runs in one pass, so does this (the
    /// hash costs nothing beside the encryption); otherwise it encrypts and then hashes. `next` must not overlap
    /// `buffer`.
    public func encrypt(_ buffer: UnsafeMutableRawBufferPointer, hashing next: UnsafeRawBufferPointer,
                        after prefix: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        try encrypt(buffer, hashing: next, after: prefix, onePass: true)
    }

    /// As `encrypt(_:hashing:after:)`; `onePass: false` takes the two-pass path on any CPU (tests compare them).
    func encrypt(_ buffer: UnsafeMutableRawBufferPointer, hashing next: UnsafeRawBufferPointer,
                 after prefix: UnsafeRawBufferPointer, onePass: Bool) throws(CryptoError) -> [UInt8] {
        guard buffer.count % 16 == 0 else { throw .notBlockAligned(length: buffer.count) }
        guard onePass, takesOnePass(prefix) else {
            try encrypt(buffer)
            return Hash.sha256(prefix, next)
        }
        let data = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
        return try runHashing(buffer.count) { key, iv, digest in
            caesni_ige_encrypt_sha256(key, iv, data, data, buffer.count,
                                      prefix.baseAddress?.assumingMemoryBound(to: UInt8.self), prefix.count,
                                      next.baseAddress?.assumingMemoryBound(to: UInt8.self), next.count, digest)
        }
    }

    /// Whether CAESNI's one-pass loops take this cipher with `prefix`: AES-NI, a 32-byte key, a prefix of at most
    /// 64 bytes, and a CPU with the SHA extensions.
    private func takesOnePass(_ prefix: UnsafeRawBufferPointer) -> Bool {
        implementation == Self.cpuLoop && key.count == 32 && prefix.count <= 64 && Self.hashesInOnePass
    }

    /// Runs one of CAESNI's one-pass functions with this key and IV; returns the digest it wrote. Lengths are checked
    /// by the callers; a refusal would mean the CPU check and this type disagree.
    private func runHashing(
        _ count: Int,
        _ function: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) -> Int32
    ) throws(CryptoError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let status = key.withUnsafeBufferPointer { key in
            iv.withUnsafeBufferPointer { iv in
                digest.withUnsafeMutableBufferPointer { function(key.baseAddress, iv.baseAddress, $0.baseAddress) }
            }
        }
        guard status == 0 else { throw .implementationUnavailable("AES-NI with SHA refused \(count) bytes") }
        return digest
    }

    /// Out of place: with AES-NI the result is written straight into the new array (no copy first).
    private func transformed(_ input: [UInt8], encrypting: Bool) throws(CryptoError) -> [UInt8] {
        guard implementation == Self.cpuLoop else {
            var out = input
            if encrypting { try encrypt(inPlace: &out) } else { try decrypt(inPlace: &out) }
            return out
        }
        guard input.count % 16 == 0 else { throw .notBlockAligned(length: input.count) }
        var failure: CryptoError?
        let out = [UInt8](unsafeUninitializedCapacity: input.count) { buffer, initialized in
            input.withUnsafeBytes { source in
                do throws(CryptoError) {
                    try runAESNI(encrypting ? caesni_ige_encrypt : caesni_ige_decrypt, from: source,
                                 to: buffer.baseAddress)
                    initialized = source.count
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
        return out
    }

    /// Runs one of CAESNI's functions over `source` into `destination` (the same or a separate buffer of equal
    /// size). Lengths are checked by the callers; a refusal would mean the CPU check and this type disagree.
    private func runAESNI(
        _ function: (UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?,
                     UnsafeMutablePointer<UInt8>?, Int) -> Int32,
        from source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer?
    ) throws(CryptoError) {
        let status = key.withUnsafeBufferPointer { key in
            iv.withUnsafeBufferPointer { iv in
                function(key.baseAddress, key.count, iv.baseAddress,
                         source.baseAddress?.assumingMemoryBound(to: UInt8.self),
                         destination?.assumingMemoryBound(to: UInt8.self), source.count)
            }
        }
        guard status == 0 else { throw .implementationUnavailable("AES-NI refused \(source.count) bytes") }
    }
}

/// One 16-byte block as two words, for the XOR passes.
struct Block {
    var low: UInt64
    var high: UInt64

    static let zero = Block(low: 0, high: 0)

    init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    init(_ pointer: UnsafeMutableRawPointer, offset: Int) {
        low = pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        high = pointer.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
    }

    /// Reads bytes offset..<offset+16 of `bytes`; callers guarantee the length.
    init(_ bytes: [UInt8], offset: Int) {
        (low, high) = bytes.withUnsafeBytes { raw in
            (raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
             raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        }
    }

    func store(to pointer: UnsafeMutableRawPointer, offset: Int) {
        pointer.storeBytes(of: low, toByteOffset: offset, as: UInt64.self)
        pointer.storeBytes(of: high, toByteOffset: offset + 8, as: UInt64.self)
    }

    static func ^ (lhs: Block, rhs: Block) -> Block {
        Block(low: lhs.low ^ rhs.low, high: lhs.high ^ rhs.high)
    }
}

extension CryptoBackend {
    /// The IGE implementation composed around this backend's AES.
    var chaining: AES256IGE.Implementation {
        switch self {
        #if canImport(COpenSSL)
        case .openSSL: .openssl
        #else
        case .openSSL: .portable  // not compiled here: `compiled` never lists it
        #endif
        case .portable: .portable
        }
    }
}
