import Foundation
import MTProtoApi
import TLJSON
import TLRuntime
import TelegramApi

/// The golden corpus (Fixtures/corpus, made by an independent implementation) and the codecs under test.
enum Corpus {
    struct Record: Sendable {
        var seq: Int
        var section: String
        var name: String
        var bytes: [UInt8]
        var tl: JSONValue
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let records: [Record] = {
        let url = root.appendingPathComponent("Fixtures/corpus/tl_corpus.jsonl")
        guard let data = FileManager.default.contents(atPath: url.path) else { return [] }
        var result: [Record] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            guard let json = try? JSONParser.parse(String(line)),
                  case .number(let seq)? = json["seq"], case .string(let section)? = json["section"],
                  case .string(let name)? = json["name"], case .string(let hex)? = json["hex"],
                  let bytes = Hex.decode(hex), let tl = json["tl"], let seqNumber = Int(seq)
            else { continue }
            result.append(Record(seq: seqNumber, section: section, name: name, bytes: bytes, tl: tl))
        }
        return result
    }()

    /// API and MTProto constructors together, as on the wire.
    static let registry = TLRegistry(merging: [Api.registry, MT.registry])

    static let encoder: TLJSONEncoder? = try? TLJSONEncoder(schemaSources: [
        (name: "api.tl", text: Api.schemaSource), (name: "mtproto.tl", text: MT.schemaSource),
    ])
}
