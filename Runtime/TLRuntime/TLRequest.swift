// Requests (TL functions) as one runtime type, driven by the function's TL definition.
//
// Generated code writes requests itself (`Api.functions.messages.getHistory(into:…)`); a `TLRequest` is a request
// read back: by a server from the wire, by `FunctionDescription` for a log line, by `tl`. This file reads it, writes
// it again (a proxy, `tl encode`) and describes it. One interpreter instead of a generated type per function keeps
// the generated API cheap to compile (813 request classes were ~40% of a clean debug build of layer 229); each
// definition is parsed only once per process.

import Synchronization

/// A function call: which function (its TL definition) and its arguments.
public struct TLRequest: TLFunction, CustomStringConvertible {
    /// The TL definition, e.g. `messages.getHistory#4423e6c5 peer:InputPeer … hash:long = messages.Messages;`.
    public let definition: StaticString
    /// Present arguments in schema order, by TL name; `#` words are derived, so they are not listed.
    public let arguments: [(String, TLValue)]
    /// `definition` parsed (once per process, shared by every request of that function).
    let signature: TLSignature

    /// A request built by hand. The arguments must follow `definition`: each required field present with the value
    /// kind its type needs, optional fields present or absent, `true` flags as `.trueFlag`.
    public init(definition: StaticString, arguments: [(String, TLValue)]) {
        self.init(definition: definition, arguments: arguments, signature: TLSignature.cached(definition))
    }

    init(definition: StaticString, arguments: [(String, TLValue)], signature: TLSignature) {
        self.definition = definition
        self.arguments = arguments
        self.signature = signature
    }

    /// The function's TL name with its namespace.
    public var name: String { TLSignature.name(of: definition) }

    /// The function's constructor ID (`0x1fb33026` for `help.getNearestDc`), without making a `String`.
    public var constructorID: UInt32 { signature.id }

    /// The argument named `name` (TL spelling), if present.
    public subscript(_ name: String) -> TLValue? {
        arguments.first { $0.0 == name }?.1
    }

    /// One field as the wire carries it for these arguments.
    enum WrittenField {
        case flags(Int32)
        case trueFlag
        case value(TLValue, TLValueKind)
    }

    /// Walks the fields the wire carries, in order: `#` words (derived from which arguments are present), set
    /// `true` flags, and present values; fields whose bit is clear are skipped.
    func forEachWrittenField(_ signature: TLSignature, _ body: (TLSignature.Field, WrittenField) -> Void) {
        let flags = signature.flagWords(present: arguments)
        var next = 0
        // Each field used where it lies (`for field in signature.fields` copied every `Field`: see `readFields`).
        signature.fields.withUnsafeBufferPointer { fields in
            for at in fields.indices {
                if fields[at].code == .nat {
                    body(fields[at], .flags(flags[fields[at].name] ?? 0))
                    continue
                }
                if let condition = fields[at].condition, !tlFlagIsSet(flags[condition.flags] ?? 0, condition.mask) {
                    continue
                }
                if fields[at].code == .trueFlag {
                    body(fields[at], .trueFlag)
                    continue
                }
                // Arguments are in schema order, so one forward scan finds each.
                guard let index = arguments[next...].firstIndex(where: { $0.0 == fields[at].name }) else { continue }
                next = index + 1
                body(fields[at], .value(arguments[index].1, fields[at].kind))
            }
        }
    }

    // MARK: Writing

    /// Writes the request back as it was read, with its function ID first when `boxed`.
    public func serialize(_ buffer: Buffer, _ boxed: Bool) {
        if boxed { buffer.appendUInt32(signature.id) }
        let start = buffer.count
        if signature.oneFieldPerBit {
            if writeInOnePass(into: buffer) { return }
            buffer._rewind(to: start)  // arguments out of schema order: the general walk below copes
        } else if signature.sharedBitPlan != nil {
            if writeInTwoPasses(into: buffer) { return }
            buffer._rewind(to: start)
        }
        writeByWalk(into: buffer)
    }

    /// The general writer: flag words from which arguments are present (by name), then the fields they select.
    func writeByWalk(into buffer: Buffer) {
        forEachWrittenField(signature) { _, written in
            switch written {
            case .flags(let word): buffer.appendInt32(word)
            case .trueFlag: break
            case .value(let value, let kind): Self.write(value, as: kind, into: buffer)
            }
        }
    }

    /// The fast path of `serialize`, for signatures where each flag bit guards one field: a single walk of fields
    /// and arguments together, with each `#` word written as a placeholder and filled in at the end from the fields
    /// that turned out present. False, with the buffer partly written, when an argument is out of schema order.
    func writeInOnePass(into buffer: Buffer) -> Bool {
        // Telegram's schemas have at most two `#` words per function (`oneFieldPerBit` is false beyond that).
        var words: (Int32, Int32) = (0, 0)
        var wordOffsets: (Int, Int) = (-1, -1)
        var next = 0
        let count = arguments.count
        return signature.fields.withUnsafeBufferPointer { fields in
            arguments.withUnsafeBufferPointer { arguments in
                for index in fields.indices {
                    let code = fields[index].code
                    if code == .nat {
                        if wordOffsets.0 < 0 { wordOffsets.0 = buffer.count } else { wordOffsets.1 = buffer.count }
                        buffer.appendInt32(0)
                        continue
                    }
                    guard next < count, arguments[next].0 == fields[index].name else {
                        if fields[index].wordIndex < 0 { return false }  // a required field that is not next
                        continue
                    }
                    let mask = fields[index].mask
                    switch fields[index].wordIndex {
                    case 0: words.0 |= mask
                    case 1: words.1 |= mask
                    default: break
                    }
                    Self.write(arguments[next].1, fields, index, into: buffer)
                    next &+= 1
                }
                guard next == count else { return false }
                if wordOffsets.0 >= 0 { buffer._storeInt32(words.0, at: wordOffsets.0) }
                if wordOffsets.1 >= 0 { buffer._storeInt32(words.1, at: wordOffsets.1) }
                return true
            }
        }
    }

    /// The fast path for signatures with a bit shared by several fields (`views:flags.10?int forwards:flags.10?int`),
    /// where a bit is set only when every value on it is present, so the words are known only after all arguments
    /// are matched: a first walk finds which fields are present (by index), the second writes. False, with the buffer
    /// partly written, when an argument is out of schema order or a required one is missing.
    func writeInTwoPasses(into buffer: Buffer) -> Bool {
        guard let plan = signature.sharedBitPlan else { return false }
        let count = arguments.count
        return signature.fields.withUnsafeBufferPointer { fields in
            arguments.withUnsafeBufferPointer { arguments in
                var present: UInt64 = 0
                var next = 0
                for index in fields.indices where fields[index].code != .nat {
                    if next < count, arguments[next].0 == fields[index].name {
                        present |= 1 << UInt64(index)
                        next &+= 1
                    } else if fields[index].wordIndex < 0 {
                        return false
                    }
                }
                guard next == count else { return false }
                var words: (Int32, Int32) = (0, 0)
                for group in plan {
                    let isSet = group.values != 0 ? present & group.values == group.values : present & group.trueFlags != 0
                    guard isSet else { continue }
                    if group.word == 0 { words.0 |= group.mask } else { words.1 |= group.mask }
                }
                var wordsWritten = 0
                next = 0
                for index in fields.indices {
                    if fields[index].code == .nat {
                        buffer.appendInt32(wordsWritten == 0 ? words.0 : words.1)
                        wordsWritten &+= 1
                        continue
                    }
                    guard present & (1 << UInt64(index)) != 0 else { continue }
                    defer { next &+= 1 }
                    let word = fields[index].wordIndex
                    if word >= 0, (word == 0 ? words.0 : words.1) & fields[index].mask == 0 { continue }
                    Self.write(arguments[next].1, fields, index, into: buffer)
                }
                return true
            }
        }
    }

    /// One present argument of `fields[index]` (a `true` flag writes nothing). The field is read in place: a copy
    /// of `Field` retains its strings and kind (measured: +49 % instructions for the corpus's requests, callgrind).
    @inline(__always)
    static func write(_ value: TLValue, _ fields: UnsafeBufferPointer<TLSignature.Field>, _ index: Int,
                      into buffer: Buffer) {
        switch (fields[index].code, value) {
        case (.trueFlag, _): break
        case (.int, .int(let v)): buffer.appendInt32(v)
        case (.long, .long(let v)): buffer.appendInt64(v)
        case (.string, .string(let v)): buffer.appendTLString(v)
        case (.bytes, .bytes(let v)): buffer.appendTLBytes(v)
        case (.object, .object(let object)): object.serialize(buffer, true)
        case (_, let value): write(value, as: fields[index].kind, into: buffer)
        }
    }

    static func write(_ value: TLValue, as kind: TLValueKind, into buffer: Buffer) {
        switch (kind, value) {
        case (.int, .int(let v)): buffer.appendInt32(v)
        case (.long, .long(let v)): buffer.appendInt64(v)
        case (.double, .double(let v)): buffer.appendDouble(v)
        case (.string, .string(let v)): buffer.appendTLString(v)
        case (.bytes, .bytes(let v)): buffer.appendTLBytes(v)
        case (.int128, .int128(let v)): buffer.appendInt128(v)
        case (.int256, .int256(let v)): buffer.appendInt256(v)
        case (.bool, .bool(let v)): buffer.appendBool(v)
        case (.boxed, .object(let object)), (.generic, .object(let object)), (.object, .object(let object)):
            object.serialize(buffer, true)
        case (.vector(let element, let boxed), .vector(let items)):
            buffer.appendVectorHeader(count: items.count, boxed: boxed)
            for item in items { write(item, as: element, into: buffer) }
        default:
            // Unreachable from generated builders, whose argument kinds follow the definition.
            break
        }
    }

    // MARK: Describing

    /// The function's TL name and its arguments in schema order.
    public func descriptionFields() -> (String, [(String, TLValue)]) {
        var fields: [(String, TLValue)] = []
        fields.reserveCapacity(signature.fields.count)
        forEachWrittenField(signature) { field, written in
            switch written {
            case .flags(let word): fields.append((field.name, .flags(UInt32(bitPattern: word))))
            case .trueFlag: fields.append((field.name, .trueFlag))
            case .value(let value, _): fields.append((field.name, value))
            }
        }
        return (signature.name, fields)
    }

    // MARK: Reading (servers)

    /// Reads the arguments of the function `definition` names (its ID already read). Nested objects and `!X`
    /// queries are read through `registry`.
    public static func parse(_ reader: inout BufferReader, definition: StaticString, registry: TLRegistry)
        throws(TLDecodingError) -> TLRequest
    {
        try parse(&reader, definition: definition, signature: TLSignature.cached(definition), registry: registry)
    }

    static func parse(_ reader: inout BufferReader, definition: StaticString, signature: TLSignature,
                      registry: TLRegistry) throws(TLDecodingError) -> TLRequest {
        try reader.enterObject()
        defer { reader.leaveObject() }
        let arguments = try readFields(signature, from: &reader, registry: registry, listingWords: false)
        return TLRequest(definition: definition, arguments: arguments, signature: signature)
    }

    /// The fields of a constructor or function (its ID already read) in schema order, absent ones left out; `#`
    /// words as `.flags` when `listingWords` (a description lists them, a request derives them).
    static func readFields(_ signature: TLSignature, from reader: inout BufferReader, registry: TLRegistry,
                           listingWords: Bool) throws(TLDecodingError) -> [(String, TLValue)] {
        // The `#` words read so far, by `Field.wordIndex`: two in registers, more (none in Telegram's schemas) in an
        // array. A dictionary by word name hashed a `String` per flagged field.
        var word0: Int32 = 0, word1: Int32 = 0
        var moreWords: [Int32] = []
        var words = 0
        var fields: [(String, TLValue)] = []
        fields.reserveCapacity(signature.fields.count)
        // Each field read where it lies: `for field in signature.fields` copied every `Field` (its name, kind and
        // condition retained and released: a quarter of describing the corpus's objects, callgrind).
        try signature.fields.withUnsafeBufferPointer { (all) throws(TLDecodingError) in
            for index in all.indices {
                do throws(TLDecodingError) {
                    if all[index].code == .nat {
                        let word = try reader.readInt32()
                        switch words {
                        case 0: word0 = word
                        case 1: word1 = word
                        default: moreWords.append(word)
                        }
                        words += 1
                        if listingWords { fields.append((all[index].name, .flags(UInt32(bitPattern: word)))) }
                        continue
                    }
                    if all[index].mask != 0 {  // a condition (`mask` is its bit, 0 without one)
                        let word = switch all[index].wordIndex {
                        case 0: word0
                        case 1: word1
                        case let at where at >= 2 && at - 2 < moreWords.count: moreWords[at - 2]
                        default: Int32(0)  // not a `#` field read before this one: the generator rejects such schemas
                        }
                        if !tlFlagIsSet(word, all[index].mask) { continue }
                    }
                    if all[index].code == .trueFlag {
                        fields.append((all[index].name, .trueFlag))
                        continue
                    }
                    fields.append((all[index].name, try read(all[index].kind, from: &reader, registry: registry)))
                } catch {
                    throw error.inside(TLDecodingError.Frame(constructor: signature.name, field: all[index].name))
                }
            }
        }
        return fields
    }

    /// Reads one value of `kind`, nested objects through `registry`: the one TL interpreter, for request fields,
    /// descriptions and the tools' typed decoding (`TLJSON`'s `TypedDecoder`).
    package static func read(_ kind: TLValueKind, from reader: inout BufferReader, registry: TLRegistry)
        throws(TLDecodingError) -> TLValue
    {
        switch kind {
        case .int, .nat: return .int(try reader.readInt32())
        case .long: return .long(try reader.readInt64())
        case .double: return .double(try reader.readDouble())
        case .string: return .string(try reader.readTLString())
        case .bytes: return .bytes(try reader.readTLBytes())
        case .int128: return .int128(try reader.readInt128())
        case .int256: return .int256(try reader.readInt256())
        case .bool: return .bool(try reader.readBool())
        case .trueFlag: return .trueFlag
        case .vector(let element, let boxed):
            let count = try reader.readVectorCount(boxed: boxed)
            var items: [TLValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try read(element, from: &reader, registry: registry)) }
            return .vector(items)
        case .boxed(let typeName):
            // The registry's entry tells the type before parsing: a cast of the parsed object to `TLRegistrable`
            // looked up the conformance for every object (30 % of describing the corpus's objects, callgrind).
            if let id = reader.peekUInt32(), case .constructor(let type)? = registry.lookup[id], type.tlTypeName == typeName {
                _ = try reader.readUInt32()
                return .object(try type.parse(&reader, constructor: id))
            }
            let at = reader.offset
            let object = try registry.parse(&reader)
            // A function parses through the registry too, but is a value of no boxed type.
            let found = (object as? any TLRegistrable).map { type(of: $0).tlTypeName } ?? "function"
            if found != typeName {
                throw TLDecodingError(.invalidValue("expected a \(typeName), found \(object.descriptionFields().0) (\(found))"), offset: at)
            }
            return .object(object)
        case .generic:
            let at = reader.offset
            let object = try registry.parse(&reader)
            guard object is any TLFunction else {
                throw TLDecodingError(.invalidValue("expected a function, found constructor \(object.descriptionFields().0)"), offset: at)
            }
            return .object(object)
        case .object: return .object(try registry.parse(&reader))
        case .bare(let text, let id):
            // A bare constructor (`future_salt`, `%Message`): the registry parses it from its known ID.
            if let id {
                guard case .constructor(let type)? = registry.lookup[id] else {
                    throw TLDecodingError(.unknownConstructor(id, type: registry.name), offset: reader.offset)
                }
                return .object(try type.parse(&reader, constructor: id))
            }
            if let object = try registry.parseBare(text, from: &reader) { return .object(object) }
            throw TLDecodingError(.invalidValue("the runtime cannot read a field of type \(text)"), offset: reader.offset)
        }
    }
}

/// What `TLRequest.read(_:from:registry:)` reads: a field's type in a definition, or a type written on a command line.
package indirect enum TLValueKind: Equatable, Sendable {
    case int, long, double, string, bytes, int128, int256, bool, trueFlag, nat
    /// `!X`: a function (a wrapped query).
    case generic
    /// `Object`: any boxed value.
    case object
    /// A boxed type by its TL name: the constructor ID on the wire must be one of its constructors.
    case boxed(String)
    case vector(TLValueKind, boxed: Bool)
    /// A bare constructor (`%T`, `future_salt`), by its ID when the caller knows it, else read through the
    /// registry's constructor definitions, if it has them (no function in Telegram's schemas takes one).
    case bare(String, id: UInt32?)
}

/// A function definition as the request interpreter needs it: name, ID, typed fields and flag groups. A class: every
/// request holds its function's signature, and copying one then costs a single retain.
final class TLSignature: Sendable {
    struct Field: Sendable {
        var name: String
        var kind: TLValueKind
        var condition: (flags: String, mask: Int32)?
        /// Which `#` word of the function the condition reads (0 for the first), -1 without a condition.
        var wordIndex = -1
        /// The condition's bit, 0 without one.
        var mask: Int32 = 0
        /// `kind` without payloads, so the writer's per-field tests are integer compares, not enum equality.
        var code: Code = .other
    }

    enum Code: UInt8, Sendable {
        case nat, trueFlag, int, long, string, bytes, object, other
    }

    /// Fields sharing one bit of one `#` word.
    struct FlagGroup: Sendable {
        var flags: String
        var mask: Int32
        var values: [String]
        var trueFlags: [String]
    }

    let name: String
    let id: UInt32
    let fields: [Field]
    let groups: [FlagGroup]
    /// At most two `#` words, and no bit guarding more than one field: the case `writeInOnePass` handles (every
    /// function in Telegram's schemas but a few).
    let oneFieldPerBit: Bool

    /// A bit of a `#` word as `writeInTwoPasses` tests it: the fields on it as bits of field indices.
    struct SharedBit: Sendable {
        var word: Int
        var mask: Int32
        var values: UInt64
        var trueFlags: UInt64
    }

    /// For signatures that are not `oneFieldPerBit` but have at most two `#` words, at most 64 fields and every
    /// condition on a word of their own: each flag bit with the fields it guards. Nil otherwise (the general walk).
    let sharedBitPlan: [SharedBit]?

    init(name: String, id: UInt32, fields: [Field], groups: [FlagGroup]) {
        self.name = name
        self.id = id
        self.fields = fields
        self.groups = groups
        // Both fast paths keep the words in two registers and need every condition on a word of the function.
        let onTwoWords = fields.count(where: { $0.code == .nat }) <= 2
            && fields.allSatisfy { $0.condition == nil || $0.wordIndex >= 0 }
        oneFieldPerBit = onTwoWords && groups.allSatisfy { $0.values.count + $0.trueFlags.count == 1 }
        if oneFieldPerBit || !onTwoWords || fields.count > 64 {
            sharedBitPlan = nil
        } else {
            var plan: [SharedBit] = []
            for (index, field) in fields.enumerated() where field.condition != nil {
                let bit = UInt64(1) << UInt64(index)
                let at = plan.firstIndex { $0.word == field.wordIndex && $0.mask == field.mask } ?? plan.count
                if at == plan.count { plan.append(SharedBit(word: field.wordIndex, mask: field.mask, values: 0, trueFlags: 0)) }
                if field.code == .trueFlag { plan[at].trueFlags |= bit } else { plan[at].values |= bit }
            }
            sharedBitPlan = plan
        }
    }

    /// The signature of `fields` as parsed: each condition's word and bit, each field's code, and the flag groups.
    convenience init(name: String, id: UInt32, fields parsed: [Field]) {
        var fields = parsed
        let words = fields.filter { $0.kind == .nat }.map(\.name)
        for index in fields.indices {
            if let condition = fields[index].condition {
                fields[index].wordIndex = words.firstIndex(of: condition.flags) ?? -1
                fields[index].mask = condition.mask
            }
            fields[index].code = switch fields[index].kind {
            case .nat: .nat
            case .trueFlag: .trueFlag
            case .int: .int
            case .long: .long
            case .string: .string
            case .bytes: .bytes
            case .boxed, .generic, .object: .object
            default: .other
            }
        }
        var groups: [FlagGroup] = []
        for field in fields {
            guard let condition = field.condition else { continue }
            var index = groups.count
            if let existing = groups.firstIndex(where: { $0.flags == condition.flags && $0.mask == condition.mask }) {
                index = existing
            } else {
                groups.append(FlagGroup(flags: condition.flags, mask: condition.mask, values: [], trueFlags: []))
            }
            if field.kind == .trueFlag {
                groups[index].trueFlags.append(field.name)
            } else {
                groups[index].values.append(field.name)
            }
        }
        self.init(name: name, id: id, fields: fields, groups: groups)
    }

    /// Parsed signatures by the address of their (static, immortal) definition text.
    private static let cache = Mutex<[UInt: TLSignature]>([:])

    static func cached(_ definition: StaticString) -> TLSignature {
        let key = UInt(bitPattern: definition.utf8Start)
        if let signature = cache.withLock({ $0[key] }) { return signature }
        let signature = parse(definition)
        cache.withLock { $0[key] = signature }
        return signature
    }

    /// `name` of `name#id …`, without parsing the rest.
    static func name(of definition: StaticString) -> String {
        // A byte scan of the literal: servers ask every request its name, and turning the whole definition into a
        // String and walking its Characters cost a fifth of a small call's handling (measured).
        definition.withUTF8Buffer { bytes in
            let end = bytes.firstIndex { $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: " ") } ?? bytes.endIndex
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
        }
    }

    /// Whether `name(of: definition)` is `name`, compared in place: `TLRegistry.functionID(named:)` tests every
    /// function of a layer this way for each handler a server registers; making each name as a `String` cost
    /// ~0.65 ms per registration in a debug build, against ~0.07 ms now.
    static func definition(_ definition: StaticString, isNamed name: String) -> Bool {
        definition.withUTF8Buffer { bytes in
            var index = 0
            for byte in name.utf8 {
                guard index < bytes.count, bytes[index] == byte, byte != UInt8(ascii: "#"), byte != UInt8(ascii: " ")
                else { return false }
                index += 1
            }
            return index == bytes.count || bytes[index] == UInt8(ascii: "#") || bytes[index] == UInt8(ascii: " ")
        }
    }

    /// Reads `name#id field:type … = Result;`. The definitions come from the generator, which checked them.
    ///
    /// Works on the literal's bytes: splitting it as a `String` walked `Character`s, about 100,000 instructions a
    /// definition, paid at the first description of each constructor and a server's first request of each function.
    static func parse(_ definition: StaticString) -> TLSignature {
        definition.withUTF8Buffer { parse(utf8: $0) }
    }

    typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    static func parse(utf8 text: UnsafeBufferPointer<UInt8>) -> TLSignature {
        let tokens = text.split(separator: UInt8(ascii: " "))
        let head = tokens.first ?? text[...]
        let hash = head.firstIndex(of: UInt8(ascii: "#"))
        let name = string(head[..<(hash ?? head.endIndex)])
        let id = hash.map { hexWord(head[($0 + 1)...]) } ?? 0
        var fields: [Field] = []
        for token in tokens.dropFirst() {
            if token.elementsEqual("=".utf8) { break }
            if token.first == UInt8(ascii: "{") { continue }  // {X:Type}
            guard let colon = token.firstIndex(of: UInt8(ascii: ":")) else { continue }
            var type = token[(colon + 1)...]
            var condition: (String, Int32)?
            if let question = type.firstIndex(of: UInt8(ascii: "?")), let dot = type.firstIndex(of: UInt8(ascii: ".")),
               dot < question, let bit = smallDecimal(type[(dot + 1)..<question]), bit <= 31 {
                condition = (string(type[..<dot]), Int32(bitPattern: UInt32(1) << UInt32(bit)))
                type = type[(question + 1)...]
            }
            fields.append(Field(name: string(token[..<colon]), kind: kind(type), condition: condition))
        }
        return TLSignature(name: name, id: id, fields: fields)
    }

    static func string(_ bytes: Bytes) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
    }

    /// The 8 hex digits of a constructor ID; 0 for anything else (the generator writes them).
    static func hexWord(_ bytes: Bytes) -> UInt32 {
        guard !bytes.isEmpty, bytes.count <= 8 else { return 0 }
        var value: UInt32 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return 0
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A flag's bit number: one or two decimal digits.
    static func smallDecimal(_ bytes: Bytes) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 2 else { return nil }
        var value = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    static func kind(_ type: Bytes) -> TLValueKind {
        func equals(_ literal: StaticString) -> Bool {
            literal.withUTF8Buffer { type.elementsEqual($0) }
        }
        func hasPrefix(_ literal: StaticString) -> Bool {
            literal.withUTF8Buffer { type.starts(with: $0) }
        }
        switch type.count {
        case 1 where equals("#"): return .nat
        case 3 where equals("int"): return .int
        case 4 where equals("long"): return .long
        case 4 where equals("Bool"): return .bool
        case 4 where equals("true"): return .trueFlag
        case 5 where equals("bytes"): return .bytes
        case 6 where equals("double"): return .double
        case 6 where equals("string"): return .string
        case 6 where equals("int128"): return .int128
        case 6 where equals("int256"): return .int256
        default: break
        }
        if type.first == UInt8(ascii: "!") { return .generic }
        if type.last == UInt8(ascii: ">") {
            for (prefix, boxed) in [("Vector<" as StaticString, true), ("vector<", false)] where hasPrefix(prefix) {
                return .vector(kind(type.dropFirst(prefix.utf8CodeUnitCount).dropLast()), boxed: boxed)
            }
        }
        let first = type.first ?? 0
        if first == UInt8(ascii: "%")
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) && !type.contains(UInt8(ascii: ".")) {
            return .bare(string(type), id: nil)
        }
        return .boxed(string(type))
    }

    /// The `#` words for these arguments. A bit is set when every value field on it is present; a bit carrying
    /// only `true` flags is set when one of them is.
    func flagWords(present arguments: [(String, TLValue)]) -> [String: Int32] {
        var words: [String: Int32] = [:]
        for group in groups {
            let isSet: Bool
            if group.values.isEmpty {
                isSet = group.trueFlags.contains { name in arguments.contains { $0.0 == name } }
            } else {
                isSet = group.values.allSatisfy { name in arguments.contains { $0.0 == name } }
            }
            if isSet { tlSetFlag(&words[group.flags, default: 0], group.mask) }
        }
        return words
    }
}
