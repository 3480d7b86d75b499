// Uploads (core.telegram.org/api/files#uploading-files): the file is cut into parts of one size (a multiple of 1 KiB
// dividing 512 KiB; the last may be shorter) sent with `upload.saveFilePart` and an MD5 of the whole for files of at
// most 10 MB, with `upload.saveBigFilePart` and the part count above. A stream of unknown size is held until it is
// known to be over 10 MB (then `file_total_parts` is -1 until the last part, as for streamed uploads) or ends.
// Several parts are in flight at once; memory holds those parts and the one being read, not the file.
import Foundation
import MTProtoCrypto
import TLRuntime
import SystemPackage
import TelegramApi

extension TelegramClient {
    /// Files of at most this many bytes are uploaded as small files (`inputFile`, with an MD5).
    public static let smallFileLimit: Int64 = 10 * 1024 * 1024
    /// The largest part (512 KiB).
    public static let maxPartSize = 512 * 1024

    /// Uploads the file at `path` and returns what `messages.sendMedia` takes as its file (its name by default the
    /// path's last component). Throws `FileTransferError`, or `CancellationError` when the task is cancelled.
    public nonisolated func upload(path: String, name: String? = nil,
                                   options: FileTransferOptions = FileTransferOptions()) async throws -> Api.InputFile {
        let reader = try FileReader(path: path)
        defer { reader.close() }
        let fileName = name ?? (path as NSString).lastPathComponent
        return try await upload(size: reader.size, name: fileName, options: options) { count in try reader.read(count) }
    }

    /// Uploads bytes held in memory.
    public nonisolated func upload(bytes: [UInt8], name: String,
                                   options: FileTransferOptions = FileTransferOptions()) async throws -> Api.InputFile {
        var offset = 0
        return try await upload(size: Int64(bytes.count), name: name, options: options) { count in
            let end = min(bytes.count, offset + count)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
    }

    /// Uploads what `chunks` yields, of any sizes, in order; `size` is the total when known (a stream of unknown
    /// size is held in memory up to 10 MB, then sent as a big file).
    public nonisolated func upload<Chunks: AsyncSequence>(chunks: Chunks, size: Int64? = nil, name: String,
                                                          options: FileTransferOptions = FileTransferOptions())
        async throws -> Api.InputFile where Chunks.Element == [UInt8] {
        var iterator = chunks.makeAsyncIterator()
        var pending: [UInt8] = []
        var start = 0
        var ended = false
        return try await upload(size: size, name: name, options: options) { count in
            while pending.count - start < count, !ended {
                if let chunk = try await iterator.next() {
                    if start > 0 {
                        pending.removeFirst(start)
                        start = 0
                    }
                    pending += chunk
                } else {
                    ended = true
                }
            }
            let end = min(pending.count, start + count)
            defer { start = end }
            return Array(pending[start..<end])
        }
    }

    /// The part size for a file of `size` bytes: the one asked, or 512 KiB.
    static func uploadPartSize(_ asked: Int?) throws(FileTransferError) -> Int {
        let size = asked ?? maxPartSize
        guard size >= 1024, size % 1024 == 0, maxPartSize % size == 0 else { throw .invalidPartSize(size) }
        return size
    }

    /// The upload itself: `read(n)` gives the next `n` bytes (fewer only at the end).
    private nonisolated func upload(size knownSize: Int64?, name: String, options: FileTransferOptions,
                                    read: (Int) async throws -> [UInt8]) async throws -> Api.InputFile {
        let partSize = try Self.uploadPartSize(options.partSize)
        var size = knownSize
        // Up to 10 MB read ahead when the size is not known: a stream that ends within it is a small file.
        var held: [[UInt8]] = []
        if size == nil {
            var heldBytes: Int64 = 0
            while heldBytes <= Self.smallFileLimit {
                let part = try await read(partSize)
                if !part.isEmpty { held.append(part) }
                heldBytes += Int64(part.count)
                if part.count < partSize {
                    size = heldBytes
                    break
                }
            }
        }
        if size == 0 { throw FileTransferError.emptyFile }
        let big = size.map { $0 > Self.smallFileLimit } ?? true
        let totalParts = size.map { ($0 + Int64(partSize) - 1) / Int64(partSize) }
        if let totalParts, totalParts > Self.maxFileParts { throw FileTransferError.tooManyParts(totalParts) }
        let fileID = configuration.random.int64()
        // The store's home DC, not the configuration's: a reopened session may have moved since (PHONE_MIGRATE).
        try await load()
        let route = TransferRoute(dc: await homeDC)
        let progress = ProgressCounter(total: size, report: options.progress)
        var md5: [UInt8] = []
        var nextHeld = 0
        var index = 0
        var parts = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            var running = 0
            var part = held.isEmpty ? try await read(partSize) : held[0]
            if !held.isEmpty { nextHeld = 1 }
            while !part.isEmpty {
                // The next part is read before this one goes, so a stream of unknown size knows its last part.
                let following: [UInt8]
                if nextHeld < held.count {
                    following = held[nextHeld]
                    nextHeld += 1
                } else if part.count < partSize || (totalParts.map { Int64(index + 1) >= $0 } ?? false) {
                    following = []
                } else {
                    following = try await read(partSize)
                }
                if !big { md5 += part }
                let total: Int32 = totalParts.map { Int32($0) } ?? (following.isEmpty ? Int32(index + 1) : -1)
                if Int64(index) >= Self.maxFileParts { throw FileTransferError.tooManyParts(Int64(index + 1)) }
                if running >= options.inFlight {
                    try await group.next()
                    running -= 1
                }
                let (bytes, number) = (part, index)
                group.addTask {
                    let saved = try await self.filePart({
                        big ? Api.functions.upload.saveBigFilePart(fileId: fileID, filePart: Int32(number),
                                                                   fileTotalParts: total, bytes: bytes)
                            : Api.functions.upload.saveFilePart(fileId: fileID, filePart: Int32(number), bytes: bytes)
                    }, part: number, lane: number, route: route, options: options)
                    guard saved else {
                        throw FileTransferError.refused(.init(code: 400, message: "FILE_PART_\(number)_NOT_SAVED"))
                    }
                    progress.add(bytes.count)
                }
                running += 1
                index += 1
                part = following
            }
            parts = index
            try await group.waitForAll()
        }
        if big { return .inputFileBig(.init(id: fileID, parts: Int32(parts), name: name)) }
        return .inputFile(.init(id: fileID, parts: Int32(parts), name: name, md5Checksum: Hex.encode(Hash.md5(md5))))
    }
}

/// Input media made from what ``TelegramClient/TelegramClient/upload(path:name:options:)`` returns.
extension Api.InputMedia {
    /// An uploaded file as a document for `messages.sendMedia`, named after the file.
    public static func uploadedDocument(_ file: Api.InputFile, mimeType: String = "application/octet-stream")
        -> Api.InputMedia {
        let name: String = switch file {
            case .inputFile(let small): small.name
            case .inputFileBig(let big): big.name
            default: ""
        }
        return .inputMediaUploadedDocument(.init(file: file, mimeType: mimeType,
                                                 attributes: name.isEmpty ? [] : [.documentAttributeFilename(.init(fileName: name))]))
    }
}

/// A local file read from the start, part by part.
final class FileReader {
    let path: String
    let size: Int64
    private var descriptor: FileDescriptor?

    init(path: String) throws(FileTransferError) {
        self.path = path
        let opened: FileDescriptor
        do {
            opened = try FileDescriptor.open(FilePath(path), .readOnly)
        } catch {
            throw FileTransferError(path: path, failure: error)
        }
        do {
            // The size from the end offset, then back to the start: no stat structure, which differs by platform.
            size = try opened.seek(offset: 0, from: .end)
            _ = try opened.seek(offset: 0, from: .start)
        } catch {
            try? opened.close()
            throw FileTransferError(path: path, failure: error)
        }
        descriptor = opened
    }

    /// The next `count` bytes, fewer at the end.
    func read(_ count: Int) throws(FileTransferError) -> [UInt8] {
        guard let descriptor else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        do {
            while filled < count {
                // `read` retries on EINTR itself; zero means the end of the file.
                let got = try out.withUnsafeMutableBytes {
                    try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
                }
                if got == 0 { break }
                filled += got
            }
        } catch {
            throw FileTransferError(path: path, failure: error)
        }
        out.removeLast(count - filled)
        return out
    }

    func close() {
        try? descriptor?.close()
        descriptor = nil
    }
}
