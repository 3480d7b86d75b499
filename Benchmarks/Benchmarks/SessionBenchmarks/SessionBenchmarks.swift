// The MTProto session's costs, each beside its baseline in the same run:
// - one message through MTProto 2.0 (padding, msg_key, KDF, AES-256-IGE; then the receiver's decrypt and checks),
//   as the session seals and opens every frame, for 1 KiB and 512 KiB of message data, against (a) AES-256-IGE
//   alone encrypting and decrypting the same bytes and (b) that plus one SHA-256 pass each way, the work MTProto 2.0
//   cannot skip (msg_key is a SHA-256 of the whole plaintext on both ends);
// - RPCs through a client and a server session in memory, 100 per batch in containers, answered and matched.
import Benchmark
import BenchmarkSupport
import MTProto
import MTProtoCrypto

let authKey = try! AuthKey((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })

/// A plaintext as a session builds it: header, message data, and the minimum padding.
func plaintext(dataBytes: Int) -> [UInt8] {
    let length = 32 + dataBytes
    var bytes = [UInt8](repeating: 0x42, count: length + 12 + (16 - (length + 12) % 16) % 16)
    withUnsafeBytes(of: UInt32(dataBytes).littleEndian) { bytes.replaceSubrange(28..<32, with: $0) }
    return bytes
}

let benchmarks: @Sendable () -> Void = {
    for (size, label) in [(1 << 10, "1 KiB"), (512 << 10, "512 KiB")] {
        let configuration = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxDuration: .seconds(3),
                                                    maxIterations: size > 1 << 16 ? 2_000 : 200_000)
        let padded = plaintext(dataBytes: size)

        Benchmark("message encrypt+decrypt \(label) (MTProto 2.0, as the session does)", configuration: configuration) {
            benchmark in
            let cipher = MTProto2Cipher(authKey: authKey)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let frame = try cipher.encrypt(paddedPlaintext: padded, direction: .client)
                blackHole(try cipher.decrypt(frame, direction: .client).plaintext.count)
            }
        }

        Benchmark("AES-256-IGE encrypt+decrypt \(label) (baseline a)", configuration: configuration) { benchmark in
            let ige = try AES256IGE(key: Array(authKey.bytes[0..<32]), iv: Array(authKey.bytes[32..<64]))
            var buffer = padded
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try ige.encrypt(inPlace: &buffer)
                try ige.decrypt(inPlace: &buffer)
                blackHole(buffer[0])
            }
        }

        Benchmark("AES-256-IGE + SHA-256, both ways \(label) (baseline b)", configuration: configuration) { benchmark in
            let ige = try AES256IGE(key: Array(authKey.bytes[0..<32]), iv: Array(authKey.bytes[32..<64]))
            var buffer = padded
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(Hash.sha256(buffer)[0])
                try ige.encrypt(inPlace: &buffer)
                try ige.decrypt(inPlace: &buffer)
                blackHole(Hash.sha256(buffer)[0])
            }
        }
    }

    Benchmark("RPCs through client and server sessions (100 per batch, containers)",
              configuration: .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(3), maxIterations: 5_000)) {
        benchmark in
        var pair = SessionPair(authKey: authKey)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { try pair.batch() }
        blackHole(pair.results)
    }
}
