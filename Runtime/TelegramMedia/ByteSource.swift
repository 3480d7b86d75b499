import SystemPackage

/// Random access to a file's or a buffer's bytes, a few at a time: the parsers read box and segment headers and
/// seek past the rest, so a 2 GB video costs a few dozen small reads.
protocol ByteSource {
    /// The number of bytes.
    var count: Int64 { get }
    /// Up to `length` bytes from `offset` (fewer only at the end).
    func read(_ length: Int, at offset: Int64) throws(MediaInfoError) -> [UInt8]
}

extension ByteSource {
    /// Exactly `length` bytes from `offset`, or `truncated` naming `what`.
    func bytes(_ length: Int, at offset: Int64, in what: String) throws(MediaInfoError) -> [UInt8] {
        guard offset >= 0, offset <= count - Int64(length) else { throw .truncated(what: what, offset: offset) }
        let bytes = try read(length, at: offset)
        guard bytes.count == length else { throw .truncated(what: what, offset: offset) }
        return bytes
    }
}

struct BufferSource: ByteSource {
    let buffer: [UInt8]
    var count: Int64 { Int64(buffer.count) }

    func read(_ length: Int, at offset: Int64) throws(MediaInfoError) -> [UInt8] {
        let start = Int(clamping: max(0, offset)), end = Int(clamping: min(count, offset + Int64(length)))
        return start < end ? Array(buffer[start..<end]) : []
    }
}

/// A file read with positioned reads; the descriptor closes when the parse ends.
final class FileSource: ByteSource {
    let path: String
    let descriptor: FileDescriptor
    let count: Int64

    init(path: String) throws(MediaInfoError) {
        self.path = path
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly)
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        do {
            count = try descriptor.seek(offset: 0, from: .end)
        } catch {
            try? descriptor.close()
            throw .unreadable(path: path, reason: "\(error)")
        }
    }

    deinit { try? descriptor.close() }

    func read(_ length: Int, at offset: Int64) throws(MediaInfoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        var filled = 0
        do {
            while filled < length {
                let got = try out.withUnsafeMutableBytes { raw in
                    try descriptor.read(fromAbsoluteOffset: offset + Int64(filled),
                                        into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                }
                if got == 0 { break }
                filled += got
            }
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        return Array(out[..<filled])
    }
}

func bigEndian<T: FixedWidthInteger & UnsignedInteger>(_ bytes: [UInt8], at index: Int, as: T.Type = T.self) -> T {
    var value: T = 0
    for byte in bytes[index..<index + MemoryLayout<T>.size] { value = value << 8 | T(byte) }
    return value
}
