// Lowercase hex, the form tl-json uses for bytes, int128 and int256, and `tl` uses for wire dumps.

public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex (either case, whitespace ignored); nil for odd length or a non-hex character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case 0x30...0x39: v = c - 0x30
            case 0x61...0x66: v = c - 0x61 + 10
            case 0x41...0x46: v = c - 0x41 + 10
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return high == nil ? out : nil
    }
}
