// The golden corpus (`Fixtures/corpus/tl_corpus.jsonl`) split the way the reference (grammers) measured its codec:
// the 2,664 object records (sections constructor-random, -all-flags, -no-flags) and the 1,325 requests
// (function-random, -all-flags, -no-flags); the 159 boundary records are left out of both. Each part holds the wire
// bytes and the values they decode to, and runs one pass of copy, decode or encode over them.
import Foundation
import MTProtoApi
import RequestReplay
import TLJSON
import TLRuntime
import TelegramApi

/// The API layer's and MTProto's registries, as a client reading a session would merge them.
public let corpusRegistry = TLRegistry(merging: [Api.registry, MT.registry])

/// One part of the corpus. Unchecked: `replayed` holds, for `invokeWith…`, the inner call's `Buffer`, which is not
/// `Sendable`; every field is only read.
public struct CorpusPart: @unchecked Sendable {
    public let records: [[UInt8]]
    public let decoded: [any TLObject]
    /// For requests: each record with its arguments already converted (`RequestReplay`), written through its
    /// generated writer as code calling `Api.functions.….f(into:…)` writes it. Empty for objects.
    public let replayed: [any ReplayedRequest]
    /// Wire bytes of all records.
    public let bytes: Int
    /// Each record cut to its first half: malformed input for `reject()`.
    public let halves: [[UInt8]]

    /// The records of `sections` (the corpus file's `section` field), read from the repository's fixtures.
    public init(sections: Set<String>) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let url = root.appendingPathComponent("Fixtures/corpus/tl_corpus.jsonl")
        let text = FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) } ?? ""
        records = text.split(separator: "\n").compactMap { line in
            guard let json = try? JSONParser.parse(String(line)), case .string(let section)? = json["section"],
                  sections.contains(section), case .string(let hex)? = json["hex"] else { return nil }
            return Hex.decode(hex)
        }
        decoded = records.compactMap { try? corpusRegistry.parse(bytes: $0) }
        replayed = decoded.compactMap { ($0 as? TLRequest).flatMap { try? RequestReplay.replay($0) } }
        bytes = records.reduce(0) { $0 + $1.count }
        halves = records.map { Array($0.prefix($0.count / 2)) }
    }

    public static let objects = CorpusPart(sections: ["constructor-random", "constructor-all-flags", "constructor-no-flags"])
    public static let requests = CorpusPart(sections: ["function-random", "function-all-flags", "function-no-flags"])

    /// Every record's bytes appended to `buffer` (emptied first): the baseline. Returns the bytes written.
    public func copy(into buffer: Buffer) -> Int {
        buffer.removeAll(keepingCapacity: true)
        for record in records { buffer.appendRaw(record) }
        return buffer.count
    }

    /// Every record's first half parsed through the registry: each read ends in a `TLDecodingError` that carries the
    /// path down to the cut, as a server rejecting malformed input builds it. Returns the errors' frames in all.
    public func reject() -> Int {
        var frames = 0
        for record in halves {
            do { _ = try corpusRegistry.parse(bytes: record) } catch { frames &+= error.path.count &+ 1 }
        }
        return frames
    }

    /// Every record parsed through the registry. Returns how many parsed.
    public func decode() -> Int {
        var parsed = 0
        for record in records where (try? corpusRegistry.parse(bytes: record)) != nil { parsed += 1 }
        return parsed
    }

    /// Every value described, nested objects too, as a log line or tl-json reads it (`descriptionFields()` at every
    /// level). Returns the number of fields.
    public func describe() -> Int {
        func fields(_ value: TLValue) -> Int {
            switch value {
            case .object(let object): fields(of: object)
            case .vector(let items): items.reduce(0) { $0 &+ fields($1) }
            default: 1
            }
        }
        func fields(of object: any TLObject) -> Int {
            object.descriptionFields().1.reduce(1) { $0 &+ fields($1.1) }
        }
        return decoded.reduce(0) { $0 &+ fields(of: $1) }
    }

    /// Every value written boxed into `buffer` (emptied first). Returns the bytes written. Requests go through their
    /// generated writers, as an application builds them; objects through their generated `serialize`.
    public func encode(into buffer: Buffer) -> Int {
        // Each request is called where it lies, like the objects below. (Closures instead of structs cost a retain
        // and a release of the closure's context per call: 14 % of the instructions.)
        if !replayed.isEmpty {
            buffer.removeAll(keepingCapacity: true)
            for index in replayed.indices { replayed[index].write(into: buffer) }
            return buffer.count
        }
        return serialize(into: buffer)
    }

    /// Every decoded value serialized boxed into `buffer` (emptied first) by its own `serialize`: for requests,
    /// `TLRequest`, which writes a parsed request by its definition (a server or `tl encode` re-encoding one).
    /// Returns the bytes written.
    public func serialize(into buffer: Buffer) -> Int {
        buffer.removeAll(keepingCapacity: true)
        // Each value is called where it lies in the array, as code holding a typed value calls it. `for object in
        // decoded` copied every existential out first (a retain, a copy through its value witnesses and a destroy
        // per record: 18 % of the instructions of encoding the objects), and so does a loop over `withUnsafeBufferPointer`.
        for index in decoded.indices { decoded[index].serialize(buffer, true) }
        return buffer.count
    }
}
