// The checked-in generator configuration (Schemas/tlgen.json): which schema becomes which module and namespace,
// the layer of a schema that does not state one, and the constructor-ID exceptions an upstream file needs.

import Foundation
import TLSchema

/// A `tlgen.json` configuration: the modules to generate, each from its schemas, the optional request replay
/// module, and constructor-ID exceptions.
public struct GeneratorConfiguration: Codable, Sendable, Equatable {
    /// One generated Swift module and the schemas it is made from.
    public struct Module: Codable, Sendable, Equatable {
        /// The Swift module the files belong to, e.g. `TelegramApi`.
        public var module: String
        /// Output directory, relative to the configuration file.
        public var directory: String
        /// The schemas, each in its own namespace.
        public var schemas: [SchemaEntry]
        /// The module with the server side of these schemas (typed requests and their registry), when wanted.
        public var server: ServerModule?
        /// For the layers of the end-to-end (secret chat) schema: each layer's adapter, the `package` conformance
        /// to `SecretLayerSchema` a secret-chat engine reads and builds its messages through.
        public var secretChatAdapters: Bool?
    }

    /// The server side of a module's schemas: every function as a typed request a server parses, in a module of
    /// its own so that clients do not compile it.
    public struct ServerModule: Codable, Sendable, Equatable {
        /// The server module's Swift name, e.g. `TelegramApiServer`.
        public var module: String
        /// Output directory, relative to the configuration file.
        public var directory: String
    }

    /// One schema of a module: its path, Swift namespace, how many files its types are spread over, and options.
    public struct SchemaEntry: Codable, Sendable, Equatable {
        /// Schema path, relative to the configuration file.
        public var schema: String
        /// Swift namespace (a caseless enum) holding the schema's types: `Api`, `MT`, `SecretApi8`.
        public var namespace: String
        /// How many files the types are spread over (≈40 for the full API, measured best for compile time).
        public var files: Int
        /// Embed the schema text as `<namespace>.schemaSource` (for schema-first tools such as `tl encode`).
        public var embedSchema: Bool?
        /// The layer, for a schema without a `// LAYER N` line (TDLib's `telegram_api.tl`); must agree with one.
        public var layer: Int?
        /// Link each definition's doc comment to its page on core.telegram.org. Only for Telegram's API schema:
        /// the MTProto schema's definitions have no such pages, and a secret layer's would describe another layer.
        public var specLinks: Bool?
        /// Keep request writers out of their builders (`@inline(never)`), for a shorter release build of a schema
        /// with many requests; a request then costs one call more to build.
        public var outlineWriters: Bool?
        /// Compile the code off the codec's path without optimization (`@_optimize(none)`): request builders that
        /// are not generic (not their writers) and the public payload initializers that compute flag words. A
        /// shorter release build; building a request or a value by hand costs a little more.
        public var unoptimizedColdCode: Bool?

        /// An entry; `files` is how many files the types are spread over (by a hash of their name).
        public init(schema: String, namespace: String, files: Int, embedSchema: Bool? = nil, layer: Int? = nil,
                    specLinks: Bool? = nil, outlineWriters: Bool? = nil, unoptimizedColdCode: Bool? = nil) {
            self.schema = schema
            self.namespace = namespace
            self.files = files
            self.embedSchema = embedSchema
            self.layer = layer
            self.specLinks = specLinks
            self.outlineWriters = outlineWriters
            self.unoptimizedColdCode = unoptimizedColdCode
        }
    }

    /// A constructor ID the CRC rule does not reproduce, accepted for every schema of this configuration.
    public struct IDException: Codable, Sendable, Equatable {
        /// The constructor's name, as the schema writes it.
        public var name: String
        /// Hex, as the schema writes it: `"dd289f8e"` or `"#dd289f8e"`.
        public var id: String
        /// Why the rule does not apply, for whoever reads the list.
        public var reason: String
        /// A definition whose CRC is the ID (an older name or spelling); the checker verifies it.
        public var spelling: String?
        /// The entry whose ID this one deliberately reuses.
        public var sharedWith: String?
    }

    /// The request replay module (`RequestReplay`): a converter from a parsed request to each function's generated
    /// writer, for the tests and benchmarks. Covers every function of every schema above.
    public struct Replay: Codable, Sendable, Equatable {
        /// The replay module's Swift name.
        public var module: String
        /// Output directory, relative to the configuration file.
        public var directory: String
    }

    /// The modules to generate.
    public var modules: [Module]
    /// The request replay module, when wanted.
    public var replay: Replay?
    /// Added to the built-in list (`KnownIDException.all`), which applies when none are declared.
    public var idExceptions: [IDException]?

    /// The built-in exceptions plus the declared ones.
    public func exceptions(path: String) throws -> [KnownIDException] {
        try Self.exceptions(idExceptions ?? [], path: path)
    }

    /// The built-in exceptions plus those a JSON file declares under `idExceptions` (a tlgen.json, or the build
    /// plugin's tlgen-plugin.json); other keys are ignored.
    public static func exceptions(fromFile path: String) throws -> [KnownIDException] {
        struct Declared: Decodable { var idExceptions: [IDException]? }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GeneratorError.configuration(path: path, message: "cannot read the file")
        }
        do {
            return try exceptions(try JSONDecoder().decode(Declared.self, from: data).idExceptions ?? [], path: path)
        } catch let error as GeneratorError {
            throw error
        } catch {
            throw GeneratorError.configuration(path: path, message: "idExceptions: \(error)")
        }
    }

    static func exceptions(_ declared: [IDException], path: String) throws -> [KnownIDException] {
        try KnownIDException.all + declared.map { entry in
            let digits = entry.id.hasPrefix("#") ? entry.id.dropFirst() : Substring(entry.id)
            guard (1...8).contains(digits.count), let id = UInt32(digits, radix: 16) else {
                throw GeneratorError.configuration(path: path, message: "idExceptions: '\(entry.id)' of \(entry.name) is not a hex constructor ID")
            }
            return KnownIDException(name: entry.name, id: id,
                                    verification: entry.spelling.map { .olderSpelling($0) } ?? .accepted,
                                    reason: entry.reason, sharedWith: entry.sharedWith)
        }
    }

    /// Reads and decodes the configuration at `path`; throws ``GeneratorError/configuration(path:message:)`` when
    /// the file cannot be read or does not decode.
    public static func load(from path: String) throws -> GeneratorConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GeneratorError.configuration(path: path, message: "cannot read the file")
        }
        do {
            let configuration = try JSONDecoder().decode(GeneratorConfiguration.self, from: data)
            try configuration.validate(path: path)
            return configuration
        } catch let error as GeneratorError {
            throw error
        } catch let DecodingError.keyNotFound(key, context) {
            throw GeneratorError.configuration(
                path: path, message: "missing key '\(key.stringValue)' at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context),
            let DecodingError.dataCorrupted(context) {
            let at = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw GeneratorError.configuration(path: path, message: "\(context.debugDescription)\(at.isEmpty ? "" : " at \(at)")")
        }
    }

    func validate(path: String) throws {
        _ = try exceptions(path: path)
        var namespaces: Set<String> = []
        for module in modules {
            for entry in module.schemas {
                guard entry.files >= 1 else {
                    throw GeneratorError.configuration(path: path, message: "'files' of \(entry.schema) must be at least 1")
                }
                guard namespaces.insert(entry.namespace).inserted else {
                    throw GeneratorError.configuration(path: path, message: "namespace '\(entry.namespace)' is used twice")
                }
            }
        }
    }
}

/// Why generation failed.
public enum GeneratorError: Error, CustomStringConvertible, Sendable {
    /// The configuration file cannot be read, or says something invalid.
    case configuration(path: String, message: String)
    /// A schema file cannot be read.
    case schemaFile(path: String, message: String)
    /// A schema has errors (each with its location).
    case invalidSchema(SchemaErrors)

    /// The error as `PATH: error: MESSAGE`, or the schema's diagnostics.
    public var description: String {
        switch self {
        case .configuration(let path, let message): "\(path): error: \(message)"
        case .schemaFile(let path, let message): "\(path): error: \(message)"
        case .invalidSchema(let errors): errors.description
        }
    }
}
