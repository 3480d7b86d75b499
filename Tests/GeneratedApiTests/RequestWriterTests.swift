import RequestReplay
import TLJSON
import TLRuntime
import Testing
import TelegramApi
import MTProtoApi

/// Generated functions write requests directly. Each function's writer is checked here against the golden corpus
/// (requests serialized by an independent implementation), reached through the replay module.
@Suite struct RequestWriterTests {
    static let plain = TLLogFormatter(redactedFields: [])

    @Test func everyGeneratedWriterWritesTheCorpusRequestsByteForByte() throws {
        var failures: [String] = []
        var written: Set<UInt32> = []
        var requests = 0
        for record in Corpus.records {
            let request: TLRequest
            do {
                guard let parsed = try Corpus.registry.parseRequest(bytes: record.bytes) else { continue }
                request = parsed
            } catch {
                failures.append("#\(record.seq) \(record.name): does not parse: \(error)")
                continue
            }
            requests += 1
            do {
                guard let replayed = try RequestReplay.replay(request) else {
                    failures.append("#\(record.seq) \(record.name): no generated writer")
                    continue
                }
                // Written after other bytes: a writer appends, it does not assume an empty buffer.
                let buffer = Buffer()
                buffer.appendRaw([0xee, 0xee, 0xee])
                replayed.write(into: buffer)
                let bytes = Array(buffer.bytes.dropFirst(3))
                if buffer.bytes.prefix(3) != [0xee, 0xee, 0xee] || bytes != record.bytes {
                    failures.append("#\(record.seq) \(record.name): \(Hex.encode(bytes).prefix(160)) != \(Hex.encode(record.bytes).prefix(160))")
                    continue
                }
                written.insert(request.constructorID)
                // The description reads the same request back from the bytes alone.
                let description = FunctionDescription(serialized: Buffer(bytes: bytes), registry: Corpus.registry)
                if description.name != request.name
                    || Self.plain.format(description.function) != Self.plain.format(request) {
                    failures.append("#\(record.seq) \(record.name): described as \(Self.plain.format(description))")
                }
            } catch {
                failures.append("#\(record.seq) \(record.name): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) requests:\n\(failures.prefix(15).joined(separator: "\n"))")
        #expect(requests >= 1_325)
        // Every function of both schemas was written at least once.
        let all = Set(Api.registry.functionIDs).union(MT.registry.functionIDs)
        #expect(all.count == 823)
        #expect(all.subtracting(written).isEmpty, "never written: \(all.subtracting(written).map { String($0, radix: 16) })")
    }

    @Test func theBuilderWritesWhatTheWriterWrites() throws {
        let peer = Api.InputPeer.inputPeerUser(.init(userId: 7, accessHash: -1))
        let (description, buffer, _) = Api.functions.messages.sendMessage(
            silent: true, peer: peer, message: "hi", randomId: 9, scheduleDate: 100, effect: 5)
        let direct = Buffer()
        // The writer takes the builder's defaults: only what is set is spelled out.
        Api.functions.messages.sendMessage(
            into: direct, silent: true, peer: peer, message: "hi", randomId: 9, scheduleDate: 100, effect: 5)
        #expect(buffer.bytes == direct.bytes)
        // flags: silent .5, schedule_date .10, effect .18
        #expect(Array(buffer.bytes[0..<8]) == [0x62, 0x8f, 0xf4, 0xfe, 0x20, 0x04, 0x04, 0x00])
        #expect(description.name == "messages.sendMessage")
        #expect(description.parameters.map(\.0)
            == ["flags", "silent", "peer", "message", "random_id", "schedule_date", "effect"])
    }

    @Test func aDescriptionOfBytesTheRegistryCannotReadKeepsThem() throws {
        // An inner call built by hand: the outer request parses only as far as its registry knows.
        let inner = Buffer(bytes: [0x01, 0x02, 0x03, 0x04, 0xff])
        let outer = Api.functions.invokeWithLayer(
            layer: 229, query: (FunctionDescription(serialized: inner, registry: Api.registry), inner,
                                DeserializeFunctionResponse<Bool>(Bool.self)))
        #expect(outer.0.name == "invokeWithLayer")
        let unreadable = try #require(outer.0.function as? TLUnreadableRequest)
        #expect(unreadable.error != nil)
        #expect(unreadable.bytes == outer.1.bytes)
        #expect(unreadable.boxedBytes == outer.1.bytes)
        #expect(Self.plain.format(outer.0).hasPrefix("invokeWithLayer(bytes: "))
        // A constructor's bytes are not a request: no error, and the ID is shown.
        let constructor = FunctionDescription(serialized: Buffer(bytes: Api.InputPeer.inputPeerSelf.boxedBytes),
                                              registry: Api.registry)
        #expect(constructor.name == "unknown#7da07ec9")
        #expect((constructor.function as? TLUnreadableRequest)?.error == nil)
    }

    @Test func argumentsConvertToTheirSwiftTypesOrSayWhy() throws {
        let history = Api.functions.messages.getHistory(
            peer: .inputPeerSelf, offsetId: 1, offsetDate: 2, addOffset: 3, limit: 20, maxId: 0, minId: 0, hash: 7)
        let request = try #require(try Api.registry.parseRequest(bytes: history.1.bytes))
        #expect(try request.argument("limit", as: Int32.self) == 20)
        #expect(try request.argument("hash", as: Int64.self) == 7)
        guard case .inputPeerSelf = try request.argument("peer", as: Api.InputPeer.self) else {
            Issue.record("peer is not inputPeerSelf")
            return
        }
        #expect(throws: TLArgumentError(function: "messages.getHistory", argument: "limit", expected: "Int64",
                                        found: "int")) { try request.argument("limit", as: Int64.self) }
        #expect(throws: TLArgumentError(function: "messages.getHistory", argument: "peer", expected: "InputUser",
                                        found: "inputPeerSelf")) { try request.argument("peer", as: Api.InputUser.self) }
        #expect(throws: TLArgumentError(function: "messages.getHistory", argument: "nope", expected: "Int32",
                                        found: "nothing")) { try request.argument("nope", as: Int32.self) }
        #expect(try request.optionalArgument("nope", as: Int32.self) == nil)

        // Vectors convert element by element; a vector of other elements is an error, not a partial array.
        let read = try #require(try Api.registry.parseRequest(
            bytes: Api.functions.messages.readMessageContents(id: [1, 2, 3]).1.bytes))
        #expect(try read.argument("id", as: [Int32].self) == [1, 2, 3])
        #expect(throws: TLArgumentError.self) { try read.argument("id", as: [Int64].self) }

        let send = try #require(try Api.registry.parseRequest(bytes: Api.functions.messages.sendMessage(
            silent: true, peer: .inputPeerSelf, message: "m", randomId: 1).1.bytes))
        #expect(send.flag("silent") && !send.flag("background"))
        #expect(try send.optionalArgument("reply_to", as: Api.InputReplyTo.self) == nil)
        #expect(throws: TLArgumentError.self) { try send.argument("silent", as: Bool.self) }
    }
}

@Suite struct FunctionDescriptionTests {
    @Test func aDescriptionDoesNotChangeWhenItsBufferIsWrittenAgain() {
        let (description, buffer, _) = Api.functions.messages.getHistory(
            peer: .inputPeerSelf, offsetId: 1, offsetDate: 2, addOffset: 3, limit: 20, maxId: 0, minId: 0, hash: 7)
        let before = TLLogFormatter.telegram.format(description)
        buffer.removeAll(keepingCapacity: true)
        buffer.appendRaw([UInt8](repeating: 0xee, count: 64))
        #expect(TLLogFormatter.telegram.format(description) == before)
        #expect(before.hasPrefix("messages.getHistory(peer: inputPeerSelf"))
    }
}
