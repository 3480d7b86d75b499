// The SDK client against the local test Telegram in one process: a 64 MB download in 512 KB `upload.getFile` parts
// beside AES-256-IGE decryption alone of the same bytes, and the memory an idle connected client holds. (Pipelined
// RPCs against Telethon's are compared by Benchmarks/client_vs_telethon.py, which runs both on one server.) Pipelined
// calls through a SOCKS5 proxy against direct ones are in ProxyBenchmarks.swift.
import Benchmark
import BenchmarkSupport
import ClientSupport
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import NIOPosix
import TLRuntime
import TelegramApi
import TelegramClient
import TestTelegram

let fileSize = 64 << 20
let partSize = 512 << 10
/// Parts requested at once, as Telegram's apps download.
let partsInFlight = 4

/// The download client's event loop (its own thread).
let clientLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

/// A server with one user who uploaded a 64 MB document, and that user's client.
struct Download {
    let server: MTProtoTestServer
    let client: TelegramClient
    let location: Api.InputFileLocation

    static func prepare(key: RSAPrivateKey) async throws -> Download {
        var serviceLimits = TestTelegramService.Limits()
        serviceLimits.maxUploadBytesPerAccount = 128 << 20
        let signedIn = try await SignedIn.start(key: key, limits: serviceLimits, loop: clientLoop.next())
        let server = signedIn.server, client = signedIn.client
        let parts = Int32(fileSize / partSize)
        let chunk = SystemRandom().bytes(partSize)
        for part in 0..<parts {
            _ = try await client.invoke(Api.functions.upload.saveBigFilePart(fileId: 1, filePart: part,
                                                                             fileTotalParts: parts, bytes: chunk))
        }
        let posted = try await client.invoke(Api.functions.messages.sendMedia(
            peer: .inputPeerSelf, media: .inputMediaUploadedDocument(.init(
                file: .inputFileBig(.init(id: 1, parts: parts, name: "big.bin")), mimeType: "application/octet-stream",
                attributes: [])), message: "", randomId: 1))
        guard case .updates(let updates) = posted, case .updateNewMessage(let new)? = updates.updates.last,
              case .message(let message) = new.message, case .messageMediaDocument(let media)? = message.media,
              case .document(let document)? = media.document
        else { throw BenchmarkFailure(description: "no document: \(posted)") }
        return Download(server: server, client: client, location: .inputDocumentFileLocation(.init(
            id: document.id, accessHash: document.accessHash, fileReference: document.fileReference, thumbSize: "")))
    }

    /// Downloads the whole file with `partsInFlight` parts requested at any time (a part is asked for as soon as
    /// one arrives, as a downloader keeps its window full); returns the bytes received.
    func run() async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            var starts = stride(from: 0, to: fileSize, by: partSize).makeIterator()
            func request(_ start: Int) {
                group.addTask {
                    guard case .file(let file) = try await client.invoke(Api.functions.upload.getFile(
                        location: location, offset: Int64(start), limit: Int32(partSize)))
                    else { return 0 }
                    return file.bytes.count
                }
            }
            for _ in 0..<partsInFlight { if let start = starts.next() { request(start) } }
            var received = 0
            while let count = try await group.next() {
                received += count
                if let start = starts.next() { request(start) }
            }
            guard received == fileSize else { throw BenchmarkFailure(description: "received \(received) bytes") }
            return received
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], warmupIterations: 1,
                                           maxDuration: .seconds(20), maxIterations: 10)
    let loaded = Result { try testKey() }

    Benchmark("AES-256-IGE decrypt of 64 MB in 512 KB parts (baseline)") { benchmark in
        let key = SystemRandom().bytes(32), iv = SystemRandom().bytes(32)
        let part = SystemRandom().bytes(partSize)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<(fileSize / partSize) { blackHole(try AES256IGE.decrypt(part, key: key, iv: iv)) }
        }
    }

    Benchmark("download 64 MB: upload.getFile in 512 KB parts, 4 in flight, TelegramClient over loopback") { benchmark in
        let download = try await Download.prepare(key: try loaded.get())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try await download.run()) }
        benchmark.stopMeasurement()
        await download.client.close()
        try await download.server.shutdown()
    }

    Benchmark("memory per idle connected client, 100 open",
              configuration: .init(metrics: [.custom("bytes per client")], warmupIterations: 0, maxIterations: 1)) { benchmark in
        let key = try loaded.get()
        let server = try await MTProtoTestServer.start(.init(rsaKeys: [key], handlers: TestTelegram.handlers()))
        func connected() async throws -> MTProtoClient {
            let client = MTProtoClient(configuration: .init(
                host: "127.0.0.1", port: server.port,
                connection: .init(transport: TransportConfiguration(kind: .intermediate), serverKeys: [key.publicKey], dcID: 2)))
            try await client.connect()
            _ = try await client.invoke(Api.functions.help.getNearestDc())
            return client
        }
        // Warm what every client shares (the event loop, caches) before the baseline.
        let warm = try await connected()
        // The server's side of each connection is counted too; ServerBenchmarks measures it alone (11 KB a session).
        let before = residentBytes()
        var clients: [MTProtoClient] = []
        for _ in 0..<100 { clients.append(try await connected()) }
        let after = residentBytes()
        benchmark.measurement(.custom("bytes per client"), (after - before) / 100)
        for client in clients + [warm] { await client.close() }
        try await server.shutdown()
    }

    proxyBenchmarks()
}
