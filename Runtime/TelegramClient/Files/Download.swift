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
    /// Bytes already at hand (a stripped or cached thumbnail): handed over as the one part, nothing asked.
    var inline: [UInt8]? = nil
    /// Where a fresh file reference comes from when the location's expires (a media download).
    var renewal: FileReferenceRenewal? = nil

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
        if let inline = download.inline {
            finished = true
            progress.add(inline.count)
            return inline.isEmpty ? nil : inline
        }
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
        let partSize = partSize, progress = progress, renewal = download.renewal
        while tasks.count < options.inFlight {
            let offset = Int64(nextPart) * Int64(partSize)
            if let size = download.size, offset >= size, nextPart > 0 { return }
            let part = nextPart
            nextPart += 1
            tasks.append(Task {
                let bytes = try await client.downloadPart(location, renewal: renewal, offset: offset,
                                                          limit: Int32(partSize), part: part, source: source,
                                                          options: options)
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
        try await write(download(location, dc: dc, size: size, options: options), to: path)
    }

    /// Writes the bytes of `download` into a file at `path` (created or truncated) as they arrive; returns how many.
    nonisolated func write(_ download: FileDownload, to path: String) async throws -> Int64 {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate],
                                                 permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw FileTransferError(path: path, failure: error)
        }
        defer { try? descriptor.close() }
        var written: Int64 = 0
        for try await chunk in download {
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

/// A media download's location, which a fresh file reference replaces when the old one expires
/// (core.telegram.org/api/file_reference). The parts that meet `FILE_REFERENCE_EXPIRED` on one location share one
/// fetch of the message: the first fetches, the rest wait for it, and a part that saw an older location takes the
/// newer one without a fetch. At most `limit` fetches in all; each generation of the location counts one.
actor FileReferenceRenewal {
    private var location: Api.InputFileLocation
    private var generation = 0
    private var pending: Task<Api.InputFileLocation, any Error>?
    private(set) var fetches = 0
    private let limit: Int
    private let exhausted: any Error
    private let fetch: @Sendable () async throws -> Api.InputFileLocation

    /// `fetch` gets the location anew (with its fresh reference); `exhausted` is thrown past `limit` fetches.
    init(_ location: Api.InputFileLocation, limit: Int, exhausted: any Error,
         fetch: @escaping @Sendable () async throws -> Api.InputFileLocation) {
        self.location = location
        self.limit = limit
        self.exhausted = exhausted
        self.fetch = fetch
    }

    /// The location now and its generation.
    var current: (Api.InputFileLocation, Int) { (location, generation) }

    /// A location newer than generation `seen`: the one there is when it is newer, else a fresh one.
    func renewed(after seen: Int) async throws -> (Api.InputFileLocation, Int) {
        if seen < generation { return (location, generation) }
        if let pending { return (try await Self.value(of: pending), seen + 1) }
        guard fetches < limit else { throw exhausted }
        fetches += 1
        let task = Task { [fetch] in try await fetch() }
        pending = task
        defer { pending = nil }
        let fresh = try await Self.value(of: task)
        (location, generation) = (fresh, seen + 1)
        return (fresh, generation)
    }

    /// The fetch's answer; a part cancelled while it waits (the download is) cancels the fetch too.
    private static func value(of task: Task<Api.InputFileLocation, any Error>) async throws -> Api.InputFileLocation {
        try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }
}

extension TelegramClient {
    /// A part at the renewal's location, asked again at a fresh one each time its reference expired.
    nonisolated func downloadPart(_ location: Api.InputFileLocation, renewal: FileReferenceRenewal?, offset: Int64,
                                  limit: Int32, part: Int, source: DownloadSource,
                                  options: FileTransferOptions) async throws -> [UInt8] {
        guard let renewal else {
            return try await downloadPart(location, offset: offset, limit: limit, part: part, source: source,
                                          options: options)
        }
        // Bounded: each turn has a newer generation, and the renewal makes at most `limit` of them.
        var (location, generation) = await renewal.current
        while true {
            do {
                return try await downloadPart(location, offset: offset, limit: limit, part: part, source: source,
                                              options: options)
            } catch FileTransferError.fileReferenceExpired {
                (location, generation) = try await renewal.renewed(after: generation)
            }
        }
    }
}
