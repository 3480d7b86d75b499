// What the fuzz targets check, one public function per target taking the input bytes: shared by the libFuzzer
// executables (Fuzz/) and the regression tests that replay saved findings (Tests/FuzzRegressionTests), so a
// finding replays through exactly the code that found it. A function throws `Violation` when a property breaks;
// a trap inside the library under test is a finding too.
import MTProto
import MTProtoTransport

/// A broken property, with what broke.
public struct Violation: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Reads control bytes off the front of an input; past the end every read is zero.
struct InputReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return offset < bytes.count ? bytes[offset] : 0
    }

    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + count)
        defer { offset = max(offset, end) }
        return offset < end ? Array(bytes[offset..<end]) : []
    }

    mutating func rest() -> [UInt8] { take(bytes.count) }
}

/// Splits `data` into pieces whose sizes follow `seed`, so a decoder sees every split of its stream.
func chunks(_ data: [UInt8], seed: UInt8) -> [[UInt8]] {
    guard seed != 0 else { return [data] }
    var state = UInt32(seed) &* 0x9e37_79b9 | 1
    var out: [[UInt8]] = []
    var start = 0
    while start < data.count {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        let size = 1 + Int(state % 97)
        let end = min(data.count, start + size)
        out.append(Array(data[start..<end]))
        start = end
    }
    return out
}

/// Every target with a property, by name (Fuzz/Package.swift's executables, less the AES-IGE differential).
public let targetNames: [String] = [
    "FuzzTLDecode", "FuzzTLEncode", "FuzzSchema", "FuzzAbridged", "FuzzIntermediate", "FuzzPadded", "FuzzFull",
    "FuzzObfuscated2", "FuzzFakeTLSClientHello", "FuzzFakeTLSServerHello", "FuzzMTProxySecret", "FuzzSessionClient",
    "FuzzSessionServer", "FuzzExchangeClient", "FuzzExchangeServer", "FuzzSecretChat", "FuzzUTF8",
    "FuzzHTML", "FuzzMarkdown", "FuzzSocks5Reply", "FuzzHTTPResponse", "FuzzHTTPTransport", "FuzzApiRequests",
    "FuzzMediaInfo",
] + registries.keys.sorted().map { "Fuzz" + $0 }

/// Runs the property of fuzz target `target` on `data`; false if there is no such target.
public func checkProperty(of target: String, _ data: [UInt8]) throws(Violation) -> Bool {
    switch target {
    case "FuzzTLDecode": try fuzzTLDecode(data)
    case "FuzzTLEncode": try fuzzTLEncode(data)
    case "FuzzSchema": try fuzzSchema(data)
    case "FuzzAbridged": try fuzzFraming(.abridged, data)
    case "FuzzIntermediate": try fuzzFraming(.intermediate, data)
    case "FuzzPadded": try fuzzFraming(.paddedIntermediate, data)
    case "FuzzFull": try fuzzFraming(.full, data)
    case "FuzzObfuscated2": try fuzzObfuscated2(data)
    case "FuzzFakeTLSClientHello": try fuzzFakeTLSClientHello(data)
    case "FuzzFakeTLSServerHello": try fuzzFakeTLSServerHello(data)
    case "FuzzMTProxySecret": try fuzzMTProxySecret(data)
    case "FuzzSessionClient": try fuzzSession(.client, data)
    case "FuzzSessionServer": try fuzzSession(.server, data)
    case "FuzzExchangeClient": try fuzzExchange(tampered: .client, data)
    case "FuzzExchangeServer": try fuzzExchange(tampered: .server, data)
    case "FuzzSecretChat": try fuzzSecretChat(data)
    case "FuzzUTF8": try fuzzUTF8(data)
    case "FuzzHTML": try fuzzFormatting(.html, data)
    case "FuzzMarkdown": try fuzzFormatting(.markdown, data)
    case "FuzzSocks5Reply": try fuzzSocks5Reply(data)
    case "FuzzHTTPResponse": try fuzzHTTPResponse(data)
    case "FuzzHTTPTransport": try fuzzHTTPTransport(data)
    case "FuzzApiRequests": try fuzzTypedRequests(data)
    case "FuzzMediaInfo": try fuzzMediaInfo(data)
    default:
        guard target.hasPrefix("Fuzz"), registries[String(target.dropFirst(4))] != nil else { return false }
        try fuzzRegistry(String(target.dropFirst(4)), data)
    }
    return true
}
