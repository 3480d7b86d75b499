// TL `int128` and `int256`: opaque fixed-size values (nonces), kept as machine words so that equality, hashing and
// (de)serialization cost a few loads instead of an array. Words hold the wire bytes little-endian: `_w0` is wire bytes
// 0–7, `_w1` bytes 8–15 and so on. They are not numbers: `description` is the hex of the wire bytes, in wire order,
// which is also their tl-json form.

/// TL `int128`: 16 bytes, in wire order.
public struct TLInt128: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline var _w0: UInt64
    @usableFromInline var _w1: UInt64

    /// The value whose wire bytes are `lo` then `hi`, each little-endian.
    @inlinable public init(_ lo: UInt64, _ hi: UInt64) {
        _w0 = lo
        _w1 = hi
    }

    /// All zero bytes.
    public static let zero = TLInt128(0, 0)

    /// The value from its 16 wire bytes.
    public init(wireBytes: [UInt8]) throws(TLDecodingError) {
        guard wireBytes.count == 16 else { throw TLDecodingError(.invalidLength(wireBytes.count), offset: 0) }
        _w0 = Hex.word(wireBytes, at: 0)
        _w1 = Hex.word(wireBytes, at: 8)
    }

    /// The value from 32 hex digits (its tl-json form); nil unless exactly that.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex), let value = try? TLInt128(wireBytes: bytes) else { return nil }
        self = value
    }

    /// The 16 bytes as sent.
    public var wireBytes: [UInt8] { Hex.bytes(of: [_w0, _w1]) }

    /// Lowercase hex of the wire bytes.
    public var description: String { Hex.encode(wireBytes) }
}

/// TL `int256`: 32 bytes, in wire order.
public struct TLInt256: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline var _w0: UInt64
    @usableFromInline var _w1: UInt64
    @usableFromInline var _w2: UInt64
    @usableFromInline var _w3: UInt64

    /// The value whose wire bytes are `w0`, `w1`, `w2`, `w3`, each little-endian.
    @inlinable public init(_ w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        _w0 = w0
        _w1 = w1
        _w2 = w2
        _w3 = w3
    }

    /// All zero bytes.
    public static let zero = TLInt256(0, 0, 0, 0)

    /// The value from its 32 wire bytes.
    public init(wireBytes: [UInt8]) throws(TLDecodingError) {
        guard wireBytes.count == 32 else { throw TLDecodingError(.invalidLength(wireBytes.count), offset: 0) }
        _w0 = Hex.word(wireBytes, at: 0)
        _w1 = Hex.word(wireBytes, at: 8)
        _w2 = Hex.word(wireBytes, at: 16)
        _w3 = Hex.word(wireBytes, at: 24)
    }

    /// The value from 64 hex digits (its tl-json form); nil unless exactly that.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex), let value = try? TLInt256(wireBytes: bytes) else { return nil }
        self = value
    }

    /// The 32 bytes as sent.
    public var wireBytes: [UInt8] { Hex.bytes(of: [_w0, _w1, _w2, _w3]) }

    /// Lowercase hex of the wire bytes.
    public var description: String { Hex.encode(wireBytes) }
}

/// Hex and little-endian helpers, shared by descriptions, errors and the log formatter (no Foundation).
/// Lowercase hex: tl-json writes bytes, int128 and int256 this way, and `tl` reads and writes wire dumps.
public enum Hex {
    static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Little-endian word from 8 bytes of `bytes` starting at `at`; the caller checked the bounds.
    static func word(_ bytes: [UInt8], at: Int) -> UInt64 {
        var w: UInt64 = 0
        for i in (0..<8).reversed() { w = w << 8 | UInt64(bytes[at + i]) }
        return w
    }

    static func bytes(of words: [UInt64]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(words.count * 8)
        for w in words {
            for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: w >> (8 * UInt64(i)))) }
        }
        return out
    }

    /// Lowercase hex of every byte.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(bytes.count * 2)
        for b in bytes {
            utf8.append(digits[Int(b >> 4)])
            utf8.append(digits[Int(b & 0xf)])
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Hex of at most `limit` leading bytes, with "…" when cut.
    static func short<C: Collection>(_ bytes: C, limit: Int) -> String where C.Element == UInt8 {
        bytes.count <= limit ? encode(bytes) : encode(bytes.prefix(limit)) + "…"
    }

    /// `0x` and 8 hex digits, the way constructor IDs are written in errors.
    static func id(_ v: UInt32) -> String {
        "0x" + encode([UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)])
    }

    /// Bytes from an even number of hex digits (either case); spaces, tabs and newlines between digits are
    /// ignored, so pasted dumps read as they are. nil on anything else.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 2)
        var high: UInt8 = 0
        var haveHigh = false
        for c in text.utf8 {
            let v = nibbles[Int(c)]
            if v == skip { continue }
            if v == invalid { return nil }
            if haveHigh {
                out.append(high << 4 | v)
            } else {
                high = v
            }
            haveHigh.toggle()
        }
        return haveHigh ? nil : out
    }

    private static let invalid: UInt8 = 0xFF
    private static let skip: UInt8 = 0xFE
    /// Digit value per ASCII byte; `skip` for whitespace, `invalid` for everything else.
    private static let nibbles: [UInt8] = (0..<256).map { c in
        switch UInt8(c) {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): skip
        default: nibble(UInt8(c)) ?? invalid
        }
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
