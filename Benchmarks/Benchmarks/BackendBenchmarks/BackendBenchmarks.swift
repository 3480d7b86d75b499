// MTProtoCrypto's portable backend (swift-crypto, BigInt, CMontgomery) beside the OpenSSL one in the same run, on
// the work whose cost depends on the backend:
// - an auth-key exchange's six modular powers (RSA encryption with e and decryption with d, g^a, g^b, g_a^b and
//   g_b^a, the secret ones constant-time), which are nearly all of an exchange's CPU time (AuthKeyExchangeBenchmarks);
// - an SRP password check's PBKDF2-HMAC-SHA512 ×100,000 and its three modular powers (PasswordBenchmarks);
// - AES-256-IGE of 1 MiB both ways through each backend's chaining (what runs on a CPU without AES instructions;
//   with them both use the same CAESNI loop);
// - a 1 KiB message's hashes (msg_key over the plaintext, the two KDF hashes) and its IGE without the CPU loop.
// The ratio of each pair is the figure: README, "Platforms"; Benchmarks/README.md.
import Benchmark
@_spi(CryptoBackends) import MTProtoCrypto

let backends: [CryptoBackend] = [.openSSL, .portable]
let prime = DHPrimeCache.telegramPrime
let generator: [UInt8] = [3]

/// Fixed 2048-bit values standing in for an exchange's secrets and its RSA key (a modulus and a full-width private
/// exponent: the cost of the operation does not depend on the key being real).
func bytes(_ seed: UInt8, _ count: Int = 256) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: Int($0) * 31 + Int(seed)) | 1 } }
let rsaModulus = [0xc1] + bytes(7, 255)
let rsaExponentD = [0x51] + bytes(11, 255)
let a = bytes(13), b = bytes(17), block = [0x00] + bytes(19, 255)

let benchmarks: @Sendable () -> Void = {
    let slow = Benchmark.Configuration(metrics: [.wallClock, .cpuTotal], maxDuration: .seconds(5), maxIterations: 50)
    let fast = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxDuration: .seconds(3), maxIterations: 2000)
    for backend in backends {
        Benchmark("key exchange's six modular powers (\(backend))", configuration: slow) { benchmark in
            for _ in benchmark.scaledIterations {
                let sealed = try BackendOperations.modularPower(block, [1, 0, 1], rsaModulus, secretExponent: false, on: backend)
                blackHole(try BackendOperations.modularPower(sealed, rsaExponentD, rsaModulus, secretExponent: true, on: backend))
                let gA = try BackendOperations.modularPower(generator, a, prime, secretExponent: true, on: backend)
                let gB = try BackendOperations.modularPower(generator, b, prime, secretExponent: true, on: backend)
                blackHole(try BackendOperations.modularPower(gA, b, prime, secretExponent: true, on: backend))
                blackHole(try BackendOperations.modularPower(gB, a, prime, secretExponent: true, on: backend))
            }
        }
        Benchmark("SRP check: PBKDF2 ×100,000 and three modular powers (\(backend))", configuration: slow) { benchmark in
            for _ in benchmark.scaledIterations {
                let x = try BackendOperations.pbkdf2SHA512(bytes(23, 32), salt: bytes(29, 40), iterations: 100_000,
                                                           on: backend)
                let gA = try BackendOperations.modularPower(generator, a, prime, secretExponent: true, on: backend)
                blackHole(try BackendOperations.modularPower(generator, x, prime, secretExponent: true, on: backend))
                blackHole(try BackendOperations.modularPower(gA, a + x, prime, secretExponent: true, on: backend))
            }
        }
        let chaining: AES256IGE.Implementation = backend == .openSSL ? .openssl : .portable
        for encrypting in [true, false] {
            Benchmark("AES-256-IGE \(encrypting ? "encrypt" : "decrypt") 1 MiB, chaining (\(backend))",
                      configuration: fast) { benchmark in
                let ige = try AES256IGE(key: bytes(3, 32), iv: bytes(5, 32), implementation: chaining)
                var buffer = [UInt8](repeating: 7, count: 1 << 20)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    if encrypting { try ige.encrypt(inPlace: &buffer) } else { try ige.decrypt(inPlace: &buffer) }
                    blackHole(buffer[0])
                }
            }
            Benchmark("message \(encrypting ? "encrypt" : "decrypt") 1 KiB: hashes and chaining (\(backend))",
                      configuration: fast) { benchmark in
                let authKey = bytes(37), message = bytes(41, 1024)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    let large = BackendOperations.sha256(Array(authKey[88..<120]), message, on: backend)
                    let msgKey = Array(large[8..<24])
                    let hashA = BackendOperations.sha256(msgKey, Array(authKey[0..<36]), on: backend)
                    let hashB = BackendOperations.sha256(Array(authKey[40..<76]), msgKey, on: backend)
                    let ige = try AES256IGE(key: Array(hashA[0..<8] + hashB[8..<24] + hashA[24..<32]),
                                            iv: Array(hashB[0..<8] + hashA[8..<24] + hashB[24..<32]),
                                            implementation: chaining)
                    blackHole(encrypting ? try ige.encrypt(message) : try ige.decrypt(message))
                }
            }
        }
    }
}
