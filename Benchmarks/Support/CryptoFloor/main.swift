// The work no MTProto 2.0 client can skip to move a file, timed alone: for each part, the receiver decrypts the
// message (AES-256-IGE) and hashes its plaintext after 32 bytes of the auth key to check msg_key; the sender hashes
// each message before it encrypts it (https://core.telegram.org/mtproto/description#defining-aes-key-and-initialization-vector).
// Both are timed with this build's fastest path (one pass where the CPU has the SHA extensions) and with the
// two-pass path, as process CPU time (user + system, `CLOCK_PROCESS_CPUTIME_ID`) of the loop alone, and printed as
// one JSON line of milliseconds per MiB; `Benchmarks/client_cost.py` sets a client's CPU per MiB beside them.
//   swift build -c release --product CryptoFloor
//   .build/release/CryptoFloor [megabytes, default 64] [part bytes, default 524288]
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MTProtoCrypto

/// Process CPU seconds so far.
func processCPU() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let megabytes = arguments.first ?? 64
let partBytes = arguments.dropFirst().first ?? 524_288
guard (1...4096).contains(megabytes), partBytes > 0, partBytes % 16 == 0, partBytes <= 1 << 20 else {
    print("usage: CryptoFloor [megabytes 1...4096] [part bytes, a multiple of 16 up to 1048576]")
    exit(64)
}
/// The four timings, as the JSON line.
func measure(megabytes: Int, partBytes: Int) throws -> String {
    // A part's message: the part plus its envelope (msg header, rpc_result, upload.file), padded to whole blocks.
    let messageBytes = (partBytes + 64 + 15) / 16 * 16
    let parts = (megabytes << 20) / partBytes
    var generator = SystemRandomNumberGenerator()
    func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
    let key = randomBytes(32), iv = randomBytes(32), prefix = randomBytes(32)
    var messages = [randomBytes(messageBytes), randomBytes(messageBytes)]
    var fold: UInt8 = 0  // every digest folded in and printed, so no pass is optimised away

    /// CPU milliseconds per MiB of `parts` runs of `body` on alternating buffers (a warm-up pass first).
    func timed(_ body: (inout [UInt8], [UInt8]) throws -> [UInt8]) throws -> Double {
        var sink = try body(&messages[0], messages[1])
        let start = processCPU()
        for part in 0..<parts {
            let digest = try body(&messages[part & 1], messages[(part + 1) & 1])
            sink[part & 31] ^= digest[part & 31]
        }
        let spent = processCPU() - start
        fold ^= sink.reduce(0, ^)
        return spent * 1000 / (Double(parts * partBytes) / Double(1 << 20))
    }

    let cipher = try AES256IGE(key: key, iv: iv)
    let decryptOnePass = try timed { message, _ in
        try message.withUnsafeMutableBytes { buffer in
            try prefix.withUnsafeBytes { try cipher.decrypt(buffer, hashingAfter: $0) }
        }
    }
    let decryptTwoPass = try timed { message, _ in
        try cipher.decrypt(inPlace: &message)
        return Hash.sha256(prefix, message)
    }
    let encryptOnePass = try timed { message, next in
        try message.withUnsafeMutableBytes { buffer in
            try next.withUnsafeBytes { next in
                try prefix.withUnsafeBytes { try cipher.encrypt(buffer, hashing: next, after: $0) }
            }
        }
    }
    let encryptTwoPass = try timed { message, _ in
        let digest = Hash.sha256(prefix, message)
        try cipher.encrypt(inPlace: &message)
        return digest
    }
    func number(_ value: Double) -> String { String(Double(Int(value * 10_000)) / 10_000) }
    return "{\"megabytes\": \(megabytes), \"part_bytes\": \(partBytes), \"one_pass\": \(AES256IGE.hashesInOnePass), "
        + "\"decrypt_ms_per_mb\": \(number(min(decryptOnePass, decryptTwoPass))), "
        + "\"encrypt_ms_per_mb\": \(number(min(encryptOnePass, encryptTwoPass))), "
        + "\"decrypt_one_pass\": \(number(decryptOnePass)), \"decrypt_two_pass\": \(number(decryptTwoPass)), "
        + "\"encrypt_one_pass\": \(number(encryptOnePass)), \"encrypt_two_pass\": \(number(encryptTwoPass)), "
        + "\"fold\": \(fold)}"
}

do {
    print(try measure(megabytes: megabytes, partBytes: partBytes))
} catch {
    print("CryptoFloor: \(error)")
    exit(1)
}
