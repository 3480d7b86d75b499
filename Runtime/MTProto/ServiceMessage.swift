// The MTProto service messages (core.telegram.org/mtproto/service_messages and
// service_messages_about_messages) as one enum, read from and written to a message body. The session dispatches on
// it; anything that is not a service message is an RPC request (server role) or an update (client role).
// IDs and layouts are those of Schemas/mtproto.tl, plus `msg_resend_ans_req#8610baeb`, which the official docs
// define and the schema files omit. Tests check every layout against the generated `MT` types.
import TLRuntime

enum WireID {
    static let rpcResult: UInt32 = 0xf35c_6d01
    static let rpcError: UInt32 = 0x2144_ca19
    static let msgContainer: UInt32 = 0x73f1_f8dc
    static let msgCopy: UInt32 = 0xe060_46b2
    static let gzipPacked: UInt32 = 0x3072_cfa1
    static let msgsAck: UInt32 = 0x62d6_b459
    static let badMsgNotification: UInt32 = 0xa7ef_f811
    static let badServerSalt: UInt32 = 0xedab_447b
    static let msgsStateReq: UInt32 = 0xda69_fb52
    static let msgsStateInfo: UInt32 = 0x04de_b57d
    static let msgsAllInfo: UInt32 = 0x8cc0_d131
    static let msgDetailedInfo: UInt32 = 0x276d_3ec6
    static let msgNewDetailedInfo: UInt32 = 0x809d_b6df
    static let msgResendReq: UInt32 = 0x7d86_1a08
    static let msgResendAnsReq: UInt32 = 0x8610_baeb
    static let rpcDropAnswer: UInt32 = 0x58e4_a740
    static let rpcAnswerUnknown: UInt32 = 0x5e2a_d36e
    static let rpcAnswerDroppedRunning: UInt32 = 0xcd78_e586
    static let rpcAnswerDropped: UInt32 = 0xa43a_d8b7
    static let getFutureSalts: UInt32 = 0xb921_bd04
    static let futureSalts: UInt32 = 0xae50_0895
    static let futureSalt: UInt32 = 0x0949_d9dc
    static let ping: UInt32 = 0x7abe_77ec
    static let pingDelayDisconnect: UInt32 = 0xf342_7b8c
    static let pong: UInt32 = 0x3477_73c5
    static let destroySession: UInt32 = 0xe751_2126
    static let destroySessionOk: UInt32 = 0xe220_45fc
    static let destroySessionNone: UInt32 = 0x62d3_50c9
    static let newSessionCreated: UInt32 = 0x9ec2_0908
    static let httpWait: UInt32 = 0x9299_359f
    static let destroyAuthKey: UInt32 = 0xd143_5160
    static let destroyAuthKeyOk: UInt32 = 0xf660_e1d4
    static let destroyAuthKeyNone: UInt32 = 0x0a9f_2259
    static let destroyAuthKeyFail: UInt32 = 0xea10_9b13
}

/// One message inside a container or `msg_copy` (`message msg_id:long seqno:int bytes:int body:Object`).
struct InnerMessage: Sendable {
    let messageID: Int64
    let seqNo: Int32
    let body: [UInt8]
}

/// A decoded service message, or `.other` for a body that is not one.
enum ServiceMessage: Sendable {
    /// `result` is a slice of the body (of the frame, for a frame's own message): never copied out.
    case rpcResult(requestMessageID: Int64, result: ArraySlice<UInt8>)
    /// The items that decoded, and the error that stopped the walk, if one did (items after it are lost).
    case container([InnerMessage], brokenAt: String?)
    case copy(InnerMessage)
    case gzip([UInt8])
    case ack([Int64])
    case badMessage(badMessageID: Int64, badSeqNo: Int32, code: Int32)
    case badServerSalt(badMessageID: Int64, badSeqNo: Int32, code: Int32, newSalt: Int64)
    case stateRequest([Int64])
    case stateInfo(requestMessageID: Int64, info: [UInt8])
    case allInfo([Int64], info: [UInt8])
    case detailedInfo(messageID: Int64, answerMessageID: Int64, bytes: Int32, status: Int32)
    case newDetailedInfo(answerMessageID: Int64, bytes: Int32, status: Int32)
    case resendRequest([Int64])
    case resendAnswerRequest([Int64])
    case futureSalts(requestMessageID: Int64, now: Int32, salts: [FutureSalt])
    case pong(messageID: Int64, pingID: Int64)
    case ping(pingID: Int64)
    case pingDelayDisconnect(pingID: Int64, delay: Int32)
    case getFutureSalts(count: Int32)
    case destroySession(sessionID: Int64)
    case destroySessionResult(sessionID: Int64, existed: Bool)
    case newSessionCreated(firstMessageID: Int64, uniqueID: Int64, salt: Int64)
    case dropAnswer(requestMessageID: Int64)
    case dropAnswerResult(DropAnswerOutcome)
    case httpWait
    case destroyAuthKey
    case destroyAuthKeyResult(ok: Bool)
    case other

    /// Most items a container may declare; more is malformed whatever the configured sending limit.
    static let maxContainerItems = 8192

    /// Decodes `body`. Errors are typed and located; a container's broken item ends the walk but keeps the items
    /// before it.
    static func decode(_ body: [UInt8], maxUnpackedBytes: Int) throws(TLDecodingError) -> ServiceMessage {
        if let request = body.withUnsafeBytes({ rpcResultRequest(in: $0) }) {
            return .rpcResult(requestMessageID: request, result: body[12...])
        }
        var reader = BufferReader(bytes: body)
        reader.maxUnpackedSize = maxUnpackedBytes
        guard let id = reader.peekUInt32() else {
            throw TLDecodingError(.truncated(needed: 4, available: body.count), offset: 0)
        }
        _ = try reader.readUInt32()
        let message: ServiceMessage
        switch id {
            case WireID.rpcResult:
                let request = try reader.readInt64()
                guard reader.remaining >= 4 else {
                    throw TLDecodingError(.truncated(needed: 4, available: reader.remaining), offset: reader.offset)
                }
                return .rpcResult(requestMessageID: request, result: reader.readRemaining()[...])
            case WireID.msgContainer:
                return decodeContainer(&reader)
            case WireID.msgCopy:
                message = .copy(try readInner(&reader))
            case WireID.gzipPacked:
                message = .gzip(try GZip.unpack(try reader.readTLBytes(), maxSize: maxUnpackedBytes))
            case WireID.msgsAck: message = .ack(try reader.readVector(boxed: true, of: Int64.self))
            case WireID.badMsgNotification:
                message = .badMessage(badMessageID: try reader.readInt64(), badSeqNo: try reader.readInt32(),
                                      code: try reader.readInt32())
            case WireID.badServerSalt:
                message = .badServerSalt(badMessageID: try reader.readInt64(), badSeqNo: try reader.readInt32(),
                                         code: try reader.readInt32(), newSalt: try reader.readInt64())
            case WireID.msgsStateReq: message = .stateRequest(try reader.readVector(boxed: true, of: Int64.self))
            case WireID.msgsStateInfo:
                message = .stateInfo(requestMessageID: try reader.readInt64(), info: try reader.readTLBytes())
            case WireID.msgsAllInfo:
                message = .allInfo(try reader.readVector(boxed: true, of: Int64.self), info: try reader.readTLBytes())
            case WireID.msgDetailedInfo:
                message = .detailedInfo(messageID: try reader.readInt64(), answerMessageID: try reader.readInt64(),
                                        bytes: try reader.readInt32(), status: try reader.readInt32())
            case WireID.msgNewDetailedInfo:
                message = .newDetailedInfo(answerMessageID: try reader.readInt64(), bytes: try reader.readInt32(),
                                           status: try reader.readInt32())
            case WireID.msgResendReq: message = .resendRequest(try reader.readVector(boxed: true, of: Int64.self))
            case WireID.msgResendAnsReq:
                message = .resendAnswerRequest(try reader.readVector(boxed: true, of: Int64.self))
            case WireID.futureSalts:
                let request = try reader.readInt64()
                let now = try reader.readInt32()
                // `salts:vector<future_salt>`: a bare vector of bare items.
                let count = try reader.readVectorCount(boxed: false)
                var salts: [FutureSalt] = []
                salts.reserveCapacity(count)
                for _ in 0..<count {
                    salts.append(FutureSalt(validSince: try reader.readInt32(), validUntil: try reader.readInt32(),
                                            salt: try reader.readInt64()))
                }
                message = .futureSalts(requestMessageID: request, now: now, salts: salts)
            case WireID.pong: message = .pong(messageID: try reader.readInt64(), pingID: try reader.readInt64())
            case WireID.ping: message = .ping(pingID: try reader.readInt64())
            case WireID.pingDelayDisconnect:
                message = .pingDelayDisconnect(pingID: try reader.readInt64(), delay: try reader.readInt32())
            case WireID.getFutureSalts: message = .getFutureSalts(count: try reader.readInt32())
            case WireID.destroySession: message = .destroySession(sessionID: try reader.readInt64())
            case WireID.destroySessionOk: message = .destroySessionResult(sessionID: try reader.readInt64(), existed: true)
            case WireID.destroySessionNone:
                message = .destroySessionResult(sessionID: try reader.readInt64(), existed: false)
            case WireID.newSessionCreated:
                message = .newSessionCreated(firstMessageID: try reader.readInt64(), uniqueID: try reader.readInt64(),
                                             salt: try reader.readInt64())
            case WireID.rpcDropAnswer: message = .dropAnswer(requestMessageID: try reader.readInt64())
            case WireID.rpcAnswerUnknown: message = .dropAnswerResult(.unknown)
            case WireID.rpcAnswerDroppedRunning: message = .dropAnswerResult(.droppedRunning)
            case WireID.rpcAnswerDropped:
                message = .dropAnswerResult(.dropped(messageID: try reader.readInt64(), seqNo: try reader.readInt32(),
                                                     bytes: try reader.readInt32()))
            case WireID.httpWait:
                _ = try reader.readRaw(count: 12)
                message = .httpWait
            case WireID.destroyAuthKey: message = .destroyAuthKey
            case WireID.destroyAuthKeyOk: message = .destroyAuthKeyResult(ok: true)
            case WireID.destroyAuthKeyNone, WireID.destroyAuthKeyFail: message = .destroyAuthKeyResult(ok: false)
            default: return .other
        }
        try reader.expectEnd()
        return message
    }

    private static func readInner(_ reader: inout BufferReader) throws(TLDecodingError) -> InnerMessage {
        let id = try reader.readInt64()
        let seqNo = try reader.readInt32()
        let length = try reader.readInt32()
        guard length >= 0, length % 4 == 0 else {
            throw TLDecodingError(.invalidLength(Int(length)), offset: reader.offset - 4)
        }
        return InnerMessage(messageID: id, seqNo: seqNo, body: try reader.readRaw(count: Int(length)))
    }

    /// req_msg_id when `body` is an `rpc_result` with room for a result (12 bytes of header, 4 of result).
    static func rpcResultRequest(in body: UnsafeRawBufferPointer) -> Int64? {
        guard body.count >= 16, body.loadUnaligned(as: UInt32.self) == WireID.rpcResult.littleEndian else { return nil }
        return Int64(littleEndian: body.loadUnaligned(fromByteOffset: 4, as: Int64.self))
    }

    private static func decodeContainer(_ reader: inout BufferReader) -> ServiceMessage {
        var items: [InnerMessage] = []
        do {
            let count = try reader.readInt32()
            // Each item takes at least 16 bytes of header, which bounds the count before anything is allocated.
            guard count >= 0, Int(count) <= maxContainerItems, Int(count) * 16 <= reader.remaining else {
                throw TLDecodingError(.invalidLength(Int(count)), offset: reader.offset - 4)
            }
            items.reserveCapacity(Int(count))
            for index in 0..<Int(count) {
                do {
                    items.append(try readInner(&reader))
                } catch {
                    throw error.inside(TLDecodingError.Frame(constructor: "msg_container", field: "messages[\(index)]"))
                }
            }
            try reader.expectEnd()
            return .container(items, brokenAt: nil)
        } catch {
            return .container(items, brokenAt: "\(error)")
        }
    }
}

/// Writers for the messages a session sends itself.
enum ServiceWriter {
    static func ids(_ constructor: UInt32, _ ids: [Int64]) -> [UInt8] {
        let buffer = Buffer(capacity: 12 + 8 * ids.count)
        buffer.appendUInt32(constructor)
        buffer.appendVector(ids, boxed: true)
        return buffer.bytes
    }

    static func words(_ constructor: UInt32, _ build: (Buffer) -> Void) -> [UInt8] {
        let buffer = Buffer(capacity: 64)
        buffer.appendUInt32(constructor)
        build(buffer)
        return buffer.bytes
    }

    /// rpc_result, in one allocation (results of file downloads are 512 KiB).
    static func rpcResult(requestMessageID: Int64, result: [UInt8]) -> [UInt8] {
        var body = [UInt8]()
        body.reserveCapacity(12 + result.count)
        rpcResultBody(requestMessageID: requestMessageID, result: result).write(to: &body)
        return body
    }

    /// `rpc_result` with the result as it is, behind its 12-byte header.
    static func rpcResultBody(requestMessageID: Int64, result: [UInt8]) -> MessageBody {
        var head = [UInt8]()
        head.appendLE(WireID.rpcResult)
        head.appendLE(requestMessageID)
        return MessageBody(head: head, data: result)
    }

    static func rpcError(_ error: RPCError) -> [UInt8] {
        words(WireID.rpcError) {
            $0.appendInt32(error.code)
            $0.appendTLString(error.message)
        }
    }

    static func badMessage(_ id: Int64, seqNo: Int32, code: Int32, newSalt: Int64?) -> [UInt8] {
        words(newSalt == nil ? WireID.badMsgNotification : WireID.badServerSalt) {
            $0.appendInt64(id)
            $0.appendInt32(seqNo)
            $0.appendInt32(code)
            if let newSalt { $0.appendInt64(newSalt) }
        }
    }

    static func stateInfo(requestMessageID: Int64, info: [UInt8]) -> [UInt8] {
        words(WireID.msgsStateInfo) {
            $0.appendInt64(requestMessageID)
            $0.appendTLBytes(info)
        }
    }

    static func futureSalts(requestMessageID: Int64, now: Int32, salts: [FutureSalt]) -> [UInt8] {
        words(WireID.futureSalts) {
            $0.appendInt64(requestMessageID)
            $0.appendInt32(now)
            $0.appendVectorHeader(count: salts.count, boxed: false)
            for salt in salts {
                $0.appendInt32(salt.validSince)
                $0.appendInt32(salt.validUntil)
                $0.appendInt64(salt.salt)
            }
        }
    }

    static func dropAnswerResult(_ outcome: DropAnswerOutcome) -> [UInt8] {
        switch outcome {
            case .unknown: words(WireID.rpcAnswerUnknown) { _ in }
            case .droppedRunning: words(WireID.rpcAnswerDroppedRunning) { _ in }
            case let .dropped(id, seqNo, bytes):
                words(WireID.rpcAnswerDropped) {
                    $0.appendInt64(id)
                    $0.appendInt32(seqNo)
                    $0.appendInt32(bytes)
                }
        }
    }

    /// `msg_container`: items already in wire form (`msg_id seqno bytes body`).
    static func container(_ items: [(id: Int64, seqNo: Int32, body: [UInt8])]) -> [UInt8] {
        container(items.map { ($0.id, $0.seqNo, MessageBody($0.body)) })
    }

    static func container(_ items: [(id: Int64, seqNo: Int32, body: MessageBody)]) -> [UInt8] {
        let buffer = Buffer(capacity: 8 + items.reduce(0) { $0 + 16 + $1.body.count })
        buffer.appendUInt32(WireID.msgContainer)
        buffer.appendInt32(Int32(items.count))
        for item in items {
            buffer.appendInt64(item.id)
            buffer.appendInt32(item.seqNo)
            buffer.appendInt32(Int32(item.body.count))
            buffer.appendRaw(item.body.head)
            buffer.appendRaw(item.body.data)
        }
        return buffer.bytes
    }
}
