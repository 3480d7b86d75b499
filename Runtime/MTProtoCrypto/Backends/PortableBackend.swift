// The portable backend: apple/swift-crypto for digests, PBKDF2 and AES, BigInt and this module's Montgomery
// exponentiation for the numbers (PortableInteger.swift), this module's DER reader for RSA keys (DER.swift).
// The only backend on Apple platforms; on Linux, compiled with the package trait `PortableCryptoBackend` and the
// default with `PortableCrypto` (which enables it).
#if PortableCryptoBackend || !canImport(COpenSSL)
#if os(Linux)
import PortableCryptoLinux  // swift-crypto, re-exported (Package.swift)
#else
import Crypto
import _CryptoExtras
#endif
import Foundation

enum PortableBackend: CryptoPrimitives {
    typealias Integer = PortableInteger
    typealias Keystream = PortableCTR
    typealias SHA256Hasher = PortableSHA256

    static var kind: CryptoBackend { .portable }

    static func sha1(_ data: [UInt8]) -> [UInt8] { Array(Insecure.SHA1.hash(data: data)) }

    static func sha1(parts: [[UInt8]]) -> [UInt8] {
        var hasher = Insecure.SHA1()
        for part in parts { hasher.update(data: part) }
        return Array(hasher.finalize())
    }

    static func sha256(_ data: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: data)) }

    static func sha256(parts: [[UInt8]]) -> [UInt8] {
        var hasher = SHA256()
        for part in parts { hasher.update(data: part) }
        return Array(hasher.finalize())
    }

    static func sha256(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bufferPointer: first)
        hasher.update(bufferPointer: second)
        return Array(hasher.finalize())
    }

    static func md5(_ data: [UInt8]) -> [UInt8] { Array(Insecure.MD5.hash(data: data)) }

    static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }

    static func pbkdf2SHA512(_ password: [UInt8], salt: [UInt8], iterations: Int) throws(CryptoError) -> [UInt8] {
        do {
            // Telegram fixes the rounds at 100,000 (core.telegram.org/api/srp), below swift-crypto's checked minimum.
            let key = try KDF.Insecure.PBKDF2.deriveKey(from: password, salt: salt, using: .sha512, outputByteCount: 64,
                                                        unsafeUncheckedRounds: iterations)
            return key.withUnsafeBytes { Array($0) }
        } catch {
            throw .swiftCrypto(function: "PBKDF2.deriveKey", detail: "\(error)")
        }
    }

    /// The operating system's CSPRNG (getrandom on Linux, arc4random on Darwin), through the standard library.
    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var generator = SystemRandomNumberGenerator()
        var offset = 0
        while offset < buffer.count {
            let word = generator.next()
            let count = min(8, buffer.count - offset)
            withUnsafeBytes(of: word) { buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: count) }
            offset += count
        }
        return true
    }

    static func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    static func rsaKey(pem: String, wantPrivate: Bool) throws(CryptoError) -> RSAKeyNumbers {
        try DER.rsaKey(pem: pem, wantPrivate: wantPrivate)
    }

    /// Encryption one block at a time on swift-crypto's AES permutation: the OpenSSL backend's rewriting as one CBC
    /// pass, run on swift-crypto's CBC mode, measured 5 times slower than this (BackendBenchmarks, 2026-12-01).
    static func igeEncrypt(key: [UInt8], iv: [UInt8], _ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        try chain(key: key, y0: Block(iv, offset: 0), x0: Block(iv, offset: 16), buffer, decrypting: false)
    }

    static func igeDecrypt(key: [UInt8], iv: [UInt8], _ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        try chain(key: key, y0: Block(iv, offset: 16), x0: Block(iv, offset: 0), buffer, decrypting: true)
    }

    /// y_i = F(x_i ⊕ y_{i−1}) ⊕ x_{i−1} in place: encryption with x = p, y = c, F = E, y_0 = c_0, x_0 = p_0;
    /// decryption with x = c, y = p, F = D, y_0 = p_0, x_0 = c_0.
    private static func chain(key: [UInt8], y0: Block, x0: Block, _ buffer: UnsafeMutableRawBufferPointer,
                              decrypting: Bool) throws(CryptoError) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let symmetric = SymmetricKey(data: key)
        var yPrev = y0, xPrev = x0
        var block = [UInt8](repeating: 0, count: 16)
        var offset = 0
        while offset < buffer.count {
            let x = Block(base, offset: offset)
            block.withUnsafeMutableBytes { (x ^ yPrev).store(to: $0.baseAddress!, offset: 0) }
            do {
                if decrypting { try AES.inversePermute(&block, key: symmetric) } else { try AES.permute(&block, key: symmetric) }
            } catch {
                throw .swiftCrypto(function: decrypting ? "AES.inversePermute" : "AES.permute", detail: "\(error)")
            }
            let y = Block(block, offset: 0) ^ xPrev
            y.store(to: base, offset: offset)
            yPrev = y
            xPrev = x
            offset += 16
        }
    }
}

/// CTR as swift-crypto computes it (a 128-bit big-endian counter), run ahead in 4 KiB keystream pieces so data may
/// arrive in any chunking.
final class PortableCTR: CTRKeystream {
    private let key: SymmetricKey
    private var counter: [UInt8]
    private var keystream: [UInt8] = []
    private var used = 0
    private static let zeros = [UInt8](repeating: 0, count: 4096)

    init(key: [UInt8], iv: [UInt8]) throws(CryptoError) {
        self.key = SymmetricKey(data: key)
        counter = iv
        try refill()
    }

    func process(_ buffer: UnsafeMutableRawBufferPointer) {
        var offset = 0
        while offset < buffer.count {
            if used == keystream.count {
                // `_CTR` checks only the key's and the nonce's sizes, which the first refill (in init) proved.
                do { try refill() } catch { preconditionFailure("AES-CTR refused a key and nonce it took before") }
            }
            let count = min(buffer.count - offset, keystream.count - used)
            keystream.withUnsafeBytes { stream in
                for i in 0..<count { buffer[offset + i] ^= stream[used + i] }
            }
            used += count
            offset += count
        }
    }

    private func refill() throws(CryptoError) {
        do {
            keystream = Array(try AES._CTR.encrypt(Self.zeros, using: key, nonce: AES._CTR.Nonce(nonceBytes: counter)))
        } catch {
            throw .swiftCrypto(function: "AES._CTR.encrypt", detail: "\(error)")
        }
        used = 0
        // The counter moves on by the 256 blocks just used (big-endian, carrying across all 16 bytes).
        var carry = UInt16(Self.zeros.count / 16)
        for i in stride(from: 15, through: 0, by: -1) where carry != 0 {
            let sum = UInt16(counter[i]) + (carry & 0xff)
            counter[i] = UInt8(truncatingIfNeeded: sum)
            carry = (carry >> 8) + (sum >> 8)
        }
    }
}

final class PortableSHA256: IncrementalSHA256 {
    private var hasher = SHA256()

    init() {}

    func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }

    func finish() -> [UInt8] { Array(hasher.finalize()) }
}
#endif
