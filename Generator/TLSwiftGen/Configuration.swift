// The checked-in generator configuration (Schemas/tlgen.json): which schema becomes which module and namespace.

import Foundation
import TLSchema

public struct GeneratorConfiguration: Codable, Sendable, Equatable {
    public struct Module: Codable, Sendable, Equatable {
        /// The Swift module the files belong to, e.g. `TelegramApi`.
        public var module: String
        /// Output directory, relative to the configuration file.
        public var directory: String
        public var schemas: [SchemaEntry]
    }

    public struct SchemaEntry: Codable, Sendable, Equatable {
        /// Schema path, relative to the configuration file.
        public var schema: String
        /// Swift namespace (a caseless enum) holding the schema's types: `Api`, `MT`, `SecretApi8`.
        public var namespace: String
        /// How many files the types are spread over (≈40 for the full API, measured best for compile time).
        public var files: Int
        /// Embed the schema text as `<namespace>.schemaSource` (for schema-first tools such as `tl encode`).
        public var embedSchema: Bool?
    }

    public var modules: [Module]

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

public enum GeneratorError: Error, CustomStringConvertible, Sendable {
    case configuration(path: String, message: String)
    case schemaFile(path: String, message: String)
    case invalidSchema(SchemaErrors)

    public var description: String {
        switch self {
        case .configuration(let path, let message): "\(path): error: \(message)"
        case .schemaFile(let path, let message): "\(path): error: \(message)"
        case .invalidSchema(let errors): errors.description
        }
    }
}
