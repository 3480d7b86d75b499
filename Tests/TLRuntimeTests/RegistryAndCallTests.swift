// Registry dispatch by constructor ID, function calls (the Telegram-iOS triple), result parsing, and log redaction.
import Testing
import TLRuntime

@Suite struct RegistryTests {
    @Test func dispatchesByConstructorID() throws {
        let user = try TestApi.registry.parse(bytes: encode(TestApi.User.userEmpty(id: 77)))
        guard case let .userEmpty(id)? = user as? TestApi.User else {
            Issue.record("parsed \(user)")
            return
        }
        #expect(id == 77)
        let photo = try TestApi.registry.parse(bytes: encode(TestApi.Photo.photoEmpty))
        #expect(photo is TestApi.Photo)
        let node = try TestApi.registry.parse(bytes: encode(TestApi.Node.chain(3)))
        #expect((node as? TestApi.Node)?.child?.child != nil)
    }

    @Test func lookups() {
        #expect(TestApi.registry.count == 5)
        #expect(TestApi.registry.contains(0x20b1_422e))
        #expect(!TestApi.registry.contains(0x3811_6ee0))
        #expect(TestApi.registry.type(for: 0x7d6b_1d03).map(ObjectIdentifier.init)
                == ObjectIdentifier(TestApi.Photo.self))
        #expect(TestApi.registry.type(for: 1) == nil)
        #expect(Set(TestApi.registry.ids).count == 5)
    }

    @Test func mergingKeepsTheEarliestEntry() throws {
        let shadow = TLRegistry(name: "Shadow", entries: [(0x20b1_422e, TestApi.Photo.self), (0x3811_6ee0, TestApi.Message.self)])
        let merged = TLRegistry(merging: [TestApi.registry, TestApi.messageRegistry, shadow])
        #expect(merged.count == 6)
        #expect(merged.name == "TestApi+MessageApi+Shadow")
        #expect(merged.type(for: 0x20b1_422e).map(ObjectIdentifier.init) == ObjectIdentifier(TestApi.User.self))
        let message = try merged.parse(bytes: encode(TestApi.Message(id: 3, message: "hi")))
        #expect((message as? TestApi.Message)?.message == "hi")
        let duplicate = TLRegistry(name: "D", entries: [(1, TestApi.User.self), (1, TestApi.Photo.self)])
        #expect(duplicate.count == 1)
        #expect(duplicate.type(for: 1).map(ObjectIdentifier.init) == ObjectIdentifier(TestApi.User.self))
    }

    /// `parse(bytes:)` reads the array where it lies, so what it returns must own copies: overwriting the array
    /// afterwards (in place, it is unique again) leaves a heap string and a byte field as they were read.
    @Test func parseOfBytesKeepsNoReferenceToThem() throws {
        let text = "a message longer than fifteen bytes, so not stored inline"
        let user = TestApi.User.user(.init(id: 5, phone: "+79991234567", photo: .photo(id: 7, bytes: [1, 2, 3, 4, 5])))
        var bytes = encode(TestApi.Message(id: 3, message: text))
        let message = try TestApi.messageRegistry.parse(bytes: bytes)
        var userBytes = encode(user)
        let parsedUser = try TestApi.registry.parse(bytes: userBytes)
        bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0xff) }
        userBytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0xff) }
        #expect((message as? TestApi.Message)?.message == text)
        #expect(encode(parsedUser) == encode(user))
        #expect(throws: TLDecodingError(.truncated(needed: 4, available: 0), offset: 0)) {
            try TestApi.registry.parse(bytes: [])
        }
        #expect(throws: TLDecodingError(.trailingBytes(1), offset: 4)) {
            try TestApi.registry.parse(bytes: encode(TestApi.Photo.photoEmpty) + [0])
        }
    }

    @Test func parsesFromAReaderInSequence() throws {
        var reader = BufferReader(bytes: encode(TestApi.User.userEmpty(id: 1)) + encode(TestApi.Photo.photoEmpty))
        #expect(try TestApi.registry.parse(&reader) is TestApi.User)
        #expect(try TestApi.registry.parse(&reader) is TestApi.Photo)
        try reader.expectEnd()
    }
}

@Suite struct FunctionCallTests {
    @Test func callProducesTheTriple() throws {
        let (description, buffer, response) = TestApi.functions.messages.sendMessage(peer: 1, message: "hi",
                                                                                      randomID: 99)
        #expect(hex(buffer.bytes) == "45973f98" + "0100000000000000" + "02686900" + "6300000000000000")
        #expect(description.name == "messages.sendMessage")
        #expect(description.parameters.map(\.0) == ["peer", "message", "random_id"])
        #expect(description.description == "messages.sendMessage(peer: 1, message: [[redacted]], random_id: 99)")
        let result = Buffer()
        result.appendVector([Int64(5), 6], boxed: true)
        #expect(try response.parse(result) == [5, 6])
        result.appendInt32(0)
        #expect(throws: TLDecodingError(.trailingBytes(4), offset: 24)) { try response.parse(result) }
    }

    @Test func responseShapes() throws {
        let bytesVector = DeserializeFunctionResponse<[[UInt8]]>.bytesVector()
        let wire = Buffer()
        wire.appendBytesVector([[1, 2], [3]], boxed: true)
        #expect(try bytesVector.parse(wire) == [[1, 2], [3]])

        let user = DeserializeFunctionResponse(TestApi.User.self)
        let parsed = try user.parse(bytes: encode(TestApi.User.userEmpty(id: 4)))
        #expect(encode(parsed) == encode(TestApi.User.userEmpty(id: 4)))

        let custom = DeserializeFunctionResponse<Bool> { (reader: inout BufferReader) throws(TLDecodingError) -> Bool in
            try reader.readBool()
        }
        var reader = BufferReader(bytes: encode(true) + encode(false))
        #expect(try custom.parse(&reader) == true)
        #expect(try custom.parse(&reader) == false)
        #expect(throws: TLDecodingError(.invalidVectorID(0x9972_75b5), offset: 0)) {
            try DeserializeFunctionResponse<[Int32]>.vector(of: Int32.self).parse(bytes: encode(true))
        }
    }

    /// A result read where it lies in a larger array (a slice of a decrypted frame): offsets in errors count from
    /// the slice's start, bytes after it are not read, and an empty slice is a truncation, not a crash.
    @Test func parsesASliceInPlace() throws {
        let user = DeserializeFunctionResponse(TestApi.User.self)
        let value = encode(TestApi.User.userEmpty(id: 4))
        let frame = [UInt8](repeating: 0xaa, count: 56) + value + [0xbb, 0xbb, 0xbb, 0xbb]
        let slice = frame[56..<(56 + value.count)]
        #expect(encode(try user.parse(bytes: slice)) == value)
        #expect(throws: TLDecodingError(.trailingBytes(4), offset: value.count)) {
            try user.parse(bytes: frame[56...])
        }
        #expect(throws: TLDecodingError(.truncated(needed: 4, available: 0), offset: 0)) {
            try user.parse(bytes: frame[56..<56])
        }
        #expect(throws: TLDecodingError(.truncated(needed: 4, available: 2), offset: 0)) {
            try user.parse(bytes: frame[56..<58])
        }
    }
}

@Suite struct LogFormatterTests {
    private let user = TestApi.User.user(.init(id: 5, phone: "+79991234567",
                                               photo: .photo(id: 7, bytes: [1, 2, 3, 4, 5])))

    @Test func redactsPhoneAndNestsObjects() {
        #expect(TLLogFormatter.telegram.format(user)
                == "user(flags: 0x3, id: 5, phone: [[redacted]], photo: photo(id: 7, bytes: <5 bytes 0102030405>))")
    }

    @Test func redactsMessageText() {
        #expect(TLLogFormatter.telegram.format(TestApi.Message(id: 1, message: "secret"))
                == "message(id: 1, message: [[redacted]])")
    }

    @Test func defaultListCoversTheIssue() {
        let expected: Set<RedactedField> = [
            .init("message", "message"), .init("user", "phone"), .init("inputPhoneContact", "phone"),
            .init("draftMessage", "message"), .init("messages.sendMessage", "message"),
            .init("messages.sendMedia", "message"), .init("messages.saveDraft", "message"),
        ]
        #expect(expected.isSubset(of: TLLogFormatter.telegram.redactedFields))
    }

    @Test func listIsExtensibleAndRemovable() {
        var formatter = TLLogFormatter.telegram
        formatter.redactedFields.insert(RedactedField("photo", "bytes"))
        #expect(formatter.format(user).hasSuffix("photo: photo(id: 7, bytes: [[redacted]]))"))
        formatter.redactedFields = []
        #expect(formatter.format(user).contains("phone: \"+79991234567\""))
    }

    @Test func valuesRenderCompactly() {
        let f = TLLogFormatter.telegram
        #expect(f.format(.vector((0..<20).map { TLValue.int(Int32($0)) })) == "[0, 1, 2, 3, 4, 5, 6, 7, … 12 more]")
        #expect(f.format(.vector([])) == "[]")
        #expect(f.format(.bytes(Array(0..<100))) == "<100 bytes 000102030405060708090a0b0c0d0e0f…>")
        #expect(f.format(.bytes([9])) == "<1 byte 09>")
        #expect(f.format(.bytes([])) == "<0 bytes>")
        #expect(f.format(.raw([0xaa, 0xbb])) == "<2 object aabb>")
        #expect(f.format(.string("a\"b\\\n\u{1}")) == "\"a\\\"b\\\\\\n\\u{1}\"")
        #expect(f.format(.double(-0.0)) == "-0.0")
        #expect(f.format(.long(Int64.min)) == "-9223372036854775808")
        #expect(f.format(.int128(TLInt128(1, 0))) == "01000000000000000000000000000000")
        #expect(f.format(.bool(false)) == "false")
        #expect(f.format(.trueFlag) == "true")
        #expect(f.format(.flags(0x8000_0000)) == "0x80000000")
        var short = f
        short.maxStringLength = 3
        #expect(short.format(.string("abcdef")) == "\"abc…\" (6 bytes)")
    }
}
