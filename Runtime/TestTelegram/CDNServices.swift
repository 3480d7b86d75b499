// A CDN DC as core.telegram.org/cdn describes it. The master DC answers `upload.getFile` with `cdn_supported` for a
// document marked for the CDN with `upload.fileCdnRedirect`: the CDN DC's id, a file token, and the AES-256-CTR key
// and IV the CDN's copy is encrypted with. The CDN DC (a server of its own, with its own RSA key, listed by
// `help.getCdnConfig` and in `help.getConfig` with the `cdn` flag) knows no account: `upload.getCdnFile` answers
// `upload.cdnFileReuploadNeeded` until the master DC has been asked `upload.reuploadCdnFile` for the file, then the
// encrypted bytes, the counter block being the IV with its last 4 bytes the big-endian offset / 16. The master DC
// gives the SHA-256 of each 128 KiB range of the plain file (`file_hashes`, `upload.getCdnFileHashes`). A fault
// corrupts the CDN's answers at one offset, for tests that a client checks those hashes.
import MTProto
import MTProtoCrypto
import MTProtoServer
import Synchronization
import TLRuntime
import TelegramApi
import TelegramApiServer

/// The CDN DC and the files the master DC sent to it.
struct CDNState {
    /// At most this many file tokens are live; the oldest are forgotten first (FILE_TOKEN_INVALID).
    static let maxFiles = 1024

    var endpoint: ServerEndpoint?
    var publicKeyPEM = ""
    /// Documents the master DC redirects to the CDN.
    var marked: Set<Int64> = []
    var files: [[UInt8]: CDNFile] = [:]
    var tokens: [[UInt8]] = []
    /// Offsets whose CDN answers are corrupted (one byte flipped).
    var corruptOffsets: Set<Int64> = []
    /// Counts for tests: CDN parts served, reuploads asked.
    var partsServed = 0
    var reuploads = 0
}

struct CDNFile {
    let document: Int64
    let key: [UInt8]
    let iv: [UInt8]
    /// Whether the CDN holds the file (after `upload.reuploadCdnFile`).
    var onCDN = false
    var requestToken: [UInt8]
}

extension TestTelegramService {
    /// Bytes per hashed range of a CDN file (core.telegram.org/cdn).
    static let cdnHashRange = 128 * 1024

    /// The CDN DC's handlers, for a server of its own: the basic services and `upload.getCdnFile`, and nothing that
    /// needs an account.
    public func cdnHandlers() -> RPCHandlers {
        var handlers = TestTelegram.handlers()
        handlers.overrides = overrides
        handlers.on(Api.functions.upload.GetCdnFile.self, getCdnFile)
        return handlers
    }

    /// Makes the CDN DC `dcID`, listening at `host:port` with the RSA key whose public half is `publicKeyPEM`
    /// (PKCS#1), known to the master DCs: listed in `help.getConfig` and `help.getCdnConfig`.
    public func enableCDN(dcID: Int32, host: String, port: Int, publicKeyPEM: String) {
        cdn.withLock { state in
            state.endpoint = ServerEndpoint(dcID: dcID, host: host, port: port)
            state.publicKeyPEM = publicKeyPEM
        }
    }

    /// Marks a document as popular: downloads that allow CDNs are redirected to the CDN DC.
    public func markForCDN(document id: Int64) {
        cdn.withLock { _ = $0.marked.insert(id) }
    }

    /// Corrupts (or, with `false`, stops corrupting) the CDN's answers for the part at `offset`.
    public func corruptCDNPart(at offset: Int64, _ corrupt: Bool = true) {
        cdn.withLock { state in
            if corrupt { state.corruptOffsets.insert(offset) } else { state.corruptOffsets.remove(offset) }
        }
    }

    /// CDN parts served and `upload.reuploadCdnFile` calls answered so far.
    public var cdnCounts: (partsServed: Int, reuploads: Int) {
        cdn.withLock { ($0.partsServed, $0.reuploads) }
    }

    func registerCDN(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.help.GetConfig.self) { [self] call, _ in
            let cdnOptions = cdn.withLock { $0.endpoint }.map {
                [Api.DcOption.dcOption(.init(cdn: true, id: $0.dcID, ipAddress: $0.host, port: Int32(clamping: $0.port)))]
            }
            return TestTelegram.config(for: call, extraOptions: cdnOptions ?? [])
        }
        handlers.on(Api.functions.help.GetCdnConfig.self) { [self] _, _ in
            let (endpoint, pem) = cdn.withLock { ($0.endpoint, $0.publicKeyPEM) }
            let keys = endpoint.map { [Api.CdnPublicKey.cdnPublicKey(.init(dcId: $0.dcID, publicKey: pem))] } ?? []
            return .cdnConfig(.init(publicKeys: keys))
        }
        handlers.on(Api.functions.upload.ReuploadCdnFile.self) { [self] call, request throws(RPCError) in
            _ = try caller(call)
            let token = request.fileToken
            let requestToken = request.requestToken
            let document = try cdn.withLock { state throws(RPCError) -> Int64 in
                guard let file = state.files[token] else { throw RPCError(code: 400, message: "FILE_TOKEN_INVALID") }
                guard file.requestToken == requestToken else { throw RPCError(code: 400, message: "REQUEST_TOKEN_INVALID") }
                state.files[token]?.onCDN = true
                state.reuploads += 1
                return file.document
            }
            return try fileHashes(document: document, from: 0)
        }
        handlers.on(Api.functions.upload.GetCdnFileHashes.self) { [self] call, request throws(RPCError) in
            _ = try caller(call)
            let token = request.fileToken
            let offset = request.offset
            guard let document = cdn.withLock({ $0.files[token]?.document }) else {
                throw RPCError(code: 400, message: "FILE_TOKEN_INVALID")
            }
            return try fileHashes(document: document, from: offset)
        }
    }

    /// `upload.fileCdnRedirect` for a marked document whose download allows CDNs (nil otherwise): a new token, key
    /// and IV, and the hashes of the first ranges.
    func cdnRedirect(document id: Int64, cdnSupported: Bool) throws(RPCError) -> Api.upload.File? {
        guard cdnSupported else { return nil }
        let (key, iv, token, request) = (random.bytes(32), random.bytes(16), random.bytes(16), random.bytes(16))
        let endpoint: ServerEndpoint? = cdn.withLock { state in
            guard let endpoint = state.endpoint, state.marked.contains(id) else { return nil }
            if state.tokens.count >= CDNState.maxFiles { state.files[state.tokens.removeFirst()] = nil }
            state.tokens.append(token)
            state.files[token] = CDNFile(document: id, key: key, iv: iv, requestToken: request)
            return endpoint
        }
        guard let endpoint else { return nil }
        let hashes = try fileHashes(document: id, from: 0)
        return Api.upload.File.fileCdnRedirect(.init(
            dcId: endpoint.dcID, fileToken: token, encryptionKey: key, encryptionIv: iv, fileHashes: hashes))
    }

    /// The hashes of up to 8 ranges (1 MiB) from the range holding `offset`.
    private func fileHashes(document id: Int64, from offset: Int64) throws(RPCError) -> [Api.FileHash] {
        let bytes = try state.withLock { state throws(RPCError) in
            guard let document = state.documents[id] else { throw RPCError(code: 400, message: "FILE_TOKEN_INVALID") }
            return document.bytes
        }
        guard offset >= 0 else { throw RPCError(code: 400, message: "OFFSET_INVALID") }
        let range = Int64(Self.cdnHashRange)
        var hashes: [Api.FileHash] = []
        var start = offset / range * range
        while start < Int64(bytes.count), hashes.count < 8 {
            let end = min(Int64(bytes.count), start + range)
            hashes.append(.fileHash(.init(offset: start, limit: Int32(end - start),
                                          hash: Hash.sha256(Array(bytes[Int(start)..<Int(end)])))))
            start = end
        }
        return hashes
    }

    /// `upload.getCdnFile` on the CDN DC: the offset and limit rules of `upload.getFile`, the bytes encrypted.
    /// Package access: a test that holds the CDN's answers with a handler of its own answers through it.
    package func getCdnFile(_ call: RPCCall, _ request: Api.functions.upload.GetCdnFile)
        throws(RPCError) -> Api.upload.CdnFile {
        let token = request.fileToken
        let offset = request.offset
        let limit = Int64(request.limit)
        let block: Int64 = 1 << 20
        guard limit > 0, limit <= block, limit % 4096 == 0, block % limit == 0 else {
            throw RPCError(code: 400, message: "LIMIT_INVALID")
        }
        guard offset >= 0, offset % 4096 == 0, offset / block == (offset + limit - 1) / block else {
            throw RPCError(code: 400, message: "OFFSET_INVALID")
        }
        enum Answer { case reupload([UInt8]), serve(CDNFile, corrupt: Bool) }
        let answer = try cdn.withLock { state throws(RPCError) -> Answer in
            guard let file = state.files[token] else { throw RPCError(code: 400, message: "FILE_TOKEN_INVALID") }
            guard file.onCDN else { return .reupload(file.requestToken) }
            state.partsServed += 1
            return .serve(file, corrupt: state.corruptOffsets.contains(offset))
        }
        switch answer {
            case .reupload(let request):
                return Api.upload.CdnFile.cdnFileReuploadNeeded(.init(requestToken: request))
            case .serve(let file, let corrupt):
                guard let document = state.withLock({ $0.documents[file.document] }) else {
                    throw RPCError(code: 400, message: "FILE_TOKEN_INVALID")
                }
                let start = Int(min(offset, Int64(document.bytes.count)))
                let end = Int(min(offset + limit, Int64(document.bytes.count)))
                var bytes = Array(document.bytes[start..<end])
                do {
                    let ctr = try AES256CTR(key: file.key, iv: Self.cdnIV(file.iv, offset: offset))
                    ctr.process(&bytes)
                } catch {
                    throw RPCError(code: 500, message: "CDN_ENCRYPTION_FAILED")
                }
                if corrupt, !bytes.isEmpty { bytes[bytes.count / 2] ^= 0x5a }
                recordPart(.cdn(file.document), bytes: bytes.count, call: call)
                return Api.upload.CdnFile.cdnFile(.init(bytes: bytes))
        }
    }

    /// The counter block for the part at `offset`: the IV with its last 4 bytes the big-endian offset / 16.
    public static func cdnIV(_ iv: [UInt8], offset: Int64) -> [UInt8] {
        var block = iv
        let counter = UInt32(truncatingIfNeeded: offset / 16)
        if block.count == 16 {
            block[12] = UInt8(truncatingIfNeeded: counter >> 24)
            block[13] = UInt8(truncatingIfNeeded: counter >> 16)
            block[14] = UInt8(truncatingIfNeeded: counter >> 8)
            block[15] = UInt8(truncatingIfNeeded: counter)
        }
        return block
    }

    /// What the server saw of a document's parts served by the CDN DC.
    public func cdnDownloadStats(document id: Int64) -> FileTransferStats? {
        transfers.withLock { $0.stats(.cdn(id)) }
    }
}
