// `TelegramClient`'s files API against the local test Telegram in one process, each measured beside its reference
// in the same iteration: a 64 MB download and upload against AES-256-IGE alone over the same 64 MB in the same
// 512 KB parts (the targets: 0.6x of it or more), and `messages.getHistory` round trips on an idle client, then on
// the same client while 64 MB downloads run over media connections (the target: p99 within 2x of idle). Telethon
// with cryptg on the same mtserver is compared by Benchmarks/files_vs_telethon.py.
import Benchmark
import BenchmarkSupport
import ClientSupport
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import NIOPosix
import Synchronization
import TLRuntime
import TelegramApi
import TelegramClient
import TestTelegram

let fileSize = 64 << 20
let partSize = 512 << 10
/// The SDK's defaults: 4 parts in flight over 2 media connections.
let options = FileTransferOptions(partsInFlight: 4, mediaConnections: 2)

/// The client's event loop, as in a process of its own: on one of the server's loops, its work and the server's
/// would share a thread.
let clientLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
/// A second client's loop.
let otherLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

/// A server with one signed-in user, a 64 MB document of theirs (uploaded by the client and checked byte for byte
/// by downloading it once), and their client.
struct Files {
    let signedIn: SignedIn
    let service: TestTelegramService
    let server: MTProtoTestServer
    let client: TelegramClient
    let data: [UInt8]
    let document: Int64
    let location: Api.InputFileLocation

    static func prepare(key: RSAPrivateKey) async throws -> Files {
        var serviceLimits = TestTelegramService.Limits()
        // Each timed upload stays on the server as an unused upload: room for the iterations allowed below.
        serviceLimits.maxUploadBytesPerAccount = 1 << 30
        serviceLimits.maxStoredFileBytes = 1 << 30
        let signedIn = try await SignedIn.start(key: key, limits: serviceLimits, followsUpdates: false,
                                                loop: clientLoop.next())
        let service = signedIn.service, server = signedIn.server, client = signedIn.client
        let data = SystemRandom().bytes(fileSize)
        let file = try await client.upload(bytes: data, name: "big.bin", options: options)
        let posted = try await client.invoke(Api.functions.messages.sendMedia(
            peer: .inputPeerSelf, media: .uploadedDocument(file), message: "", randomId: 1))
        guard case .updates(let updates) = posted, case .updateNewMessage(let new)? = updates.updates.last,
              case .message(let message) = new.message, case .messageMediaDocument(let media)? = message.media,
              case .document(let document)? = media.document
        else { throw BenchmarkFailure(description: "no document: \(posted)") }
        let files = Files(signedIn: signedIn, service: service, server: server, client: client, data: data, document: document.id,
                          location: .inputDocumentFileLocation(.init(
                              id: document.id, accessHash: document.accessHash, fileReference: document.fileReference,
                              thumbSize: "")))
        try await files.check()
        return files
    }

    /// Downloads the file once, comparing each part with what was uploaded, and checks what the server saw: every
    /// part asked once, parts overlapping, over both media connections. (The server's count of parts in flight is a
    /// lower bound: with 4 asked it may see 3; `FileTransferTests` ask 6 and assert 4.)
    func check() async throws {
        var offset = 0
        for try await chunk in client.download(location, size: Int64(fileSize), options: options) {
            guard offset + chunk.count <= data.count, chunk[...] == data[offset..<offset + chunk.count] else {
                throw BenchmarkFailure(description: "the part at \(offset) differs from the upload")
            }
            offset += chunk.count
        }
        guard offset == fileSize else { throw BenchmarkFailure(description: "received \(offset) bytes") }
        guard let stats = service.downloadStats(document: document), stats.parts == fileSize / partSize,
              stats.maxPartsInFlight >= 2, stats.sessions.count == 2
        else { throw BenchmarkFailure(description: "the server saw \(String(describing: service.downloadStats(document: document)))") }
    }

    /// The whole file through `TelegramClient.download`; its size.
    func download(_ options: FileTransferOptions = options) async throws -> Int {
        var received = 0
        for try await chunk in client.download(location, size: Int64(fileSize), options: options) { received += chunk.count }
        guard received == fileSize else { throw BenchmarkFailure(description: "received \(received) bytes") }
        return received
    }

    func upload() async throws {
        guard case .inputFileBig(let big) = try await client.upload(bytes: data, name: "again.bin", options: options),
              big.parts == Int32(fileSize / partSize)
        else { throw BenchmarkFailure(description: "not a big file of \(fileSize / partSize) parts") }
    }

    static func history(_ client: TelegramClient) async throws {
        _ = try await client.invoke(Api.functions.messages.getHistory(
            peer: .inputPeerSelf, offsetId: 0, offsetDate: 0, addOffset: 0, limit: 20, maxId: 0, minId: 0, hash: 0))
    }

    func close() async throws {
        await client.close()
        try await server.shutdown()
    }
}

/// AES-256-IGE alone over `data` in 512 KB parts, as the reference a transfer is measured against: the cipher is
/// what every byte of a transfer must pass through at least once (MTProto 2.0 encrypts each message with it).
func ige(_ data: [UInt8], encrypt: Bool, key: [UInt8], iv: [UInt8]) throws -> Duration {
    let started = ContinuousClock.now
    for start in stride(from: 0, to: data.count, by: partSize) {
        let part = Array(data[start..<start + partSize])
        blackHole(encrypt ? try AES256IGE.encrypt(part, key: key, iv: iv) : try AES256IGE.decrypt(part, key: key, iv: iv))
    }
    return ContinuousClock.now - started
}

/// Bytes the downloads delivered, counted from their tasks.
final class ByteCount: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ bytes: Int) { count.add(bytes, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }
}

/// `value` at fraction `p` of the sorted samples (nearest rank).
func percentile(_ samples: [Int], _ p: Double) -> Int {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

let benchmarks: @Sendable () -> Void = {
    let loaded = Result { try testKey() }
    let ratio = BenchmarkMetric.custom("AES-256-IGE time ÷ transfer time (%)", polarity: .prefersLarger,
                                       useScalingFactor: false)
    let reference = BenchmarkMetric.custom("AES-256-IGE alone, same 64 MB (µs)", useScalingFactor: false)
    // Each iteration times the reference, then the transfer: both in the same minute of the machine's load.
    let transfer = Benchmark.Configuration(metrics: [.wallClock, .throughput, ratio, reference], warmupIterations: 1,
                                           maxDuration: .seconds(30), maxIterations: 5)

    for (verb, encrypt) in [("download", false), ("upload", true)] {
        Benchmark("files: \(verb) 64 MB, TelegramClient.\(verb), 4 parts in flight over 2 media connections, "
                  + "beside AES-256-IGE \(encrypt ? "encryption" : "decryption") of the same bytes",
                  configuration: transfer) { benchmark in
            let files = try await Files.prepare(key: try loaded.get())
            let key = SystemRandom().bytes(32), iv = SystemRandom().bytes(32)
            for _ in benchmark.scaledIterations {
                let cipher = try ige(files.data, encrypt: encrypt, key: key, iv: iv)
                let started = ContinuousClock.now
                benchmark.startMeasurement()
                if encrypt { try await files.upload() } else { blackHole(try await files.download()) }
                benchmark.stopMeasurement()
                let elapsed = ContinuousClock.now - started
                benchmark.measurement(ratio, Int((cipher / elapsed * 100).rounded()))
                benchmark.measurement(reference, Int(cipher / .microseconds(1)))
            }
            try await files.close()
        }
    }

    // Round trips on one client: idle first, then while 64 MB downloads run back to back. Each sample is one call;
    // the ratio is of the two p99s. The download rate while the busy calls ran shows they overlapped a transfer.
    // Over media connections, over the main one, and with the round trips made by a second client of the same user
    // on a thread of its own (what is left is the server's share of the wait).
    for (media, second) in [(2, false), (0, false), (2, true)] {
        let over = (media == 0 ? "over the main connection" : "over \(media) media connections")
            + (second ? ", round trips from a second client" : "")
        let idle = BenchmarkMetric.custom("idle round trip (ns)", useScalingFactor: false)
        let busy = BenchmarkMetric.custom("round trip during downloads (ns)", useScalingFactor: false)
        let p99 = BenchmarkMetric.custom("p99 during ÷ p99 idle (%)", useScalingFactor: false)
        let rate = BenchmarkMetric.custom("download MB/s while measured", polarity: .prefersLarger,
                                          useScalingFactor: false)
        Benchmark("files: messages.getHistory round trip, idle and during 64 MB downloads \(over)",
                  configuration: .init(metrics: [idle, busy, p99, rate], warmupIterations: 0, maxIterations: 1)) { benchmark in
            let files = try await Files.prepare(key: try loaded.get())
            let asking = second ? try await files.signedIn.anotherClient(followsUpdates: false, loop: otherLoop.next())
                : files.client
            let calls = 2_000
            func roundTrips() async throws -> [Int] {
                var samples: [Int] = []
                for _ in 0..<calls {
                    let started = ContinuousClock.now
                    try await Files.history(asking)
                    samples.append(Int((ContinuousClock.now - started) / .nanoseconds(1)))
                }
                return samples
            }
            for _ in 0..<50 { try await Files.history(asking) }
            let idleSamples = try await roundTrips()
            let downloaded = ByteCount()
            var downloading = options
            downloading.mediaConnections = media
            downloading.progress = { _ in downloaded.add(partSize) }
            let running = downloading
            let downloads = Task {
                while !Task.isCancelled { _ = try await files.download(running) }
            }
            // Measure once the first part arrived, so every call overlaps a transfer in full flow.
            while downloaded.value == 0 { try await Task.sleep(for: .milliseconds(1)) }
            let before = downloaded.value, started = ContinuousClock.now
            let busySamples = try await roundTrips()
            let window = ContinuousClock.now - started, moved = downloaded.value - before
            downloads.cancel()
            _ = await downloads.result
            for sample in idleSamples { benchmark.measurement(idle, sample) }
            for sample in busySamples { benchmark.measurement(busy, sample) }
            benchmark.measurement(p99, percentile(busySamples, 0.99) * 100 / max(1, percentile(idleSamples, 0.99)))
            benchmark.measurement(rate, Int(Double(moved) / 1_048_576 / (window / .seconds(1))))
            // The check download went over the 2 media connections; over the main one, a third session carried parts.
            let sessions = files.service.downloadStats(document: files.document)?.sessions.count
            guard sessions == (media == 0 ? 3 : 2) else {
                throw BenchmarkFailure(description: "the parts went over \(String(describing: sessions)) sessions")
            }
            if second { await asking.close() }
            try await files.close()
        }
    }
}
