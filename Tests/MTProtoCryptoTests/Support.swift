// Helpers shared by the tests: hex decoding (case-insensitive, as the vectors README requires).

func hex(_ string: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(string.utf8.count / 2)
    var high: UInt8?
    for c in string.utf8 {
        let v: UInt8
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
        default: continue
        }
        if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
    }
    return out
}
