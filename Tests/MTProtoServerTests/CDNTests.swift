// Downloads through the test Telegram's CDN DC (core.telegram.org/cdn): a document marked for the CDN is redirected
// there, fetched over a connection with a key of its own made with the CDN's RSA key from help.getCdnConfig (the
// account is never logged in there), re-uploaded on the master's word, decrypted with AES-256-CTR and checked
// against the master's hashes; a corrupted CDN part fails the download before its bytes are handed over.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import Synchronization
import TLRuntime
import TelegramApi
import TelegramClient
import TestTelegram
import Testing

@Suite struct CDNTests {
    static let cdnDC: Int32 = 203

    /// Alice and Bob on the two-DC test Telegram, a CDN DC of its own with its own key, and the methods it handled.
    struct CDN {
        let pair: FileTransferTests.Pair
        let server: MTProtoTestServer
        let handled: MethodLog

        static func start(seed: UInt64) async throws -> CDN {
            let pair = try await FileTransferTests.Pair.start(seed: seed)
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Fixtures/vectors/cdn_test_key.pem")
            let key = try RSAPrivateKey(pem: String(contentsOf: file, encoding: .utf8))
            let handled = MethodLog()
            let server = try await MTProtoTestServer.start(.init(
                rsaKeys: [key], handlers: pair.telegram.service.cdnHandlers(), dcIDs: [cdnDC],
                random: SeededRandom(seed: seed + 7), onEvent: { report in
                    if case .event(.handled(let method, _, _)) = report.kind { handled.add(method) }
                }))
            pair.telegram.service.enableCDN(dcID: cdnDC, host: "127.0.0.1", port: server.ports[cdnDC] ?? 0,
                                            publicKeyPEM: key.publicKey.pkcs1PEM)
            return CDN(pair: pair, server: server, handled: handled)
        }

        /// Alice's `size` bytes sent to Bob, marked for the CDN.
        func popularFile(_ size: Int, seed: UInt64) async throws -> ([UInt8], Api.InputFileLocation, Api.Document.Cons_document) {
            let data = SeededRandom(seed: seed).bytes(size)
            let (location, document) = try await pair.share(try await pair.alice.upload(bytes: data, name: "p.bin"))
            pair.telegram.service.markForCDN(document: document.id)
            return (data, location, document)
        }

        func close() async throws {
            try await pair.close()
            try await server.shutdown()
        }
    }

    @Test func aRedirectedDownloadIsByteIdenticalAndReuploadIsAnswered() async throws {
        let cdn = try await CDN.start(seed: 501)
        // 5 MB: the redirect's hashes cover the first 1 MiB, getCdnFileHashes the rest. 6 parts of 128 KiB asked
        // at once: the CDN holds its answers until 4 parts wait together, then answers them and every later part
        // at once. A client with fewer in flight never opens the gate, and its parts time out (-503).
        let service = cdn.pair.telegram.service
        let gate = Gate()
        service.on(Api.functions.upload.GetCdnFile.self, timeout: AnswerTimeout(seconds: 120)) {
            call, request async throws(RPCError) in
            _ = await gate.wait()
            return try service.getCdnFile(call, request)
        }
        let opener = Task {
            await gate.arrivals(4)
            gate.fire("4 parts waited together")
        }
        defer { opener.cancel() }
        let (data, location, document) = try await cdn.popularFile(5 << 20, seed: 11)
        var received: [UInt8] = []
        let options = FileTransferOptions(partsInFlight: 6, partSize: 128 << 10)
        for try await chunk in cdn.pair.bob.download(location, options: options) { received += chunk }
        #expect(gate.fired, "4 parts were held at once")
        #expect(Hash.sha256(received) == Hash.sha256(data))
        let counts = cdn.pair.telegram.service.cdnCounts
        #expect(counts.reuploads >= 1, "the CDN asked for a reupload first")
        #expect(counts.partsServed >= 40, "every part came from the CDN: \(counts)")
        let stats = try #require(cdn.pair.telegram.service.cdnDownloadStats(document: document.id))
        #expect(stats.bytes >= Int64(data.count))
        #expect(stats.maxPartsInFlight >= 4, "parts in flight on the CDN DC: \(stats)")
        #expect(stats.sessions.count == 2, "over the two media connections to the CDN DC: \(stats.sessions)")
        // The CDN DC saw only file parts: no login, no authorization import.
        #expect(Set(cdn.handled.methods) == ["upload.getCdnFile"])
        #expect(await cdn.pair.bob.mediaConnectionLanes.contains { $0.dc == Self.cdnDC })
        try await cdn.close()
    }

    @Test func aCorruptedCDNPartFailsTheDownloadAndIsNeverHandedOver() async throws {
        let cdn = try await CDN.start(seed: 502)
        let (data, location, _) = try await cdn.popularFile(3 << 20, seed: 12)
        // The part at 1 MiB has a byte flipped in its middle, in its third 128 KiB range.
        cdn.pair.telegram.service.corruptCDNPart(at: 1 << 20)
        var received: [UInt8] = []
        await #expect(throws: FileTransferError.cdnHashMismatch(offset: (1 << 20) + (256 << 10))) {
            for try await chunk in cdn.pair.bob.download(location, options: FileTransferOptions(partsInFlight: 4)) {
                received += chunk
            }
        }
        #expect(received.count <= 1 << 20, "nothing from the corrupted part on")
        let handedOverIsTheFiles = received == Array(data.prefix(received.count))
        #expect(handedOverIsTheFiles, "what was handed over is the file's")
        // Without the fault, the same download goes through.
        cdn.pair.telegram.service.corruptCDNPart(at: 1 << 20, false)
        var again: [UInt8] = []
        for try await chunk in cdn.pair.bob.download(location) { again += chunk }
        #expect(again == data)
        try await cdn.close()
    }

    @Test func theCounterBlockCarriesTheOffset() {
        let iv = [UInt8](repeating: 0xAB, count: 16)
        let block = TestTelegramService.cdnIV(iv, offset: 0x1234_5670)
        #expect(Array(block.prefix(12)) == Array(iv.prefix(12)))
        #expect(Array(block.suffix(4)) == [0x01, 0x23, 0x45, 0x67])
    }
}

/// The methods a server handled, in order.
final class MethodLog: Sendable {
    private let log = Mutex<[String]>([])

    func add(_ method: String) { log.withLock { $0.append(method) } }

    var methods: [String] { log.withLock { $0 } }
}
