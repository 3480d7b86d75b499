// tdlib's ClientHello layouts (non-Darwin) as data, the same op lists as Fixtures/vectors/faketls_templates.json
// (a test checks they agree). Embedded so users need no resource files. `current` mimics a recent Chrome with the
// X25519MLKEM768 key share; `legacy` is the older fixed 517-byte layout, which some deployed proxies (mtprotoproxy
// 1.0.6) still require.

/// One step of a ClientHello template.
public indirect enum HelloOp: Sendable, Hashable {
    /// Append these bytes.
    case bytes([UInt8])
    /// Append n zero bytes.
    case zero(Int)
    /// Append n random bytes.
    case random(Int)
    /// Append GREASE value i twice.
    case grease(Int)
    /// Append the SNI domain.
    case domain
    /// Append a 32-byte X25519 public key.
    case key
    /// Append a 1184-byte ML-KEM-768 encapsulation key.
    case mlkem
    /// Reserve a 2-byte big-endian length, filled at the matching `end`.
    case begin
    /// Close the innermost `begin`, writing its length.
    case end
    /// Build every part, then append them in random order.
    case permutation([[HelloOp]])
    /// Append 144 + 32k random bytes (k in 0...3, fixed per builder).
    case ech
    /// If under 513 bytes so far: `00 15`, a 2-byte length n = 513 − size, n zeros (making 517).
    case padding
    /// A 2-byte length n = 515 − size and n zeros (making 517).
    case legacyPadding

    static func hex(_ text: StaticString) -> HelloOp {
        // Literals below are fixed; the template test compares them with the fixture.
        .bytes(decodeHex(text.description) ?? [])
    }
}

/// The ClientHello layouts a client can imitate.
public enum FakeTLSTemplate: String, Sendable, Hashable, CaseIterable {
    /// tdlib master (1756–1820 bytes with the ML-KEM key share). The default.
    case current
    /// The 517-byte layout from before ML-KEM.
    case legacy

    /// The steps that build this layout.
    public var ops: [HelloOp] {
        switch self {
        case .current: Self.currentOps
        case .legacy: Self.legacyOps
        }
    }

    private static let legacyOps: [HelloOp] = [
        .hex("1603010200010001fc0303"), .zero(32), .hex("20"), .random(32), .hex("0020"), .grease(0),
        .hex("130113021303c02bc02fc02cc030cca9cca8c013c014009c009d002f003501000193"), .grease(2), .hex("0000"),
        .permutation(extensions(supportedGroups: [.hex("000a000a0008"), .grease(4), .hex("001d00170018")],
                                keyShare: [.hex("0033002b0029"), .grease(4), .hex("000100001d0020"), .key],
                                alps: .hex("446900050003026832"))),
        .grease(3), .hex("0001000015"), .legacyPadding,
    ]

    private static let currentOps: [HelloOp] = [
        .hex("160301"), .begin, .hex("0100"), .begin, .hex("0303"), .zero(32), .hex("20"), .random(32), .hex("0020"),
        .grease(0), .hex("130113021303c02bc02fc02cc030cca9cca8c013c014009c009d002f00350100"), .begin, .grease(2),
        .hex("0000"),
        .permutation(extensions(
            supportedGroups: [.hex("000a000c000a"), .grease(4), .hex("11ec001d00170018")],
            keyShare: [.hex("003304ef04ed"), .grease(4), .hex("00010011ec04c0"), .mlkem, .key, .hex("001d0020"), .key],
            alps: .hex("44cd00050003026832"),
            ech: [.hex("fe0d"), .begin, .hex("0000010001"), .random(1), .hex("0020"), .random(32), .begin, .ech, .end, .end])),
        .grease(3), .hex("000100"), .padding, .end, .end, .end,
    ]

    /// The extensions both layouts permute, in the order the permutation starts from; they differ in the supported
    /// groups, the key share, the ALPS extension's id and whether an ECH extension comes before the last.
    private static func extensions(supportedGroups: [HelloOp], keyShare: [HelloOp], alps: HelloOp,
                                   ech: [HelloOp]? = nil) -> [[HelloOp]] {
        [
            [.hex("0000"), .begin, .begin, .hex("00"), .begin, .domain, .end, .end, .end],
            [.hex("000500050100000000")],
            supportedGroups,
            [.hex("000b00020100")],
            [.hex("000d0012001004030804040105030805050108060601")],
            [.hex("0010000e000c02683208687474702f312e31")],
            [.hex("00120000")],
            [.hex("00170000")],
            [.hex("001b0003020002")],
            [.hex("00230000")],
            [.hex("002b000706"), .grease(6), .hex("03040303")],
            [.hex("002d00020101")],
            keyShare,
            [alps],
        ] + (ech.map { [$0] } ?? []) + [[.hex("ff01000100")]]
    }
}
