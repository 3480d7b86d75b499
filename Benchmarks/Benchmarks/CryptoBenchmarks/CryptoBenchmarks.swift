// MTProtoCrypto throughput and latency, each beside the OpenSSL baseline it should approach, in the same run:
// - AES-256-IGE encrypt/decrypt of 1 MiB and of 1 KiB (a typical MTProto message), through the AES-NI loop and
//   through the OpenSSL fallback, vs OpenSSL AES-256-CBC encryption of the same buffer (CBC has IGE's serial
//   dependency chain, so it is the practical limit; target IGE ≥ 0.9× CBC). IGE expands its key on every call,
//   as a session does per message; the CBC baseline reuses one context;
// - IGE decryption with SHA-256 of a 32-byte prefix ‖ plaintext (MTProto 2.0's msg_key check), and IGE encryption
//   while hashing the next message (a sender's batch), each in one fused pass where the CPU has the SHA extensions
//   and in two passes (target: one pass at the cost of the AES work alone);
// - pq factoring of the docs sample and of random 63-bit semiprimes (target well under 1 ms);
// - one client-side DH step (range checks + two modexps) vs two raw OpenSSL modexps (target ≤ 1.1×).
import Benchmark
import COpenSSL
import MTProtoCrypto

let bufferSizes = [(1 << 20, "1 MiB"), (1 << 10, "1 KiB")]
let key = (0..<32).map { UInt8($0) }
let iv = (32..<64).map { UInt8($0) }

/// AES-256-CBC encryption through EVP with one reused context: OpenSSL's own baseline.
final class CBCBaseline {
    let ctx: OpaquePointer?
    init() {
        ctx = EVP_CIPHER_CTX_new()
        EVP_EncryptInit_ex(ctx, EVP_aes_256_cbc(), nil, key, Array(iv[0..<16]))
        EVP_CIPHER_CTX_set_padding(ctx, 0)
    }
    deinit { EVP_CIPHER_CTX_free(ctx) }
    func encrypt(_ buffer: inout [UInt8]) {
        var written: Int32 = 0
        let count = Int32(buffer.count)
        buffer.withUnsafeMutableBufferPointer { p in
            _ = EVP_EncryptUpdate(ctx, p.baseAddress, &written, p.baseAddress, count)
        }
    }
}

/// base^exponent mod modulus with raw BN calls (constant-time, like the library's secret exponents).
func rawModExp(base: [UInt8], exponent: [UInt8], modulus: [UInt8], ctx: OpaquePointer?) -> [UInt8] {
    let b = BN_bin2bn(base, Int32(base.count), nil), e = BN_bin2bn(exponent, Int32(exponent.count), nil)
    let m = BN_bin2bn(modulus, Int32(modulus.count), nil), r = BN_new()
    BN_mod_exp_mont_consttime(r, b, e, m, ctx, nil)
    var out = [UInt8](repeating: 0, count: 256)
    BN_bn2binpad(r, &out, 256)
    BN_free(b); BN_free(e); BN_free(m); BN_free(r)
    return out
}

/// pq factoring refuses primes, which makes it a primality test for the semiprime generator.
func isPrime(_ n: UInt64) -> Bool {
    do { _ = try PQFactorizer.factor(n); return false } catch { return error == .pqIsPrime(n) }
}

/// Products of two random primes in [2^31, √(2^63)), so each product has 62–63 bits like Telegram's pq.
func randomSemiprimes(_ count: Int) -> [UInt64] {
    var generator = SystemRandomNumberGenerator()
    var out: [UInt64] = []
    func randomPrime() -> UInt64 {
        while true {
            let candidate = UInt64.random(in: (1 << 31)..<3_037_000_499, using: &generator) | 1
            if isPrime(candidate) { return candidate }
        }
    }
    while out.count < count {
        let p = randomPrime(), q = randomPrime()
        if p != q { out.append(p * q) }
    }
    return out
}

let benchmarks: @Sendable () -> Void = {
    for (size, label) in bufferSizes {
        let configuration = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxDuration: .seconds(3),
                                                    maxIterations: size >= 1 << 20 ? 500 : 200_000)

        Benchmark("AES-256-CBC encrypt \(label) (OpenSSL baseline)", configuration: configuration) { benchmark in
            let cbc = CBCBaseline()
            var buffer = [UInt8](repeating: 7, count: size)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                cbc.encrypt(&buffer)
                blackHole(buffer[0])
            }
        }

        for implementation in AES256IGE.available {
            for encrypting in [true, false] {
                let name = "AES-256-IGE \(encrypting ? "encrypt" : "decrypt") \(label) (\(implementation))"
                Benchmark(name, configuration: configuration) { benchmark in
                    let ige = try AES256IGE(key: key, iv: iv, implementation: implementation)
                    var buffer = [UInt8](repeating: 7, count: size)
                    benchmark.startMeasurement()
                    for _ in benchmark.scaledIterations {
                        if encrypting { try ige.encrypt(inPlace: &buffer) } else { try ige.decrypt(inPlace: &buffer) }
                        blackHole(buffer[0])
                    }
                }
            }
        }

        // MTProto 2.0's receive side: decrypt, then SHA-256 over a 32-byte key slice ‖ plaintext for msg_key.
        for onePass in AES256IGE.hashesInOnePass ? [true, false] : [false] {
            let name = "AES-256-IGE decrypt + SHA-256 \(label) (\(onePass ? "one pass" : "two passes"))"
            Benchmark(name, configuration: configuration) { benchmark in
                let ige = try AES256IGE(key: key, iv: iv)
                let prefix = [UInt8](repeating: 5, count: 32)
                var buffer = [UInt8](repeating: 7, count: size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    if onePass {
                        let digest = try buffer.withUnsafeMutableBytes { data in
                            try prefix.withUnsafeBytes { prefix in try ige.decrypt(data, hashingAfter: prefix) }
                        }
                        blackHole(digest[0])
                    } else {
                        try ige.decrypt(inPlace: &buffer)
                        blackHole(Hash.sha256(prefix, buffer)[0])
                    }
                }
            }
            // The sender's side with several messages: encrypt one while hashing the next.
            let sender = "AES-256-IGE encrypt + SHA-256 of the next message \(label) (\(onePass ? "one pass" : "two passes"))"
            Benchmark(sender, configuration: configuration) { benchmark in
                let ige = try AES256IGE(key: key, iv: iv)
                let prefix = [UInt8](repeating: 5, count: 32)
                let next = [UInt8](repeating: 6, count: size)
                var buffer = [UInt8](repeating: 7, count: size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    if onePass {
                        let digest = try buffer.withUnsafeMutableBytes { data in
                            try next.withUnsafeBytes { next in
                                try prefix.withUnsafeBytes { prefix in
                                    try ige.encrypt(data, hashing: next, after: prefix)
                                }
                            }
                        }
                        blackHole(digest[0])
                    } else {
                        try ige.encrypt(inPlace: &buffer)
                        blackHole(Hash.sha256(prefix, next)[0])
                    }
                }
            }
        }
    }

    let latency = Benchmark.Configuration(metrics: [.wallClock], maxDuration: .seconds(3), maxIterations: 5000)

    Benchmark("pq factoring: docs sample", configuration: latency) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try PQFactorizer.factor(2694724800268887959))
        }
    }

    Benchmark("pq factoring: random 63-bit semiprimes", configuration: latency) { benchmark in
        let pqs = randomSemiprimes(256)
        var index = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try PQFactorizer.factor(pqs[index % pqs.count]))
            index += 1
        }
    }

    let dhLatency = Benchmark.Configuration(metrics: [.wallClock], maxDuration: .seconds(3), maxIterations: 1000)

    Benchmark("DH client step (checks + g^b + g_a^b)", configuration: dhLatency) { benchmark in
        let dh = try DHParameters(prime: DHPrimeCache.telegramPrime, g: 3)
        let b = SystemRandom().bytes(256)
        let gA = try dh.publicValue(exponent: SystemRandom().bytes(256))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try dh.clientStep(gA: gA, b: b))
        }
    }

    Benchmark("DH two raw OpenSSL modexps (baseline)", configuration: dhLatency) { benchmark in
        let dh = try DHParameters(prime: DHPrimeCache.telegramPrime, g: 3)
        let b = SystemRandom().bytes(256)
        let gA = try dh.publicValue(exponent: SystemRandom().bytes(256))
        let ctx = BN_CTX_new()
        defer { BN_CTX_free(ctx) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(rawModExp(base: [3], exponent: b, modulus: DHPrimeCache.telegramPrime, ctx: ctx))
            blackHole(rawModExp(base: gA, exponent: b, modulus: DHPrimeCache.telegramPrime, ctx: ctx))
        }
    }
}
