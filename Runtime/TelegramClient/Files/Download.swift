// Downloads (core.telegram.org/api/files#downloading-files): `upload.getFile` in parts at offsets that are multiples
// of the part size, a multiple of 4 KiB dividing 1 MiB, so no part crosses a 1 MiB boundary and `precise` is never
// needed. N parts are asked ahead and handed over in order; a part shorter than the part size ends the file. Memory
// holds the parts in flight, not the file.
import Foundation
import MTProto
import TLRuntime
import SystemPackage
import TelegramApi

/// A file's bytes as they arrive, in order, part by part: `for try await chunk in client.download(location)`.
/// Parts are asked ahead (`FileTransferOptions.partsInFlight`) as the bytes are read; breaking out of the loop, or
/// cancelling the reading task, stops every part in flight. Throws `FileTransferError`.
public struct FileDownload: AsyncSequence, Sendable {
    /// One part's bytes.
    public typealias Element = [UInt8]

    let client: TelegramClient
    let location: Api.InputFileLocation
    let dc: Int32?
    let size: Int64?
    let options: FileTransferOptions

    /// Starts asking for parts.
    public func makeAsyncIterator() -> Iterator {
        Iterator(download: self)
    }

    /// Hands the parts over in order.
    public struct Iterator: AsyncIteratorProtocol {
        private let state: DownloadWindow

        init(download: FileDownload) { state = DownloadWindow(download) }

        /// The next part's bytes, nil at the end.
        public mutating func next() async throws -> [UInt8]? {
            try await state.next()
        }
    }
}

/// The parts asked ahead of the reader: tasks for consecutive parts, the oldest first.
final class DownloadWindow {
    private let download: FileDownload
    private let partSize: Int
    private var source: DownloadSource?
    private let progress: ProgressCounter
    private var tasks: [Task<[UInt8], any Error>] = []
    private var nextPart = 0
    private var finished = false

    init(_ download: FileDownload) {
        self.download = download
        partSize = download.options.partSize ?? TelegramClient.maxPartSize
        progress = ProgressCounter(total: download.size, report: download.options.progress)
    }

    deinit {
        for task in tasks { task.cancel() }
    }

    func next() async throws -> [UInt8]? {
        guard !finished else { return nil }
        guard partSize >= 4096, partSize % 4096 == 0, (1 << 20) % partSize == 0 else {
            finished = true
            throw FileTransferError.invalidPartSize(partSize)
        }
        if source == nil {
            let dc: Int32
            if let given = download.dc { dc = given } else { dc = await download.client.homeDC }
            source = DownloadSource(master: TransferRoute(dc: dc))
        }
        fill()
        guard !tasks.isEmpty else {
            finished = true
            return nil
        }
        let oldest = tasks.removeFirst()
        let bytes: [UInt8]
        do {
            bytes = try await withTaskCancellationHandler {
                try await oldest.value
            } onCancel: { [tasks] in
                oldest.cancel()
                for task in tasks { task.cancel() }
            }
        } catch {
            stop()
            throw error
        }
        if bytes.count < partSize { stop() } else { fill() }
        return bytes.isEmpty ? nil : bytes
    }

    private func stop() {
        finished = true
        for task in tasks { task.cancel() }
        tasks.removeAll()
    }

    /// Asks parts until `partsInFlight` are out (none past a known size).
    private func fill() {
        guard let source else { return }
        let client = download.client, location = download.location, options = download.options
        let partSize = partSize, progress = progress
        while tasks.count < options.inFlight {
            let offset = Int64(nextPart) * Int64(partSize)
            if let size = download.size, offset >= size, nextPart > 0 { return }
            let part = nextPart
            nextPart += 1
            tasks.append(Task {
                let bytes = try await client.downloadPart(location, offset: offset, limit: Int32(partSize), part: part,
                                                          source: source, options: options)
                progress.add(bytes.count)
                return bytes
            })
        }
    }
}

extension TelegramClient {
    /// The bytes of the file at `location`, as they arrive (see `FileDownload`). `dc` is where the file lives when
    /// known (a document's `dcId`; FILE_MIGRATE_X finds it otherwise); `size` its size when known (no part is asked
    /// past it, and progress reports it).
    public nonisolated func download(_ location: Api.InputFileLocation, dc: Int32? = nil, size: Int64? = nil,
                                     options: FileTransferOptions = FileTransferOptions()) -> FileDownload {
        FileDownload(client: self, location: location, dc: dc, size: size, options: options)
    }

    /// Downloads the file at `location` into a file at `path` (created or truncated) and returns its size.
    public nonisolated func download(_ location: Api.InputFileLocation, to path: String, dc: Int32? = nil,
                                     size: Int64? = nil,
                                     options: FileTransferOptions = FileTransferOptions()) async throws -> Int64 {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate],
                                                 permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw FileTransferError(path: path, failure: error)
        }
        defer { try? descriptor.close() }
        var written: Int64 = 0
        for try await chunk in download(location, dc: dc, size: size, options: options) {
            do {
                _ = try chunk.withUnsafeBytes { try descriptor.writeAll($0) }
            } catch {
                throw FileTransferError(path: path, failure: error)
            }
            written += Int64(chunk.count)
        }
        return written
    }
}
