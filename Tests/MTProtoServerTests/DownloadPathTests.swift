// The server's side of a download, where the time goes: `upload.file` written straight from the stored document
// must equal what the generated code writes, and a read carrying several requests is answered frame by frame
// (`step`), so a driver can send the first answer while the next one is encrypted — also when one container carries
// several requests for file parts.
import MTProto
import MTProtoCrypto
import MTProtoServer
import TLRuntime
import TelegramApi
@testable import TestTelegram
import Testing

@Suite struct DownloadPathTests {
    /// The results one server step's output carries to the client's session, in order.
    static func results(of output: ServerConnectionOutput, _ pair: inout Pair,
                        _ session: inout Session) throws -> [(RequestID, [UInt8])] {
        var results: [(RequestID, [UInt8])] = []
        for case .frame(let payload, _) in try pair.transport.receive(output.outbound).events {
            for case .result(let id, let bytes) in try session.receive(frame: payload, now: pair.now) {
                results.append((id, Array(bytes)))
            }
        }
        return results
    }

    /// A pair past its handshake on `context`, and the client's session.
    static func handshaken(_ context: ServerContext, seed: UInt64) throws -> (Pair, Session) {
        var pair = try Pair(context: context, seed: seed)
        _ = try pair.handshake()
        guard let session = pair.session else { throw HarnessFailure(description: "no session") }
        return (pair, session)
    }

    /// A handshaken pair whose server answers every `upload.getFile` with 200,000 bytes.
    static func largeFileSession(seed: UInt64) throws -> (Pair, Session) {
        var handlers = TestTelegram.handlers()
        handlers.register("upload.getFile") { _ throws(RPCError) in
            TestTelegram.serialized(Api.upload.File.file(.init(type: .fileUnknown, mtime: 1,
                                                               bytes: SeededRandom(seed: seed).bytes(200_000))))
        }
        return try handshaken(try Fixture.context(seed: seed + 1, handlers: handlers), seed: seed + 2)
    }

    static func getPart(_ part: Int) -> (FunctionDescription, Buffer, DeserializeFunctionResponse<Api.upload.File>) {
        Api.functions.upload.getFile(location: .inputDocumentFileLocation(.init(id: 1, accessHash: 2, fileReference: [],
                                                                                thumbSize: "")),
                                     offset: Int64(part) << 19, limit: 1 << 19)
    }

    @Test func uploadFileIsWrittenAsTheGeneratedCodeWritesIt() {
        let document = SeededRandom(seed: 120).bytes(600_000)
        for length in [0, 1, 3, 252, 253, 254, 255, 256, 1023, 4096, 524_288] {
            for start in [0, 5] {
                let part = document[start..<(start + length)]
                let generated = TestTelegram.serialized(Api.upload.File.file(.init(
                    type: .fileUnknown, mtime: 1_700_000_123, bytes: Array(part))))
                #expect(TestTelegramService.uploadFile(mtime: 1_700_000_123, bytes: part) == generated, "\(length)")
            }
        }
    }

    @Test func eachFrameIsAnsweredByItsOwnStep() throws {
        var (pair, session) = try Self.handshaken(try Fixture.context(seed: 121), seed: 122)
        // Two requests in two frames, delivered in one read.
        var wire: [UInt8] = []
        var requests: [RequestID] = []
        for _ in 0..<2 {
            requests.append(try session.send(Api.functions.help.getNearestDc()))
            for frame in session.outgoing(now: pair.now) { wire += try pair.transport.send(frame.bytes) }
        }
        let fed = pair.server.feed(wire, now: pair.now)
        #expect(fed.outbound.isEmpty && fed.close == nil, "nothing is answered before a step")
        for request in requests {
            guard let output = pair.server.step(now: pair.now) else { throw HarnessFailure(description: "no step") }
            #expect(try Self.results(of: output, &pair, &session).map(\.0) == [request], "one step, one frame's answer")
        }
        #expect(pair.server.step(now: pair.now) == nil)
    }

    @Test func aContainerOfLargeAnswersIsAnsweredOverSeveralSteps() throws {
        var (pair, session) = try Self.largeFileSession(seed: 123)
        var requests: [RequestID] = []
        for part in 0..<3 { requests.append(try session.send(Self.getPart(part))) }
        // Sent together, the three requests share one container in one frame.
        var wire: [UInt8] = []
        let frames = session.outgoing(now: pair.now)
        #expect(frames.count == 1)
        for frame in frames { wire += try pair.transport.send(frame.bytes) }
        _ = pair.server.feed(wire, now: pair.now)
        // Each answer is hashed in the step that makes it and encrypted (while the next is hashed) and written in
        // the step after; the last step, with nothing more to run, writes the last two.
        var answeredBySteps: [[RequestID]] = []
        while let output = pair.server.step(now: pair.now) {
            let results = try Self.results(of: output, &pair, &session)
            #expect(results.allSatisfy { $0.1.count > 200_000 })
            answeredBySteps.append(results.map(\.0))
        }
        #expect(answeredBySteps == [[], [requests[0]], [requests[1], requests[2]]])
    }

    /// File-part requests arrive one per read. While the driver says the read goes on, a large answer waits
    /// (hashed) for the next read's step, which sends it; `flush` at the end of the reads sends the last one.
    @Test func aLargeAnswerWaitsForTheNextReadUntilFlush() throws {
        var (pair, session) = try Self.largeFileSession(seed: 128)
        var answered: [[RequestID]] = []
        var requests: [RequestID] = []
        for part in 0..<3 {
            requests.append(try session.send(Self.getPart(part)))
            var wire: [UInt8] = []
            for frame in session.outgoing(now: pair.now) { wire += try pair.transport.send(frame.bytes) }
            _ = pair.server.feed(wire, now: pair.now)
            while let output = pair.server.step(now: pair.now, readContinues: true) {
                answered.append(try Self.results(of: output, &pair, &session).map(\.0))
            }
        }
        answered.append(try Self.results(of: pair.server.flush(now: pair.now), &pair, &session).map(\.0))
        #expect(answered == [[], [requests[0]], [requests[1]], [requests[2]]])
        #expect(try Self.results(of: pair.server.flush(now: pair.now), &pair, &session).isEmpty, "nothing twice")
    }

    /// A container of 90 small requests is answered over three steps, in order: 32, 32 and 26.
    @Test func aContainerOfManyRequestsIsAnsweredInParts() throws {
        var (pair, session) = try Self.handshaken(try Fixture.context(seed: 129), seed: 130)
        var requests: [RequestID] = []
        for _ in 0..<90 { requests.append(try session.send(Api.functions.help.getNearestDc())) }
        var wire: [UInt8] = []
        let frames = session.outgoing(now: pair.now)
        #expect(frames.count == 1, "one container")
        for frame in frames { wire += try pair.transport.send(frame.bytes) }
        _ = pair.server.feed(wire, now: pair.now)
        var answeredBySteps: [[RequestID]] = []
        while let output = pair.server.step(now: pair.now) {
            answeredBySteps.append(try Self.results(of: output, &pair, &session).map(\.0))
        }
        let step = ServerConnection.requestsPerStep
        #expect(answeredBySteps.map(\.count) == [step, step, 90 - 2 * step])
        #expect(answeredBySteps.flatMap { $0 } == requests)
    }

    @Test func smallAnswersAreNeverHeldBack() throws {
        var (pair, session) = try Self.handshaken(try Fixture.context(seed: 126), seed: 127)
        var wire: [UInt8] = []
        for _ in 0..<3 {
            _ = try session.send(Api.functions.help.getNearestDc())
            for frame in session.outgoing(now: pair.now) { wire += try pair.transport.send(frame.bytes) }
        }
        _ = pair.server.feed(wire, now: pair.now)
        var answered = 0
        while let output = pair.server.step(now: pair.now) {
            let results = try Self.results(of: output, &pair, &session).count
            #expect(results == 1, "every step writes its own answer")
            answered += results
        }
        #expect(answered == 3)
        #expect(pair.server.step(now: pair.now) == nil)
    }
}
