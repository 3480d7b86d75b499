// A cloud-password check (core.telegram.org/api/srp) beside the work it cannot avoid, in the same run:
// - the client's check as `TelegramClient.passwordCheck` runs it: p, g and srp_B checked (the prime proven safe
//   once per process, as the cache does), x = PH2 (PBKDF2-HMAC-SHA512, 100,000 iterations), then A and M1
//   (g^x, g^a, the u and range checks, (g_b − k·v)^(a + u·x), the hashes);
// - the mandatory work with raw OpenSSL calls: PKCS5_PBKDF2_HMAC at 100,000 iterations and the three modexps
//   (g^x, g^a, t^(a + u·x)). Target: the check ≤ 1.1× the mandatory work.
import Benchmark
import COpenSSL
import MTProtoCrypto

let prime = DHPrimeCache.telegramPrime
let salt1 = [UInt8](repeating: 0x11, count: 40), salt2 = [UInt8](repeating: 0x22, count: 16)
let secretA = [UInt8](repeating: 0x5a, count: 256)

/// A server's srp_B for the password "benchmark", from the library's own server side.
let serverB: [UInt8] = {
    guard let parameters = try? SRPParameters(salt1: salt1, salt2: salt2, g: 3, p: prime),
          let x = try? SRP.passwordHash("benchmark", salt1: salt1, salt2: salt2),
          let v = try? SRP.verifier(passwordHash: x, parameters: parameters),
          let b = try? SRP.serverPublic(verifier: v, b: [UInt8](repeating: 0x3c, count: 256), parameters: parameters)
    else { return [] }
    return b
}()

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .cpuTotal], maxDuration: .seconds(10),
                                                maxIterations: 100)

    Benchmark("SRP password check (checks + PH2 + A, M1)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            let parameters = try SRPParameters(salt1: salt1, salt2: salt2, g: 3, p: prime)
            let challenge = try SRPChallenge(parameters: parameters, gB: serverB)
            let x = try SRP.passwordHash("benchmark", salt1: salt1, salt2: salt2)
            blackHole(try challenge.proof(passwordHash: x, a: secretA))
        }
    }

    Benchmark("SRP mandatory work (raw PBKDF2-HMAC-SHA512 ×100,000 + 3 modexps, baseline)",
              configuration: configuration) { benchmark in
        // Every number converted once, outside the loop: only the PBKDF2 and the modexps are timed.
        let ctx = BN_CTX_new(), p = BN_bin2bn(prime, Int32(prime.count), nil), g = BN_new(), x = BN_new()
        let a = BN_bin2bn(secretA, Int32(secretA.count), nil), b = BN_bin2bn(serverB, Int32(serverB.count), nil)
        let result = BN_new()
        BN_set_word(g, 3)
        defer { for n in [p, g, x, a, b, result] { BN_free(n) }; BN_CTX_free(ctx) }
        let password = [UInt8](repeating: 0x42, count: 32)
        var derived = [UInt8](repeating: 0, count: 64)
        for _ in benchmark.scaledIterations {
            _ = password.withUnsafeBufferPointer { pw in
                pw.withMemoryRebound(to: CChar.self) { p in
                    PKCS5_PBKDF2_HMAC(p.baseAddress, 32, salt1, Int32(salt1.count), 100_000, EVP_sha512(), 64, &derived)
                }
            }
            BN_bin2bn(derived, 32, x)
            BN_mod_exp_mont_consttime(result, g, x, p, ctx, nil)  // v = g^x
            BN_mod_exp_mont_consttime(result, g, a, p, ctx, nil)  // A = g^a
            // (g_b − k·v)^(a + u·x): an exponent of a's 2048 bits.
            BN_mod_exp_mont_consttime(result, b, a, p, ctx, nil)
            blackHole(result)
        }
    }
}
