/// Why ``MediaInfo`` could not read a file's properties: what it was reading and where.
///
/// Offsets count bytes from the start of the file or buffer.
public enum MediaInfoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data ends inside `what`, which starts at `offset`.
    case truncated(what: String, offset: Int64)
    /// `what`, at `offset`, breaks its format's rules; `reason` says how.
    case malformed(what: String, offset: Int64, reason: String)
    /// The data has no `what` (an `moov` box, a video track, a JPEG frame header).
    case missing(what: String)
    /// More than `limit` of `what` (boxes in a container, JPEG segments) before what was looked for.
    case limitExceeded(what: String, limit: Int)
    /// The data starts as no format this parser reads (`expected` names those it looked for).
    case unrecognizedFormat(expected: String)
    /// The file at `path` could not be opened or read.
    case unreadable(path: String, reason: String)

    /// The error in a sentence, naming what and where.
    public var description: String {
        switch self {
        case .truncated(let what, let offset): "the data ends inside the \(what) at offset \(offset)"
        case .malformed(let what, let offset, let reason): "malformed \(what) at offset \(offset): \(reason)"
        case .missing(let what): "no \(what)"
        case .limitExceeded(let what, let limit): "more than \(limit) \(what)"
        case .unrecognizedFormat(let expected): "not \(expected)"
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        }
    }
}
