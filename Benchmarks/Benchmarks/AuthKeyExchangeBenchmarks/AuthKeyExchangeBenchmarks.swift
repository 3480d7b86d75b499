// The auth-key exchange, client and server in one process, beside the sum of the modular exponentiations it cannot
// avoid, measured in the same run with raw OpenSSL calls: RSA encrypt (e = 65537), RSA private decrypt (d, constant
// time, as RSAPrivateKey does), g^a, g^b, g_a^b and g_b^a (2048-bit exponents, constant time). Target: exchange ≤ 1.2×
// baseline; the rest (pq generation and factoring, RSA_PAD, AES-IGE, SHA-1, TL, range checks) must stay small.
import Benchmark
import BenchmarkSupport
import COpenSSL
import Foundation
import MTProto
import MTProtoCrypto

/// d as big-endian bytes, for the baseline (RSAPrivateKey keeps it private).
func testKeyPrivateExponent() throws -> [UInt8] {
    var bn: OpaquePointer? = nil
    guard BN_dec2bn(&bn, try testKeyDecimals().d) > 0, let bn else { throw CryptoError.invalidPEM("d is not decimal") }
    defer { BN_free(bn) }
    var out = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
    BN_bn2bin(bn, &out)
    return out
}

/// base^exponent mod modulus with raw BN calls; `secret` selects the constant-time ladder.
func rawModExp(base: [UInt8], exponent: [UInt8], modulus: [UInt8], secret: Bool, ctx: OpaquePointer?) -> [UInt8] {
    let b = BN_bin2bn(base, Int32(base.count), nil), e = BN_bin2bn(exponent, Int32(exponent.count), nil)
    let m = BN_bin2bn(modulus, Int32(modulus.count), nil), r = BN_new()
    if secret { BN_mod_exp_mont_consttime(r, b, e, m, ctx, nil) } else { BN_mod_exp(r, b, e, m, ctx) }
    var out = [UInt8](repeating: 0, count: 256)
    BN_bn2binpad(r, &out, 256)
    BN_free(b); BN_free(e); BN_free(m); BN_free(r)
    return out
}

/// One full exchange, client and server, with fresh randomness.
struct ExchangeRun {
    let clientConfiguration: AuthKeyExchange.Client.Configuration
    let serverConfiguration: AuthKeyExchange.Server.Configuration

    init(key: RSAPrivateKey) throws {
        clientConfiguration = .init(keys: [key.publicKey], dcID: 2)
        serverConfiguration = try .init(keys: [key], dcID: 2)
    }

    func callAsFunction() throws {
        let now = 1_700_000_000.0
        var client = AuthKeyExchange.Client(configuration: clientConfiguration, random: SystemRandom())
        var server = AuthKeyExchange.Server(configuration: serverConfiguration, random: SystemRandom())
        var frame = client.start(now: now)
        while true {
            switch try server.receive(frame: frame, now: now) {
                case .send(let answer), .finished(let answer, _), .refused(let answer, _):
                    switch try client.receive(frame: answer, now: now) {
                        case .send(let next): frame = next
                        case .done(let result):
                            blackHole(result)
                            return
                    }
            }
        }
    }
}

/// The six modexps of one exchange, as raw OpenSSL calls on the same sizes and with the same ladders.
final class ModExpBaseline {
    let n: [UInt8], d: [UInt8], block: [UInt8], a: [UInt8], b: [UInt8]
    let ctx = BN_CTX_new()

    init(key: RSAPrivateKey) throws {
        let random = SystemRandom()
        n = key.publicKey.modulus
        d = try testKeyPrivateExponent()
        block = [0] + random.bytes(255)
        a = random.bytes(256)
        b = random.bytes(256)
    }

    deinit { BN_CTX_free(ctx) }

    func callAsFunction() {
        let prime = DHPrimeCache.telegramPrime
        let encrypted = rawModExp(base: block, exponent: [1, 0, 1], modulus: n, secret: false, ctx: ctx)
        blackHole(rawModExp(base: encrypted, exponent: d, modulus: n, secret: true, ctx: ctx))
        let gA = rawModExp(base: [3], exponent: a, modulus: prime, secret: true, ctx: ctx)
        let gB = rawModExp(base: [3], exponent: b, modulus: prime, secret: true, ctx: ctx)
        blackHole(rawModExp(base: gA, exponent: b, modulus: prime, secret: true, ctx: ctx))
        blackHole(rawModExp(base: gB, exponent: a, modulus: prime, secret: true, ctx: ctx))
    }
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(metrics: [.wallClock], timeUnits: .microseconds, maxDuration: .seconds(10),
                                                maxIterations: 1000)

    Benchmark("auth-key exchange: client + server in process", configuration: configuration) { benchmark in
        let exchange = try ExchangeRun(key: try testKey())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { try exchange() }
    }

    Benchmark("auth-key exchange baseline: its six modexps (raw OpenSSL)", configuration: configuration) { benchmark in
        let baseline = try ModExpBaseline(key: try testKey())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { baseline() }
    }

    // The two above, timed back to back in each iteration (alternating which goes first), so a shared machine's
    // load shifts both alike: the metric is exchange time / modexp time × 1000 per pair (target ≤ 1200).
    let ratio = BenchmarkMetric.custom("exchange / six modexps × 1000", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark("auth-key exchange ÷ its six modexps, interleaved",
              configuration: .init(metrics: [ratio], maxDuration: .seconds(10), maxIterations: 500)) { benchmark in
        let exchange = try ExchangeRun(key: try testKey())
        let baseline = try ModExpBaseline(key: try testKey())
        let clock = ContinuousClock()
        var exchangeFirst = false
        for _ in benchmark.scaledIterations {
            var exchangeTime = Duration.zero, baselineTime = Duration.zero
            if exchangeFirst {
                exchangeTime = try clock.measure { try exchange() }
                baselineTime = clock.measure { baseline() }
            } else {
                baselineTime = clock.measure { baseline() }
                exchangeTime = try clock.measure { try exchange() }
            }
            exchangeFirst.toggle()
            benchmark.measurement(ratio, Int(1000 * (exchangeTime / baselineTime)))
        }
    }
}
