// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as in zlib): constructor IDs are the CRC of the
// normalized combinator text. The generator has no dependency on the runtime, so it carries this small table.

/// CRC-32 as constructor IDs use it (IEEE 802.3, the reflected polynomial 0xEDB88320, as in zlib).
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? (0xEDB8_8320 ^ (c >> 1)) : (c >> 1) }
        return c
    }

    /// The CRC-32 of `bytes`.
    public static func checksum<S: Sequence>(_ bytes: S) -> UInt32 where S.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    /// The CRC-32 of `text`'s UTF-8.
    public static func checksum(_ text: String) -> UInt32 { checksum(text.utf8) }
}
