// A QR code encoder for login URLs (ISO/IEC 18004): byte mode, error correction level M, versions 1–6 (up to 106
// bytes, enough for `tg://login?token=` and a base64url token), the mask with the lowest penalty unless one is
// given. Enough to show a `LoginToken` on a screen or in a terminal; not a general encoder.

/// A QR code's modules, row by row; `true` is dark.
public struct QRCode: Sendable, Equatable {
    /// Why text could not be encoded.
    public enum Failure: Error, Sendable, Equatable {
        /// More bytes than version 6 at level M holds (106).
        case tooLong(bytes: Int)
        /// A mask outside 0...7.
        case invalidMask(Int)
    }

    /// Modules per side (21 for version 1, four more per version).
    public let size: Int
    /// The version (1...6) the text needed.
    public let version: Int
    /// The mask pattern applied (0...7).
    public let mask: Int
    /// `size` rows of `size` modules.
    public let modules: [[Bool]]

    /// Blocks per version at level M: (error-correction codewords per block, data codewords of each block).
    private static let blocks: [Int: (ec: Int, data: [Int])] = [
        1: (10, [16]), 2: (16, [28]), 3: (26, [44]), 4: (18, [32, 32]), 5: (24, [43, 43]), 6: (16, [27, 27, 27, 27]),
    ]
    private static let alignment: [Int: [Int]] = [1: [], 2: [6, 18], 3: [6, 22], 4: [6, 26], 5: [6, 30], 6: [6, 34]]

    /// Encodes `text` as UTF-8 in byte mode. `mask` forces a mask pattern; nil picks the lowest penalty.
    public init(text: String, mask: Int? = nil) throws(Failure) {
        let bytes = Array(text.utf8)
        guard let version = (1...6).first(where: { Self.capacity($0) >= bytes.count }) else {
            throw .tooLong(bytes: bytes.count)
        }
        if let mask, !(0...7).contains(mask) { throw .invalidMask(mask) }
        var grid = Grid(version: version)
        grid.place(Self.codewords(bytes, version: version))
        let chosen = mask ?? (0...7).min { grid.masked($0).penalty < grid.masked($1).penalty } ?? 0
        let final = grid.masked(chosen)
        self.version = version
        self.mask = chosen
        size = final.size
        modules = final.dark
    }

    /// Data bytes a version holds in byte mode (4 mode bits and an 8-bit count come first).
    static func capacity(_ version: Int) -> Int {
        (blocks[version]?.data.reduce(0, +) ?? 0) - 2
    }

    /// The code drawn with half-block characters, two module rows per line, with a quiet zone of two modules.
    /// Light modules are drawn and dark ones left blank, so it reads on a dark terminal background.
    public func terminalText() -> String {
        let quiet = 2
        let side = size + 2 * quiet
        func light(_ row: Int, _ column: Int) -> Bool {
            let r = row - quiet, c = column - quiet
            guard (0..<size).contains(r), (0..<size).contains(c) else { return true }
            return !modules[r][c]
        }
        var out = ""
        for row in stride(from: 0, to: side, by: 2) {
            for column in 0..<side {
                switch (light(row, column), row + 1 < side ? light(row + 1, column) : false) {
                    case (true, true): out += "█"
                    case (true, false): out += "▀"
                    case (false, true): out += "▄"
                    case (false, false): out += " "
                }
            }
            out += "\n"
        }
        return out
    }

    // MARK: Codewords

    /// Data codewords with their Reed–Solomon codewords, interleaved by block.
    private static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        guard let layout = blocks[version] else { return [] }
        let total = layout.data.reduce(0, +)
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> i) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, 8)
        for byte in bytes { append(Int(byte), 8) }
        append(0, min(4, total * 8 - bits.count))
        while bits.count % 8 != 0 { bits.append(false) }
        var data: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while data.count < total {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        var offset = 0
        var dataBlocks: [[UInt8]] = []
        for length in layout.data {
            dataBlocks.append(Array(data[offset..<offset + length]))
            offset += length
        }
        let generator = ReedSolomon.generator(degree: layout.ec)
        let ecBlocks = dataBlocks.map { ReedSolomon.remainder($0, generator: generator) }
        var out: [UInt8] = []
        for i in 0..<(layout.data.max() ?? 0) { for block in dataBlocks where i < block.count { out.append(block[i]) } }
        for i in 0..<layout.ec { for block in ecBlocks { out.append(block[i]) } }
        return out
    }

    // MARK: The module grid

    private struct Grid {
        let size: Int
        var dark: [[Bool]]
        var reserved: [[Bool]]

        init(version: Int) {
            size = 17 + 4 * version
            dark = Array(repeating: Array(repeating: false, count: size), count: size)
            reserved = dark
            for (row, column) in [(0, 0), (0, size - 7), (size - 7, 0)] { finder(row, column) }
            for i in 8..<(size - 8) {
                set(6, i, i % 2 == 0)
                set(i, 6, i % 2 == 0)
            }
            let centers = QRCode.alignment[version] ?? []
            for r in centers {
                for c in centers {
                    let nearFinder = (r == 6 && c == 6) || (r == 6 && c == centers.last) || (r == centers.last && c == 6)
                    if !nearFinder { alignmentPattern(r, c) }
                }
            }
            // Format areas, written per mask later; the dark module.
            for i in 0..<9 {
                reserved[8][i] = true
                reserved[i][8] = true
            }
            for i in 0..<8 {
                reserved[8][size - 1 - i] = true
                reserved[size - 1 - i][8] = true
            }
            set(size - 8, 8, true)
        }

        mutating func set(_ row: Int, _ column: Int, _ value: Bool) {
            dark[row][column] = value
            reserved[row][column] = true
        }

        /// A finder pattern with its light separator, top-left corner at (row, column).
        mutating func finder(_ row: Int, _ column: Int) {
            for dr in -1...7 {
                for dc in -1...7 {
                    let r = row + dr, c = column + dc
                    guard (0..<size).contains(r), (0..<size).contains(c) else { continue }
                    let ring = max(abs(dr - 3), abs(dc - 3))
                    set(r, c, ring != 2 && ring != 4)
                }
            }
        }

        mutating func alignmentPattern(_ row: Int, _ column: Int) {
            for dr in -2...2 {
                for dc in -2...2 { set(row + dr, column + dc, max(abs(dr), abs(dc)) != 1) }
            }
        }

        /// The codewords' bits in the zigzag order, two columns at a time from the right, skipping column 6.
        mutating func place(_ codewords: [UInt8]) {
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                let upward = (right + 1) & 2 == 0
                for step in 0..<size {
                    let row = upward ? size - 1 - step : step
                    for column in [right, right - 1] where !reserved[row][column] {
                        if index < codewords.count * 8 {
                            dark[row][column] = (codewords[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1
                            index += 1
                        }
                    }
                }
                right -= 2
            }
        }

        /// This grid with mask `mask` applied to the data modules and the format bits written.
        func masked(_ mask: Int) -> Grid {
            var out = self
            for row in 0..<size {
                for column in 0..<size where !reserved[row][column] && Self.flips(mask, row: row, column: column) {
                    out.dark[row][column].toggle()
                }
            }
            out.writeFormat(mask)
            return out
        }

        static func flips(_ mask: Int, row y: Int, column x: Int) -> Bool {
            switch mask {
                case 0: (x + y) % 2 == 0
                case 1: y % 2 == 0
                case 2: x % 3 == 0
                case 3: (x + y) % 3 == 0
                case 4: (x / 3 + y / 2) % 2 == 0
                case 5: x * y % 2 + x * y % 3 == 0
                case 6: (x * y % 2 + x * y % 3) % 2 == 0
                default: ((x + y) % 2 + x * y % 3) % 2 == 0
            }
        }

        /// Level M (00) and the mask, BCH(15,5)-protected and XORed with 101010000010010, in both copies.
        mutating func writeFormat(_ mask: Int) {
            let data = mask  // level M's two bits are 00
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
            // Around the top-left finder: bits 0–7 down column 8 (skipping the timing row), 8–14 along row 8.
            for i in 0...5 { dark[i][8] = bit(i) }
            dark[7][8] = bit(6)
            dark[8][8] = bit(7)
            dark[8][7] = bit(8)
            for i in 9..<15 { dark[8][14 - i] = bit(i) }
            // The second copy: bits 0–7 along row 8 from the right, 8–14 down column 8 at the bottom.
            for i in 0..<8 { dark[8][size - 1 - i] = bit(i) }
            for i in 8..<15 { dark[size - 15 + i][8] = bit(i) }
            dark[size - 8][8] = true
        }

        /// ISO/IEC 18004's penalty: runs, 2×2 blocks, finder-like patterns, and the dark share.
        var penalty: Int {
            var score = 0
            let columns = (0..<size).map { c in (0..<size).map { dark[$0][c] } }
            for line in dark + columns {
                var run = 1
                for i in 1..<size {
                    if line[i] == line[i - 1] {
                        run += 1
                    } else {
                        if run >= 5 { score += run - 2 }
                        run = 1
                    }
                }
                if run >= 5 { score += run - 2 }
                let pattern: [Bool] = [true, false, true, true, true, false, true]
                for start in 0...(size - 7) where Array(line[start..<start + 7]) == pattern {
                    let before = start >= 4 && !line[(start - 4)..<start].contains(true)
                    let after = start + 11 <= size && !line[(start + 7)..<(start + 11)].contains(true)
                    if before || after { score += 40 }
                }
            }
            for r in 0..<(size - 1) {
                for c in 0..<(size - 1) {
                    let v = dark[r][c]
                    if dark[r][c + 1] == v, dark[r + 1][c] == v, dark[r + 1][c + 1] == v { score += 3 }
                }
            }
            let darkCount = dark.reduce(0) { $0 + $1.filter { $0 }.count }
            let percent = darkCount * 100 / (size * size)
            score += abs(percent - 50) / 5 * 10
            return score
        }
    }
}

/// Reed–Solomon over GF(256) with the QR polynomial x^8 + x^4 + x^3 + x^2 + 1.
enum ReedSolomon {
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var result: UInt8 = 0, a = a, b = b
        while b != 0 {
            if b & 1 != 0 { result ^= a }
            let carry = a & 0x80 != 0
            a <<= 1
            if carry { a ^= 0x1D }
            b >>= 1
        }
        return result
    }

    /// The generator (x − α^0)…(x − α^(degree−1)), coefficients from the highest power down, leading 1 omitted.
    static func generator(degree: Int) -> [UInt8] {
        var coefficients = [UInt8](repeating: 0, count: degree)
        coefficients[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                coefficients[j] = multiply(coefficients[j], root)
                if j + 1 < degree { coefficients[j] ^= coefficients[j + 1] }
            }
            root = multiply(root, 2)
        }
        return coefficients
    }

    /// The remainder of data·x^degree divided by the generator: the error-correction codewords.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for i in 0..<result.count { result[i] ^= multiply(generator[i], factor) }
        }
        return result
    }
}
