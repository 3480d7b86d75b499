// Malformed input: truncation at every byte, nesting depth, trailing bytes, unknown constructors, error text and
// paths, and seeded random inputs that must fail cleanly rather than trap.
import Testing
import TLRuntime

/// `user` with a phone and a photo; the field layout is spelled out in `readStarts`.
private let composite = TestApi.User.user(.init(id: 0x0102_0304_0506_0708, phone: "+79991234567",
                                                photo: .photo(id: 7, bytes: [1, 2, 3, 4, 5])))

/// Where each read of `composite` starts, with the path an error there must carry.
private let readStarts: [(offset: Int, path: [TLDecodingError.Frame])] = [
    (0, []),                                   // user ID (read by the registry)
    (4, [.init(constructor: "user", field: "flags")]),
    (8, [.init(constructor: "user", field: "id")]),
    (16, [.init(constructor: "user", field: "phone")]),  // 12 bytes of text: 1 + 12 → 16
    (32, [.init(constructor: "user", field: "photo")]),  // photo ID
    (36, [.init(constructor: "user", field: "photo"), .init(constructor: "photo", field: "id")]),
    (44, [.init(constructor: "user", field: "photo"), .init(constructor: "photo", field: "bytes")]),  // 1 + 5 → 8
]

@Suite struct DecodingErrorTests {
    @Test func compositeLayoutIsAsDocumented() throws {
        let wire = encode(composite)
        #expect(wire.count == 52)
        #expect(hex(Array(wire[0..<8])) == "2e42b12003000000")
        let parsed = try TestApi.registry.parse(bytes: wire)
        #expect(encode(parsed) == wire)
    }

    @Test func truncationAtEveryOffsetSaysWhereAndNeverCrashes() {
        let wire = encode(composite)
        for cut in 0..<wire.count {
            let expected = readStarts.last { $0.offset <= cut }!
            do {
                _ = try TestApi.registry.parse(bytes: Array(wire[0..<cut]))
                Issue.record("prefix of \(cut) bytes parsed")
            } catch {
                guard case let .truncated(needed, available) = error.reason else {
                    Issue.record("prefix of \(cut) bytes: \(error)")
                    continue
                }
                #expect(error.offset == expected.offset, "cut at \(cut)")
                #expect(available == cut - expected.offset, "cut at \(cut)")
                #expect(needed > available, "cut at \(cut)")
                #expect(error.path == expected.path, "cut at \(cut)")
            }
        }
    }

    @Test func descriptionNamesTheFieldInnermostFirst() {
        let wire = encode(composite)
        #expect(throws: TLDecodingError.self) { try TestApi.registry.parse(bytes: Array(wire[0..<47])) }
        do {
            _ = try TestApi.registry.parse(bytes: Array(wire[0..<47]))
        } catch {
            #expect(error.description
                    == "truncated at byte 44: needed 8 bytes, 3 available (in photo.bytes <- user.photo)")
        }
    }

    @Test func insideMapsTheFieldIndex() {
        let base = TLDecodingError(.invalidBool(0), offset: 9)
        #expect(base.inside(constructor: "a", fields: "x,y,z", index: 1).path == [.init(constructor: "a", field: "y")])
        #expect(base.inside(constructor: "a", fields: "x,y,z", index: 3).path == [.init(constructor: "a", field: nil)])
        #expect(base.inside(constructor: "a", fields: "", index: 0).path == [.init(constructor: "a", field: "")])
        let nested = base.inside(constructor: "inner", fields: "f", index: 0)
            .inside(constructor: "messages.messages", fields: "messages", index: 0)
        #expect(nested.path.map(\.constructor) == ["messages.messages", "inner"])
        #expect(nested.description == "invalid Bool 0x00000000 at byte 9 (expected boolTrue 0x997275b5 or boolFalse "
                + "0xbc799737) (in inner.f <- messages.messages.messages)")
    }

    /// One reference wide, so that typed throws pass it in a register (a stored field added to the struct would
    /// double `TelegramApi`'s parse functions in debug builds); still a value: a copy keeps what it had.
    @Test func oneWordWithValueSemantics() {
        #expect(MemoryLayout<TLDecodingError>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<TLArgumentError>.size == MemoryLayout<Int>.size)
        let original = TLDecodingError(.invalidBool(7), offset: 3, path: [.init(constructor: "a", field: "b")])
        var copy = original
        copy.offset = 11
        copy.reason = .trailingBytes(2)
        copy.path.append(.init(constructor: "c", field: nil))
        #expect(original == TLDecodingError(.invalidBool(7), offset: 3, path: [.init(constructor: "a", field: "b")]))
        #expect(copy.offset == 11 && copy.reason == .trailingBytes(2) && copy.path.count == 2)
        #expect(copy != original)
        #expect(TLArgumentError(function: "f", argument: "a", expected: "Int32", found: "string")
                == TLArgumentError(function: "f", argument: "a", expected: "Int32", found: "string"))
        #expect(TLArgumentError(function: "f", argument: "a", expected: "Int32", found: "string")
                != TLArgumentError(function: "f", argument: "b", expected: "Int32", found: "string"))
    }

    @Test func reasonDescriptions() {
        #expect(TLDecodingError(.truncated(needed: 1, available: 0), offset: 3).description
                == "truncated at byte 3: needed 1 byte, 0 available")
        #expect(TLDecodingError(.unknownConstructor(0xdead_beef, type: "User"), offset: 0).description
                == "unknown constructor 0xdeadbeef for User at byte 0")
        #expect(TLDecodingError(.invalidVectorID(1), offset: 8).description
                == "invalid vector ID 0x00000001 at byte 8 (expected 0x1cb5c415)")
        #expect(TLDecodingError(.invalidCount(-5), offset: 4).description == "invalid vector count -5 at byte 4")
        #expect(TLDecodingError(.depthExceeded(limit: 64), offset: 516).description
                == "objects nested deeper than 64 at byte 516")
        #expect(TLDecodingError(.trailingBytes(1), offset: 52).description == "1 trailing byte at byte 52")
        #expect(TLDecodingError(.unpackedTooLarge(limit: 1024), offset: 0).description
                == "gzip_packed at byte 0 inflates to more than 1024 bytes")
    }

    @Test func unknownConstructorAtTopAndNested() {
        #expect(throws: TLDecodingError(.unknownConstructor(0xdead_beef, type: "TestApi"), offset: 0)) {
            try TestApi.registry.parse(bytes: bytes("efbeadde"))
        }
        var wire = encode(composite)
        wire[32] ^= 0xff
        #expect(throws: TLDecodingError(.unknownConstructor(0x7d6b_1dfc, type: "Photo"), offset: 32,
                                        path: [.init(constructor: "user", field: "photo")])) {
            try TestApi.registry.parse(bytes: wire)
        }
    }

    @Test func trailingBytesAreAnError() {
        #expect(throws: TLDecodingError(.trailingBytes(4), offset: 52)) {
            try TestApi.registry.parse(bytes: encode(composite) + [0, 0, 0, 0])
        }
        #expect(throws: TLDecodingError(.trailingBytes(1), offset: 52)) {
            try TestApi.registry.parse(Buffer(bytes: encode(composite) + [9]))
        }
    }

    @Test func depthLimitIsExactAndRestored() throws {
        var ok = BufferReader(bytes: encode(TestApi.Node.chain(64)))
        _ = try TestApi.Node.parse(&ok)
        #expect(ok.depth == 0)
        try ok.expectEnd()

        var tooDeep = BufferReader(bytes: encode(TestApi.Node.chain(65)))
        do {
            _ = try TestApi.Node.parse(&tooDeep)
            Issue.record("65 nested nodes parsed with maxDepth 64")
        } catch {
            #expect(error.reason == .depthExceeded(limit: 64))
            #expect(error.offset == 64 * 8 + 4)
            #expect(error.path.count == 64)
            #expect(error.path.allSatisfy { $0 == .init(constructor: "node", field: "child") })
        }

        var raised = BufferReader(bytes: encode(TestApi.Node.chain(65)))
        raised.maxDepth = 65
        _ = try TestApi.Node.parse(&raised)
    }

    @Test func hostileNestingCannotExhaustTheStack() {
        // 200,000 nested nodes: the parser stops at the limit instead of recursing 200,000 frames.
        let wire = encode(TestApi.Node.chain(200_000))
        #expect(throws: TLDecodingError.self) { try TestApi.registry.parse(bytes: wire) }
    }

    @Test func enterAndLeaveBalance() throws {
        var reader = BufferReader(bytes: [])
        reader.maxDepth = 2
        try reader.enterObject()
        try reader.enterObject()
        #expect(throws: TLDecodingError(.depthExceeded(limit: 2), offset: 0)) { try reader.enterObject() }
        reader.leaveObject()
        reader.leaveObject()
        reader.leaveObject()  // unbalanced extra leave is harmless
        #expect(reader.depth == 0)
    }

    @Test func seededRandomInputsFailCleanly() {
        var rng = SeededGenerator(state: 1)
        let ids: [UInt32] = [0x20b1_422e, 0xd3bc_4b7a, 0x7d6b_1d03, 0x2331_b22d, 0x5a3c_8e01, 0x3072_cfa1]
        for _ in 0..<5000 {
            var input = (0..<Int.random(in: 0...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if input.count >= 4, Bool.random(using: &rng) {
                let id = ids.randomElement(using: &rng)!
                for i in 0..<4 { input[i] = UInt8(truncatingIfNeeded: id >> (8 * UInt32(i))) }
            }
            do {
                _ = try TestApi.registry.parse(bytes: input)
            } catch {
                #expect(error.offset >= 0 && error.offset <= input.count)
            }
        }
    }

    @Test func everySingleByteMutationOfAValidValueFailsCleanly() throws {
        let wire = encode(composite)
        var parsedCount = 0
        for i in 0..<wire.count {
            for flip: UInt8 in [0x01, 0x80, 0xff] {
                var mutated = wire
                mutated[i] ^= flip
                do {
                    _ = try TestApi.registry.parse(bytes: mutated)
                    parsedCount += 1
                } catch {
                    #expect(error.offset >= 0 && error.offset <= mutated.count)
                }
            }
        }
        // Data bytes (ids, text, photo bytes) can change without breaking the structure; headers cannot.
        #expect(parsedCount > 0 && parsedCount < wire.count * 3)
    }
}
