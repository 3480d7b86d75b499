// The test Telegram's secret-chat relay, through `RPCHandlers.dispatch` (what each party would learn comes from
// `updates.getDifference`): the DH config, request/accept/discard with their checks, encrypted messages, service
// messages and files numbered by the recipient's qts, `receivedQueue`, read receipts, the bounds, and the
// `drop-encrypted=N` fault. One test runs two real clients over sockets to see the same updates pushed.
import MTProto
import MTProtoClient
import MTProtoCrypto
import MTProtoServer
import MTProtoTransport
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

/// Two accounts on different DCs of one harness (Alice on DC 2 with key 1, Bob on DC 1 with key 2), and the
/// handshake between them.
struct SecretHarness {
    var h: ServiceHarness
    let alice: Api.User
    let bob: Api.User

    init(limits: TestTelegramService.Limits = .init()) throws {
        h = ServiceHarness(limits: limits)
        alice = try h.login("9996620001", dc: 2, key: 1, signUpAs: "Alice")
        bob = try h.login("9996610002", dc: 1, key: 2, signUpAs: "Bob")
    }

    static let dh = Result { try DHParameters(prime: DHPrimeCache.telegramPrime, g: 3) }

    /// g^x for a seeded x: a public value as a client makes it.
    static func publicValue(seed: UInt64) throws -> [UInt8] {
        try dh.get().publicValue(exponent: SeededRandom(seed: seed).bytes(256))
    }

    /// Bytes shaped like an encrypted message: fingerprint, msg_key and `blocks` AES blocks.
    static func data(blocks: Int, seed: UInt64) -> [UInt8] { SeededRandom(seed: seed).bytes(24 + 16 * blocks) }

    func aliceCall<T>(_ function: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>)) throws -> T {
        try h.call(function, dc: 2, key: 1)
    }

    func bobCall<T>(_ function: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>)) throws -> T {
        try h.call(function, dc: 1, key: 2)
    }

    /// Requests a chat as Alice and accepts it as Bob; returns each party's input for it.
    func handshake(randomID: Int32 = 7) throws -> (alice: Api.InputEncryptedChat, bob: Api.InputEncryptedChat) {
        let requested = try aliceCall(Api.functions.messages.requestEncryption(
            userId: bob.inputUser, randomId: randomID, gA: try Self.publicValue(seed: 1)))
        guard case .encryptedChatWaiting(let waiting) = requested else { throw HarnessFailure(description: "\(requested)") }
        guard case .encryptedChatRequested(let request)? = try bobChats().last else {
            throw HarnessFailure(description: "Bob saw no request")
        }
        let bobInput = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: request.id, accessHash: request.accessHash))
        _ = try bobCall(Api.functions.messages.acceptEncryption(peer: bobInput, gB: try Self.publicValue(seed: 2),
                                                                  keyFingerprint: 0x0123_4567_89ab_cdef))
        return (.inputEncryptedChat(.init(chatId: waiting.id, accessHash: waiting.accessHash)), bobInput)
    }

    /// The `updateEncryption` chats a party's `getDifference` carries (from qts 0, date 0).
    func chats(dc: Int32, key: UInt64) throws -> [Api.EncryptedChat] {
        guard case .difference(let difference) = try h.call(Api.functions.updates.getDifference(pts: 1, date: 0, qts: 0),
                                                            dc: dc, key: key)
        else { return [] }
        return difference.otherUpdates.compactMap {
            if case .updateEncryption(let update) = $0 { return update.chat }
            return nil
        }
    }

    func aliceChats() throws -> [Api.EncryptedChat] { try chats(dc: 2, key: 1) }
    func bobChats() throws -> [Api.EncryptedChat] { try chats(dc: 1, key: 2) }

    /// Bob's queued encrypted messages after `qts` (by random_id) and the qts the answer brings him to.
    func bobMessages(after qts: Int32) throws -> (randomIDs: [Int64], qts: Int32, final: Bool) {
        let since = Int32(h.now) + 1  // past every dated update, so only the queue answers
        switch try bobCall(Api.functions.updates.getDifference(pts: 1, date: since, qts: qts)) {
        case .difference(let difference):
            guard case .state(let state) = difference.state else { return ([], 0, true) }
            return (difference.newEncryptedMessages.map(\.randomID), state.qts, true)
        case .differenceSlice(let slice):
            guard case .state(let state) = slice.intermediateState else { return ([], 0, false) }
            return (slice.newEncryptedMessages.map(\.randomID), state.qts, false)
        case .differenceEmpty:
            return ([], qts, true)
        case .differenceTooLong:
            throw HarnessFailure(description: "differenceTooLong")
        }
    }
}

extension Api.User {
    var inputUser: Api.InputUser {
        guard case .user(let user) = self else { return .inputUserEmpty }
        return .inputUser(.init(userId: user.id, accessHash: user.accessHash ?? 0))
    }
}

extension Api.EncryptedMessage {
    var randomID: Int64 {
        switch self {
        case .encryptedMessage(let message): message.randomId
        case .encryptedMessageService(let message): message.randomId
        }
    }
}

@Suite struct EncryptedServicesTests {
    @Test func dhConfigIsTelegramsPrimeWithTheRandomBytesAskedFor() throws {
        let s = try SecretHarness()
        #expect(s.h.error(Api.functions.messages.getDhConfig(version: 0, randomLength: 16), dc: 2, key: 9)?.message
                == "AUTH_KEY_UNREGISTERED")
        guard case .dhConfig(let config) = try s.aliceCall(Api.functions.messages.getDhConfig(version: 0, randomLength: 256))
        else { Issue.record("expected dhConfig"); return }
        #expect(config.g == 3 && config.p == DHPrimeCache.telegramPrime && config.random.count == 256)
        _ = try DHParameters(prime: config.p, g: Int(config.g))  // passes a client's checks
        guard case .dhConfigNotModified(let same) = try s.aliceCall(Api.functions.messages.getDhConfig(
            version: config.version, randomLength: 7))
        else { Issue.record("expected dhConfigNotModified"); return }
        #expect(same.random.count == 7)
        guard case .dhConfig(let again) = try s.bobCall(Api.functions.messages.getDhConfig(version: 0, randomLength: 256)),
              case .dhConfig(let empty) = try s.bobCall(Api.functions.messages.getDhConfig(version: 0, randomLength: 0))
        else { Issue.record("expected dhConfig"); return }
        #expect(again.random != config.random && empty.random.isEmpty)
        for length: Int32 in [-1, 1025] {
            #expect(s.h.error(Api.functions.messages.getDhConfig(version: 0, randomLength: length), dc: 2, key: 1)?.message
                    == "RANDOM_LENGTH_INVALID")
        }
    }

    @Test func requestAndAcceptCarryGAAndGBToTheOtherParty() throws {
        let s = try SecretHarness()
        let gA = try SecretHarness.publicValue(seed: 1), gB = try SecretHarness.publicValue(seed: 2)
        let answer = try s.aliceCall(Api.functions.messages.requestEncryption(userId: s.bob.inputUser, randomId: 5, gA: gA))
        guard case .encryptedChatWaiting(let waiting) = answer else { Issue.record("\(answer)"); return }
        #expect(waiting.id > 0 && waiting.adminId == s.alice.userID && waiting.participantId == s.bob.userID)
        // Bob learns of the request with g_a and his own access hash, and who asks.
        guard case .difference(let difference) = try s.bobCall(Api.functions.updates.getDifference(pts: 1, date: 0, qts: 0)),
              case .updateEncryption(let update)? = difference.otherUpdates.first,
              case .encryptedChatRequested(let request) = update.chat
        else { Issue.record("Bob saw no request"); return }
        #expect(request.id == waiting.id && request.gA == gA && request.adminId == s.alice.userID)
        #expect(request.accessHash != waiting.accessHash && difference.users.map(\.userID).contains(s.alice.userID))

        let bobInput = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: request.id, accessHash: request.accessHash))
        let aliceInput = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: waiting.id, accessHash: waiting.accessHash))
        // Only the participant accepts, with its own access hash and a g_b in range.
        let accept = { (peer: Api.InputEncryptedChat, gB: [UInt8]) in
            Api.functions.messages.acceptEncryption(peer: peer, gB: gB, keyFingerprint: 42)
        }
        #expect(s.h.error(accept(aliceInput, gB), dc: 2, key: 1)?.message == "CHAT_ID_INVALID")
        #expect(s.h.error(accept(aliceInput, gB), dc: 1, key: 2)?.message == "CHAT_ID_INVALID")
        #expect(s.h.error(accept(bobInput, [UInt8](repeating: 0, count: 255) + [2]), dc: 1, key: 2)?.message == "DH_G_B_INVALID")
        #expect(s.h.error(accept(bobInput, Array(gB.dropFirst())), dc: 1, key: 2)?.message == "DH_G_B_INVALID")

        guard case .encryptedChat(let bobView) = try s.bobCall(accept(bobInput, gB)) else { Issue.record("no chat"); return }
        #expect(bobView.gAOrB == gA && bobView.keyFingerprint == 42 && bobView.accessHash == request.accessHash)
        // Alice learns g_b and the fingerprint.
        guard case .encryptedChat(let aliceView)? = try s.aliceChats().last else { Issue.record("Alice saw no acceptance"); return }
        #expect(aliceView.id == waiting.id && aliceView.gAOrB == gB && aliceView.keyFingerprint == 42)
        #expect(aliceView.accessHash == waiting.accessHash)
        #expect(s.h.error(accept(bobInput, gB), dc: 1, key: 2)?.message == "ENCRYPTION_ALREADY_ACCEPTED")
    }

    @Test func requestChecksTheUserGAAndRandomID() throws {
        let s = try SecretHarness()
        let gA = try SecretHarness.publicValue(seed: 1)
        let request = { (user: Api.InputUser, randomID: Int32, gA: [UInt8]) in
            Api.functions.messages.requestEncryption(userId: user, randomId: randomID, gA: gA)
        }
        let stranger = Api.InputUser.inputUser(.init(userId: s.bob.userID, accessHash: 1))
        #expect(s.h.error(request(stranger, 1, gA), dc: 2, key: 1)?.message == "USER_ID_INVALID")
        #expect(s.h.error(request(.inputUserSelf, 1, gA), dc: 2, key: 1)?.message == "USER_ID_INVALID")
        // 1 < g_a < p − 1 and 2^1984 < g_a < p − 2^1984, in exactly 256 bytes.
        let p = DHPrimeCache.telegramPrime
        var pMinusOne = p
        pMinusOne[255] -= 1
        let low = [UInt8](repeating: 0, count: 7) + [1] + [UInt8](repeating: 0, count: 248)  // 2^1984
        var high = p
        high[7] &-= 1  // p − 2^1984
        for bad in [[UInt8](repeating: 0, count: 255) + [2], pMinusOne, p, low, high, Array(gA.dropFirst()), gA + [0]] {
            #expect(s.h.error(request(s.bob.inputUser, 1, bad), dc: 2, key: 1)?.message == "DH_G_A_INVALID")
        }
        _ = try s.aliceCall(request(s.bob.inputUser, 1, gA))
        #expect(s.h.error(request(s.bob.inputUser, 1, gA), dc: 2, key: 1)?.message == "RANDOM_ID_DUPLICATE")
        _ = try s.bobCall(request(s.alice.inputUser, 1, gA))  // random_ids are per account
    }

    @Test func messagesServiceMessagesAndFilesGoOutInQtsOrder() throws {
        let s = try SecretHarness()
        let (aliceChat, bobChat) = try s.handshake()
        let chatID: Int32
        if case .inputEncryptedChat(let input) = aliceChat { chatID = input.chatId } else { return }
        let text = SecretHarness.data(blocks: 4, seed: 11), service = SecretHarness.data(blocks: 2, seed: 12)
        guard case .sentEncryptedMessage = try s.aliceCall(Api.functions.messages.sendEncrypted(
            peer: aliceChat, randomId: 101, data: text))
        else { Issue.record("expected sentEncryptedMessage"); return }
        _ = try s.aliceCall(Api.functions.messages.sendEncryptedService(peer: aliceChat, randomId: 102, data: service))

        // A file in two parts (its bytes are opaque to the server), sent with a message.
        let file = SecretHarness.data(blocks: 6_000, seed: 13)
        let part = 64 * 1024
        for (index, start) in stride(from: 0, to: file.count, by: part).enumerated() {
            #expect(try s.aliceCall(Api.functions.upload.saveFilePart(
                fileId: 9, filePart: Int32(index), bytes: Array(file[start..<min(start + part, file.count)]))))
        }
        let uploaded = Api.InputEncryptedFile.inputEncryptedFileUploaded(.init(
            id: 9, parts: 2, md5Checksum: Hex.encode(Hash.md5(file)), keyFingerprint: 77))
        let caption = SecretHarness.data(blocks: 3, seed: 14)
        guard case .sentEncryptedFile(let sent) = try s.aliceCall(Api.functions.messages.sendEncryptedFile(
            peer: aliceChat, randomId: 103, data: caption, file: uploaded)),
              case .encryptedFile(let stored) = sent.file
        else { Issue.record("expected sentEncryptedFile"); return }
        #expect(stored.size == Int64(file.count) && stored.dcId == 2 && stored.keyFingerprint == 77)

        // Bob: qts 3, and the three in order with their bytes.
        guard case .state(let state) = try s.bobCall(Api.functions.updates.getState()) else { return }
        #expect(state.qts == 3)
        guard case .difference(let all) = try s.bobCall(Api.functions.updates.getDifference(pts: 1, date: 0, qts: 0)),
              all.newEncryptedMessages.count == 3,
              case .encryptedMessage(let first) = all.newEncryptedMessages[0],
              case .encryptedMessageService(let second) = all.newEncryptedMessages[1],
              case .encryptedMessage(let third) = all.newEncryptedMessages[2],
              case .encryptedFile(let attached) = third.file
        else { Issue.record("expected three encrypted messages"); return }
        #expect(first.randomId == 101 && first.bytes == text && first.chatId == chatID)
        if case .encryptedFileEmpty = first.file {} else { Issue.record("a text message carries no file") }
        #expect(second.randomId == 102 && second.bytes == service)
        #expect(third.randomId == 103 && third.bytes == caption && attached.id == stored.id
                && attached.accessHash == stored.accessHash)
        #expect(try s.bobMessages(after: 1).randomIDs == [102, 103] && s.bobMessages(after: 1).qts == 3)
        #expect(try s.bobMessages(after: 3).randomIDs.isEmpty)

        // Bob downloads it from DC 2, where it was uploaded, byte for byte.
        let location = Api.InputFileLocation.inputEncryptedFileLocation(.init(id: stored.id, accessHash: stored.accessHash))
        #expect(s.h.error(Api.functions.upload.getFile(location: location, offset: 0, limit: 65536), dc: 1, key: 2)
                == RPCError(code: 303, message: "FILE_MIGRATE_2"))
        guard case .exportedAuthorization(let exported) = try s.bobCall(Api.functions.auth.exportAuthorization(dcId: 2))
        else { return }
        _ = try s.h.call(Api.functions.auth.importAuthorization(id: exported.id, bytes: exported.bytes), dc: 2, key: 3)
        var downloaded: [UInt8] = []
        for offset in stride(from: 0, to: file.count + 65536, by: 65536) {
            guard case .file(let chunk) = try s.h.call(Api.functions.upload.getFile(
                location: location, offset: Int64(offset), limit: 65536), dc: 2, key: 3)
            else { return }
            downloaded += chunk.bytes
            if chunk.bytes.count < 65536 { break }
        }
        #expect(downloaded == file)
        let wrongHash = Api.InputFileLocation.inputEncryptedFileLocation(.init(id: stored.id, accessHash: stored.accessHash ^ 1))
        #expect(s.h.error(Api.functions.upload.getFile(location: wrongHash, offset: 0, limit: 4096), dc: 2, key: 3)?.message
                == "FILE_ID_INVALID")

        // The same file again, by id: no upload, qts 4.
        guard case .sentEncryptedFile(let resent) = try s.bobCall(Api.functions.messages.sendEncryptedFile(
            peer: bobChat, randomId: 201, data: caption,
            file: .inputEncryptedFile(.init(id: stored.id, accessHash: stored.accessHash)))),
              case .encryptedFile(let same) = resent.file
        else { Issue.record("expected sentEncryptedFile"); return }
        #expect(same.id == stored.id)
        guard case .state(let aliceState) = try s.aliceCall(Api.functions.updates.getState()) else { return }
        #expect(aliceState.qts == 1)  // Alice's own qts counts what she receives
    }

    @Test func sendsAreCheckedAndRefusedWhenRepeated() throws {
        var limits = TestTelegramService.Limits()
        limits.secretChats.maxDataBytes = 1024
        let s = try SecretHarness(limits: limits)
        let gA = try SecretHarness.publicValue(seed: 1)
        // A chat not accepted yet takes no messages.
        guard case .encryptedChatWaiting(let pending) = try s.aliceCall(Api.functions.messages.requestEncryption(
            userId: s.bob.inputUser, randomId: 1, gA: gA))
        else { return }
        let pendingInput = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: pending.id, accessHash: pending.accessHash))
        let data = SecretHarness.data(blocks: 1, seed: 3)
        #expect(s.h.error(Api.functions.messages.sendEncrypted(peer: pendingInput, randomId: 1, data: data), dc: 2, key: 1)?
                .message == "CHAT_ID_INVALID")

        let (chat, _) = try s.handshake(randomID: 2)
        let send = { (peer: Api.InputEncryptedChat, randomID: Int64, data: [UInt8]) in
            Api.functions.messages.sendEncrypted(peer: peer, randomId: randomID, data: data)
        }
        _ = try s.aliceCall(send(chat, 1, data))
        #expect(s.h.error(send(chat, 1, data), dc: 2, key: 1)?.message == "RANDOM_ID_DUPLICATE")
        #expect(s.h.error(send(chat, 2, data + [0]), dc: 2, key: 1)?.message == "DATA_INVALID")
        #expect(s.h.error(send(chat, 2, Array(data.prefix(24))), dc: 2, key: 1)?.message == "DATA_INVALID")
        #expect(s.h.error(send(chat, 2, SecretHarness.data(blocks: 64, seed: 4)), dc: 2, key: 1)?.message == "DATA_TOO_LONG")
        guard case .inputEncryptedChat(let input) = chat else { return }
        let forged = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: input.chatId, accessHash: input.accessHash &+ 1))
        #expect(s.h.error(send(forged, 2, data), dc: 2, key: 1)?.message == "CHAT_ID_INVALID")

        // Files: the MD5 is checked when given; an empty file is refused.
        #expect(try s.aliceCall(Api.functions.upload.saveFilePart(fileId: 5, filePart: 0, bytes: data)))
        let wrongMD5 = Api.InputEncryptedFile.inputEncryptedFileUploaded(.init(
            id: 5, parts: 1, md5Checksum: String(repeating: "0", count: 32), keyFingerprint: 1))
        let sendFile = { (file: Api.InputEncryptedFile) in
            Api.functions.messages.sendEncryptedFile(peer: chat, randomId: 3, data: data, file: file)
        }
        #expect(s.h.error(sendFile(wrongMD5), dc: 2, key: 1)?.message == "MD5_CHECKSUM_INVALID")
        #expect(s.h.error(sendFile(.inputEncryptedFileEmpty), dc: 2, key: 1)?.message == "FILE_EMTPY")
        #expect(s.h.error(sendFile(.inputEncryptedFile(.init(id: 5, accessHash: 5))), dc: 2, key: 1)?.message
                == "FILE_ID_INVALID")
        // Without a checksum the upload is taken as it is.
        guard case .encryptedFile(let uploaded) = try s.aliceCall(Api.functions.messages.uploadEncryptedFile(
            peer: chat, file: .inputEncryptedFileUploaded(.init(id: 5, parts: 1, md5Checksum: "", keyFingerprint: 1))))
        else { Issue.record("expected encryptedFile"); return }
        #expect(uploaded.size == Int64(data.count))
    }

    @Test func receivedQueueReadsAndTypingReachTheOtherParty() throws {
        var s = try SecretHarness()
        let (chat, bobChat) = try s.handshake()
        for id: Int64 in 1...3 {
            _ = try s.aliceCall(Api.functions.messages.sendEncrypted(peer: chat, randomId: id,
                                                                     data: SecretHarness.data(blocks: 1, seed: UInt64(id))))
        }
        // Acknowledged messages are forgotten and their random_ids answered.
        #expect(try s.bobCall(Api.functions.messages.receivedQueue(maxQts: 2)) == [1, 2])
        #expect(try s.bobMessages(after: 0).randomIDs == [3])
        #expect(try s.bobCall(Api.functions.messages.receivedQueue(maxQts: 2)).isEmpty)
        for bad: Int32 in [-1, 4] {
            #expect(s.h.error(Api.functions.messages.receivedQueue(maxQts: bad), dc: 1, key: 2)?.message == "MAX_QTS_INVALID")
        }

        s.h.now += 5
        let now = Int32(s.h.now)
        #expect(try s.bobCall(Api.functions.messages.readEncryptedHistory(peer: bobChat, maxDate: now - 1)))
        #expect(s.h.error(Api.functions.messages.readEncryptedHistory(peer: bobChat, maxDate: now + 60), dc: 1, key: 2)?
                .message == "MAX_DATE_INVALID")
        guard case .difference(let difference) = try s.aliceCall(Api.functions.updates.getDifference(pts: 1, date: now, qts: 0))
        else { Issue.record("expected a difference"); return }
        let reads = difference.otherUpdates.compactMap { update -> (Int32, Int32)? in
            if case .updateEncryptedMessagesRead(let read) = update { return (read.maxDate, read.date) }
            return nil
        }
        #expect(reads.count == 1 && reads.first?.0 == now - 1 && reads.first?.1 == now)
        #expect(try s.bobCall(Api.functions.messages.setEncryptedTyping(peer: bobChat, typing: true)))
        guard case .inputEncryptedChat(let input) = bobChat else { return }
        let forged = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: input.chatId, accessHash: 0))
        #expect(s.h.error(Api.functions.messages.setEncryptedTyping(peer: forged, typing: true), dc: 1, key: 2)?.message
                == "CHAT_ID_INVALID")
    }

    @Test func discardReachesBothPartiesAndEndsTheChat() throws {
        let s = try SecretHarness()
        let (chat, bobChat) = try s.handshake()
        guard case .inputEncryptedChat(let input) = chat else { return }
        #expect(s.h.error(Api.functions.messages.discardEncryption(chatId: 0), dc: 1, key: 2)?.message == "CHAT_ID_EMPTY")
        #expect(s.h.error(Api.functions.messages.discardEncryption(chatId: input.chatId &+ 1), dc: 1, key: 2)?.message
                == "ENCRYPTION_ID_INVALID")
        _ = try s.h.login("9996620003", dc: 2, key: 4, signUpAs: "Cy")
        #expect(s.h.error(Api.functions.messages.discardEncryption(chatId: input.chatId), dc: 2, key: 4)?.message
                == "ENCRYPTION_ID_INVALID")

        #expect(try s.bobCall(Api.functions.messages.discardEncryption(deleteHistory: true, chatId: input.chatId)))
        for chats in [try s.aliceChats(), try s.bobChats()] {
            guard case .encryptedChatDiscarded(let discarded)? = chats.last else { Issue.record("\(chats)"); continue }
            #expect(discarded.id == input.chatId && discarded.historyDeleted)
        }
        #expect(s.h.error(Api.functions.messages.discardEncryption(chatId: input.chatId), dc: 2, key: 1)?.message
                == "ENCRYPTION_ALREADY_DECLINED")
        #expect(s.h.error(Api.functions.messages.sendEncrypted(peer: chat, randomId: 1,
                                                               data: SecretHarness.data(blocks: 1, seed: 1)),
                          dc: 2, key: 1)?.message == "ENCRYPTION_DECLINED")
        #expect(s.h.error(Api.functions.messages.acceptEncryption(peer: bobChat, gB: try SecretHarness.publicValue(seed: 3),
                                                                  keyFingerprint: 1), dc: 1, key: 2)?.message
                == "ENCRYPTION_ALREADY_DECLINED")

        // Declining a request that was never accepted.
        guard case .encryptedChatWaiting(let waiting) = try s.aliceCall(Api.functions.messages.requestEncryption(
            userId: s.bob.inputUser, randomId: 99, gA: try SecretHarness.publicValue(seed: 4)))
        else { return }
        #expect(try s.bobCall(Api.functions.messages.discardEncryption(chatId: waiting.id)))
        guard case .encryptedChatDiscarded(let declined)? = try s.aliceChats().last else { Issue.record("no decline"); return }
        #expect(declined.id == waiting.id && !declined.historyDeleted)
    }

    @Test func chatsQueuesAndFilesAreBounded() throws {
        var limits = TestTelegramService.Limits()
        limits.secretChats.maxChatsPerAccount = 1
        limits.secretChats.maxQueuedMessages = 3
        limits.secretChats.maxMessagesPerDifference = 2
        limits.secretChats.maxFileBytes = 1000
        let s = try SecretHarness(limits: limits)
        let (chat, _) = try s.handshake()
        let request = Api.functions.messages.requestEncryption(userId: s.bob.inputUser, randomId: 50,
                                                               gA: try SecretHarness.publicValue(seed: 5))
        #expect(s.h.error(request, dc: 2, key: 1)?.message == "SECRET_CHATS_TOO_MANY")

        for id: Int64 in 1...5 {
            _ = try s.aliceCall(Api.functions.messages.sendEncrypted(peer: chat, randomId: id,
                                                                     data: SecretHarness.data(blocks: 1, seed: UInt64(id))))
        }
        // Messages 1 and 2 were forgotten unacknowledged: a client behind them must start over.
        guard case .differenceTooLong = try s.bobCall(Api.functions.updates.getDifference(pts: 1, date: 0, qts: 0)) else {
            Issue.record("expected differenceTooLong")
            return
        }
        let firstSlice = try s.bobMessages(after: 2)
        #expect(firstSlice.randomIDs == [3, 4] && firstSlice.qts == 4 && !firstSlice.final)
        let rest = try s.bobMessages(after: firstSlice.qts)
        #expect(rest.randomIDs == [5] && rest.qts == 5 && rest.final)

        let big = SecretHarness.data(blocks: 64, seed: 6)  // 1048 bytes
        #expect(try s.aliceCall(Api.functions.upload.saveFilePart(fileId: 1, filePart: 0, bytes: big)))
        #expect(s.h.error(Api.functions.messages.sendEncryptedFile(
            peer: chat, randomId: 6, data: SecretHarness.data(blocks: 1, seed: 7),
            file: .inputEncryptedFileBigUploaded(.init(id: 1, parts: 1, keyFingerprint: 1))), dc: 2, key: 1)?.message
                == "FILE_PARTS_INVALID")  // a small upload named as a big one
        #expect(s.h.error(Api.functions.messages.uploadEncryptedFile(
            peer: chat, file: .inputEncryptedFileUploaded(.init(id: 1, parts: 1, md5Checksum: "", keyFingerprint: 1))),
                          dc: 2, key: 1)?.message == "FILE_STORAGE_FULL")

        // Once the chat is discarded it is forgotten to make room for a new one.
        guard case .inputEncryptedChat(let input) = chat else { return }
        #expect(try s.aliceCall(Api.functions.messages.discardEncryption(chatId: input.chatId)))
        guard case .encryptedChatWaiting = try s.aliceCall(request) else { Issue.record("expected a new chat"); return }
        #expect(s.h.error(Api.functions.messages.discardEncryption(chatId: input.chatId), dc: 2, key: 1)?.message
                == "ENCRYPTION_ID_INVALID")
    }

    @Test func theDropFaultLosesExactlyTheNthMessageAndAResendHeals() async throws {
        #expect(throws: FaultPlan.SpecError.self) { try FaultPlan(parsing: "drop-encrypted=0") }
        #expect(throws: FaultPlan.SpecError.self) { try FaultPlan(parsing: "drop-encrypted=x") }
        let s = try SecretHarness()
        var configuration = MTProtoTestServer.Configuration(rsaKeys: [try Fixture.rsaKey()], handlers: s.h.handlers,
                                                            dcIDs: [1, 2])
        configuration.faults = try FaultPlan(parsing: "drop-encrypted=2")
        let server = try await MTProtoTestServer.start(configuration)
        s.h.service.attach(server)
        do {
            try Self.dropAndResend(s)
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    /// Three messages through a server with `drop-encrypted=2`, then the resend.
    static func dropAndResend(_ s: SecretHarness) throws {
        let (chat, _) = try s.handshake()
        let data = SecretHarness.data(blocks: 1, seed: 1)
        for id: Int64 in 1...3 {
            guard case .sentEncryptedMessage = try s.aliceCall(Api.functions.messages.sendEncrypted(
                peer: chat, randomId: id, data: data))
            else { Issue.record("message \(id) not answered"); continue }
        }
        // The second never arrives, and the third takes the second's qts.
        let received = try s.bobMessages(after: 0)
        #expect(received.randomIDs == [1, 3] && received.qts == 2)
        // The sender's resend goes through with the next qts; a message that did arrive stays a duplicate.
        _ = try s.aliceCall(Api.functions.messages.sendEncrypted(peer: chat, randomId: 2, data: data))
        let healed = try s.bobMessages(after: 2)
        #expect(healed.randomIDs == [2] && healed.qts == 3)
        #expect(s.h.error(Api.functions.messages.sendEncrypted(peer: chat, randomId: 3, data: data), dc: 2, key: 1)?.message
                == "RANDOM_ID_DUPLICATE")
    }

    /// The pushed updates a client's connection carries, decoded, until `match` picks one.
    static func next<T: Sendable>(_ client: MTProtoClient, _ match: @escaping @Sendable (Api.Update) -> T?) async throws -> T? {
        for await bytes in client.updates {
            var reader = BufferReader(bytes: bytes)
            guard case .updates(let updates) = try Api.Updates.parse(&reader) else { continue }
            if let found = updates.updates.lazy.compactMap(match).first { return found }
        }
        return nil
    }

    @Test func updatesArePushedToTheOtherPartysConnection() async throws {
        let (server, alice, bob, bobUser) = try await TestTelegramLoopbackTests.startPair(seed: 31)
        let gA = try SecretHarness.publicValue(seed: 1), gB = try SecretHarness.publicValue(seed: 2)

        let requested = Task {
            try await Self.next(bob) { update -> Api.EncryptedChat.Cons_encryptedChatRequested? in
                if case .updateEncryption(let u) = update, case .encryptedChatRequested(let r) = u.chat { return r }
                return nil
            }
        }
        guard case .encryptedChatWaiting(let waiting) = try await alice.invoke(Api.functions.messages.requestEncryption(
            userId: bobUser.inputUser, randomId: 1, gA: gA))
        else { throw HarnessFailure(description: "no chat") }
        guard let request = try await TestServerTests.within(10, { try await requested.value }) else {
            throw HarnessFailure(description: "no request pushed")
        }
        #expect(request.id == waiting.id && request.gA == gA)

        let accepted = Task {
            try await Self.next(alice) { update -> Api.EncryptedChat.Cons_encryptedChat? in
                if case .updateEncryption(let u) = update, case .encryptedChat(let c) = u.chat { return c }
                return nil
            }
        }
        let bobChat = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: request.id, accessHash: request.accessHash))
        _ = try await bob.invoke(Api.functions.messages.acceptEncryption(peer: bobChat, gB: gB, keyFingerprint: 9))
        let chat = try await TestServerTests.within(10) { try await accepted.value }
        #expect(chat?.gAOrB == gB && chat?.keyFingerprint == 9)

        let aliceChat = Api.InputEncryptedChat.inputEncryptedChat(.init(chatId: waiting.id, accessHash: waiting.accessHash))
        let messages = Task {
            var seen: [(Int64, Int32)] = []
            while seen.count < 2, let next = try await Self.next(bob, { update -> (Int64, Int32)? in
                if case .updateNewEncryptedMessage(let new) = update { return (new.message.randomID, new.qts) }
                return nil
            }) {
                seen.append(next)
            }
            return seen.map { [$0.0, Int64($0.1)] }
        }
        for id: Int64 in [10, 11] {
            _ = try await alice.invoke(Api.functions.messages.sendEncrypted(peer: aliceChat, randomId: id,
                                                                            data: SecretHarness.data(blocks: 2, seed: 5)))
        }
        #expect(try await TestServerTests.within(10) { try await messages.value } == [[10, 1], [11, 2]])

        let typing = Task {
            try await Self.next(bob) { update -> Int32? in
                if case .updateEncryptedChatTyping(let t) = update { return t.chatId }
                return nil
            }
        }
        _ = try await alice.invoke(Api.functions.messages.setEncryptedTyping(peer: aliceChat, typing: true))
        #expect(try await TestServerTests.within(10) { try await typing.value } == waiting.id)
        await alice.close()
        await bob.close()
        try await server.shutdown()
    }
}
