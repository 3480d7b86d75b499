import Testing
import TLJSON
import TLRuntime
import TelegramApi

/// Hostile and broken input: every failure is a typed error that says where; nothing traps or hangs.
@Suite struct MalformedInputTests {
    /// Records with nesting, flags, vectors, strings and bytes.
    var samples: [Corpus.Record] {
        let names: Set<String> = ["account.authorizationForm", "messages.sendMessage", "user", "channelFull",
                                  "messages.messages", "invokeWithLayer", "updates.difference", "config"]
        var seen: Set<String> = []
        return Corpus.records.filter { names.contains($0.name) && seen.insert($0.name).inserted }
    }

    @Test func truncationAtEveryByteIsATypedError() throws {
        #expect(samples.count >= 6)
        Self.expectTruncationIsTyped(samples) { bytes throws(TLDecodingError) in
            _ = try Corpus.registry.parse(bytes: bytes)
        }
    }

    @Test func trailingBytesAreAnError() throws {
        let record = try #require(samples.first)
        Self.expectTrailingBytesAreAnError(record) { bytes throws(TLDecodingError) in
            _ = try Corpus.registry.parse(bytes: bytes)
        }
    }

    /// Each record cut at every byte fails to parse with `parse`, as a truncation at or before the cut.
    static func expectTruncationIsTyped(_ records: [Corpus.Record],
                                        parse: ([UInt8]) throws(TLDecodingError) -> Void) {
        for record in records {
            for length in 0..<record.bytes.count {
                do {
                    try parse(Array(record.bytes[0..<length]))
                    Issue.record("\(record.name) truncated to \(length) of \(record.bytes.count) bytes parsed")
                } catch {
                    #expect(error.offset <= length, "\(record.name) at \(length): \(error)")
                    // Either the read ran out, or a count was refused up front because too few bytes remain.
                    switch error.reason {
                    case .truncated, .invalidCount: break
                    default: Issue.record("\(record.name) at \(length): expected truncation, got \(error)")
                    }
                }
            }
        }
    }

    /// The record with four bytes more fails with `parse` as trailing bytes, where the record ends.
    static func expectTrailingBytesAreAnError(_ record: Corpus.Record,
                                              parse: ([UInt8]) throws(TLDecodingError) -> Void) {
        do {
            try parse(record.bytes + [0, 0, 0, 0])
            Issue.record("\(record.name) with trailing bytes parsed")
        } catch {
            guard case .trailingBytes(4) = error.reason else {
                Issue.record("\(record.name): expected trailing bytes, got \(error)")
                return
            }
            #expect(error.offset == record.bytes.count)
        }
    }

    @Test func unknownConstructorNamesTheIDTheTypeAndThePath() throws {
        // inputPeerUserFromMessage#a87b0a1c peer:InputPeer … with an unknown ID where the peer belongs.
        let wire = Hex.decode("1c0a7ba8 efbeadde")!
        do {
            _ = try Corpus.registry.parse(bytes: wire)
            Issue.record("parsed")
        } catch {
            #expect(error.reason == .unknownConstructor(0xdead_beef, type: "InputPeer"))
            #expect(error.offset == 4)
            #expect(error.path.first?.constructor == "inputPeerUserFromMessage")
            #expect(error.path.first?.field == "peer")
            #expect(error.description.contains("deadbeef"))
        }
    }

    @Test func truncationNamesTheFieldBeingRead() throws {
        // user#b1b8cc83 flags:# (18 true flags) flags2:# (12 true flags) id:long access_hash:flags.0?long …: the
        // true flags read nothing, so a record cut after each read names the next field that reads.
        let prefix = "83ccb8b1"
        let cuts: [(hex: String, field: String)] = [
            ("", "flags"), ("01000000", "flags2"), ("01000000 00000000", "id"),
            ("01000000 00000000 0100000000000000", "access_hash"),
        ]
        for cut in cuts {
            do {
                _ = try Corpus.registry.parse(bytes: Hex.decode(prefix + cut.hex)!)
                Issue.record("\(cut.field): parsed")
            } catch {
                #expect(error.path.first?.constructor == "user", "\(error)")
                #expect(error.path.first?.field == cut.field, "\(error)")
            }
        }
    }

    @Test func oversizedAndNegativeLengthsAndCounts() throws {
        // textPlain#744694e0 text:string with a 0xfe length of 16 MiB - 1 and 4 bytes of data.
        #expect(throws: TLDecodingError.self) { try Corpus.registry.parse(bytes: Hex.decode("e0944674 feffffff 41414141")!) }
        // msgs_ack#62d6b459 msg_ids:Vector<long> with a huge count, a negative count, and a wrong vector ID.
        for body in ["15c4b51c ffffff7f", "15c4b51c ffffffff", "15c4b51c 00000080", "deadbeef 01000000 0000000000000000"] {
            do {
                _ = try Corpus.registry.parse(bytes: Hex.decode("59b4d662" + body)!)
                Issue.record("\(body) parsed")
            } catch {
                #expect(error.path.first?.constructor == "msgs_ack", "\(error)")
            }
        }
    }

    @Test func nestingDepthIsBounded() throws {
        // 10,000 nested inputPeerUserFromMessage: far past the limit, and deep enough to overflow an unbounded
        // recursive parser's stack.
        var wire: [UInt8] = []
        for _ in 0..<10_000 { wire += Hex.decode("1c0a7ba8")! }
        wire += Hex.decode("c97ea07d")!  // inputPeerSelf
        for _ in 0..<10_000 { wire += Hex.decode("01000000 0100000000000000")! }
        #expect {
            _ = try Corpus.registry.parse(bytes: wire)
        } throws: { error in
            guard let e = error as? TLDecodingError, case .depthExceeded = e.reason else { return false }
            return true
        }
        // Within the limit the same shape parses.
        var shallow: [UInt8] = []
        for _ in 0..<10 { shallow += Hex.decode("1c0a7ba8")! }
        shallow += Hex.decode("c97ea07d")!
        for _ in 0..<10 { shallow += Hex.decode("01000000 0100000000000000")! }
        _ = try Corpus.registry.parse(bytes: shallow)
    }

    @Test func randomCorruptionNeverTraps() {
        var generator = SplitMix64(seed: 0x5eed)
        var parsedOK = 0
        for record in samples {
            for _ in 0..<300 {
                var bytes = record.bytes
                for _ in 0..<3 {
                    let i = Int(generator.next() % UInt64(bytes.count))
                    bytes[i] = UInt8(truncatingIfNeeded: generator.next())
                }
                if (try? Corpus.registry.parse(bytes: bytes)) != nil { parsedOK += 1 }
            }
        }
        // Some corruptions land in payload bytes and still parse; the point is that none trapped.
        #expect(parsedOK < samples.count * 300)
    }
}

struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct RequestDecodingTests {
    @Test func aServerReadsRequestsByTheirDefinition() throws {
        let (_, request, _) = Api.functions.messages.getHistory(
            peer: .inputPeerSelf, offsetId: 1, offsetDate: 2, addOffset: 3, limit: 4, maxId: 5, minId: 6, hash: 7)
        let parsed = try #require(try Api.registry.parse(request) as? TLRequest)
        #expect(parsed.name == "messages.getHistory")
        guard case .int(let limit)? = parsed["limit"], case .object(let peer)? = parsed["peer"] else {
            Issue.record("unexpected arguments \(parsed.arguments.map(\.0))")
            return
        }
        #expect(limit == 4)
        #expect(peer.descriptionFields().0 == "inputPeerSelf")
    }

    /// `parseRequest` reads what `parse` reads, without the box: a function (gzip-packed too), nil for a
    /// constructor, and the same errors for trailing bytes and unknown IDs.
    @Test func parseRequestMatchesParse() throws {
        let call = Api.functions.messages.getHistory(
            peer: .inputPeerSelf, offsetId: 1, offsetDate: 2, addOffset: 3, limit: 4, maxId: 5, minId: 6, hash: 7)
        let wire = call.1.bytes
        for bytes in [wire, GZip.packedObject(wire)] {
            let request = try #require(try Api.registry.parseRequest(bytes: bytes))
            let boxed = try #require(try Api.registry.parse(bytes: bytes) as? TLRequest)
            #expect(request.name == "messages.getHistory" && request.description == boxed.description)
            let buffer = Buffer()
            request.serialize(buffer, true)
            #expect(buffer.bytes == wire)
        }
        let constructor = Buffer()
        Api.InputPeer.inputPeerSelf.serialize(constructor, true)
        #expect(try Api.registry.parseRequest(bytes: constructor.bytes) == nil)
        #expect(throws: TLDecodingError.self) { try Api.registry.parseRequest(bytes: wire + [0, 0, 0, 0]) }
        #expect(throws: TLDecodingError.self) { try Api.registry.parseRequest(bytes: [0xef, 0xbe, 0xad, 0xde]) }
    }

    @Test func anArgumentOfTheWrongTypeIsATypedError() throws {
        // messages.getHistory whose peer is a userEmpty (a User, not an InputPeer).
        let wire = Hex.decode("c5e62344" + "7a4bbcd3 0100000000000000" + String(repeating: "00000000", count: 6) + "0000000000000000")!
        #expect {
            _ = try Api.registry.parse(bytes: wire)
        } throws: { error in
            guard let e = error as? TLDecodingError, case .invalidValue(let text) = e.reason else { return false }
            return text.contains("InputPeer") && e.path.first?.field == "peer"
        }
    }
}
