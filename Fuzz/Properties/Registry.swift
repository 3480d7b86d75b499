// Generated registries: whatever parses must serialize to bytes that parse back to the same value and serialize
// to the same bytes again (the first parse may differ from its input: `gzip_packed` is unwrapped on the way). A
// request must also come out of its generated writer as `TLRequest` writes it.
import MTProtoApi
import RequestReplay
import SecretApi
import TLJSON
import TLRuntime
import TelegramApi

/// The registries by target name suffix: `FuzzApi` uses `Api`, `FuzzSecretApi8` uses `SecretApi8`, and so on.
public let registries: [String: TLRegistry] = [
    "Api": Api.registry, "MT": MT.registry,
    "SecretApi8": SecretApi8.registry, "SecretApi46": SecretApi46.registry, "SecretApi73": SecretApi73.registry,
    "SecretApi101": SecretApi101.registry, "SecretApi144": SecretApi144.registry,
]

func serialized(_ object: any TLObject) -> [UInt8] {
    let buffer = Buffer()
    object.serialize(buffer, true)
    return buffer.bytes
}

/// The whole value, field by field, as tl-json text: two values are equal when these are.
func fullDescription(_ object: any TLObject) -> String { TLJSONWriter.json(object).description }

/// Input: one boxed value of the registry `name` (a key of `registries`).
public func fuzzRegistry(_ name: String, _ data: [UInt8]) throws(Violation) {
    guard let registry = registries[name] else { throw Violation("no registry \(name)") }
    guard let first = try? registry.parse(bytes: data) else { return }
    let bytes = serialized(first)
    let second: any TLObject
    do {
        second = try registry.parse(bytes: bytes)
    } catch {
        throw Violation("\(registry.name): a parsed value re-serializes to bytes that do not parse: \(error)")
    }
    guard serialized(second) == bytes else { throw Violation("\(registry.name): second serialization differs") }
    let a = fullDescription(first), b = fullDescription(second)
    guard a == b else { throw Violation("\(registry.name): values differ after a round trip:\n\(a)\n\(b)") }
    if let request = first as? TLRequest { try checkGeneratedWriter(request, writes: bytes, registry.name) }
}

/// The function's generated writer, reached through the replay, writes what the interpreter wrote.
func checkGeneratedWriter(_ request: TLRequest, writes expected: [UInt8], _ name: String) throws(Violation) {
    let replayed: (any ReplayedRequest)?
    do {
        replayed = try RequestReplay.replay(request)
    } catch {
        throw Violation("\(name): \(request.name) parsed, but its arguments do not convert for its writer: \(error)")
    }
    guard let replayed else { return }  // a function of no schema the replay covers (the secret layers have none)
    let buffer = Buffer()
    replayed.write(into: buffer)
    guard buffer.bytes == expected else {
        throw Violation("\(name): the generated writer of \(request.name) writes other bytes than TLRequest")
    }
}
