// `tl decode` / `tl encode` line handling, through the library calls the tool makes (TLJSONWriter, JSONParser,
// TLJSONEncoder) with the tool's default schemas, API plus MTProto.
import MTProtoApi
import TLJSON
import TLRuntime
import TelegramApi

let tlRegistry = TLRegistry(merging: [Api.registry, MT.registry])
let tlEncoder: TLJSONEncoder = {
    do {
        return try TLJSONEncoder(schemaSources: [("api.tl", Api.schemaSource), ("mtproto.tl", MT.schemaSource)])
    } catch {
        fatalError("the generated schemas do not load: \(error)")
    }
}()

/// `tl decode`: bytes that parse become tl-json whose text parses to the same JSON and encodes back to the bytes
/// the value serializes to.
public func fuzzTLDecode(_ data: [UInt8]) throws(Violation) {
    guard let object = try? tlRegistry.parse(bytes: data) else { return }
    let json = TLJSONWriter.json(object)
    let text = json.description
    let reread: JSONValue
    do {
        reread = try JSONParser.parse(text)
    } catch {
        throw Violation("tl decode wrote JSON its parser rejects: \(error)\n\(text)")
    }
    guard reread == json else { throw Violation("tl decode's JSON reads back different:\n\(text)") }
    let encoded: [UInt8]
    do {
        encoded = try tlEncoder.encode(jsonText: text)
    } catch {
        throw Violation("tl encode rejects what tl decode wrote: \(error)\n\(text)")
    }
    // The same bytes, but for NaN payloads, which tl-json does not carry ("NaN"): then the same JSON.
    guard encoded == serialized(object)
        || (try? tlRegistry.parse(bytes: encoded)).map({ TLJSONWriter.json($0) == json }) == true
    else { throw Violation("tl encode of tl decode's output differs:\n\(text)") }
}

/// `tl encode`: any text is either refused or encodes to bytes that decode to JSON that encodes to the same bytes.
/// JSON text that parses prints as text that parses to the same value.
public func fuzzTLEncode(_ data: [UInt8]) throws(Violation) {
    let text = String(decoding: data, as: UTF8.self)
    if let json = try? JSONParser.parse(text) {
        guard (try? JSONParser.parse(json.description)) == json else {
            throw Violation("JSON does not survive printing: \(json.description)")
        }
    }
    guard let bytes = try? tlEncoder.encode(jsonText: text) else { return }
    let object: any TLObject
    do {
        object = try tlRegistry.parse(bytes: bytes)
    } catch {
        throw Violation("tl encode wrote bytes the registry rejects: \(error)")
    }
    let again: [UInt8]
    do {
        again = try tlEncoder.encode(TLJSONWriter.json(object))
    } catch {
        throw Violation("tl encode rejects the JSON of its own output: \(error)")
    }
    guard again == bytes else { throw Violation("tl encode is not stable over decode") }
}
