// A parsed request's arguments as the Swift types the generated functions take: for code that holds a `TLRequest`
// (read by a registry) and calls a generated writer with it, such as the corpus replay the tests and benchmarks use.

/// An argument a request does not have, or has with another type than asked for.
public struct TLArgumentError: Error, Sendable, Equatable, CustomStringConvertible {
    // One reference wide, as `TLDecodingError` is, so typed throws pass it in a register: the generated
    // `RequestReplay` has a `try` per argument.
    final class Storage: Sendable {
        let function: String
        let argument: String
        let expected: String
        let found: String

        init(function: String, argument: String, expected: String, found: String) {
            self.function = function
            self.argument = argument
            self.expected = expected
            self.found = found
        }
    }

    let storage: Storage

    /// The function's TL name.
    public var function: String { storage.function }
    /// The argument's TL name.
    public var argument: String { storage.argument }
    /// The Swift type asked for.
    public var expected: String { storage.expected }
    /// What the request holds: a `TLValue` case, or `nothing`.
    public var found: String { storage.found }

    /// An error for `argument` of `function`: what was expected and what was found.
    public init(function: String, argument: String, expected: String, found: String) {
        storage = Storage(function: function, argument: argument, expected: expected, found: found)
    }

    /// Equal when all four parts are.
    public static func == (lhs: TLArgumentError, rhs: TLArgumentError) -> Bool {
        lhs.function == rhs.function && lhs.argument == rhs.argument && lhs.expected == rhs.expected
            && lhs.found == rhs.found
    }

    /// `FUNCTION: argument 'NAME' is FOUND, expected EXPECTED`.
    public var description: String {
        "\(function): argument '\(argument)' is \(found), expected \(expected)"
    }
}

extension TLRequest {
    /// Required argument `name` as a `T`: `Int32`, `Int64`, `Double`, `String`, `[UInt8]`, `Bool`, `TLInt128`,
    /// `TLInt256`, a generated type, a `TLRequest` (an inner `!X` call), or an array of these.
    public func argument<T>(_ name: String, as type: T.Type = T.self) throws(TLArgumentError) -> T {
        guard let value = self[name] else { throw mismatch(name, T.self, found: "nothing") }
        guard let converted = value.converted(to: T.self) else { throw mismatch(name, T.self, found: value.caseName) }
        return converted
    }

    /// Optional argument `name` as a `T`; nil when the request leaves it out.
    public func optionalArgument<T>(_ name: String, as type: T.Type = T.self) throws(TLArgumentError) -> T? {
        guard let value = self[name] else { return nil }
        guard let converted = value.converted(to: T.self) else { throw mismatch(name, T.self, found: value.caseName) }
        return converted
    }

    /// Whether the `true` flag `name` is set.
    public func flag(_ name: String) -> Bool {
        if case .trueFlag? = self[name] { return true }
        return false
    }

    func mismatch<T>(_ name: String, _ type: T.Type, found: String) -> TLArgumentError {
        TLArgumentError(function: self.name, argument: name, expected: String(describing: T.self), found: found)
    }
}

extension TLValue {
    /// The value as a `T`, if it holds one (see `TLRequest.argument`).
    func converted<T>(to type: T.Type) -> T? {
        switch self {
        case .int(let v): v as? T
        case .long(let v): v as? T
        case .double(let v): v as? T
        case .int128(let v): v as? T
        case .int256(let v): v as? T
        case .string(let v): v as? T
        case .bytes(let v), .raw(let v): v as? T
        case .bool(let v): v as? T
        case .object(let v): v as? T
        case .vector(let items): (T.self as? any TLArgumentArray.Type)?.converting(items) as? T
        case .flags, .trueFlag: nil
        }
    }

    var caseName: String {
        switch self {
        case .int: "int"
        case .long: "long"
        case .double: "double"
        case .int128: "int128"
        case .int256: "int256"
        case .string: "string"
        case .bytes: "bytes"
        case .raw: "raw"
        case .bool: "Bool"
        case .object(let v): v.descriptionFields().0
        case .vector: "a vector"
        case .flags: "a # word"
        case .trueFlag: "a true flag"
        }
    }
}

/// Arrays, so that a vector converts element by element whatever the element type.
protocol TLArgumentArray {
    static func converting(_ items: [TLValue]) -> Self?
}

extension Array: TLArgumentArray {
    static func converting(_ items: [TLValue]) -> [Element]? {
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard let element = item.converted(to: Element.self) else { return nil }
            result.append(element)
        }
        return result
    }
}
