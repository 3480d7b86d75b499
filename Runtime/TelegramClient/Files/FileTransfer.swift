// What every upload and download shares: their options, progress, errors, and how one part is sent and retried
// (core.telegram.org/api/files). A part that times out, loses its connection or is answered FLOOD_WAIT is asked
// again on its own, the rest of the file going on; FILE_MIGRATE_X moves every later part of the file to DC X.
import Foundation
import SystemPackage
import MTProto
import MTProtoClient
import Synchronization
import TLRuntime
import TelegramApi

/// How a file transfer runs.
public struct FileTransferOptions: Sendable {
    /// Parts asked at once (at least 1).
    public var partsInFlight: Int
    /// Connections of their own to the file's DC that carry its parts, so a large transfer does not hold up calls
    /// and updates on the DC's main connection; 0 sends the parts over the main connection.
    public var mediaConnections: Int
    /// Bytes per part, nil for the default (512 KiB). An upload's must be a multiple of 1 KiB dividing 512 KiB; a
    /// download's a multiple of 4 KiB dividing 1 MiB (core.telegram.org/api/files).
    public var partSize: Int?
    /// How many times one part is asked before the transfer fails.
    public var attemptsPerPart: Int
    /// How long one part may take before it is asked again.
    public var partTimeout: Duration
    /// The longest `FLOOD_WAIT` a part waits out; a longer one fails the transfer.
    public var maxFloodWait: Int
    /// Called after each part with the bytes done so far (from the parts' tasks, so it must be quick).
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// How many times a media download fetches its message again for a fresh file reference before it fails
    /// (``MediaDownloadError/referenceKeptExpiring(message:chat:fetches:)``).
    public var maxReferenceRenewals: Int

    /// Options with the defaults: 4 parts in flight over 2 media connections, 512 KiB parts, 8 attempts a part,
    /// 4 renewals of a media download's file reference.
    public init(partsInFlight: Int = 4, mediaConnections: Int = 2, partSize: Int? = nil, attemptsPerPart: Int = 8,
                partTimeout: Duration = .seconds(20), maxFloodWait: Int = 60,
                progress: (@Sendable (TransferProgress) -> Void)? = nil, maxReferenceRenewals: Int = 4) {
        self.maxReferenceRenewals = maxReferenceRenewals
        self.partsInFlight = partsInFlight
        self.mediaConnections = mediaConnections
        self.partSize = partSize
        self.attemptsPerPart = attemptsPerPart
        self.partTimeout = partTimeout
        self.maxFloodWait = maxFloodWait
        self.progress = progress
    }

    var inFlight: Int { max(1, partsInFlight) }
}

/// How far a transfer is.
public struct TransferProgress: Sendable, Equatable {
    /// Bytes sent or received and checked so far.
    public var bytesDone: Int64
    /// The file's size, when known.
    public var totalBytes: Int64?

    /// A progress report.
    public init(bytesDone: Int64, totalBytes: Int64?) {
        self.bytesDone = bytesDone
        self.totalBytes = totalBytes
    }
}

/// Why an upload or a download failed.
public enum FileTransferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The location's file reference expired (`FILE_REFERENCE_EXPIRED`): fetch the message (or whatever the
    /// location came from) again for a fresh one (core.telegram.org/api/file_reference).
    case fileReferenceExpired
    /// The server refused a part with an error that asking again does not cure.
    case refused(RPCError)
    /// A part failed `attempts` times; `last` says how the last attempt failed.
    case gaveUp(part: Int, attempts: Int, last: String)
    /// The part size is not one the rules allow for this transfer.
    case invalidPartSize(Int)
    /// Nothing to upload.
    case emptyFile
    /// The file needs more parts than Telegram takes (`maxParts`).
    case tooManyParts(Int64)
    /// Reading or writing a local file failed with this `errno`.
    case io(path: String, errno: Int32)
    /// An answer of another kind than the call's (a CDN redirect where none was allowed).
    case unexpectedAnswer(String)
    /// A CDN part's bytes did not match the hash the master DC gave for them: they are not returned.
    case cdnHashMismatch(offset: Int64)
    /// The CDN could not be used (no key for it, no hashes for a part, a redirect answer that does not fit).
    case cdnUnavailable(String)

    /// What went wrong, in a sentence for a log or a user.
    public var description: String {
        switch self {
            case .fileReferenceExpired: "the file reference expired: fetch the message again"
            case .refused(let error): "a part was refused: \(error)"
            case .gaveUp(let part, let attempts, let last): "part \(part) failed \(attempts) times (last: \(last))"
            case .invalidPartSize(let size): "\(size) bytes is not an allowed part size"
            case .emptyFile: "the file is empty"
            case .tooManyParts(let parts): "\(parts) parts is more than Telegram takes"
            case .io(let path, let errno): "\(path): \(String(cString: strerror(errno)))"
            case .unexpectedAnswer(let what): "unexpected answer: \(what)"
            case .cdnHashMismatch(let offset): "the CDN part at \(offset) does not match its hash"
            case .cdnUnavailable(let why): "the CDN cannot be used: \(why)"
        }
    }

    /// `.io` for a failed file operation on `path`: swift-system throws `Errno`, anything else counts as EIO.
    init(path: String, failure: any Error) {
        self = .io(path: path, errno: (failure as? Errno)?.rawValue ?? Errno.ioError.rawValue)
    }
}

/// The DC a transfer's parts go to: where it started, moved by FILE_MIGRATE_X.
final class TransferRoute: Sendable {
    private let current: Mutex<Int32>
    /// A CDN DC's route: no migration is followed and the account is never logged in there.
    let cdn: Bool

    init(dc: Int32, cdn: Bool = false) {
        current = Mutex(dc)
        self.cdn = cdn
    }

    var dc: Int32 { current.withLock { $0 } }

    /// Moves the route; false when it was there already (another part moved it).
    func move(to dc: Int32) -> Bool {
        current.withLock { current in
            defer { current = dc }
            return current != dc
        }
    }
}

/// Bytes done, shared by a transfer's parts.
final class ProgressCounter: Sendable {
    private let done = Mutex<Int64>(0)
    let total: Int64?
    let report: (@Sendable (TransferProgress) -> Void)?

    init(total: Int64?, report: (@Sendable (TransferProgress) -> Void)?) {
        self.total = total
        self.report = report
    }

    /// Counts `bytes` more and reports, under the lock so reports arrive in order.
    func add(_ bytes: Int) {
        done.withLock { value in
            value += Int64(bytes)
            report?(TransferProgress(bytesDone: value, totalBytes: total))
        }
    }
}

extension TelegramClient {
    /// The most parts one file may have (core.telegram.org/api/files: 4000 parts of 512 KiB).
    public static let maxFileParts: Int64 = 4000

    /// Sends one part's call on the transfer's DC and returns its typed answer, asking again on timeouts, lost
    /// connections, `FLOOD_WAIT` and internal errors, following FILE_MIGRATE_X and logging the account in on a DC
    /// that does not know it yet. `lane` picks the media connection.
    nonisolated func filePart<T: Sendable>(_ make: () -> (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                           part: Int, lane: Int, route: TransferRoute,
                                           options: FileTransferOptions) async throws -> T {
        var attempts = 0
        var moves = 0
        var authorized = false
        while true {
            try Task.checkCancellation()
            let dc = route.dc
            var last: any Error
            do {
                let connection = route.cdn
                    ? try await media.cdnConnection(to: dc, lane: lane, of: options.mediaConnections, telegram: self)
                    : try await media.connection(to: dc, lane: lane, of: options.mediaConnections, telegram: self)
                return try await connection.invoke(make(), timeout: options.partTimeout)
            } catch let error as MTProtoClientError {
                let home = await homeDC
                switch error {
                    case .cancelled:
                        throw CancellationError()
                    case .decoding:
                        throw error
                    case .rpc(let rpc):
                        if rpc.message == "FILE_REFERENCE_EXPIRED" { throw FileTransferError.fileReferenceExpired }
                        switch rpc.kind {
                            case .migrate(.file, let target) where !route.cdn && moves < configuration.maxMigrations:
                                // Not an attempt: the part has not been tried where the file is.
                                moves += 1
                                let target = Int32(clamping: target)
                                if route.move(to: target) {
                                    configuration.logger.info("\(rpc.message): file parts go to DC \(target)")
                                }
                                try await media.authorize(dc: target, again: false, telegram: self)
                                continue
                            case .unauthorized where !route.cdn && !authorized && dc != home:
                                authorized = true
                                try await media.authorize(dc: dc, again: true, telegram: self)
                                continue
                            case .floodWait(let seconds) where seconds <= options.maxFloodWait:
                                try await Task.sleep(for: .seconds(seconds))
                            default:
                                // Internal errors are worth another attempt; anything else the server means.
                                guard rpc.code >= 500 || rpc.code == -503 else { throw FileTransferError.refused(rpc) }
                        }
                    case .timeout, .closed, .notConnected, .connection, .request, .session, .proxy:
                        break
                }
                last = error
            }
            attempts += 1
            guard attempts < max(1, options.attemptsPerPart) else {
                throw FileTransferError.gaveUp(part: part, attempts: attempts, last: "\(last)")
            }
            configuration.logger.debug("file part \(part): \(last); asking again")
            // A short pause, longer after each failure, so a DC that is restarting is not hammered.
            try await Task.sleep(for: .milliseconds(50 << min(attempts, 6)))
        }
    }
}
