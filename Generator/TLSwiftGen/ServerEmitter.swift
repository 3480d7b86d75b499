// The server side of a schema: for every function a struct (`Api.functions.messages.SendMessage`) holding its
// arguments as typed properties, `#` words as read, parsed from the wire after the constructor ID and written back
// byte for byte as a constructor's payload is, with its result type and a writer for that result; and a registry
// from constructor ID to the struct. A module of its own, so that clients never compile it: the API module's clean
// build is unchanged (Benchmarks/BuildTime.md).

import TLSchema

extension SwiftEmitter {
    /// The registry's name in the namespace: `Api.requests`.
    static let requestRegistryName = "requests"

    /// A function's request type: its short name with the first letter upper-cased (`SendMessage`).
    func requestTypeName(_ f: Combinator) -> String {
        f.shortName.prefix(1).uppercased() + f.shortName.dropFirst()
    }

    /// The emitter as the server side needs it: inner calls (`query:!X`) held and read as typed requests.
    var serverSide: SwiftEmitter {
        var emitter = self
        emitter.genericFieldType = "any TLTypedRequest"
        emitter.genericReader = "try \(ns).\(Self.requestRegistryName).parse(&reader)"
        return emitter
    }

    /// The server module's files: `<Namespace>Requests.swift` with the registry, and the request types spread over
    /// the same number of files as the API's, by the same hash of the function's name.
    public func serverFiles(module: String) -> [GeneratedFile] {
        let emitter = serverSide
        var functionsByFile = [[Combinator]](repeating: [], count: options.fileCount)
        for function in schema.functions {
            functionsByFile[Self.fileIndex("functions." + function.name, of: options.fileCount)].append(function)
        }
        var files = [emitter.requestIndexFile(module: module)]
        for (index, functions) in functionsByFile.enumerated() where !functions.isEmpty {
            files.append(emitter.requestFile(index: index, functions: functions, module: module))
        }
        return files
    }

    func requestFileName(_ index: Int) -> String { "\(ns)Requests\(fileSuffix(index)).swift" }

    func requestIndexFile(module: String) -> GeneratedFile {
        let w = SwiftWriter()
        w.raw(header("The \(ns) requests a server reads: the registry by constructor ID.", imports: [module]))
        w.line("")
        let parts = (0..<options.fileCount).filter { index in
            schema.functions.contains { Self.fileIndex("functions." + $0.name, of: options.fileCount) == index }
        }.map { "requestEntries\(fileSuffix($0))" }
        w.block("extension \(ns)") {
            w.line("/// Every function of `\(options.schemaName)` as a typed request, by constructor ID.")
            w.line("public static let \(Self.requestRegistryName) = TLRequestRegistry(Array([")
            for chunk in stride(from: 0, to: parts.count, by: 6) {
                w.line("    " + parts[chunk..<min(chunk + 6, parts.count)].joined(separator: ", ") + ",")
            }
            w.line("].joined()))")
        }
        return GeneratedFile(name: "\(ns)Requests.swift", contents: w.text)
    }

    func requestFile(index: Int, functions: [Combinator], module: String) -> GeneratedFile {
        let w = SwiftWriter()
        w.raw(header("Requests of \(ns) as a server reads them, part \(index + 1) of \(options.fileCount).",
                     imports: [module]))
        for function in functions {
            w.line("")
            emitRequest(function, into: w)
        }
        w.line("")
        w.block("extension \(ns)") {
            w.line("static let requestEntries\(fileSuffix(index)): [(UInt32, any TLTypedRequest.Type)] = [")
            for f in functions { w.line("    (\(hexLiteral(f.id)), \(functionContainer(f)).\(requestTypeName(f)).self),") }
            w.line("]")
        }
        return GeneratedFile(name: requestFileName(index), contents: w.text)
    }

    /// The result's Swift type: the inner call's answer as written for a function generic in it.
    func requestResultType(_ f: Combinator) -> String {
        if case .generic = f.result { return "[UInt8]" }
        return swiftType(f.result)
    }

    func emitRequest(_ f: Combinator, into w: SwiftWriter) {
        let name = requestTypeName(f)
        let fields = emittedFields(f).filter(\.isStored)
        let words = storedFlagWords(f)
        w.block("extension \(functionContainer(f))") {
            w.line("/// `\(f.definition)`, as a server reads it.")
            specLink("method", f.name, into: w)
            emitPayload(name: name, combinator: f, into: w, declaration: "public struct \(name): TLTypedRequest") {
                w.line("public typealias Result = \(requestResultType(f))")
                w.line("public static var tlConstructorID: UInt32 { \(hexLiteral(f.id)) }")
                w.line("public static var tlFunctionName: String { \"\(f.name)\" }")
                w.line("")
                w.block("public static func parseFields(_ reader: inout BufferReader) throws(TLDecodingError) -> \(name)") {
                    let arguments = words.isEmpty
                        ? fields.map { "\($0.swiftName): \($0.local)" }
                        : words.map { "\(natLocal($0.name)) & \(knownBits(of: $0, in: f))" }
                            + fields.filter { !isPacked($0) }.map { "\($0.swiftName): \($0.local)" }
                    emitParseBody(f, returnStatement: "return \(name)(\(arguments.joined(separator: ", ")))", into: w)
                }
                w.line("")
                w.block("public func serialize(_ buffer: Buffer, _ boxed: Bool)") {
                    emitSerializeFields(f, id: f.id, payload: "self", into: w)
                }
                w.line("")
                w.block("public static func writeResult(_ result: Result, into buffer: Buffer)") {
                    if case .generic = f.result {
                        w.line("buffer.appendRaw(result)")
                    } else {
                        emitWrite(f.result, value: "result", into: w, depth: 0)
                    }
                }
                w.line("")
            }
        }
    }
}
