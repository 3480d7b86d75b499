// Helpers the generated code calls instead of writing the same thing inline: each is one concrete function, so
// the compiler resolves a call instead of operator overloads and literal types, and debug builds emit one call
// instead of tuple, enum and generic-array code per field. Measured on the layer-229 API (ARCHITECTURE.md,
// "compile time is a feature").

/// Whether any bit of `mask` is set in a flags word (`flags.N?` in TL).
@inlinable
public func tlFlagIsSet(_ flags: Int32, _ mask: Int32) -> Bool {
    flags & mask != 0
}

/// Sets the bits of `mask` in a flags word.
@inlinable
public func tlSetFlag(_ flags: inout Int32, _ mask: Int32) {
    flags |= mask
}

/// Sets the bits of `mask` in a flags word when `condition` holds, without a branch: a word derived from many
/// fields should compile to straight-line code, since the conditions vary from value to value.
///
/// `condition ? mask : 0` is a branch in SIL, and the optimizer threaded a function's run of them into a tree with
/// one leaf per combination: `user`'s public init was 19,578 bytes of machine code (1,354 now), and
/// `messages.sendMessage`'s writer tested its `Bool` arguments 97 times. The `Bool`'s byte (0 or 1), negated, is a
/// mask of all zeros or all ones: arithmetic that no pass turns back into branches. The release build of
/// `TelegramApi` took 12–15 % less time (Benchmarks/HISTORY.md).
@inlinable @inline(__always)
public func tlSetFlag(_ flags: inout Int32, _ mask: Int32, when condition: Bool) {
    flags |= mask & (0 &- Int32(truncatingIfNeeded: unsafeBitCast(condition, to: UInt8.self)))
}

/// Builds the field list of `descriptionFields()`, one call per field.
public struct TLFieldList: Sendable {
    /// The fields added so far, in order.
    public private(set) var fields: [(String, TLValue)]

    /// An empty list with room for `capacity` fields.
    public init(capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }

    /// Adds an `int` field.
    public mutating func int(_ name: String, _ value: Int32) { fields.append((name, .int(value))) }
    /// Adds a `#` (flags) field.
    public mutating func flags(_ name: String, _ value: Int32) { fields.append((name, .flags(UInt32(bitPattern: value)))) }
    /// Adds a `long` field.
    public mutating func long(_ name: String, _ value: Int64) { fields.append((name, .long(value))) }
    /// Adds a `double` field.
    public mutating func double(_ name: String, _ value: Double) { fields.append((name, .double(value))) }
    /// Adds a `string` field.
    public mutating func string(_ name: String, _ value: String) { fields.append((name, .string(value))) }
    /// Adds a `bytes` field.
    public mutating func bytes(_ name: String, _ value: [UInt8]) { fields.append((name, .bytes(value))) }
    /// Adds an opaque embedded object, as its serialized bytes.
    public mutating func raw(_ name: String, _ value: [UInt8]) { fields.append((name, .raw(value))) }
    /// Adds an `int128` field.
    public mutating func int128(_ name: String, _ value: TLInt128) { fields.append((name, .int128(value))) }
    /// Adds an `int256` field.
    public mutating func int256(_ name: String, _ value: TLInt256) { fields.append((name, .int256(value))) }
    /// Adds a `Bool` field.
    public mutating func bool(_ name: String, _ value: Bool) { fields.append((name, .bool(value))) }
    /// A `true` flag: listed only when set.
    public mutating func trueFlag(_ name: String, _ isSet: Bool) { if isSet { fields.append((name, .trueFlag)) } }
    /// Adds a nested object's field.
    public mutating func object(_ name: String, _ value: any TLObject) { fields.append((name, .object(value))) }
    /// Adds a field already made into a `TLValue`.
    public mutating func value(_ name: String, _ value: TLValue) { fields.append((name, value)) }

    /// Adds a vector of `int`.
    public mutating func ints(_ name: String, _ values: [Int32]) { fields.append((name, .vector(values.map { .int($0) }))) }
    /// Adds a vector of `long`.
    public mutating func longs(_ name: String, _ values: [Int64]) { fields.append((name, .vector(values.map { .long($0) }))) }
    /// Adds a vector of `double`.
    public mutating func doubles(_ name: String, _ values: [Double]) { fields.append((name, .vector(values.map { .double($0) }))) }
    /// Adds a vector of `string`.
    public mutating func strings(_ name: String, _ values: [String]) { fields.append((name, .vector(values.map { .string($0) }))) }
    /// Adds a vector of `bytes`.
    public mutating func bytesList(_ name: String, _ values: [[UInt8]]) { fields.append((name, .vector(values.map { .bytes($0) }))) }
    /// Adds a vector of `int128`.
    public mutating func int128s(_ name: String, _ values: [TLInt128]) { fields.append((name, .vector(values.map { .int128($0) }))) }
    /// Adds a vector of `int256`.
    public mutating func int256s(_ name: String, _ values: [TLInt256]) { fields.append((name, .vector(values.map { .int256($0) }))) }
    /// Adds a vector of `Bool`.
    public mutating func bools(_ name: String, _ values: [Bool]) { fields.append((name, .vector(values.map { .bool($0) }))) }
    /// Adds a vector of objects.
    public mutating func objects<T: TLObject>(_ name: String, _ values: [T]) { fields.append((name, .vector(values.map { .object($0) }))) }
}
