// Downloads through a CDN DC (core.telegram.org/cdn). A download allows CDNs (`cdn_supported`); when the master DC
// answers a part with `upload.fileCdnRedirect`, every part of the file is asked of the CDN DC with
// `upload.getCdnFile` over connections of its own (a key of its own, never the account's authorization) and
// decrypted with AES-256-CTR, the counter block being the redirect's IV with its last 4 bytes the big-endian
// offset / 16. Each part is checked against the SHA-256 the master DC gives for each of its ranges (the redirect's
// `file_hashes`, `upload.getCdnFileHashes` for the rest) before anyone sees it: a mismatch fails the download with
// `FileTransferError.cdnHashMismatch`, never handing over the bytes. `upload.cdnFileReuploadNeeded` is answered with
// `upload.reuploadCdnFile` on the master DC; FILE_TOKEN_INVALID there sends the rest of the download to the master DC.
import MTProto
import MTProtoCrypto
import Synchronization
import TLRuntime
import TelegramApi

/// Where one download's parts come from: the master DC, or after a redirect a CDN DC.
final class DownloadSource: Sendable {
    /// The redirect in force: the CDN DC's route, the file token, key and IV, and the hashes known by offset.
    struct Redirect: Sendable {
        let route: TransferRoute
        let token: [UInt8]
        let key: [UInt8]
        let iv: [UInt8]
    }

    let master: TransferRoute
    private let state = Mutex<(redirect: Redirect?, masterOnly: Bool, hashes: [Int64: (limit: Int32, hash: [UInt8])])>(
        (nil, false, [:]))

    init(master: TransferRoute) { self.master = master }

    var redirect: Redirect? { state.withLock { $0.redirect } }
    var allowsCDN: Bool { state.withLock { !$0.masterOnly } }

    /// Takes the first redirect (true); later ones (answers to parts asked at the same time) are the same file.
    func redirected(_ answer: Api.upload.File.Cons_fileCdnRedirect) -> Bool {
        state.withLock { state in
            guard state.redirect == nil, !state.masterOnly else { return false }
            state.redirect = Redirect(route: TransferRoute(dc: answer.dcId, cdn: true), token: answer.fileToken,
                                      key: answer.encryptionKey, iv: answer.encryptionIv)
            Self.add(answer.fileHashes, to: &state.hashes)
            return true
        }
    }

    /// The master DC refused the token: the rest comes from it.
    func dropCDN() {
        state.withLock { state in
            state.redirect = nil
            state.masterOnly = true
        }
    }

    func add(_ hashes: [Api.FileHash]) { state.withLock { Self.add(hashes, to: &$0.hashes) } }

    func hash(at offset: Int64) -> (limit: Int32, hash: [UInt8])? { state.withLock { $0.hashes[offset] } }

    private static func add(_ hashes: [Api.FileHash], to table: inout [Int64: (limit: Int32, hash: [UInt8])]) {
        for case .fileHash(let hash) in hashes where table.count < 1 << 16 { table[hash.offset] = (hash.limit, hash.hash) }
    }
}

extension TelegramClient {
    /// One part of a download: from the master DC, or from the CDN DC once the master redirected the file there.
    nonisolated func downloadPart(_ location: Api.InputFileLocation, offset: Int64, limit: Int32, part: Int,
                                  source: DownloadSource, options: FileTransferOptions) async throws -> [UInt8] {
        // Bounded: a redirect or a dropped CDN changes the source at most once each.
        for _ in 0..<4 {
            if let redirect = source.redirect {
                do {
                    return try await cdnPart(redirect, offset: offset, limit: limit, part: part, source: source,
                                             options: options)
                } catch FileTransferError.refused(let error) where error.message == "FILE_TOKEN_INVALID" {
                    configuration.logger.info("the CDN file token was refused: the rest comes from the master DC")
                    source.dropCDN()
                    continue
                }
            }
            let cdn = source.allowsCDN
            let answer = try await filePart({
                Api.functions.upload.getFile(cdnSupported: cdn, location: location, offset: offset, limit: limit)
            }, part: part, lane: part, route: source.master, options: options)
            switch answer {
                case .file(let file): return file.bytes
                case .fileCdnRedirect(let redirect):
                    guard cdn else { throw FileTransferError.unexpectedAnswer("a CDN redirect for part \(part)") }
                    if source.redirected(redirect) { configuration.logger.info("file parts go to CDN DC \(redirect.dcId)") }
            }
        }
        throw FileTransferError.cdnUnavailable("part \(part) was redirected back and forth")
    }

    /// A part from the CDN DC, decrypted and checked against its hashes.
    private nonisolated func cdnPart(_ redirect: DownloadSource.Redirect, offset: Int64, limit: Int32, part: Int,
                                     source: DownloadSource, options: FileTransferOptions) async throws -> [UInt8] {
        // A reupload, then the part: asking more than twice means the CDN does not keep the file.
        for _ in 0..<3 {
            let answer = try await filePart({
                Api.functions.upload.getCdnFile(fileToken: redirect.token, offset: offset, limit: limit)
            }, part: part, lane: part, route: redirect.route, options: options)
            switch answer {
                case .cdnFileReuploadNeeded(let needed):
                    configuration.logger.debug("CDN part \(part): reupload needed")
                    let hashes = try await filePart({
                        Api.functions.upload.reuploadCdnFile(fileToken: redirect.token, requestToken: needed.requestToken)
                    }, part: part, lane: part, route: source.master, options: options)
                    source.add(hashes)
                case .cdnFile(let file):
                    var bytes = file.bytes
                    do {
                        try AES256CTR(key: redirect.key, iv: Self.cdnCounter(redirect.iv, offset: offset)).process(&bytes)
                    } catch {
                        throw FileTransferError.cdnUnavailable("the redirect's key or IV: \(error)")
                    }
                    try await check(bytes, at: offset, part: part, redirect: redirect, source: source, options: options)
                    return bytes
            }
        }
        throw FileTransferError.cdnUnavailable("the CDN kept asking for a reupload of part \(part)")
    }

    /// Every hashed range of the part matches its SHA-256 (hashes not yet known are asked of the master DC).
    private nonisolated func check(_ bytes: [UInt8], at offset: Int64, part: Int, redirect: DownloadSource.Redirect,
                                   source: DownloadSource, options: FileTransferOptions) async throws {
        var position = 0
        while position < bytes.count {
            let at = offset + Int64(position)
            var known = source.hash(at: at)
            if known == nil {
                let hashes = try await filePart({
                    Api.functions.upload.getCdnFileHashes(fileToken: redirect.token, offset: at)
                }, part: part, lane: part, route: source.master, options: options)
                source.add(hashes)
                known = source.hash(at: at)
            }
            guard let (limit, hash) = known, limit > 0 else {
                throw FileTransferError.cdnUnavailable("no hash for the range at \(at)")
            }
            let end = min(bytes.count, position + Int(limit))
            // A range shorter than its hash's limit is only allowed at the end of the file (a short part).
            guard end - position == Int(limit) || end == bytes.count,
                  Hash.sha256(Array(bytes[position..<end])) == hash
            else { throw FileTransferError.cdnHashMismatch(offset: at) }
            position = end
        }
    }

    /// The counter block for the part at `offset`: the IV with its last 4 bytes the big-endian offset / 16.
    static func cdnCounter(_ iv: [UInt8], offset: Int64) -> [UInt8] {
        guard iv.count == 16 else { return iv }
        var block = iv
        let counter = UInt32(truncatingIfNeeded: offset / 16)
        for index in 0..<4 { block[12 + index] = UInt8(truncatingIfNeeded: counter >> (24 - 8 * index)) }
        return block
    }
}
