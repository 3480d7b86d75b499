// The golden corpus's boundary sections (Fixtures/corpus, made with Telethon and cross-checked), decoded and
// re-encoded with the primitives alone: every bytes/string length switch and padding, vectors, doubles bit for bit
// (including -0.0), longs, int128/int256 and Bool. `hex` is the authority; `tl` gives the expected values.
import Foundation
import Testing
import TLRuntime

private struct Record {
    let section: String
    let hex: String
    /// `tl`'s fields as text: strings as they are, numbers and Bools as written, arrays joined with ",".
    let tl: [String: String]
    let line: String
}

/// Loaded once; the file is 9 MB.
private let allRecords: [Record] = {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/corpus/tl_corpus.jsonl")
    guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap { line -> Record? in
        guard line.contains("\"section\": \"boundary-"),
              let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let section = object["section"] as? String, let hex = object["hex"] as? String,
              let json = object["tl"] as? [String: Any] else { return nil }
        var tl: [String: String] = [:]
        for (key, value) in json {
            switch value {
            case let v as String: tl[key] = v
            case let v as [String]: tl[key] = v.joined(separator: ",")
            case let v as Bool where key == "offline": tl[key] = String(v)  // the only Bool in these sections
            case let v as Int: tl[key] = String(v)
            default: break
            }
        }
        return Record(section: section, hex: hex, tl: tl, line: String(line))
    }
}()

private func loadRecords() -> [Record] { allRecords }

private func records(_ prefix: String) -> [Record] { loadRecords().filter { $0.section.hasPrefix(prefix) } }

/// The raw JSON token after `"key": ` in a line (doubles are compared by their shortest text, not via JSON parsing,
/// which loses -0.0).
private func token(_ key: String, in line: String) -> String? {
    guard let range = line.range(of: "\"\(key)\": ") else { return nil }
    return String(line[range.upperBound...].prefix { $0 != "," && $0 != "}" })
}

@Suite struct CorpusBoundaryTests {
    @Test func corpusIsPresent() {
        #expect(loadRecords().count == 156)
    }

    @Test func bytes() throws {
        let section = records("boundary-bytes")
        #expect(section.count == 27)
        for record in section {
            var reader = BufferReader(bytes: TLRuntimeTests.bytes(record.hex))
            #expect(try reader.readUInt32() == 0xb304_a621)
            let fileID = try reader.readInt64()
            let part = try reader.readInt32()
            let data = try reader.readTLBytes()
            try reader.expectEnd()
            #expect(String(fileID) == record.tl["file_id"])
            #expect(String(part) == record.tl["file_part"])
            #expect(hex(data) == record.tl["bytes"])
            let buffer = Buffer()
            buffer.appendUInt32(0xb304_a621)
            buffer.appendInt64(fileID)
            buffer.appendInt32(part)
            buffer.appendTLBytes(data)
            #expect(hex(buffer.bytes) == record.hex, "\(data.count) bytes")
        }
    }

    @Test func strings() throws {
        let section = records("boundary-string")
        #expect(section.count == 58)
        for record in section {
            var reader = BufferReader(bytes: TLRuntimeTests.bytes(record.hex))
            #expect(try reader.readUInt32() == 0x7446_94e0)
            let text = try reader.readTLString()
            try reader.expectEnd()
            #expect(text == record.tl["text"])
            let buffer = Buffer()
            buffer.appendUInt32(0x7446_94e0)
            buffer.appendTLString(text)
            #expect(hex(buffer.bytes) == record.hex, "\(text.utf8.count) UTF-8 bytes")
        }
    }

    @Test func vectorsOfLongs() throws {
        for record in records("boundary-vector") {
            var reader = BufferReader(bytes: TLRuntimeTests.bytes(record.hex))
            #expect(try reader.readUInt32() == 0x62d6_b459)
            let ids = try reader.readVector(boxed: true, of: Int64.self)
            try reader.expectEnd()
            #expect(ids.map(String.init).joined(separator: ",") == record.tl["msg_ids"])
            let buffer = Buffer()
            buffer.appendUInt32(0x62d6_b459)
            buffer.appendVector(ids, boxed: true)
            #expect(hex(buffer.bytes) == record.hex)
        }
    }

    @Test func doublesBitForBit() throws {
        let section = records("boundary-double")
        #expect(section.count == 17)
        for record in section {
            var reader = BufferReader(bytes: TLRuntimeTests.bytes(record.hex))
            #expect(try reader.readUInt32() == 0x4822_2faf)
            let flags = try reader.readUInt32()
            let lat = try reader.readDouble()
            let long = try reader.readDouble()
            if flags & 1 != 0 { _ = try reader.readInt32() }
            try reader.expectEnd()
            #expect(lat.description == token("lat", in: record.line))
            #expect(long.description == token("long", in: record.line))
            #expect(long.bitPattern == (-lat).bitPattern)
            let buffer = Buffer()
            buffer.appendUInt32(0x4822_2faf)
            buffer.appendUInt32(flags)
            buffer.appendDouble(lat)
            buffer.appendDouble(long)
            #expect(hex(buffer.bytes) == record.hex)
        }
    }

    @Test func longs() throws {
        for record in records("boundary-long") {
            var reader = BufferReader(bytes: TLRuntimeTests.bytes(record.hex))
            #expect(try reader.readUInt32() == 0xdde8_a54c)
            #expect(String(try reader.readInt64()) == record.tl["user_id"])
            #expect(String(try reader.readInt64()) == record.tl["access_hash"])
            try reader.expectEnd()
        }
    }

    @Test func int128AndInt256() throws {
        for record in records("boundary-int128") {
            var reader = BufferReader(bytes: TLRuntimeTests.bytes(record.hex))
            #expect(try reader.readUInt32() == 0xbe7e_8ef1)
            let nonce = try reader.readInt128()
            try reader.expectEnd()
            #expect(nonce.description == record.tl["nonce"])
            #expect(hex(encode(nonce)) == record.hex.dropFirst(8).description)
        }
        let section256 = records("boundary-int256")
        #expect(section256.count == 4)
        for record in section256 {
            var reader = BufferReader(bytes: TLRuntimeTests.bytes(record.hex))
            #expect(try reader.readUInt32() == 0x83c9_5aec)
            for key in ["pq", "p", "q"] { #expect(hex(try reader.readTLBytes()) == record.tl[key]) }
            #expect(try reader.readInt128().description == record.tl["nonce"])
            #expect(try reader.readInt128().description == record.tl["server_nonce"])
            let newNonce = try reader.readInt256()
            try reader.expectEnd()
            #expect(newNonce.description == record.tl["new_nonce"])
            #expect(record.hex.hasSuffix(hex(encode(newNonce))))
        }
    }

    @Test func bools() throws {
        let section = records("boundary-bool")
        #expect(section.count == 2)
        for record in section {
            var reader = BufferReader(bytes: TLRuntimeTests.bytes(record.hex))
            #expect(try reader.readUInt32() == 0x6628_562c)
            let offline = try reader.readBool()
            try reader.expectEnd()
            #expect(String(offline) == record.tl["offline"])
            #expect(record.hex.hasSuffix(hex(encode(offline))))
        }
    }
}
