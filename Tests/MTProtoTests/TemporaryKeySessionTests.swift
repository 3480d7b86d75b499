// `Session.bindTemporaryKey`: the `auth.bindTempAuthKey` call a client session queues first on a temporary key. Its
// encrypted_message names the msg_id and session it travels under, so a resend under a new msg_id must carry a new
// binding; the server checks each copy against the message that carried it.
import MTProtoCrypto
import TLRuntime
import Testing
@testable import MTProto

@Suite struct TemporaryKeySessionTests {
    /// The binding as the server reads it from a request body.
    static func binding(in body: [UInt8]) throws -> TemporaryKeyBinding {
        var reader = BufferReader(bytes: body)
        #expect(try reader.readUInt32() == 0xcdd4_2a05)
        let binding = TemporaryKeyBinding(permanentKeyID: try reader.readInt64(), nonce: try reader.readInt64(),
                                          expiresAt: try reader.readInt32(), encryptedMessage: try reader.readTLBytes())
        try reader.expectEnd()
        return binding
    }

    /// The bind message of a decrypted frame: the message itself, or its item in a msg_container.
    static func bindingMessage(in message: (salt: Int64, session: Int64, id: Int64, seqNo: Int32, body: [UInt8])) throws
        -> (id: Int64, body: [UInt8])
    {
        var reader = BufferReader(bytes: message.body)
        guard try reader.readUInt32() == 0x73f1_f8dc else { return (message.id, message.body) }
        for _ in 0..<(try reader.readInt32()) {
            let id = try reader.readInt64()
            _ = try reader.readInt32()
            let body = try reader.readRaw(count: Int(try reader.readInt32()))
            if body.starts(with: [0x05, 0x2a, 0xd4, 0xcd]) { return (id, body) }
        }
        throw NoBinding()
    }

    struct NoBinding: Error {}

    @Test func aBindingIsWrittenForEachMsgIDItIsSentUnder() throws {
        var pair = SessionPair(seed: 71)
        pair.autoAnswer = false
        let permanent = try AuthKey(SeededRandom(seed: 72).bytes(256))
        let expiresAt = Int32(pair.now) + 3600
        let request = try pair.client.bindTemporaryKey(to: permanent, expiresAt: expiresAt)
        // The first copy is refused (msg_id too low), so the session sends it again under a new msg_id.
        pair.refusals = [16]
        let firstFrames = pair.client.outgoing(now: pair.now)
        let first = try Self.bindingMessage(in: try open(try #require(firstFrames.first).bytes, from: .client))
        pair.post(firstFrames, toServer: true)
        #expect(try pair.run(limit: 20) { !$0.serverRequests.isEmpty })
        #expect(pair.clientEvents.resends.map(\.0) == [request])
        let (messageID, body) = try #require(pair.serverRequests.first)
        #expect(messageID != first.id)
        let binding = try Self.binding(in: body)
        #expect(binding.permanentKeyID == Int64(bitPattern: permanent.idValue) && binding.expiresAt == expiresAt)
        func verify(_ binding: TemporaryKeyBinding, messageID: Int64) throws(TemporaryKeyBindingError) {
            try binding.verify(permanentKey: permanent, temporaryKey: SessionPair.authKey, messageID: messageID,
                               sessionID: pair.client.sessionID, temporaryKeyExpiresAt: expiresAt, now: pair.now)
        }
        try verify(binding, messageID: messageID)
        // Each copy was written for its own msg_id and verifies only under it.
        let firstBinding = try Self.binding(in: first.body)
        try verify(firstBinding, messageID: first.id)
        #expect(throws: TemporaryKeyBindingError.mismatch(field: "msg_id")) { try verify(firstBinding, messageID: messageID) }

        // Answered like a call: the boxed Bool comes back as the request's result.
        pair.server.answer(messageID, result: [0xb5, 0x75, 0x72, 0x99])
        #expect(try pair.run(limit: 20) { !$0.clientEvents.results.isEmpty })
        #expect(pair.clientEvents.results.map(\.0) == [request])
        #expect(pair.clientEvents.results.first?.1 == [0xb5, 0x75, 0x72, 0x99])
    }
}
