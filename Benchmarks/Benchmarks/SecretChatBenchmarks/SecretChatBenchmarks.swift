// Secret-chat message cost beside its floor, in the same run: a 1 KiB message encrypted by one engine and decrypted,
// checked and ordered by the other (TL wrapping with seq numbers, MTProto 2.0 msg_key and KDF both ways, history and
// sequence bookkeeping), against AES-256-IGE alone encrypting and decrypting the same 1,040 padded bytes. Re-keying
// is switched off here (it would add two 2048-bit modexps every 100 messages, measured by CryptoBenchmarks' DH step).
import Benchmark

import MTProtoCrypto
import SecretChats

let text = String(repeating: "x", count: 1024)
let dh = SecretDHConfig(prime: DHPrimeCache.telegramPrime, g: 3, version: 1)

/// Two engines with one ready chat at layer 144.
func readyPair() throws -> (SecretChatEngine, SecretChatEngine) {
    var configuration = SecretChatConfiguration()
    configuration.rekeyAfterMessages = .max
    var alice = SecretChatEngine(configuration: configuration, random: SystemRandom())
    var bob = SecretChatEngine(configuration: configuration, random: SystemRandom())
    try alice.setDHConfig(dh)
    try bob.setDHConfig(dh)
    let share = try alice.makeRequest(serverRandom: [])
    try alice.requestSent(chatID: 1, accessHash: 1, peerUserID: 2, share: share)
    _ = bob.handleRequested(chatID: 1, accessHash: 2, peerUserID: 1, gA: share.publicValue)
    let (gB, fingerprint) = try bob.accept(chatID: 1, serverRandom: [])
    let toAlice = bob.accepted(chatID: 1, now: 0)
    let toBob = alice.handleAccepted(chatID: 1, accessHash: 1, gB: gB, keyFingerprint: fingerprint, now: 0)
    for case .send(let m) in toBob { _ = bob.handleMessage(chatID: 1, data: m.data, date: 0, now: 0) }
    for case .send(let m) in toAlice { _ = alice.handleMessage(chatID: 1, data: m.data, date: 0, now: 0) }
    return (alice, bob)
}

let benchmarks: @Sendable () -> Void = {
    // 1,000 messages per sample, so the chat set-up (four 2048-bit modexps) is not what the time budget buys.
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .throughput], scalingFactor: .kilo,
                                                maxDuration: .seconds(3), maxIterations: 1_000)

    Benchmark("AES-256-IGE encrypt+decrypt 1,040 B (baseline)", configuration: configuration) { benchmark in
        let key = SystemRandom().bytes(32), iv = SystemRandom().bytes(32)
        var buffer = SystemRandom().bytes(1040)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let cipher = try AES256IGE(key: key, iv: iv)
            try cipher.encrypt(inPlace: &buffer)
            try cipher.decrypt(inPlace: &buffer)
            blackHole(buffer[0])
        }
    }

    Benchmark("Secret message 1 KiB: engine encrypt + peer decrypt", configuration: configuration) { benchmark in
        var (alice, bob) = try readyPair()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let (_, out) = try alice.send(chatID: 1, content: SecretContent(text: text), now: 0)
            guard case .send(let message)? = out.first else { throw BenchmarkFailure(description: "nothing sent") }
            let events = bob.handleMessage(chatID: 1, data: message.data, date: 0, now: 0)
            guard case .event(.message)? = events.first else { throw BenchmarkFailure(description: "\(events)") }
            blackHole(events)
        }
    }

    Benchmark("Secret message 1 KiB: SecretChatCrypto encrypt + decrypt only", configuration: configuration) { benchmark in
        let key = try AuthKey(SystemRandom().bytes(256))
        let payload = SystemRandom().bytes(1024)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let envelope = try SecretChatCrypto.encrypt(payload, key: key, version: .v2, fromOriginator: true,
                                                        random: SystemRandom())
            blackHole(try SecretChatCrypto.decrypt(envelope, key: key, version: .v2, fromOriginator: true))
        }
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
}
