// The emitter: a checked `Schema` -> Swift source files, in the shape measured fastest to compile
// (Benchmarks/compile-time-shapes.md): one enum per boxed type with `final class` payloads (structs when small and
// fixed-size), throwing parse functions, each type parsing its own constructors, a registry of metatypes (no
// closures), flag tests on the raw integer, and types spread over a fixed number of files by a hash of their name.

import TLSchema

/// One output file: a name relative to the module's directory, and its full text.
public struct GeneratedFile: Sendable, Equatable {
    /// The file's name, relative to the module's directory.
    public var name: String
    /// The file's full text.
    public var contents: String
}

/// What the emitter needs besides the schema: the namespace, the file count, and the schema's name, digest and text.
public struct EmitOptions: Sendable {
    /// The Swift namespace every type lives in: `Api`, `MT`, `SecretApi8`.
    public var namespace: String
    /// How many files types and functions are spread over. A type's file depends only on its name and this number.
    public var fileCount: Int
    /// The schema's file name as shown in headers, e.g. `api.tl`.
    public var schemaName: String
    /// SHA-256 (hex) of the schema text, shown in headers so a reviewer can tell which schema produced a file.
    public var schemaSHA256: String
    /// The schema text, embedded as `<namespace>.schemaSource` when set (the `tl` inspector reads it).
    public var schemaText: String?
    /// Whether each type, constructor and function's doc comment links its page on core.telegram.org, which has
    /// pages for Telegram's API schema only.
    public var specLinks: Bool
    /// Whether request writers that are not generic are kept out of line (`@inline(never)`): otherwise the optimizer
    /// inlines each into its builder and compiles every request's serialization twice, which a schema of a thousand
    /// requests pays for in its release build (Benchmarks/BuildTime.md).
    public var outlineWriters: Bool
    /// Whether the code off the codec's path is compiled without optimization (`@_optimize(none)`): request
    /// builders that are not generic (not the writers they call) and the public payload initializers that compute
    /// flag words (decoding calls the internal one). Values are read and written as fast; building a request or a
    /// value by hand costs a little more, and the release build is shorter (Benchmarks/BuildTime.md).
    public var unoptimizedColdCode: Bool

    /// Options; `fileCount` is at least 1.
    public init(namespace: String, fileCount: Int, schemaName: String, schemaSHA256: String, schemaText: String? = nil,
                specLinks: Bool = false, outlineWriters: Bool = false, unoptimizedColdCode: Bool = false) {
        self.namespace = namespace
        self.fileCount = max(1, fileCount)
        self.schemaName = schemaName
        self.schemaSHA256 = schemaSHA256
        self.schemaText = schemaText
        self.specLinks = specLinks
        self.outlineWriters = outlineWriters
        self.unoptimizedColdCode = unoptimizedColdCode
    }
}

/// Renders a checked schema as Swift source files, deterministically (the same schema gives the same text).
public struct SwiftEmitter {
    let schema: Schema
    let options: EmitOptions
    let ns: String
    /// Constructor name -> the boxed type it belongs to.
    private var typeOfConstructor: [String: String] = [:]
    /// The Swift type of an inner call (`query:!X`), and the expression reading one: the API's builders take a
    /// call, the server side's requests hold a typed request.
    var genericFieldType = "any TLFunction"
    var genericReader: String?

    /// Types the runtime maps to Swift types instead of generating them.
    static let builtinTypes: Set<String> = ["Bool"]
    static let builtinConstructors: Set<String> = ["vector", "boolTrue", "boolFalse"]

    /// An emitter for `schema` with `options`.
    public init(schema: Schema, options: EmitOptions) {
        self.schema = schema
        self.options = options
        self.ns = options.namespace
        for type in schema.types {
            for constructor in type.constructors { typeOfConstructor[constructor] = type.name }
        }
    }

    var emittedTypes: [BoxedType] { schema.types.filter { !Self.builtinTypes.contains($0.name) } }

    /// A stable file index from a name: FNV-1a, so adding or removing a type never moves another one.
    static func fileIndex(_ name: String, of count: Int) -> Int {
        var hash: UInt32 = 0x811C_9DC5
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return Int(hash % UInt32(count))
    }

    func fileName(_ index: Int) -> String {
        options.fileCount == 1 ? "\(ns)Types.swift" : "\(ns)\(fileSuffix(index)).swift"
    }

    /// Every file of the module: the types spread over `fileCount` files by a hash of their name, and the namespace
    /// file with the layer, the registry and (optionally) the schema text.
    public func emit() -> [GeneratedFile] {
        var typesByFile = [[BoxedType]](repeating: [], count: options.fileCount)
        for type in emittedTypes { typesByFile[Self.fileIndex(type.name, of: options.fileCount)].append(type) }
        var functionsByFile = [[Combinator]](repeating: [], count: options.fileCount)
        for function in schema.functions {
            functionsByFile[Self.fileIndex("functions." + function.name, of: options.fileCount)].append(function)
        }
        var files = [namespaceFile()]
        for index in 0..<options.fileCount {
            files.append(contentFile(index: index, types: typesByFile[index], functions: functionsByFile[index]))
        }
        return files
    }

    // MARK: Files

    /// A file's header. Only the namespace file names the layer and the schema's SHA-256: were they in every
    /// header, a one-constructor layer bump would touch every file (and recompile all of them).
    func header(_ what: String, facts: Bool = false, imports: [String] = []) -> String {
        let source = facts
            ? "\(options.schemaName) (layer \(schema.layer.map(String.init) ?? "-"), SHA-256 \(options.schemaSHA256))"
            : "\(options.schemaName); the layer and the schema's SHA-256 are in \(ns).swift"
        return """
            // \(what)
            // Generated by tlgen from \(source).
            // Do not edit: change the schema or the generator and run `swift run tlgen`.

            \((["TLRuntime"] + imports).sorted().map { "import \($0)" }.joined(separator: "\n"))

            """
    }

    /// The Swift type of a call's triple whose response reads `result`.
    static func callType(_ result: String) -> String {
        "(FunctionDescription, Buffer, DeserializeFunctionResponse<\(result)>)"
    }

    var namespaces: [String] {
        Set(emittedTypes.compactMap(\.namespace)).sorted()
    }

    var functionNamespaces: [String] {
        Set(schema.functions.compactMap(\.namespace)).sorted()
    }

    func namespaceFile() -> GeneratedFile {
        let w = SwiftWriter()
        w.raw(header("The \(ns) namespace: sub-namespaces, the constructor registry and schema facts.", facts: true))
        w.line("/// Types and functions of `\(options.schemaName)`. Boxed types are enums (`\(ns).User`), requests are")
        w.line("/// `\(ns).functions.<namespace>.<name>(...)` returning `(FunctionDescription, Buffer, DeserializeFunctionResponse<Result>)`.")
        w.block("public enum \(ns)") {
            for namespace in namespaces { w.line("public enum \(namespace) {}") }
            w.line("")
            w.line("/// Functions (requests), by namespace.")
            w.block("public enum functions") {
                for namespace in functionNamespaces { w.line("public enum \(namespace) {}") }
            }
            w.line("")
            w.line("/// Parses any boxed constructor or function of this schema from its constructor ID.")
            w.line("public static let registry = TLRegistry(")
            w.line("    name: \"\(ns)\",")
            let lists = [("entries", "registryEntries"), ("functions", "functionEntries"), ("constructors", "constructorEntries")]
            for (label, prefix) in lists {
                let parts = (0..<options.fileCount).map { "\(prefix)\(fileSuffix($0))" }
                w.line("    \(label): Array([")
                for chunk in stride(from: 0, to: parts.count, by: 6) {
                    w.line("        " + parts[chunk..<min(chunk + 6, parts.count)].joined(separator: ", ") + ",")
                }
                w.line("    ].joined())\(label == lists.last?.0 ? ")" : ",")")
            }
            w.line("")
            w.line("/// Parses exactly one boxed value from `buffer`; trailing bytes are an error.")
            w.block("public static func parse(_ buffer: Buffer) throws(TLDecodingError) -> any TLObject") {
                w.line("try registry.parse(buffer)")
            }
        }
        // The facts that change with every layer live in an extension, not in the enum's body: the compiler tracks
        // a type body as one unit, and a new value there recompiled every file of the module (measured).
        w.line("")
        w.block("extension \(ns)") {
            if let layer = schema.layer {
                w.line("/// The schema layer these types were generated from.")
                w.line("public static let layer: Int32 = \(layer)")
            }
            w.line("/// SHA-256 of the schema text these types were generated from.")
            w.line("public static let schemaSHA256 = \"\(options.schemaSHA256)\"")
        }
        if let text = options.schemaText {
            var delimiter = "#"
            while text.contains("\"\"\"" + delimiter) { delimiter += "#" }
            // In a getter's body, which is not part of the module's interface: a new schema text then recompiles
            // this file only (as a top-level constant it recompiled much of the module, measured).
            w.line("")
            w.block("extension \(ns)") {
                w.line("/// The schema text, for tools that read values schema-first (`tl encode`).")
                w.block("public static var schemaSource: String") {
                    w.line("\(delimiter)\"\"\"")
                    // The closing delimiter at column 0: a multi-line literal's lines keep their own indentation.
                    w.raw((text.hasSuffix("\n") ? text : text + "\n") + "\"\"\"\(delimiter)\n")
                }
            }
        }
        return GeneratedFile(name: "\(ns).swift", contents: w.text)
    }

    func fileSuffix(_ index: Int) -> String {
        let digits = String(options.fileCount - 1).count
        let number = String(index)
        return String(repeating: "0", count: max(0, digits - number.count)) + number
    }

    func contentFile(index: Int, types: [BoxedType], functions: [Combinator]) -> GeneratedFile {
        let w = SwiftWriter()
        w.raw(header("Types and functions of \(ns), part \(index + 1) of \(options.fileCount)."))
        var entries: [(UInt32, String)] = []
        var functionEntries: [(UInt32, String)] = []
        var constructorEntries: [(UInt32, String)] = []
        for type in types {
            w.line("")
            emitType(type, into: w)
            for name in type.constructors {
                guard let c = schema.constructor(named: name) else { continue }
                entries.append((c.id, qualified(type.name)))
                constructorEntries.append((c.id, definitionLiteral(c)))
            }
        }
        for function in functions {
            w.line("")
            emitFunction(function, into: w)
            functionEntries.append((function.id, definitionLiteral(function)))
        }
        w.line("")
        w.block("extension \(ns)") {
            w.line("static let registryEntries\(fileSuffix(index)): [(UInt32, any TLRegistrable.Type)] = [")
            for (id, type) in entries { w.line("    (\(hexLiteral(id)), \(type).self),") }
            w.line("]")
            let definitionLists = [("functionEntries", functionEntries), ("constructorEntries", constructorEntries)]
            for (prefix, definitions) in definitionLists {
                w.line("static let \(prefix)\(fileSuffix(index)): [(UInt32, StaticString)] = [")
                for (id, definition) in definitions { w.line("    (\(hexLiteral(id)), \(definition)),") }
                w.line("]")
            }
        }
        return GeneratedFile(name: fileName(index), contents: w.text)
    }

    // MARK: Names

    func qualified(_ typeName: String) -> String { "\(ns).\(typeName)" }

    func functionContainer(_ function: Combinator) -> String {
        function.namespace.map { "\(ns).functions.\($0)" } ?? "\(ns).functions"
    }

    func caseName(_ constructor: Combinator) -> String { Naming.escaped(constructor.shortName) }

    func consName(_ constructor: Combinator) -> String { "Cons_\(constructor.shortName)" }

    // MARK: Fields

    struct EmittedField {
        var field: Field
        var swiftName: String
        /// The stored property's type (optional for conditional fields, `Bool` for `true` flags).
        var declaredType: String
        /// For a `true` flag sharing its bit with value fields (`bot:flags.14?true bot_info_version:flags.14?int`):
        /// the condition it is computed from. It is not stored, so no value can contradict the wire.
        var derivedFrom: String?
        var isTrueFlag: Bool { field.type == .trueFlag }
        var isStored: Bool { derivedFrom == nil }
        var isOptional: Bool { field.condition != nil && !isTrueFlag }
        var local: String { "_" + swiftName }
    }

    func emittedFields(_ c: Combinator) -> [EmittedField] {
        let valueFields = c.fields.filter { $0.type != .nat && $0.type != .trueFlag && $0.condition != nil }
        return c.fields.filter { $0.type != .nat }.map { field in
            let base = swiftType(field.type)
            let declared = field.type == .trueFlag ? "Bool" : (field.condition != nil ? optional(base) : base)
            var derived: String?
            if field.type == .trueFlag, let cond = field.condition {
                let sharing = valueFields.filter { $0.condition?.flagsField == cond.flagsField && $0.condition?.bit == cond.bit }
                if !sharing.isEmpty {
                    derived = sharing.map { "\(Naming.escaped(Naming.fieldName($0.name))) != nil" }.joined(separator: " && ")
                }
            }
            return EmittedField(field: field, swiftName: Naming.fieldName(field.name), declaredType: declared,
                                derivedFrom: derived)
        }
    }

    func optional(_ type: String) -> String {
        type.hasPrefix("any ") ? "(\(type))?" : type + "?"
    }

    func natFields(_ c: Combinator) -> [Field] { c.fields.filter { $0.type == .nat } }

    func swiftType(_ type: TLType) -> String {
        switch type {
        case .int, .nat: "Int32"
        case .long: "Int64"
        case .double: "Double"
        case .string: "String"
        case .bytes, .anyObject: "[UInt8]"
        case .int128: "TLInt128"
        case .int256: "TLInt256"
        case .bool, .trueFlag: "Bool"
        case .vector(let element, _): "[\(swiftType(element))]"
        case .boxed(let name): qualified(name)
        case .bare(let constructor): qualified(typeOfConstructor[constructor] ?? constructor)
        case .generic: genericFieldType
        }
    }

    /// Types with `TLParsable`/`TLSerializable` conformances in the runtime or the generated code.
    func isSelfParsing(_ type: TLType) -> Bool {
        switch type {
        case .int, .long, .double, .string, .int128, .int256, .bool, .boxed: true
        default: false
        }
    }

    func maskLiteral(_ bit: Int) -> String {
        bit == 31 ? "Int32(bitPattern: 0x8000_0000)" : "0x" + String(1 << bit, radix: 16)
    }

    /// The bits of `#` field `nat` that some field of `c` is guarded by, as a literal.
    func knownBits(of nat: Field, in c: Combinator) -> String {
        let mask = flagGroups(c).filter { $0.flags == nat.name }.reduce(UInt32(0)) { $0 | 1 << UInt32($1.bit) }
        let hex = "0x" + String(mask, radix: 16)
        return mask & 0x8000_0000 != 0 ? "Int32(bitPattern: \(hex))" : hex
    }

    /// A `#` bit and the stored fields it guards: `condition` is when it is set, `fields` how many share it.
    typealias FlagGroup = (flags: String, bit: Int, condition: String, fields: Int)

    /// The condition under which a conditional field is written and its bit set: every field sharing the bit is
    /// present (TL requires fields on one bit to travel together).
    func flagGroups(_ c: Combinator) -> [FlagGroup] {
        var order: [String] = []
        var groups: [String: (String, Int, [String])] = [:]
        for f in emittedFields(c) where f.isStored {
            guard let cond = f.field.condition else { continue }
            let key = "\(cond.flagsField).\(cond.bit)"
            let test = f.isTrueFlag ? Naming.escaped(f.swiftName) : "\(Naming.escaped(f.swiftName)) != nil"
            if groups[key] == nil {
                order.append(key)
                groups[key] = (cond.flagsField, cond.bit, [])
            }
            groups[key]?.2.append(test)
        }
        return order.compactMap { key in groups[key].map { ($0.0, $0.1, $0.2.joined(separator: " && "), $0.2.count) } }
    }

    /// `name: Type`, defaulting `true` flags to false and optional fields to nil.
    func parameterDeclaration(_ field: EmittedField) -> String {
        let label = Naming.escaped(field.swiftName)
        if field.isTrueFlag { return "\(label): Bool = false" }
        if field.isOptional { return "\(label): \(field.declaredType) = nil" }
        return "\(label): \(field.declaredType)"
    }

    // MARK: Constructor payloads

    /// The largest payload, in bytes of Swift layout, stored inline in its enum as a `struct` rather than allocated
    /// as a `final class`: one word, as large as the class reference it replaces, so an enum grows by a tag byte at
    /// most (`Api.Peer`: 9 bytes). Two words (`inputPeerUser`) decoded 1.5 % faster still but made writing the
    /// corpus's requests 8 % slower, with the `Input*` enums grown to 17 bytes (Benchmarks/HISTORY.md).
    static let inlinePayloadLimit = 8

    /// The Swift layout size of `c`'s stored fields when every one is a fixed-size number or flag (no strings, bytes,
    /// vectors or objects), each at its natural alignment in declaration order, an optional one with a tag byte; nil
    /// when a field is not.
    func fixedPayloadSize(_ c: Combinator) -> Int? {
        var size = 4 * storedFlagWords(c).count  // first, as `emitPayload` declares them
        for f in emittedFields(c) where f.isStored && !isPacked(f) {
            let layout: (size: Int, align: Int)
            switch f.field.type {
            case .trueFlag, .bool: layout = (1, 1)  // Bool? has a spare bit pattern: one byte too
            case .int: layout = (f.isOptional ? 5 : 4, 4)
            case .long, .double: layout = (f.isOptional ? 9 : 8, 8)
            case .int128: layout = (f.isOptional ? 17 : 16, 8)
            case .int256: layout = (f.isOptional ? 33 : 32, 8)
            default: return nil
            }
            size = (size + layout.align - 1) / layout.align * layout.align + layout.size
        }
        return size
    }

    /// Payloads of fixed-size fields within `inlinePayloadLimit` are structs: decoding `peerUser` then allocates
    /// nothing (by callgrind's call counts, ~1,800 of the 13,400 allocations of decoding the corpus's objects once
    /// were such payloads). All others stay `final class`es, which compile faster (Benchmarks/compile-time-shapes.md)
    /// and take one word in their enum.
    func payloadIsInline(_ c: Combinator) -> Bool {
        fixedPayloadSize(c).map { $0 <= Self.inlinePayloadLimit } ?? false
    }

    /// A conditional `true` flag is not a stored `Bool` but its bit of the stored `#` word (`isSelf`:
    /// `flags.10?true`).
    func isPacked(_ f: EmittedField) -> Bool { f.isTrueFlag && f.isStored && f.field.condition != nil }

    /// The `#` fields some field of `c` depends on: stored in the payload as they go on the wire.
    func storedFlagWords(_ c: Combinator) -> [Field] {
        let used = Set(flagGroups(c).map(\.flags))
        return natFields(c).filter { used.contains($0.name) }
    }

    /// `final class Cons_x: Sendable` (or `struct`, `payloadIsInline`): immutable fields, a memberwise init with
    /// defaults for optional fields and flags, and the `#` words, computed once by the init from which fields are
    /// set and stored, so that writing a value loads each word instead of testing every field (`true` flags read
    /// their bit of it).
    func emitPayload(name: String, combinator c: Combinator, into w: SwiftWriter, declaration: String? = nil,
                     members: (() -> Void)? = nil) {
        let fields = emittedFields(c).filter(\.isStored)
        let words = storedFlagWords(c)
        w.block(declaration ?? "public \(payloadIsInline(c) ? "struct" : "final class") \(name): Sendable") {
            members?()
            for nat in words {
                w.line("/// The `\(nat.name)` word: which optional fields and flags are set.")
                w.line("public let \(Naming.escaped(Naming.fieldName(nat.name))): Int32")
            }
            for f in fields where !isPacked(f) {
                w.line("public let \(Naming.escaped(f.swiftName)): \(f.declaredType)")
            }
            for f in fields where isPacked(f) {
                guard let cond = f.field.condition else { continue }
                let word = Naming.escaped(Naming.fieldName(cond.flagsField))
                w.line("public var \(Naming.escaped(f.swiftName)): Bool { tlFlagIsSet(\(word), \(maskLiteral(cond.bit))) }")
            }
            for f in emittedFields(c) {
                guard let condition = f.derivedFrom else { continue }
                w.line("/// `\(f.field.name)` shares its bit with value fields: set exactly when they are.")
                w.line("public var \(Naming.escaped(f.swiftName)): Bool { \(condition) }")
            }
            if !fields.isEmpty { w.line("") }
            let groups = flagGroups(c)
            // With flag words the readers call the internal init below, so this one is only for values built by hand.
            if options.unoptimizedColdCode && !words.isEmpty { w.line("@_optimize(none)") }
            w.block("public init(\(fields.map(parameterDeclaration).joined(separator: ", ")))") {
                for nat in words {
                    _ = emitFlagWord(nat, groups: groups, into: natLocal(nat.name), w)
                    w.line("self.\(Naming.escaped(Naming.fieldName(nat.name))) = \(natLocal(nat.name))")
                }
                for f in fields where !isPacked(f) {
                    w.line("self.\(Naming.escaped(f.swiftName)) = \(Naming.escaped(f.swiftName))")
                }
            }
            if !words.isEmpty {
                // Decoding passes the words as read, cut to this layer's bits: each bit is then set exactly when the
                // fields it guards were read, which is what the public init computes.
                let parameters = words.map { "_ \(natLocal($0.name)): Int32" }
                    + fields.filter { !isPacked($0) }.map { "\(Naming.escaped($0.swiftName)): \($0.declaredType)" }
                w.line("")
                w.block("init(\(parameters.joined(separator: ", ")))") {
                    for nat in words { w.line("self.\(Naming.escaped(Naming.fieldName(nat.name))) = \(natLocal(nat.name))") }
                    for f in fields where !isPacked(f) {
                        w.line("self.\(Naming.escaped(f.swiftName)) = \(Naming.escaped(f.swiftName))")
                    }
                }
            }
            for nat in natFields(c) where !words.contains(where: { $0.name == nat.name }) {
                w.line("")
                w.line("/// The `\(nat.name)` word: no field of this constructor depends on it.")
                w.line("public var \(Naming.escaped(Naming.fieldName(nat.name))): Int32 { 0 }")
            }
        }
    }

    /// `var local: Int32 = 0` and a bit set for each group of `groups` on `#` field `nat`; false, writing nothing,
    /// when no field uses that word.
    func emitFlagWord(_ nat: Field, groups: [FlagGroup], into local: String,
                      _ w: SwiftWriter) -> Bool {
        let mine = groups.filter { $0.flags == nat.name }
        guard !mine.isEmpty else { return false }
        w.line("var \(local): Int32 = 0")
        for g in mine { w.line("tlSetFlag(&\(local), \(maskLiteral(g.bit)), when: \(g.condition))") }
        return true
    }

    /// Statements writing the constructor ID and every field of `c`. With a payload `v` (an expression such as `c`),
    /// fields are its properties, `#` words its stored ones, and the ID is written when `boxed`; without one (a
    /// function's writer), fields are parameters of the same names, `#` words are computed here, and the ID is always
    /// written (a request is boxed). Runs of two or more fixed-size writes go through one `TLFieldWriter`: one
    /// capacity check and one count update per run instead of per field.
    func emitSerializeFields(_ c: Combinator, id: UInt32, payload v: String?, into w: SwiftWriter) {
        let groups = flagGroups(c)
        for nat in natFields(c) {
            if let v {
                w.line("let \(natLocal(nat.name)) = \(v).\(Naming.escaped(Naming.fieldName(nat.name)))")
            } else if !emitFlagWord(nat, groups: groups, into: natLocal(nat.name), w) {
                w.line("let \(natLocal(nat.name)): Int32 = 0")
            }
        }
        // Bits guarding more than one field: such a bit is set only when all of them are, so each is written under
        // the bit's test as well as its own.
        let sharedBits = Set(groups.filter { $0.fields > 1 }.map { "\($0.flags).\($0.bit)" })
        var run: [Field?] = [nil]  // nil: the constructor ID
        var runs = 0
        func flushRun() {
            defer { run = [] }
            guard run.count >= 2 else {
                for item in run { emitField(item, id: id, payload: v, writer: nil, sharedBits: sharedBits, into: w) }
                return
            }
            runs += 1
            let writer = "w\(runs)"
            // 4 bytes for the constructor ID (nil); only fixed-size fields enter a run.
            let size = run.reduce(0) { total, item in total + (item.map { fixedWrite($0.type)?.size ?? 0 } ?? 4) }
            w.line("var \(writer) = buffer.fieldWriter(reserving: \(size))")
            for item in run { emitField(item, id: id, payload: v, writer: writer, sharedBits: sharedBits, into: w) }
            w.line("buffer.commit(\(writer))")
        }
        for field in c.fields where field.type != .trueFlag {
            if fixedWrite(field.type) != nil {
                run.append(field)
            } else {
                flushRun()
                emitField(field, id: id, payload: v, writer: nil, sharedBits: sharedBits, into: w)
            }
        }
        flushRun()
    }

    /// The bytes a field of `type` always takes on the wire and the `TLFieldWriter` method storing it, or nil when
    /// its size depends on its value.
    func fixedWrite(_ type: TLType) -> (size: Int, method: String)? {
        switch type {
        case .int, .nat: (4, "int32")
        case .bool: (4, "bool")
        case .long: (8, "int64")
        case .double: (8, "double")
        case .int128: (16, "int128")
        case .int256: (32, "int256")
        default: nil
        }
    }

    /// One field (nil: the constructor ID) written to `buffer`, or through the field writer named `writer`; `v` as
    /// in `emitSerializeFields`.
    func emitField(_ field: Field?, id: UInt32, payload v: String?, writer: String?, sharedBits: Set<String>,
                   into w: SwiftWriter) {
        guard let field else {
            let store = writer.map { "\($0).uint32(\(hexLiteral(id)))" } ?? "buffer.appendUInt32(\(hexLiteral(id)))"
            w.line(v == nil ? store : "if boxed { \(store) }")
            return
        }
        func write(_ value: String) {
            if let writer, let method = fixedWrite(field.type)?.method {
                w.line("\(writer).\(method)(\(value))")
            } else {
                emitWrite(field.type, value: value, into: w, depth: 0)
            }
        }
        if field.type == .nat {
            write(natLocal(field.name))
            return
        }
        let name = Naming.escaped(Naming.fieldName(field.name))
        if v == nil, case .generic = field.type {
            w.line("buffer.append(\(name).1)")  // the inner call's triple: its request as written
            return
        }
        let access = v.map { "\($0).\(name)" } ?? name
        guard let cond = field.condition else { return write(access) }
        if !sharedBits.contains("\(cond.flagsField).\(cond.bit)") {
            // The field's bit is its own: set exactly when the field is, so the optional alone decides.
            switch field.type {
            case .boxed, .bare, .generic: write("\(access)?")
            default: w.block("if let value = \(access)") { write("value") }
            }
            return
        }
        let flagTest = "tlFlagIsSet(\(natLocal(cond.flagsField)), \(maskLiteral(cond.bit)))"
        switch field.type {
        case .boxed, .bare, .generic:
            // Optional chaining borrows the object where it lies; `if let` copied it out of the payload, a retain
            // and a release per nested object (the optimizer did not remove them).
            w.block("if \(flagTest)") { write("\(access)?") }
        default:
            w.block("if \(flagTest), let value = \(access)") { write("value") }
        }
    }

    func natLocal(_ name: String) -> String { "_" + Naming.fieldName(name) }

    func emitWrite(_ type: TLType, value: String, into w: SwiftWriter, depth: Int) {
        switch type {
        case .int, .nat: w.line("buffer.appendInt32(\(value))")
        case .long: w.line("buffer.appendInt64(\(value))")
        case .double: w.line("buffer.appendDouble(\(value))")
        case .string: w.line("buffer.appendTLString(\(value))")
        case .bytes: w.line("buffer.appendTLBytes(\(value))")
        case .int128: w.line("buffer.appendInt128(\(value))")
        case .int256: w.line("buffer.appendInt256(\(value))")
        case .bool: w.line("buffer.appendBool(\(value))")
        case .trueFlag: break
        case .boxed, .generic: w.line("\(value).serialize(buffer, true)")
        case .bare: w.line("\(value).serialize(buffer, false)")
        case .anyObject: w.line("buffer.appendRaw(\(value))")
        case .vector(let element, let boxed):
            switch element {
            case .bytes:
                w.line("buffer.appendBytesVector(\(value), boxed: \(boxed))")
            case _ where isSelfParsing(element):
                w.line("buffer.appendVector(\(value), boxed: \(boxed))")
            case .bare:
                w.line("buffer.appendVector(\(value), boxed: \(boxed), boxedElements: false)")
            default:
                let item = "item\(depth)"
                w.line("buffer.appendVectorHeader(count: \(value).count, boxed: \(boxed))")
                w.block("for \(item) in \(value)") { emitWrite(element, value: item, into: w, depth: depth + 1) }
            }
        }
    }

    /// Statements reading every field of `c` into locals, then `returnStatement` building the value.
    /// Errors are annotated with the constructor and the field being read.
    func emitParseBody(_ c: Combinator, returnStatement: String, into w: SwiftWriter) {
        if c.fields.isEmpty {
            w.line(returnStatement)
            return
        }
        let fieldList = c.fields.map(\.name).joined(separator: ",")
        let derived = Set(emittedFields(c).filter { !$0.isStored }.map(\.field.name))
        // A `true` flag reads nothing: one with a bit is that bit of its `#` word, which the payload keeps.
        let reads = { (field: Field) in !derived.contains(field.name) && field.type != .trueFlag }
        // Only a read can throw, so the index that names a field in an error is set before each read, from the
        // second field on (the first's, 0, is the initial value).
        let counts = c.fields.dropFirst().contains(where: reads)
        if counts { w.line("var field = 0") }
        w.block("do") {
            var previous: Field?
            let usedNats = Set(c.fields.filter { !derived.contains($0.name) }.compactMap { $0.condition?.flagsField })
            for (index, field) in c.fields.enumerated() {
                if derived.contains(field.name) || (field.type == .trueFlag && field.condition != nil) { continue }
                let local = field.type == .nat ? natLocal(field.name) : "_" + Naming.fieldName(field.name)
                if field.type == .trueFlag {
                    w.line("let \(local) = true")
                    previous = field
                    continue
                }
                if index > 0 && counts { w.line("field = \(index)") }
                if field.type == .nat && !usedNats.contains(field.name) {
                    w.line("_ = try reader.readInt32() // `\(field.name)`: no field of this constructor depends on it")
                    previous = field
                    continue
                }
                if let cond = field.condition {
                    w.line("var \(local): \(optional(swiftType(field.type))) = nil")
                    w.block("if tlFlagIsSet(\(natLocal(cond.flagsField)), \(maskLiteral(cond.bit)))") {
                        emitRead(field.type, into: local, declare: false, previous: previous, w: w, depth: 0)
                    }
                } else {
                    emitRead(field.type, into: local, declare: true, previous: previous, w: w, depth: 0)
                }
                previous = field
            }
            w.line(returnStatement)
        }
        w.block("catch") {
            w.line("throw error.inside(constructor: \"\(c.name)\", fields: \"\(fieldList)\", index: \(counts ? "field" : "0"))")
        }
    }

    func emitRead(_ type: TLType, into target: String, declare: Bool, previous: Field?, w: SwiftWriter, depth: Int) {
        let assign = declare ? "let \(target) = " : "\(target) = "
        switch type {
        case .int, .nat: w.line(assign + "try reader.readInt32()")
        case .long: w.line(assign + "try reader.readInt64()")
        case .double: w.line(assign + "try reader.readDouble()")
        case .string: w.line(assign + "try reader.readTLString()")
        case .bytes: w.line(assign + "try reader.readTLBytes()")
        case .int128: w.line(assign + "try reader.readInt128()")
        case .int256: w.line(assign + "try reader.readInt256()")
        case .bool: w.line(assign + "try reader.readBool()")
        case .trueFlag: w.line(assign + "true")
        case .boxed(let name): w.line(assign + "try \(qualified(name)).parse(&reader)")
        case .bare(let constructor):
            w.line(assign + "try \(qualified(typeOfConstructor[constructor] ?? constructor)).parse_\(constructor.split(separator: ".").last.map(String.init) ?? constructor)(&reader)")
        case .generic: w.line(assign + (genericReader ?? "try \(ns).parseFunction(&reader)"))
        case .anyObject:
            // MTProto's `message`: `bytes:int body:Object`, the body is exactly `bytes` long (mtproto/description,
            // "Message"). Elsewhere (`rpc_result.result`) the object runs to the end of its enclosing message.
            if let previous, previous.name == "bytes", previous.type == .int {
                w.line(assign + "try reader.readRaw(count: Int(_bytes))")
            } else {
                w.line(assign + "reader.readRemaining()")
            }
        case .vector(let element, let boxed):
            switch element {
            case .bytes:
                w.line(assign + "try reader.readBytesVector(boxed: \(boxed))")
            case _ where isSelfParsing(element):
                w.line(assign + "try reader.readVector(boxed: \(boxed), of: \(swiftType(element)).self)")
            default:
                let count = "\(target)Count", items = "\(target)Items", item = "\(target)Item"
                w.line("let \(count) = try reader.readVectorCount(boxed: \(boxed))")
                w.line("var \(items): \(swiftType(type)) = []")
                w.line("\(items).reserveCapacity(\(count))")
                w.block("for _ in 0..<\(count)") {
                    emitRead(element, into: item, declare: true, previous: nil, w: w, depth: depth + 1)
                    w.line("\(items).append(\(item))")
                }
                w.line("\(assign)\(items)")
            }
        }
    }

    /// Whether the registry can describe these constructors' values from their definitions (`TLSchemaDescribed`),
    /// which is all of them but those holding MTProto's `Object`: its extent is not in the definition (`message`
    /// gives it in another field), so those types describe themselves.
    func describedBySchema(_ constructors: [Combinator]) -> Bool {
        func opaque(_ type: TLType) -> Bool {
            switch type {
            case .anyObject, .generic: true
            case .vector(let element, _): opaque(element)
            default: false
            }
        }
        return !constructors.contains { $0.fields.contains { opaque($0.type) } }
    }

    /// Statements building the `descriptionFields()` list, in schema order, absent fields left out.
    func emitDescription(_ c: Combinator, payload v: String, into w: SwiftWriter) {
        if c.fields.isEmpty {
            w.line("return (\"\(c.name)\", [])")
            return
        }
        for nat in natFields(c) { w.line("let \(natLocal(nat.name)) = \(v).\(Naming.escaped(Naming.fieldName(nat.name)))") }
        w.line("var fields = TLFieldList(capacity: \(c.fields.count))")
        for field in c.fields {
            if field.type == .nat {
                w.line("fields.flags(\"\(field.name)\", \(natLocal(field.name)))")
                continue
            }
            let access = "\(v).\(Naming.escaped(Naming.fieldName(field.name)))"
            if field.type == .trueFlag {
                w.line("fields.trueFlag(\"\(field.name)\", \(access))")
            } else if let cond = field.condition {
                w.block("if tlFlagIsSet(\(natLocal(cond.flagsField)), \(maskLiteral(cond.bit))), let value = \(access)") {
                    w.line(describeCall(field.type, name: field.name, value: "value"))
                }
            } else {
                w.line(describeCall(field.type, name: field.name, value: access))
            }
        }
        w.line("return (\"\(c.name)\", fields.fields)")
    }

    /// One `TLFieldList` call for a field.
    func describeCall(_ type: TLType, name: String, value: String) -> String {
        let method: String
        switch type {
        case .int, .nat: method = "int"
        case .long: method = "long"
        case .double: method = "double"
        case .string: method = "string"
        case .bytes: method = "bytes"
        case .int128: method = "int128"
        case .int256: method = "int256"
        case .bool: method = "bool"
        case .trueFlag: method = "trueFlag"
        case .boxed, .bare, .generic: method = "object"
        case .anyObject: method = "raw"
        case .vector(let element, _):
            switch element {
            case .int: method = "ints"
            case .long: method = "longs"
            case .double: method = "doubles"
            case .string: method = "strings"
            case .bytes: method = "bytesList"
            case .int128: method = "int128s"
            case .int256: method = "int256s"
            case .bool: method = "bools"
            case .boxed, .bare: method = "objects"
            default: return "fields.value(\"\(name)\", \(valueExpression(type, value, depth: 0)))"
            }
        }
        return "fields.\(method)(\"\(name)\", \(value))"
    }

    /// A `TLValue` expression, for shapes `TLFieldList` has no method for (vectors of vectors).
    func valueExpression(_ type: TLType, _ v: String, depth: Int) -> String {
        switch type {
        case .int, .nat: "TLValue.int(\(v))"
        case .long: "TLValue.long(\(v))"
        case .double: "TLValue.double(\(v))"
        case .string: "TLValue.string(\(v))"
        case .bytes: "TLValue.bytes(\(v))"
        case .int128: "TLValue.int128(\(v))"
        case .int256: "TLValue.int256(\(v))"
        case .bool: "TLValue.bool(\(v))"
        case .trueFlag: "TLValue.trueFlag"
        case .boxed, .bare, .generic: "TLValue.object(\(v))"
        case .anyObject: "TLValue.raw(\(v))"
        case .vector(let element, _):
            "TLValue.vector(\(v).map { (e\(depth): \(swiftType(element))) -> TLValue in \(valueExpression(element, "e\(depth)", depth: depth + 1)) })"
        }
    }

    // MARK: Boxed types

    func emitType(_ type: BoxedType, into w: SwiftWriter) {
        let constructors = type.constructors.compactMap { schema.constructor(named: $0) }
            .filter { !Self.builtinConstructors.contains($0.name) }
        let container = type.namespace.map { "\(ns).\($0)" } ?? ns
        let swiftName = type.shortName
        w.block("extension \(container)") {
            w.line("/// TL type `\(type.name)`\(type.isRecursive ? " (recursive)" : ""). Constructors:")
            for c in constructors { w.line("/// - `\(c.definition)`") }
            specLink("type", type.name, into: w)
            let schemaDescribed = describedBySchema(constructors)
            // `CustomStringConvertible` here, witnessed by `TLObject.description`, not inherited by `TLObject`: see there.
            let base = schemaDescribed ? "TLSchemaDescribed" : "TLRegistrable"
            w.block("public enum \(swiftName): \(base), TLParsable, CustomStringConvertible") {
                for c in constructors {
                    w.line("/// `\(c.definition)`")
                    specLink("constructor", c.name, into: w)
                    w.line(emittedFields(c).isEmpty ? "case \(caseName(c))" : "case \(caseName(c))(\(consName(c)))")
                }
                for c in constructors where !emittedFields(c).isEmpty {
                    w.line("")
                    w.line("/// `\(c.definition)`")
                    specLink("constructor", c.name, into: w)
                    emitPayload(name: consName(c), combinator: c, into: w)
                }
                w.line("")
                w.block("public func serialize(_ buffer: Buffer, _ boxed: Bool)") {
                    w.block("switch self") {
                        for c in constructors {
                            let hasPayload = !emittedFields(c).isEmpty
                            let pattern = hasPayload ? "case .\(caseName(c))(let c):" : "case .\(caseName(c)):"
                            w.line(pattern)
                            w.indented {
                                if hasPayload {
                                    emitSerializeFields(c, id: c.id, payload: "c", into: w)
                                } else {
                                    w.line("if boxed { buffer.appendUInt32(\(hexLiteral(c.id))) }")
                                }
                            }
                        }
                    }
                }
                w.line("")
                w.line("public static var tlTypeName: String { \"\(type.name)\" }")
                if schemaDescribed { w.line("public static var tlRegistry: TLRegistry { \(ns).registry }") }
                w.line("")
                w.block("public static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> \(swiftName)") {
                    w.line("let id = try reader.readUInt32()")
                    w.line("return try parse(&reader, constructor: id)")
                }
                w.line("")
                w.block("public static func parse(_ reader: inout BufferReader, constructor id: UInt32) throws(TLDecodingError) -> \(swiftName)") {
                    w.line("try reader.enterObject()")
                    w.line("defer { reader.leaveObject() }")
                    w.block("switch id") {
                        for c in constructors { w.line("case \(hexLiteral(c.id)): return try parse_\(c.shortName)(&reader)") }
                        w.line("default: throw reader.unknownConstructor(id, type: \"\(type.name)\")")
                    }
                }
                for c in constructors {
                    w.line("")
                    w.block("static func parse_\(c.shortName)(_ reader: inout BufferReader) throws(TLDecodingError) -> \(swiftName)") {
                        let fields = emittedFields(c).filter(\.isStored)
                        let words = storedFlagWords(c)
                        let arguments = words.isEmpty
                            ? fields.map { "\($0.swiftName): \($0.local)" }
                            : words.map { "\(natLocal($0.name)) & \(knownBits(of: $0, in: c))" }
                                + fields.filter { !isPacked($0) }.map { "\($0.swiftName): \($0.local)" }
                        let ret = fields.isEmpty ? "return .\(caseName(c))"
                            : "return .\(caseName(c))(\(consName(c))(\(arguments.joined(separator: ", "))))"
                        emitParseBody(c, returnStatement: ret, into: w)
                    }
                }
                if schemaDescribed { return }
                w.line("")
                w.block("public func descriptionFields() -> (String, [(String, TLValue)])") {
                    w.block("switch self") {
                        for c in constructors {
                            let hasPayload = !emittedFields(c).isEmpty
                            w.line(hasPayload ? "case .\(caseName(c))(let c):" : "case .\(caseName(c)):")
                            w.indented { emitDescription(c, payload: "c", into: w) }
                        }
                    }
                }
            }
        }
    }

    /// A doc comment's line linking a definition's page: `https://core.telegram.org/constructor/messages.messages`,
    /// `/type/messages.Messages`, `/method/messages.getHistory` (the site names pages by the TL name, namespace
    /// included). Nothing unless the schema's options ask for links.
    func specLink(_ kind: String, _ name: String, into w: SwiftWriter) {
        guard options.specLinks else { return }
        w.line("///")
        w.line("/// <https://core.telegram.org/\(kind)/\(name)>")
    }

    // MARK: Functions

    /// The definition as a string literal: the registry keeps it, to read a request back (a server, a log line) and
    /// to describe a constructor's value.
    func definitionLiteral(_ f: Combinator) -> String {
        "\"" + f.definition + "\""
    }

    /// A request builder with typed parameters, in Telegram-iOS's shape, and the writer it calls. The writer puts the
    /// request on the wire directly, as a constructor's `serialize` does; the triple's `FunctionDescription` reads the
    /// written bytes back only when a log asks for them.
    func emitFunction(_ f: Combinator, into w: SwiftWriter) {
        let fields = emittedFields(f).filter(\.isStored)
        let generic = f.generics.first
        var parameters: [String] = []
        var writerParameters: [String] = []
        var responseSource: String?
        for field in fields {
            let label = Naming.escaped(field.swiftName)
            if case .generic = field.field.type, let generic {
                let triple = "\(label): \(Self.callType(generic))"
                parameters.append(triple)
                writerParameters.append(triple)
                responseSource = "\(label).2"
            } else {
                // The writer takes the same defaults, so a layer that adds an optional field breaks neither.
                parameters.append(parameterDeclaration(field))
                writerParameters.append(parameterDeclaration(field))
            }
        }
        let resultType: String
        let response: String
        if let generic, case .generic = f.result {
            resultType = generic
            response = responseSource ?? "DeserializeFunctionResponse<\(generic)>({ _ in throw TLDecodingError(.invalidValue(\"no result type\"), offset: 0) })"
        } else {
            resultType = swiftType(f.result)
            response = responseExpression(f.result)
        }
        let name = Naming.escaped(f.shortName)
        let genericClause = generic.map { "<\($0)>" } ?? ""
        let arguments = writerArguments(fields).joined(separator: ", ")
        // The call's target (`FunctionDescription.target`): its `peer` or `channel` argument, when that is an object.
        let target = fields.first { field in
            guard field.swiftName == "peer" || field.swiftName == "channel", case .boxed = field.field.type else { return false }
            return true
        }.map { ", target: \(Naming.escaped($0.swiftName))" } ?? ""
        w.block("extension \(functionContainer(f))") {
            w.line("/// `\(f.definition)`")
            specLink("method", f.name, into: w)
            if options.unoptimizedColdCode && generic == nil { w.line("@_optimize(none)") }
            w.block("public static func \(name)\(genericClause)(\(parameters.joined(separator: ", "))) -> \(Self.callType(resultType))") {
                w.line("let buffer = Buffer()")
                w.line("\(name)(\(arguments))")
                w.line("return (FunctionDescription(serialized: buffer, registry: \(ns).registry\(target)), buffer, \(response))")
            }
            w.line("")
            w.line("/// Writes `\(f.name)` boxed at the end of `buffer`.")
            // Inlinable when generic over the inner call's result (`query:!X`), which the writer never touches:
            // called unspecialized from another module, each call built `DeserializeFunctionResponse<X>`'s metadata
            // and copied the triple (~300 instructions, for a write that copies the query's bytes).
            // Writers stay optimized under `unoptimizedColdCode`: unoptimized, writing the corpus's requests took 83 %
            // more instructions (callgrind, Benchmarks/BuildTime.md) for a twentieth of the release build.
            if generic != nil { w.line("@inlinable") } else if options.outlineWriters { w.line("@inline(never)") }
            w.block("public static func \(name)\(genericClause)(\((["into buffer: Buffer"] + writerParameters).joined(separator: ", ")))") {
                emitSerializeFields(f, id: f.id, payload: nil, into: w)
            }
        }
    }

    /// `into: buffer, peer: peer, …`: a call of a function's writer passing each field's local of the same name.
    func writerArguments(_ fields: [EmittedField]) -> [String] {
        // Argument labels need backticks only for these three keywords; the compiler warns about any other.
        let label = { (name: String) in ["inout", "var", "let"].contains(name) ? "`\(name)`" : name }
        return ["into: buffer"] + fields.map { "\(label($0.swiftName)): \(Naming.escaped($0.swiftName))" }
    }

    func responseExpression(_ type: TLType) -> String {
        switch type {
        case .vector(let element, true) where element == .bytes:
            return "DeserializeFunctionResponse<[[UInt8]]>.bytesVector()"
        case .vector(let element, true) where isSelfParsing(element):
            return "DeserializeFunctionResponse<\(swiftType(type))>.vector(of: \(swiftType(element)).self)"
        case _ where isSelfParsing(type):
            return "DeserializeFunctionResponse(\(swiftType(type)).self)"
        default:
            let w = SwiftWriter()
            w.line("DeserializeFunctionResponse { (reader: inout BufferReader) throws(TLDecodingError) -> \(swiftType(type)) in")
            w.indented {
                emitRead(type, into: "result", declare: true, previous: nil, w: w, depth: 0)
                w.line("return result")
            }
            w.line("}")
            return w.text.trimmingTrailingNewline
        }
    }
}

func hexLiteral(_ id: UInt32) -> String {
    let digits = String(id, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}
