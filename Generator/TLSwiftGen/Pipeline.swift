// The generator pipeline: configuration -> read schemas -> check -> emit -> files on disk (or a comparison with
// them). Each stage is a plain function, so tests can run any of them alone.

import Foundation
import TLSchema

/// A file the pipeline produces.
public struct OutputFile: Sendable, Equatable {
    /// Path relative to the configuration file's directory.
    public var path: String
    /// The file's full text.
    public var contents: String
}

/// The generator's steps from a configuration file: render every module, compare with what is on disk, write.
public enum GeneratorPipeline {
    /// Every file the configuration produces, in a stable order.
    public static func render(configurationPath: String) throws -> [OutputFile] {
        let configuration = try GeneratorConfiguration.load(from: configurationPath)
        let base = (configurationPath as NSString).deletingLastPathComponent
        let exceptions = try configuration.exceptions(path: configurationPath)
        var outputs: [OutputFile] = []
        var replayed: [(namespace: String, module: String)] = []
        for module in configuration.modules {
            for entry in module.schemas {
                let schemaPath = (base as NSString).appendingPathComponent(entry.schema)
                guard let data = FileManager.default.contents(atPath: schemaPath) else {
                    throw GeneratorError.schemaFile(path: schemaPath, message: "cannot read the schema")
                }
                guard let text = String(data: data, encoding: .utf8) else {
                    throw GeneratorError.schemaFile(path: schemaPath, message: "the schema is not valid UTF-8")
                }
                let emitter = try emitter(schemaText: text, displayName: entry.schema, namespace: entry.namespace,
                                          fileCount: entry.files, embedSchema: entry.embedSchema ?? false,
                                          layer: entry.layer, specLinks: entry.specLinks ?? false,
                                          outlineWriters: entry.outlineWriters ?? false,
                                          unoptimizedColdCode: entry.unoptimizedColdCode ?? false,
                                          exceptions: exceptions)
                var files = emitter.emit()
                if module.secretChatAdapters == true { files.append(try emitter.secretChatAdapterFile()) }
                for file in files {
                    outputs.append(OutputFile(path: (module.directory as NSString).appendingPathComponent(file.name),
                                              contents: file.contents))
                }
                if let server = module.server {
                    for file in emitter.serverFiles(module: module.module) {
                        outputs.append(OutputFile(path: (server.directory as NSString).appendingPathComponent(file.name),
                                                  contents: file.contents))
                    }
                }
                if let replay = configuration.replay, !emitter.schema.functions.isEmpty {
                    let file = emitter.replayFile(module: module.module, replayModule: replay.module)
                    outputs.append(OutputFile(path: (replay.directory as NSString).appendingPathComponent(file.name),
                                              contents: file.contents))
                    replayed.append((entry.namespace, module.module))
                }
            }
            if module.secretChatAdapters == true {
                let file = SwiftEmitter.secretChatProtocolsFile(module: module.module)
                outputs.append(OutputFile(path: (module.directory as NSString).appendingPathComponent(file.name),
                                          contents: file.contents))
            }
        }
        if let replay = configuration.replay {
            let file = SwiftEmitter.replayIndexFile(namespaces: replayed, replayModule: replay.module)
            outputs.append(OutputFile(path: (replay.directory as NSString).appendingPathComponent(file.name),
                                      contents: file.contents))
        }
        return outputs
    }

    /// Check a schema and emit its files; a schema with errors emits nothing.
    /// - Parameters:
    ///   - schemaText: the schema's TL text.
    ///   - displayName: the name its diagnostics and generated headers give it (usually its path).
    ///   - namespace: the Swift namespace of the generated types (`Api`).
    ///   - fileCount: how many files the types are spread over.
    ///   - embedSchema: whether the namespace file embeds the schema text.
    ///   - layer: the configured layer, for a schema without a `// LAYER` line; a schema that has one must agree.
    ///   - specLinks: link each definition to its page on core.telegram.org (Telegram's API schema only).
    ///   - outlineWriters: keep request writers that are not generic out of their builders (`@inline(never)`).
    ///   - unoptimizedColdCode: compile non-generic request builders and the public payload initializers that
    ///     compute flag words without optimization (`@_optimize(none)`).
    ///   - exceptions: constructor IDs accepted although the CRC rule does not reproduce them.
    public static func emit(schemaText: String, displayName: String, namespace: String, fileCount: Int,
                            embedSchema: Bool, layer: Int? = nil, specLinks: Bool = false,
                            outlineWriters: Bool = false, unoptimizedColdCode: Bool = false,
                            exceptions: [KnownIDException] = KnownIDException.all) throws -> [GeneratedFile] {
        try emitter(schemaText: schemaText, displayName: displayName, namespace: namespace, fileCount: fileCount,
                    embedSchema: embedSchema, layer: layer, specLinks: specLinks, outlineWriters: outlineWriters,
                    unoptimizedColdCode: unoptimizedColdCode,
                    exceptions: exceptions).emit()
    }

    /// The emitter for a checked schema; throws when the schema has errors.
    static func emitter(schemaText: String, displayName: String, namespace: String, fileCount: Int,
                        embedSchema: Bool, layer: Int?, specLinks: Bool = false, outlineWriters: Bool = false,
                        unoptimizedColdCode: Bool = false,
                        exceptions: [KnownIDException]) throws -> SwiftEmitter {
        var schema = Checker.check(file: displayName, text: schemaText, exceptions: exceptions)
        guard schema.errors.isEmpty else { throw GeneratorError.invalidSchema(SchemaErrors(schema.errors)) }
        if let layer {
            if let stated = schema.layer, stated != layer {
                throw GeneratorError.schemaFile(path: displayName, message: "the schema says layer \(stated), the configuration \(layer)")
            }
            schema.layer = layer
        }
        let options = EmitOptions(namespace: namespace, fileCount: fileCount, schemaName: displayName,
                                  schemaSHA256: SHA256.hex(Array(schemaText.utf8)),
                                  schemaText: embedSchema ? schemaText : nil, specLinks: specLinks,
                                  outlineWriters: outlineWriters, unoptimizedColdCode: unoptimizedColdCode)
        return SwiftEmitter(schema: schema, options: options)
    }

    /// How a file on disk differs from what `render` produces (what `tlgen check` reports).
    public enum Drift: Sendable, Equatable, CustomStringConvertible {
        /// A file that should exist does not.
        case missing(String)
        /// A file's text differs.
        case changed(String)
        /// A file in an output directory that the configuration no longer produces.
        case extra(String)

        /// `missing: PATH`, `changed: PATH` or `extra: PATH`.
        public var description: String {
            switch self {
            case .missing(let path): "missing: \(path)"
            case .changed(let path): "differs: \(path)"
            case .extra(let path): "not generated (stale): \(path)"
            }
        }
    }

    /// Directories the configuration owns, relative to its directory.
    public static func outputDirectories(configurationPath: String) throws -> [String] {
        let configuration = try GeneratorConfiguration.load(from: configurationPath)
        return configuration.modules.map(\.directory) + configuration.modules.compactMap(\.server?.directory)
            + (configuration.replay.map { [$0.directory] } ?? [])
    }

    /// Writes the files, removing stale `.swift` files from the output directories. Returns how many changed.
    @discardableResult
    public static func write(_ files: [OutputFile], configurationPath: String) throws -> Int {
        let base = (configurationPath as NSString).deletingLastPathComponent
        let fm = FileManager.default
        let contents = Dictionary(files.map { ($0.path, $0.contents) }, uniquingKeysWith: { first, _ in first })
        let drifts = try compare(files, configurationPath: configurationPath)
        for drift in drifts {
            switch drift {
            case .extra(let path):
                try fm.removeItem(atPath: (base as NSString).appendingPathComponent(path))
            case .missing(let path), .changed(let path):
                let full = (base as NSString).appendingPathComponent(path)
                try fm.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Data((contents[path] ?? "").utf8).write(to: URL(fileURLWithPath: full))
            }
        }
        return drifts.count
    }

    /// What differs between `files` and what is on disk.
    public static func compare(_ files: [OutputFile], configurationPath: String) throws -> [Drift] {
        let base = (configurationPath as NSString).deletingLastPathComponent
        let fm = FileManager.default
        var drifts: [Drift] = []
        let expected = Set(files.map(\.path))
        for file in files {
            let full = (base as NSString).appendingPathComponent(file.path)
            guard let data = fm.contents(atPath: full) else {
                drifts.append(.missing(file.path))
                continue
            }
            if String(decoding: data, as: UTF8.self) != file.contents { drifts.append(.changed(file.path)) }
        }
        for directory in try outputDirectories(configurationPath: configurationPath) {
            let full = (base as NSString).appendingPathComponent(directory)
            for name in (try? fm.contentsOfDirectory(atPath: full)) ?? [] where name.hasSuffix(".swift") {
                let path = (directory as NSString).appendingPathComponent(name)
                if !expected.contains(path) { drifts.append(.extra(path)) }
            }
        }
        return drifts.sorted { $0.description < $1.description }
    }
}
