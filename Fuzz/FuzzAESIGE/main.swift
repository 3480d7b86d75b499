// libFuzzer entry point comparing AES-IGE's two implementations: the input's first 32 bytes are the key, the next
// 32 the IV, the rest (cut to whole blocks, at most 64 KiB) the data, which is encrypted and decrypted through
// AES-NI and through OpenSSL, decrypted with SHA-256 of a prefix ‖ plaintext and encrypted while hashing another
// buffer, each in one pass and in two. Any
// disagreement, or a round trip that does not return the data, traps, which is how libFuzzer records a crash and
// its input. On a CPU without AES-NI there is nothing to compare. libFuzzer's default -max_len is 4096; pass a
// larger one to reach long chains. Build commands: Fuzz/Package.swift.
import CFuzzerDriver
import MTProtoCrypto
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

func fuzzAESIGE(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    guard bytes.count >= 64, AES256IGE.available.contains(.aesni) else { return 0 }
    let key = Array(bytes[0..<32]), iv = Array(bytes[32..<64])
    let blocks = min((bytes.count - 64) / 16, 4096)
    let data = Array(bytes[64..<(64 + 16 * blocks)])
    do {
        let fast = try AES256IGE(key: key, iv: iv, implementation: .aesni)
        let reference = try AES256IGE(key: key, iv: iv, implementation: .openssl)
        let encrypted = try fast.encrypt(data)
        guard encrypted == (try reference.encrypt(data)) else { fatalError("IGE encryption differs") }
        guard try fast.decrypt(data) == (try reference.decrypt(data)) else { fatalError("IGE decryption differs") }
        guard try fast.decrypt(encrypted) == data else { fatalError("IGE round trip failed") }
        // Decryption with SHA-256 of prefix ‖ plaintext: one pass (AES-NI with the SHA extensions) against two
        // (OpenSSL). The prefix (0…64 bytes, the length from the IV's last byte) is taken from the data's start.
        let prefix = Array(data.prefix(Int(iv[31]) % 65))
        guard try opened(fast, data, prefix) == (try opened(reference, data, prefix)) else {
            fatalError("IGE decryption with SHA-256 differs")
        }
        // Encryption while hashing another buffer (the data's second half, any length) after the same prefix.
        let next = Array(data[(data.count / 2)...].dropLast(Int(iv[30]) % 16))
        guard try sealed(fast, data, next, prefix) == (try sealed(reference, data, next, prefix)) else {
            fatalError("IGE encryption with SHA-256 differs")
        }
    } catch {
        fatalError("IGE refused valid input: \(error)")
    }
    return 0
}

/// Decrypts a copy of `data` in place with the hash of `prefix` ‖ plaintext; returns both.
func opened(_ ige: AES256IGE, _ data: [UInt8], _ prefix: [UInt8]) throws -> [UInt8] {
    var plaintext = data
    let digest = try plaintext.withUnsafeMutableBytes { buffer in
        try prefix.withUnsafeBytes { prefix in try ige.decrypt(buffer, hashingAfter: prefix) }
    }
    return plaintext + digest
}

/// Encrypts a copy of `data` in place while hashing `prefix` ‖ `next`; returns both.
func sealed(_ ige: AES256IGE, _ data: [UInt8], _ next: [UInt8], _ prefix: [UInt8]) throws -> [UInt8] {
    var ciphertext = data
    let digest = try ciphertext.withUnsafeMutableBytes { buffer in
        try next.withUnsafeBytes { next in
            try prefix.withUnsafeBytes { prefix in try ige.encrypt(buffer, hashing: next, after: prefix) }
        }
    }
    return ciphertext + digest
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzAESIGE))
