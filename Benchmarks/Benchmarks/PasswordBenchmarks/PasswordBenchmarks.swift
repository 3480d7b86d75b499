// A cloud-password check (core.telegram.org/api/srp) beside the work it cannot avoid, in the same run:
// - the client's check, the public call itself: `TelegramClient.passwordCheck(for:password:random:)` on an
//   `account.password` as the server sends it — p, g and srp_B checked (the prime proven safe once per process, as
//   the cache does), x = PH2 (PBKDF2-HMAC-SHA512, 100,000 iterations) and A, M1 (g^x, g^a, the u and range checks,
//   (g_b − k·v)^(a + u·x), the hashes) on a detached task off the caller's executor, and the hop back;
// - the mandatory work with raw OpenSSL calls: PKCS5_PBKDF2_HMAC at 100,000 iterations and the three modexps
//   (g^x, g^a, t^(a + u·x)). Target: the check ≤ 1.1× the mandatory work.
import Benchmark
import COpenSSL
#if canImport(Glibc)
import Glibc
#endif
import MTProtoCrypto
import TelegramApi
import TelegramClient

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

/// The challenge as `account.getPassword` carries it.
let challengeState = Api.account.Password.password(.init(
    currentAlgo: .passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
        .init(salt1: salt1, salt2: salt2, g: 3, p: prime)),
    srpB: serverB, srpId: 0x1234_5678, hint: nil,
    newAlgo: .passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
        .init(salt1: salt1, salt2: salt2, g: 3, p: prime)),
    newSecureAlgo: .securePasswordKdfAlgoPBKDF2HMACSHA512iter100000(.init(salt: salt1)),
    secureRandom: [UInt8](repeating: 0x33, count: 32)))

/// Hands out the same `a` on every draw, so both sides exponentiate the same numbers.
struct FixedSecret: RandomSource {
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in buffer.indices { buffer[index] = secretA[index % secretA.count] }
    }
}

/// The work no implementation can skip, with raw OpenSSL calls; every number converted once, in `init`, so only
/// the PBKDF2 and the modexps are timed.
final class MandatoryWork {
    let ctx = BN_CTX_new(), p = BN_bin2bn(prime, Int32(prime.count), nil), g = BN_new(), x = BN_new()
    let a = BN_bin2bn(secretA, Int32(secretA.count), nil), b = BN_bin2bn(serverB, Int32(serverB.count), nil)
    let result = BN_new()
    let password = [UInt8](repeating: 0x42, count: 32)
    var derived = [UInt8](repeating: 0, count: 64)

    init() { BN_set_word(g, 3) }

    deinit {
        for n in [p, g, x, a, b, result] { BN_free(n) }
        BN_CTX_free(ctx)
    }

    func run() {
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

/// The client's check as a caller makes it.
func clientCheck() async throws {
    blackHole(try await TelegramClient.passwordCheck(for: challengeState, password: "benchmark", random: FixedSecret()))
}

/// Wall-clock and whole-process CPU time of `body`.
func measured(_ body: () async throws -> Void) async rethrows -> (wall: Duration, cpu: Duration) {
    func cpuNow() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
    let clock = ContinuousClock(), cpuStart = cpuNow(), start = clock.now
    try await body()
    return (clock.now - start, cpuNow() - cpuStart)
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .cpuTotal], maxDuration: .seconds(10),
                                                maxIterations: 100)

    Benchmark("SRP password check (TelegramClient.passwordCheck)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { try await clientCheck() }
    }

    Benchmark("SRP mandatory work (raw PBKDF2-HMAC-SHA512 ×100,000 + 3 modexps, baseline)",
              configuration: configuration) { benchmark in
        let work = MandatoryWork()
        for _ in benchmark.scaledIterations { work.run() }
    }

    // Both back to back in every iteration, the order alternating, so the machine's load shifts them alike; the
    // ratios are check ÷ mandatory work, ×1000 (target ≤ 1100).
    let wallRatio = BenchmarkMetric.custom("check ÷ mandatory, wall ×1000", polarity: .prefersSmaller)
    let cpuRatio = BenchmarkMetric.custom("check ÷ mandatory, CPU ×1000", polarity: .prefersSmaller)
    Benchmark("SRP password check against its mandatory work, interleaved",
              configuration: .init(metrics: [wallRatio, cpuRatio], maxDuration: .seconds(20), maxIterations: 60)) { benchmark in
        let work = MandatoryWork()
        var checkFirst = false
        for _ in benchmark.scaledIterations {
            checkFirst.toggle()
            let check, mandatory: (wall: Duration, cpu: Duration)
            if checkFirst {
                check = try await measured { try await clientCheck() }
                mandatory = await measured { work.run() }
            } else {
                mandatory = await measured { work.run() }
                check = try await measured { try await clientCheck() }
            }
            benchmark.measurement(wallRatio, Int(1000 * (check.wall / mandatory.wall)))
            benchmark.measurement(cpuRatio, Int(1000 * (check.cpu / max(mandatory.cpu, .microseconds(1)))))
        }
    }
}
