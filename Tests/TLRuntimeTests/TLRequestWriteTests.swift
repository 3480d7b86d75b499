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
