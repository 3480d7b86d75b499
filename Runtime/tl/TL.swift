// `tl`: inspect TL values in captured traffic. `tl decode` turns hex lines into tl-json lines, `tl encode` the
// reverse. One output line per input line; a bad line prints `error: …` and the run goes on.

import ArgumentParser
import MTProtoApi
import SecretApi
import TLJSON
import TLRuntime
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
        abstract: "Hex lines (one boxed constructor or function each) to tl-json lines.")

    @OptionGroup var schemaOption: SchemaOption

    func run() throws {
        let registry = TLRegistry(merging: schemaOption.choices.flatMap(\.registries))
        var output = OutputBuffer()
        while let line = readLine(strippingNewline: true) {
            output.write(Self.decode(line, registry: registry))
        }
        output.flush()
    }

    static func decode(_ line: String, registry: TLRegistry) -> String {
        var text = Substring(line).drop { $0 == " " || $0 == "\t" }
        if text.hasPrefix("0x") { text = text.dropFirst(2) }
        guard let bytes = Hex.decode(text) else { return "error: not hex: '\(line.prefix(40))'" }
        guard !bytes.isEmpty else { return "error: empty line" }
        do {
            return TLJSONWriter.json(try registry.parse(bytes: bytes)).description
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
