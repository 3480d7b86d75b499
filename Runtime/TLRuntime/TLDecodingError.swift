// The one error type of TL decoding. It says what went wrong (`Reason`), at which byte the failing read started
// (`offset`), and where in the object tree it happened (`path`, outermost first). Generated parse functions add path
// frames only on the error path (`inside(constructor:fields:index:)`), so a successful parse pays nothing for them.

/// A TL decoding failure: what, at which byte, and inside which constructor fields.
public struct TLDecodingError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// A read needed more bytes than were left.
        case truncated(needed: Int, available: Int)
        /// A constructor ID that the expected type (or registry) does not have.
        case unknownConstructor(UInt32, type: String)
        /// A `Bool` that is neither `boolTrue` nor `boolFalse`.
        case invalidBool(UInt32)
        /// A boxed `Vector` whose ID is not `0x1cb5c415`.
        case invalidVectorID(UInt32)
        /// A vector count that is negative or larger than the remaining bytes could hold.
        case invalidCount(Int64)
        /// A length that cannot be right (negative, or the wrong size for a fixed-size value).
        case invalidLength(Int)
        /// Objects nested deeper than the reader's `maxDepth`.
        case depthExceeded(limit: Int)
        /// Bytes left over after a value that should have filled the input.
        case trailingBytes(Int)
        /// A value that the wire format allows but the type does not.
        case invalidValue(String)
        /// `gzip_packed` data that zlib rejects.
        case decompression(String)
        /// `gzip_packed` data that inflates to more than the allowed size (a zip bomb, or a too-small limit).
        case unpackedTooLarge(limit: Int)
    }

    /// One level of the object tree: a constructor (or function) name and the field being read, if any.
    public struct Frame: Sendable, Equatable {
        /// The constructor or function TL name.
        public var constructor: String
        /// The field being read, if any.
        public var field: String?

        /// A frame of `constructor`, reading `field`.
        public init(constructor: String, field: String?) {
            self.constructor = constructor
            self.field = field
        }
    }

    // The fields live in one immutable object, so the error is one reference wide. Every generated parse function
    // passes it up through typed throws at each `try`: 48 bytes inline went through memory and were copied word by
    // word on every error path (about half of a parse function's debug machine code); one reference travels in a
    // register. Errors are rare, so a setter allocating a new object costs nothing that matters.
    final class Storage: Sendable {
        let reason: Reason
        let offset: Int
        let path: [Frame]

        init(reason: Reason, offset: Int, path: [Frame]) {
            self.reason = reason
            self.offset = offset
            self.path = path
        }
    }

    var storage: Storage

    /// What went wrong.
    public var reason: Reason {
        get { storage.reason }
        set { storage = Storage(reason: newValue, offset: storage.offset, path: storage.path) }
    }

    /// Byte offset, in the reader's input, where the failing read started.
    public var offset: Int {
        get { storage.offset }
        set { storage = Storage(reason: storage.reason, offset: newValue, path: storage.path) }
    }

    /// The object tree from the outermost value down to the failing field.
    public var path: [Frame] {
        get { storage.path }
        set { storage = Storage(reason: storage.reason, offset: storage.offset, path: newValue) }
    }

    /// An error for `reason` at byte `offset` of the input, inside `path` (outermost first).
    public init(_ reason: Reason, offset: Int, path: [Frame] = []) {
        storage = Storage(reason: reason, offset: offset, path: path)
    }

    /// Equal when the reason, offset and path are.
    public static func == (lhs: TLDecodingError, rhs: TLDecodingError) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.reason == rhs.reason && lhs.offset == rhs.offset && lhs.path == rhs.path)
    }

    /// The same error seen from one level up: `constructor`'s field number `index` was being read.
    ///
    /// `fields` is the constructor's field names joined by ","; an `index` past the last field (the count) means the
    /// error happened after every field, so the frame has no field.
    public func inside(constructor: StaticString, fields: StaticString, index: Int) -> TLDecodingError {
        // A scan of the literal's bytes: splitting it as a `String` walked `Character`s, most of what rejecting
        // malformed input cost.
        let field: String? = index < 0 ? nil : fields.withUTF8Buffer { names in
            var start = 0
            var current = 0
            for end in 0...names.count where end == names.count || names[end] == UInt8(ascii: ",") {
                if current == index {
                    return String(decoding: UnsafeBufferPointer(rebasing: names[start..<end]), as: UTF8.self)
                }
                current += 1
                start = end + 1
            }
            return nil
        }
        return inside(Frame(constructor: constructor.description, field: field))
    }

    /// The same error seen from one level up, inside `frame`.
    public func inside(_ frame: Frame) -> TLDecodingError {
        var path = self.path
        path.insert(frame, at: 0)
        return TLDecodingError(reason, offset: offset, path: path)
    }

    /// For example `truncated at byte 37: needed 8 bytes, 3 available (in user.phone <- messages.messages.users)`:
    /// innermost frame first, the way one reads "in this field of that object".
    public var description: String {
        var text = reasonDescription
        if !path.isEmpty {
            let frames = path.reversed().map { frame in
                frame.field.map { "\(frame.constructor).\($0)" } ?? frame.constructor
            }
            text += " (in " + frames.joined(separator: " <- ") + ")"
        }
        return text
    }

    var reasonDescription: String {
        switch reason {
        case let .truncated(needed, available):
            "truncated at byte \(offset): needed \(needed) \(needed == 1 ? "byte" : "bytes"), \(available) available"
        case let .unknownConstructor(id, type):
            "unknown constructor \(Hex.id(id)) for \(type) at byte \(offset)"
        case let .invalidBool(id):
            "invalid Bool \(Hex.id(id)) at byte \(offset) (expected boolTrue 0x997275b5 or boolFalse 0xbc799737)"
        case let .invalidVectorID(id):
            "invalid vector ID \(Hex.id(id)) at byte \(offset) (expected 0x1cb5c415)"
        case let .invalidCount(count):
            "invalid vector count \(count) at byte \(offset)"
        case let .invalidLength(length):
            "invalid length \(length) at byte \(offset)"
        case let .depthExceeded(limit):
            "objects nested deeper than \(limit) at byte \(offset)"
        case let .trailingBytes(count):
            "\(count) trailing \(count == 1 ? "byte" : "bytes") at byte \(offset)"
        case let .invalidValue(what):
            "invalid value at byte \(offset): \(what)"
        case let .decompression(what):
            "gzip_packed at byte \(offset) does not inflate: \(what)"
        case let .unpackedTooLarge(limit):
            "gzip_packed at byte \(offset) inflates to more than \(limit) bytes"
        }
    }
}
