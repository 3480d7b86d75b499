// The four framings: the `transports` family of crypto_vectors.json byte for byte, quick acks and error codes,
// any split of the stream, and every malformed header the decoders must refuse.
import MTProtoCrypto
import Testing

@testable import MTProtoTransport

@Suite struct FramingVectorTests {
    @Test func transportsFamilyEncodesByteForByte() throws {
        let vectors = try Vectors.crypto().transports
        #expect(vectors.count == 50)
        for v in vectors {
            let payload = hex(v.payload)
            var abridged = AbridgedCodec(role: .client)
            #expect(try abridged.encode(payload, quickAck: false) == hex(v.abridged))
            var intermediate = IntermediateCodec(role: .client)
            #expect(try intermediate.encode(payload, quickAck: false) == hex(v.intermediate))
            let padded = PaddedIntermediateCodec(role: .client)
            #expect(try padded.encode(payload, padding: hex(v.paddedIntermediatePadding)) == hex(v.paddedIntermediate))
            // The codec draws 16 bytes per frame: a count, then the padding; replay that.
            let padding = hex(v.paddedIntermediatePadding)
            let replay = ReplayRandom(paddingDraw(padding))
            var drawn = PaddedIntermediateCodec(role: .client, random: replay)
            #expect(try drawn.encode(payload, quickAck: false) == hex(v.paddedIntermediate))
            #expect(replay.overrun == 0)
            var full = FullCodec(role: .client, sendSequence: v.fullSeq)
            #expect(try full.encode(payload, quickAck: false) == hex(v.full))
            #expect(full.nextSendSequence == v.fullSeq &+ 1)
        }
    }

    @Test func transportsFamilyDecodesWholeAndByteByByte() throws {
        for v in try Vectors.crypto().transports {
            let payload = hex(v.payload)
            let cases: [(() -> any FrameCodec, String, [UInt8])] = [
                ({ AbridgedCodec(role: .server) }, v.abridged, payload),
                ({ IntermediateCodec(role: .server) }, v.intermediate, payload),
                // Random payloads are not MTProto-shaped, so keep the padding and compare with it.
                ({ PaddedIntermediateCodec(role: .server, padding: .keep) }, v.paddedIntermediate,
                 payload + hex(v.paddedIntermediatePadding)),
                ({ FullCodec(role: .server, receiveSequence: v.fullSeq) }, v.full, payload),
            ]
            for (make, wire, expected) in cases {
                var whole = make()
                #expect(try whole.decode(feed: hex(wire)) == [.frame(expected)])
                try whole.finish()
                var bytewise = make()
                var events: [TransportEvent] = []
                for byte in hex(wire) { events += try bytewise.decode(feed: [byte]) }
                #expect(events == [.frame(expected)])
            }
        }
    }
}

@Suite struct FramingBehaviourTests {
    /// Encodes `payloads` with a client codec and decodes them with a server codec, over random splits.
    func roundTrip(_ kind: TransportKind, seed: UInt64) throws {
        let random = SeededRandom(seed: seed)
        var client = makeFrameCodec(kind: kind, role: .client, random: random)
        let payloads = (0..<30).map { _ in mtprotoPayload(random: random) }
        var wire: [UInt8] = []
        for (index, payload) in payloads.enumerated() {
            wire += try client.encode(payload, quickAck: kind != .full && index % 3 == 0)
        }
        let expected = payloads.enumerated().map { index, payload in
            TransportEvent.frame(payload, quickAckRequested: kind != .full && index % 3 == 0)
        }
        for maxChunk in [1, 7, 300, wire.count] {
            var server = makeFrameCodec(kind: kind, role: .server)
            var events: [TransportEvent] = []
            for chunk in chunks(wire, random: random, maxChunk: maxChunk) { events += try server.decode(feed: chunk) }
            #expect(events == expected, "\(kind), chunks up to \(maxChunk)")
            try server.finish()
        }
    }

    /// Frames of 64 KiB and more arrive into storage made for them and are handed out whole; small frames between
    /// them, and every way a read can cut them, give the same frames.
    @Test(arguments: TransportKind.allCases) func largeFramesSurviveAnySplit(kind: TransportKind) throws {
        let random = SeededRandom(seed: 0x1a4e)
        let sizes = [300_000, 16, 65_536, 70_004, 40, 524_304]
        let payloads = sizes.map { [UInt8](repeating: 0, count: 8) + random.bytes($0 - 8) }
        var client = makeFrameCodec(kind: kind, role: .client, random: random)
        var wire: [UInt8] = []
        for payload in payloads { wire += try client.encode(payload, quickAck: false) }
        for maxChunk in [997, 65_536, 100_000, wire.count] {
            var server = makeFrameCodec(kind: kind, role: .server, padding: .keep)
            var events: [TransportEvent] = []
            for chunk in chunks(wire, random: random, maxChunk: maxChunk) { events += try server.decode(feed: chunk) }
            let frames = events.compactMap { if case .frame(let payload, _) = $0 { payload } else { nil } }
            #expect(frames.count == payloads.count, "\(kind), chunks up to \(maxChunk)")
            for (frame, payload) in zip(frames, payloads) {
                // Padded intermediate keeps its 0...15 random bytes here (`.keep`); the others give the payload.
                let padding = frame.count - payload.count
                #expect(kind == .paddedIntermediate ? (0...15).contains(padding) : padding == 0)
                #expect(frame.starts(with: payload), "\(kind), chunks up to \(maxChunk)")
            }
            try server.finish()
        }
    }

    @Test(arguments: TransportKind.allCases) func anySplitYieldsTheSameFrames(kind: TransportKind) throws {
        try roundTrip(kind, seed: 0x5eed + UInt64(kind.hashValue & 0xff))
    }

    @Test(arguments: [TransportKind.abridged, .intermediate, .paddedIntermediate])
    func quickAcksAndErrorCodesReachTheClient(kind: TransportKind) throws {
        var server = makeFrameCodec(kind: kind, role: .server, random: SeededRandom(seed: 3))
        let payload = [UInt8](repeating: 7, count: 40) + [1, 0, 0, 0] + [UInt8](repeating: 9, count: 12)
        var wire = try server.encodeQuickAck(0x1234_5678)
        wire += try server.encode(payload, quickAck: false)
        wire += try server.encodeTransportError(-404)
        wire += try server.encodeTransportError(-429)
        var client = makeFrameCodec(kind: kind, role: .client, padding: .keep)
        var events: [TransportEvent] = []
        for byte in wire { events += try client.decode(feed: [byte]) }
        #expect(events.first == .quickAck(0x9234_5678))
        #expect(events.dropFirst().first.map { if case .frame = $0 { true } else { false } } == true)
        #expect(Array(events.suffix(2)) == [.transportError(code: -404), .transportError(code: -429)])
    }

    @Test func abridgedQuickAckIsBigEndianOnTheWire() throws {
        let server = AbridgedCodec(role: .server)
        #expect(try server.encodeQuickAck(0x0102_0304) == [0x81, 0x02, 0x03, 0x04])
        var client = AbridgedCodec(role: .client)
        #expect(try client.encode([UInt8](repeating: 0, count: 8), quickAck: true) == [0x82] + [UInt8](repeating: 0, count: 8))
        let long = [UInt8](repeating: 1, count: 4 * 200)
        #expect(try client.encode(long, quickAck: true).prefix(4) == [0xff, 200, 0, 0])
    }

    @Test func fullTransportErrorCodeAndNoQuickAck() throws {
        var server = FullCodec(role: .server)
        let wire = try server.encodeTransportError(-404)
        var client = FullCodec(role: .client)
        #expect(try client.decode(feed: wire) == [.transportError(code: -404)])
        #expect(throws: TransportError.quickAckUnsupported(.full)) { try client.encode([0, 0, 0, 0], quickAck: true) }
        #expect(throws: TransportError.quickAckUnsupported(.full)) { try server.encodeQuickAck(1) }
    }

    @Test func rolesAreEnforced() throws {
        var client = IntermediateCodec(role: .client)
        var server = IntermediateCodec(role: .server)
        #expect(throws: TransportError.self) { try client.encodeTransportError(-1) }
        #expect(throws: TransportError.self) { try client.encodeQuickAck(1) }
        #expect(throws: TransportError.self) { try server.encode([0, 0, 0, 0], quickAck: true) }
    }

    @Test func paddingIsStrippedFromMTProtoShapedPayloads() throws {
        let random = SeededRandom(seed: 11)
        for _ in 0..<200 {
            let payload = mtprotoPayload(random: random, maxBlocks: 4)
            let padding = random.bytes(random.int(0...15))
            #expect(PaddedIntermediateCodec.stripPadding(payload + padding) == payload)
        }
        #expect(PaddedIntermediateCodec.stripPadding([0x6c, 0xfe, 0xff, 0xff, 1, 2, 3]) == [0x6c, 0xfe, 0xff, 0xff])
        // An unencrypted message whose declared length overruns, or leaves 16+ bytes over.
        var header = [UInt8](repeating: 0, count: 16) + [40, 0, 0, 0]
        #expect(PaddedIntermediateCodec.stripPadding(header + [UInt8](repeating: 1, count: 20)) == nil)
        header[16] = 4
        #expect(PaddedIntermediateCodec.stripPadding(header + [UInt8](repeating: 1, count: 20)) == nil)
    }
}

@Suite struct MalformedFramingTests {
    @Test func fullRejectsBadChecksumAndSequence() throws {
        var sender = FullCodec(role: .client)
        let first = try sender.encode([1, 2, 3, 4, 5, 6, 7, 8], quickAck: false)
        let second = try sender.encode([9, 9, 9, 9], quickAck: false)

        var corrupt = first
        corrupt[9] ^= 0x01
        var receiver = FullCodec(role: .server)
        #expect(throws: TransportError.self) { try receiver.decode(feed: corrupt) }
        do {
            var r = FullCodec(role: .server)
            _ = try r.decode(feed: corrupt)
        } catch {
            guard case let .checksumMismatch(expected, received, offset) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(offset == 0)
            #expect(received == first.suffix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) })
            #expect(expected != received)
        }

        var skipping = FullCodec(role: .server)
        #expect(throws: TransportError.sequenceMismatch(expected: 0, received: 1, offset: 0)) {
            try skipping.decode(feed: second)
        }
        var inOrder = FullCodec(role: .server)
        #expect(try inOrder.decode(feed: first + second).count == 2)
        #expect(throws: TransportError.sequenceMismatch(expected: 2, received: 0, offset: first.count + second.count)) {
            try inOrder.decode(feed: first)
        }
    }

    @Test func lengthsOutOfRangeAreTypedErrors() throws {
        let max = 1024
        let cases: [(any FrameCodec, [UInt8], Int64)] = [
            (AbridgedCodec(role: .server, maximumPayload: max), [0x00], 0),
            (AbridgedCodec(role: .server, maximumPayload: max), [0x7f, 0x01, 0x01, 0x00], 257 * 4),
            (IntermediateCodec(role: .server, maximumPayload: max), [0, 0, 0, 0], 0),
            (IntermediateCodec(role: .server, maximumPayload: max), [3, 0, 0, 0], 3),
            (IntermediateCodec(role: .server, maximumPayload: max), [0xff, 0xff, 0xff, 0x7f], Int64(Int32.max)),
            (PaddedIntermediateCodec(role: .server, maximumPayload: max), [0x00, 0x10, 0, 0], 4096),
            (FullCodec(role: .server, maximumPayload: max), [0xfc, 0xff, 0xff, 0xff], -4),
            (FullCodec(role: .server, maximumPayload: max), [12, 0, 0, 0], 12),
            (FullCodec(role: .server, maximumPayload: max), [0, 0, 1, 0], 65536),
        ]
        for (codec, header, length) in cases {
            var codec = codec
            do {
                _ = try codec.decode(feed: header)
                Issue.record("\(codec.kind) accepted header \(header)")
            } catch {
                guard case let .lengthOutOfRange(kind, reported, _, _, offset) = error else {
                    Issue.record("\(codec.kind): wrong error \(error)")
                    continue
                }
                #expect(kind == codec.kind)
                #expect(reported == length)
                #expect(offset == 0)
            }
        }
        // The offset points at the offending frame, after good ones.
        var codec = IntermediateCodec(role: .server, maximumPayload: max)
        #expect(throws: TransportError.lengthOutOfRange(kind: .intermediate, length: 2, minimum: 4, maximum: 1024, offset: 12)) {
            try codec.decode(feed: [8, 0, 0, 0] + [UInt8](repeating: 0, count: 8) + [2, 0, 0, 0])
        }
    }

    @Test func oversizedOutgoingPayloadsAreRefused() {
        var abridged = AbridgedCodec(role: .client, maximumPayload: 64)
        #expect(throws: TransportError.unalignedPayload(kind: .abridged, length: 6)) {
            try abridged.encode([UInt8](repeating: 0, count: 6), quickAck: false)
        }
        #expect(throws: TransportError.self) { try abridged.encode([UInt8](repeating: 0, count: 68), quickAck: false) }
        var intermediate = IntermediateCodec(role: .client)
        #expect(throws: TransportError.self) { try intermediate.encode([], quickAck: false) }
        let padded = PaddedIntermediateCodec(role: .client)
        #expect(throws: TransportError.invalidPadding(length: 16, offset: -1)) {
            try padded.encode([0, 0, 0, 0], padding: [UInt8](repeating: 0, count: 16))
        }
    }

    @Test(arguments: TransportKind.allCases) func truncatedStreamsEndWithTruncated(kind: TransportKind) throws {
        var client = makeFrameCodec(kind: kind, role: .client, random: SeededRandom(seed: 5))
        let frame = try client.encode([UInt8](repeating: 0, count: 8) + [UInt8](repeating: 1, count: 8) + [8, 0, 0, 0]
            + [UInt8](repeating: 2, count: 8), quickAck: false)
        for cut in [1, 3, frame.count - 1] {
            var server = makeFrameCodec(kind: kind, role: .server)
            #expect(try server.decode(feed: Array(frame.prefix(cut))).isEmpty)
            #expect(throws: TransportError.truncated(context: "\(kind) frame", buffered: cut)) {
                try server.finish()
            }
        }
    }

    @Test func paddedFramesWithImpossiblePaddingAreRejected() throws {
        var server = PaddedIntermediateCodec(role: .server)
        // Unencrypted header declaring 100 bytes inside a 40-byte frame.
        let payload = [UInt8](repeating: 0, count: 16) + [100, 0, 0, 0] + [UInt8](repeating: 1, count: 20)
        #expect(throws: TransportError.invalidPadding(length: 40, offset: 0)) {
            try server.decode(feed: [40, 0, 0, 0] + payload)
        }
    }

    @Test func randomGarbageNeverCrashes() {
        let random = SeededRandom(seed: 99)
        var rejected = 0
        var undecided = 0
        for _ in 0..<400 {
            let garbage = random.bytes(random.int(1...200))
            for kind in TransportKind.allCases {
                for role in [TransportRole.client, .server] {
                    var codec = makeFrameCodec(kind: kind, role: role, maximumPayload: 4096)
                    do {
                        _ = try codec.decode(feed: garbage)
                        undecided += 1
                    } catch {
                        rejected += 1
                    }
                }
            }
        }
        // Full framing rejects nearly all garbage (length or CRC); the others often wait for more bytes.
        #expect(rejected > 400)
        #expect(undecided > 0)
    }
}
