// `tl`: inspect TL values in captured traffic. `tl decode` turns hex lines into tl-json lines, `tl encode` the
// reverse. One output line per input line; a bad line prints `error: …` and the run goes on.

import ArgumentParser
import MTProtoApi
import SecretApi
import TLJSON
import TLRuntime
import TLSchema
import TelegramApi

@main
struct TL: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tl",
        abstract: "Inspect TL values: hex lines to tl-json lines and back.",
        discussion: """
            Reads standard input line by line and writes exactly one line per input line, so outputs can be \
            pasted beside inputs. tl-json is the format of Fixtures/corpus/README.md.

            Examples:
              echo 4ca5e8dd01000000000000000200000000000000 | tl decode
              echo '{"_": "inputPeerUser", "user_id": "1", "access_hash": "2"}' | tl encode
            """,
        version: SwiftMTProto.version,
        subcommands: [Decode.self, Encode.self])
}

/// Which schema a value is read with.
enum SchemaChoice: String, ExpressibleByArgument, CaseIterable {
    case api, mtproto, secret8, secret46, secret73, secret101, secret144

    static let defaultHelp = "api plus mtproto"

    var registries: [TLRegistry] {
        switch self {
        case .api: [Api.registry]
        case .mtproto: [MT.registry]
        case .secret8: [SecretApi8.registry]
        case .secret46: [SecretApi46.registry]
        case .secret73: [SecretApi73.registry]
        case .secret101: [SecretApi101.registry]
        case .secret144: [SecretApi144.registry]
        }
    }

    var sources: [(name: String, text: String)] {
        switch self {
        case .api: [("api.tl", Api.schemaSource)]
        case .mtproto: [("mtproto.tl", MT.schemaSource)]
        case .secret8: [("secret/layer8.tl", SecretApi8.schemaSource)]
        case .secret46: [("secret/layer46.tl", SecretApi46.schemaSource)]
        case .secret73: [("secret/layer73.tl", SecretApi73.schemaSource)]
        case .secret101: [("secret/layer101.tl", SecretApi101.schemaSource)]
        case .secret144: [("secret/layer144.tl", SecretApi144.schemaSource)]
        }
    }
}

struct SchemaOption: ParsableArguments {
    @Option(name: .long, help: "Schema: \(SchemaChoice.allCases.map(\.rawValue).joined(separator: ", ")). Default: \(SchemaChoice.defaultHelp).")
    var schema: SchemaChoice?

    var choices: [SchemaChoice] { schema.map { [$0] } ?? [.api, .mtproto] }
}

struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hex lines (one boxed constructor or function each) to tl-json lines.",
        discussion: """
            --type T reads a value whose constructor ID is not on the wire: `Vector<User>`, `vector<long>` (bare), \
            `%Message` or `message` (a bare constructor), `long`, any boxed type (its ID is checked). --mtproto \
            reads a decrypted MTProto payload (salt, session_id, message_id, seq_no, length, body, padding) and \
            decodes message bodies, containers, rpc_result results and gzip_packed in place.
            """)

    @OptionGroup var schemaOption: SchemaOption

    @Option(name: .customLong("type"), help: "Read each line as this TL type (its constructor is not on the wire).")
    var valueType: String?

    @Flag(help: "Read each line as a decrypted MTProto payload and decode it as one tree.")
    var mtproto = false

    func validate() throws {
        if valueType != nil && mtproto { throw ValidationError("--type and --mtproto exclude each other") }
    }

    func run() throws {
        let registry = TLRegistry(merging: schemaOption.choices.flatMap(\.registries))
        let read: ([UInt8]) throws -> JSONValue
        if let valueType {
            let schemas = schemaOption.choices.flatMap(\.sources).map { Checker.check(file: $0.name, text: $0.text) }
            let type: ValueType
            do {
                type = try ValueType.parse(valueType, schemas: schemas)
            } catch {
                throw ValidationError("--type: \(error)")
            }
            let decoder = TypedDecoder(registry: registry)
            read = { bytes in TLJSONWriter.json(try decoder.decode(type, bytes: bytes)) }
        } else if mtproto {
            // Service messages and API results are mixed in one payload: always both schemas.
            let decoder = MTProtoPayloadDecoder(registry: TLRegistry(merging: [registry, MT.registry]))
            read = { bytes in try decoder.decode(payload: bytes) }
        } else {
            read = { bytes in TLJSONWriter.json(try registry.parse(bytes: bytes)) }
        }
        var output = OutputBuffer()
        while let line = readLine(strippingNewline: true) {
            output.write(Self.decode(line, read: read))
        }
        output.flush()
    }

    static func decode(_ line: String, read: ([UInt8]) throws -> JSONValue) -> String {
        var text = Substring(line).drop { $0 == " " || $0 == "\t" }
        if text.hasPrefix("0x") { text = text.dropFirst(2) }
        guard let bytes = Hex.decode(text) else { return "error: not hex: '\(line.prefix(40))'" }
        guard !bytes.isEmpty else { return "error: empty line" }
        do {
            return try read(bytes).description
        } catch {
            return "error: \(error)"
        }
    }
}

struct Encode: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "tl-json lines to hex lines.")

    @OptionGroup var schemaOption: SchemaOption

    func run() throws {
        let encoder: TLJSONEncoder
        do {
            encoder = try TLJSONEncoder(schemaSources: schemaOption.choices.flatMap(\.sources))
        } catch {
            throw ValidationError("cannot load the schema: \(error)")
        }
        var output = OutputBuffer()
        while let line = readLine(strippingNewline: true) {
            do {
                output.write(Hex.encode(try encoder.encode(jsonText: line)))
            } catch {
                output.write("error: \(error)")
            }
        }
        output.flush()
    }
}

/// Batches output lines; `print` per line would make tens of thousands of lines a second I/O-bound.
struct OutputBuffer {
    private var pending = ""

    mutating func write(_ line: String) {
        pending += line
        pending += "\n"
        if pending.utf8.count >= 1 << 16 { flush() }
    }

    mutating func flush() {
        guard !pending.isEmpty else { return }
        print(pending, terminator: "")
        pending = ""
    }
}
