// TLRequest's writer: the one-pass path (flag words filled in after the fields they guard) against hand-computed
// bytes, and the general walk it falls back to for arguments out of schema order and for bits shared by fields.
import Testing
@testable import TLRuntime

@Suite struct TLRequestWriteTests {
    static let twoWords: StaticString =
        "test.call#12345678 flags:# silent:flags.0?true peer:int reply:flags.1?long flags2:# note:flags2.3?string = Bool;"

    static func bytes(_ request: TLRequest) -> [UInt8] {
        let buffer = Buffer()
        request.serialize(buffer, true)
        return buffer.bytes
    }

    @Test func writesFlagWordsAfterTheFieldsTheyGuard() {
        let request = TLRequest(definition: Self.twoWords, arguments: [
            ("silent", .trueFlag), ("peer", .int(7)), ("reply", .long(9)), ("note", .string("ab")),
        ])
        #expect(request.signature.oneFieldPerBit)
        #expect(Self.bytes(request) == [0x78, 0x56, 0x34, 0x12, 3, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0,
                                        8, 0, 0, 0, 2, 0x61, 0x62, 0])
        let bare = TLRequest(definition: Self.twoWords, arguments: [("peer", .int(7))])
        #expect(Self.bytes(bare) == [0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0])
    }

    /// A registry parses a function through its entry's signature, stored on first use: many threads using a new
    /// registry at once all read the request back, through one signature object.
    @Test func aRegistryReadsRequestsFromManyThreadsAtFirstUse() async throws {
        let request = TLRequest(definition: Self.twoWords, arguments: [
            ("silent", .trueFlag), ("peer", .int(7)), ("reply", .long(9)), ("note", .string("ab")),
        ])
        let wire = Self.bytes(request)
        for _ in 0..<20 {
            let registry = TLRegistry(name: "T", entries: [], functions: [(0x1234_5678, Self.twoWords)])
            let parsed = await withTaskGroup(of: TLRequest?.self) { group in
                for _ in 0..<8 { group.addTask { try? registry.parse(bytes: wire) as? TLRequest } }
                return await group.reduce(into: [TLRequest?]()) { $0.append($1) }
            }
            let requests = parsed.compactMap { $0 }
            #expect(requests.count == 8)
            #expect(requests.allSatisfy { Self.bytes($0) == wire && $0.constructorID == 0x1234_5678 })
            #expect(Set(requests.map { ObjectIdentifier($0.signature) }).count == 1)
        }
        let registry = TLRegistry(name: "T", entries: [], functions: [(0x1234_5678, Self.twoWords)])
        #expect(registry.functionID(named: "test.call") == 0x1234_5678)
        for name in ["test.cal", "test.calls", "test.call#12345678", "test.call ", ""] {
            #expect(registry.functionID(named: name) == nil, "\(name)")
        }
    }

    @Test func anArgumentTheDefinitionDoesNotNameIsSkippedAsBefore() {
        let inOrder = TLRequest(definition: Self.twoWords, arguments: [
            ("silent", .trueFlag), ("peer", .int(7)), ("reply", .long(9)), ("note", .string("ab")),
        ])
        let withExtra = TLRequest(definition: Self.twoWords, arguments: [
            ("silent", .trueFlag), ("peer", .int(7)), ("bogus", .int(5)), ("reply", .long(9)), ("note", .string("ab")),
        ])
        #expect(Self.bytes(withExtra) == Self.bytes(inOrder))
    }

    @Test func aBitSharedByTwoValuesIsSetOnlyWhenBothArePresent() {
        let definition: StaticString = "test.pair#0badf00d flags:# a:flags.0?int b:flags.0?int c:int = Bool;"
        let partial = TLRequest(definition: definition, arguments: [("a", .int(1)), ("c", .int(3))])
        #expect(!partial.signature.oneFieldPerBit)
        #expect(Self.bytes(partial) == [0x0d, 0xf0, 0xad, 0x0b, 0, 0, 0, 0, 3, 0, 0, 0])
        let both = TLRequest(definition: definition, arguments: [("a", .int(1)), ("b", .int(2)), ("c", .int(3))])
        #expect(Self.bytes(both) == [0x0d, 0xf0, 0xad, 0x0b, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0])
    }
}

@Suite struct TLRequestSharedBitTests {
    /// Bits shared by two values, by a value and a `true` flag, by two `true` flags, in two `#` words.
    static let shared: StaticString = """
        test.shared#0badcafe flags:# a:flags.0?int b:flags.0?string t:flags.1?true u:flags.1?true v:flags.2?long \
        w:flags.2?true c:int flags2:# d:flags2.0?long e:flags2.0?Vector<int> = Bool;
        """
    static let optional: [(String, TLValue)] = [
        ("a", .int(1)), ("b", .string("bee")), ("t", .trueFlag), ("u", .trueFlag), ("v", .long(-2)), ("w", .trueFlag),
        ("d", .long(4)), ("e", .vector([.int(5), .int(6)])),
    ]

    static func arguments(_ subset: Int) -> [(String, TLValue)] {
        var arguments: [(String, TLValue)] = []
        for (bit, argument) in optional.enumerated() where subset & (1 << bit) != 0 {
            if argument.0 == "d" { arguments.append(("c", .int(3))) }
            arguments.append(argument)
        }
        if !arguments.contains(where: { $0.0 == "c" }) {
            let at = arguments.firstIndex { $0.0 == "d" || $0.0 == "e" } ?? arguments.endIndex
            arguments.insert(("c", .int(3)), at: at)
        }
        return arguments
    }

    static func written(_ request: TLRequest, fast: Bool) -> [UInt8] {
        let buffer = Buffer()
        if fast { request.serialize(buffer, false) } else { request.writeByWalk(into: buffer) }
        return buffer.bytes
    }

    @Test func everySubsetOfArgumentsWritesAsTheGeneralWalkDoes() {
        let signature = TLSignature.cached(Self.shared)
        #expect(!signature.oneFieldPerBit)
        #expect(signature.sharedBitPlan?.count == 4)
        for subset in 0..<(1 << Self.optional.count) {
            let request = TLRequest(definition: Self.shared, arguments: Self.arguments(subset))
            let buffer = Buffer()
            #expect(request.writeInTwoPasses(into: buffer), "subset \(subset)")
            #expect(buffer.bytes == Self.written(request, fast: false), "subset \(subset)")
        }
    }

    @Test func sharedBitsAreSetOnlyWhenEveryValueIsThere() {
        // a without b: bit 0 clear, a not written; t alone sets bit 1; v with w sets bit 2; d and e set flags2 bit 0.
        let request = TLRequest(definition: Self.shared, arguments: [
            ("a", .int(1)), ("t", .trueFlag), ("v", .long(-2)), ("w", .trueFlag), ("c", .int(3)), ("d", .long(4)),
            ("e", .vector([.int(5)])),
        ])
        #expect(Self.written(request, fast: true) == [
            6, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0, 1, 0, 0, 0,
            4, 0, 0, 0, 0, 0, 0, 0, 0x15, 0xc4, 0xb5, 0x1c, 1, 0, 0, 0, 5, 0, 0, 0,
        ])
    }

    @Test func outOfOrderOrMissingRequiredArgumentsFallBackToTheWalk() {
        let swapped = TLRequest(definition: Self.shared, arguments: [("c", .int(3)), ("a", .int(1)), ("b", .string("x"))])
        #expect(!swapped.writeInTwoPasses(into: Buffer()))
        #expect(Self.written(swapped, fast: true) == Self.written(swapped, fast: false))
        let missing = TLRequest(definition: Self.shared, arguments: [("a", .int(1))])
        #expect(!missing.writeInTwoPasses(into: Buffer()))
        #expect(Self.written(missing, fast: true) == Self.written(missing, fast: false))
    }
}
