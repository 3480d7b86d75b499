import TLJSON
import TLRuntime
import Testing
import TelegramApi
import TelegramApiServer

/// The server side of the API: every request of the golden corpus (written by an independent implementation) read
/// into its typed request and written back byte for byte; broken requests are typed errors.
@Suite struct TypedRequestTests {
    /// The corpus's requests of `api.tl` (the MTProto schema's have no server module).
    var apiRequests: [Corpus.Record] {
        Corpus.records.filter { record in
            guard record.bytes.count >= 4 else { return false }
            let id = UInt32(record.bytes[0]) | UInt32(record.bytes[1]) << 8 | UInt32(record.bytes[2]) << 16
                | UInt32(record.bytes[3]) << 24
            return Api.registry.functionDefinition(for: id) != nil
        }
    }

    @Test func everyCorpusRequestParsesIntoItsTypedRequestAndWritesBackByteForByte() throws {
        var failures: [String] = []
        var covered: Set<UInt32> = []
        let requests = apiRequests
        for record in requests {
            do {
                let request = try Api.requests.parse(bytes: record.bytes)
                // Written after other bytes: the writer appends.
                let buffer = Buffer()
                buffer.appendRaw([0xee, 0xee])
                request.serialize(buffer, true)
                guard buffer.bytes == [0xee, 0xee] + record.bytes else {
                    failures.append("#\(record.seq) \(record.name): \(Hex.encode(Array(buffer.bytes.dropFirst(2))).prefix(120))")
                    continue
                }
                guard type(of: request).tlFunctionName == record.name else {
                    failures.append("#\(record.seq) \(record.name): read as \(type(of: request).tlFunctionName)")
                    continue
                }
                covered.insert(type(of: request).tlConstructorID)
            } catch {
                failures.append("#\(record.seq) \(record.name): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) requests:\n\(failures.prefix(15).joined(separator: "\n"))")
        #expect(requests.count >= 1_300)
        // Every function of the schema has a typed request, and the corpus reaches each one.
        let all = Set(Api.registry.functionIDs)
        #expect(Set(Api.requests.ids) == all)
        #expect(all.subtracting(covered).isEmpty, "never read: \(all.subtracting(covered).map { String($0, radix: 16) })")
    }

    @Test func theTypedRequestHoldsTheArgumentsTheDynamicReaderReads() throws {
        let record = try #require(apiRequests.first { $0.name == "messages.sendMessage" })
        let typed = try Api.functions.messages.SendMessage.parse(bytes: record.bytes)
        let dynamic = try #require(try Api.registry.parseRequest(bytes: record.bytes))
        #expect(typed.message == (try dynamic.argument("message", as: String.self)))
        #expect(typed.randomId == (try dynamic.argument("random_id", as: Int64.self)))
        #expect(typed.noWebpage == dynamic.flag("no_webpage"))
        #expect(typed.silent == dynamic.flag("silent"))
        #expect(typed.peer.boxedBytes == (try dynamic.argument("peer", as: Api.InputPeer.self)).boxedBytes)
        // A request built by hand writes what the generated builder writes.
        let built = Api.functions.messages.SendMessage(silent: true, peer: .inputPeerSelf, message: "hi", randomId: 7)
        #expect(built.boxedBytes == Api.functions.messages.sendMessage(silent: true, peer: .inputPeerSelf, message: "hi",
                                                                       randomId: 7).1.bytes)
    }

    @Test func wrappersHoldTheInnerCallAsATypedRequest() throws {
        let record = try #require(apiRequests.first { $0.name == "invokeWithLayer" })
        let request = try Api.functions.InvokeWithLayer.parse(bytes: record.bytes)
        #expect(request.query.boxedBytes == Array(record.bytes.dropFirst(8)))
        #expect(Api.requests.type(for: type(of: request.query).tlConstructorID) != nil)
    }

    @Test func resultsAreWrittenAsTheirFunctionReturnsThem() throws {
        #expect(Api.functions.messages.MarkDialogUnread.resultBytes(true) == [0xb5, 0x75, 0x72, 0x99])
        let users: [Api.User] = [.userEmpty(.init(id: 5))]
        let buffer = Buffer()
        buffer.appendVector(users, boxed: true)
        #expect(Api.functions.users.GetUsers.resultBytes(users) == buffer.bytes)
    }

    // MARK: Malformed requests (the shapes of MalformedInputTests, applied to requests)

    var samples: [Corpus.Record] {
        let names: Set<String> = ["messages.sendMessage", "invokeWithLayer", "initConnection", "messages.getHistory",
                                  "account.getAuthorizationForm", "upload.saveFilePart"]
        var seen: Set<String> = []
        return apiRequests.filter { names.contains($0.name) && seen.insert($0.name).inserted }
    }

    @Test func truncationAtEveryByteIsATypedError() throws {
        #expect(samples.count >= 4)
        MalformedInputTests.expectTruncationIsTyped(samples) { bytes throws(TLDecodingError) in
            _ = try Api.requests.parse(bytes: bytes)
        }
    }

    @Test func trailingBytesAreAnError() throws {
        let record = try #require(samples.first)
        MalformedInputTests.expectTrailingBytesAreAnError(record) { bytes throws(TLDecodingError) in
            _ = try Api.requests.parse(bytes: bytes)
        }
    }

    @Test func anUnknownFunctionOrArgumentNamesTheIDAndThePath() throws {
        #expect {
            _ = try Api.requests.parse(bytes: Hex.decode("efbeadde")!)
        } throws: { error in
            (error as? TLDecodingError)?.reason == .unknownConstructor(0xdead_beef, type: "function")
        }
        // messages.sendMessage#fef48f62 flags:# … peer:InputPeer with an unknown ID where the peer belongs.
        do {
            _ = try Api.requests.parse(bytes: Hex.decode("628ff4fe 00000000 efbeadde")!)
            Issue.record("parsed")
        } catch {
            #expect(error.reason == .unknownConstructor(0xdead_beef, type: "InputPeer"))
            #expect(error.path.first?.constructor == "messages.sendMessage")
            #expect(error.path.first?.field == "peer")
        }
        // A request of another function than the type asked for.
        #expect(throws: TLDecodingError.self) {
            _ = try Api.functions.help.GetConfig.parse(bytes: Api.functions.help.getNearestDc().1.bytes)
        }
    }

    @Test func nestingDepthIsBounded() throws {
        // 10,000 nested invokeWithoutUpdates#bf9459b7 around help.getConfig#c4f9186b.
        var wire: [UInt8] = []
        for _ in 0..<10_000 { wire += Hex.decode("b75994bf")! }
        wire += Hex.decode("6b18f9c4")!
        #expect {
            _ = try Api.requests.parse(bytes: wire)
        } throws: { error in
            guard let e = error as? TLDecodingError, case .depthExceeded = e.reason else { return false }
            return true
        }
        let shallow = Array(repeating: Hex.decode("b75994bf")!, count: 5).joined() + Hex.decode("6b18f9c4")!
        let parsed = try Api.requests.parse(bytes: Array(shallow))
        #expect(parsed.boxedBytes == Array(shallow))
    }

    @Test func randomCorruptionNeverTraps() {
        var generator = SplitMix64(seed: 0x5eed_0050)
        var parsedOK = 0
        for record in samples {
            for _ in 0..<300 {
                var bytes = record.bytes
                for _ in 0..<3 {
                    let i = Int(generator.next() % UInt64(bytes.count))
                    bytes[i] = UInt8(truncatingIfNeeded: generator.next())
                }
                // What parses writes back what it read.
                if let request = try? Api.requests.parse(bytes: bytes) {
                    parsedOK += 1
                    if let again = try? Api.requests.parse(bytes: request.boxedBytes) {
                        #expect(again.boxedBytes == request.boxedBytes)
                    } else {
                        Issue.record("\(record.name): a parsed request does not parse again")
                    }
                }
            }
        }
        #expect(parsedOK < samples.count * 300)
    }
}
