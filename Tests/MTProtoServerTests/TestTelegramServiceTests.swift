// The test Telegram's services, called through `RPCHandlers.dispatch` with requests built by the generated API and
// answers parsed by its response parsers, as a client would see them: login with test numbers and migrations,
// export/import across DCs, messages in both boxes with pts/seq that `updates.getDifference` agrees with, read
// receipts, uploads with their checks, `upload.getFile`'s offset/limit rules, FILE_MIGRATE, and the bounds.
import Foundation
import MTProto
import MTProtoCrypto
import MTProtoServer
import TLRuntime
import TelegramApi
import TestTelegram
import Testing

/// A two-DC cluster's service without sockets: each call names the DC and auth key it arrives on.
struct ServiceHarness {
    let service: TestTelegramService
    let handlers: RPCHandlers
    let dcs = [ServerEndpoint(dcID: 1, host: "127.0.0.1", port: 4001), ServerEndpoint(dcID: 2, host: "127.0.0.1", port: 4002)]
    var now: Double = 1_800_000_000

    /// Its tests hand one account's peers to another, so every account gets the same access hashes.
    init(limits: TestTelegramService.Limits = .init()) {
        service = TestTelegramService(limits: limits, random: SeededRandom(seed: 9), sharedAccessHashes: true)
        handlers = service.handlers()
    }

    func call<T>(_ function: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>), dc: Int32, key: UInt64,
                 session: Int64 = 1) throws -> T {
        let endpoint = dcs.first { $0.dcID == dc } ?? dcs[0]
        let (_, outcome) = handlers.dispatch(body: function.1.bytes, authKeyID: key, sessionID: session, messageID: 4,
                                             endpoint: endpoint, dcs: dcs, now: now)
        return try function.2.parse(bytes: try outcome.now.get())
    }

    /// The error a call is answered with (nil if it succeeded).
    func error<T>(_ function: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>), dc: Int32, key: UInt64) -> RPCError? {
        let endpoint = dcs.first { $0.dcID == dc } ?? dcs[0]
        let (_, outcome) = handlers.dispatch(body: function.1.bytes, authKeyID: key, sessionID: 1, messageID: 4,
                                             endpoint: endpoint, dcs: dcs, now: now)
        if case .failure(let error) = outcome.now { return error }
        return nil
    }

    /// sendCode + signIn (or signUp when `signUpAs` is given) on `dc`; returns the user.
    func login(_ phone: String, dc: Int32, key: UInt64, signUpAs name: String? = nil) throws -> Api.User {
        let sent = try call(Api.functions.auth.sendCode(phoneNumber: phone, apiId: 1, apiHash: "x",
                                                        settings: .codeSettings(.init())), dc: dc, key: key)
        guard case .sentCode(let code) = sent else { throw HarnessFailure(description: "sentCode: \(sent)") }
        let digit = phone.dropFirst(5).prefix(1)
        let answer = try call(Api.functions.auth.signIn(phoneNumber: phone, phoneCodeHash: code.phoneCodeHash,
                                                        phoneCode: String(repeating: String(digit), count: 5)),
                              dc: dc, key: key)
        switch answer {
        case .authorization(let authorization): return authorization.user
        case .authorizationSignUpRequired:
            guard let name else { throw HarnessFailure(description: "sign-up required for \(phone)") }
            let made = try call(Api.functions.auth.signUp(phoneNumber: phone, phoneCodeHash: code.phoneCodeHash,
                                                          firstName: name, lastName: ""), dc: dc, key: key)
            guard case .authorization(let authorization) = made else { throw HarnessFailure(description: "\(made)") }
            return authorization.user
        }
    }
}

extension Api.User {
    var inputPeer: Api.InputPeer {
        guard case .user(let user) = self else { return .inputPeerEmpty }
        return .inputPeerUser(.init(userId: user.id, accessHash: user.accessHash ?? 0))
    }

    var userID: Int64 {
        switch self {
        case .user(let user): user.id
        case .userEmpty(let user): user.id
        }
    }
}

@Suite struct TestTelegramServiceTests {
    /// The article on testing against a local Telegram names every method the service answers, so its table of what
    /// is served cannot fall behind the handlers.
    @Test func theArticleNamesEveryMethodServed() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let article = try String(contentsOf: root.appendingPathComponent(
            "Runtime/TestTelegram/TestTelegram.docc/TestingAgainstALocalTelegram.md"), encoding: .utf8)
        let served = ServiceHarness().handlers.handlers.keys
        #expect(served.count > 60)
        let missing = served.filter { !article.contains("`\($0)`") }.sorted()
        #expect(missing.isEmpty, "TestingAgainstALocalTelegram.md does not name: \(missing.joined(separator: ", "))")
    }

    @Test func loginWithTestNumbersMigratesToTheHomeDC() throws {
        let h = ServiceHarness()
        // Before login every account call is 401.
        #expect(h.error(Api.functions.users.getUsers(id: [.inputUserSelf]), dc: 2, key: 10)?.message == "AUTH_KEY_UNREGISTERED")
        #expect(h.error(Api.functions.updates.getState(), dc: 2, key: 10)?.message == "AUTH_KEY_UNREGISTERED")
        // 9996610000's home is DC 1: DC 2 sends it there, before and after it exists.
        let sendCode = Api.functions.auth.sendCode(phoneNumber: "9996610000", apiId: 1, apiHash: "x",
                                                   settings: .codeSettings(.init()))
        #expect(h.error(sendCode, dc: 2, key: 10) == RPCError(code: 303, message: "PHONE_MIGRATE_1"))
        let user = try h.login("9996610000", dc: 1, key: 11, signUpAs: "Ann")
        guard case .user(let me) = user else { Issue.record("\(user)"); return }
        #expect(me.isSelf && me.phone == "9996610000" && me.firstName == "Ann")
        #expect(h.error(sendCode, dc: 2, key: 10)?.message == "PHONE_MIGRATE_1")
        // Not a test number; a wrong code; an unknown hash.
        #expect(h.error(Api.functions.auth.sendCode(phoneNumber: "12345", apiId: 1, apiHash: "x",
                                                    settings: .codeSettings(.init())), dc: 1, key: 12)?.message
                == "PHONE_NUMBER_INVALID")
        guard case .sentCode(let code) = try h.call(sendCode, dc: 1, key: 12) else { Issue.record("no code"); return }
        #expect(h.error(Api.functions.auth.signIn(phoneNumber: "9996610000", phoneCodeHash: code.phoneCodeHash,
                                                  phoneCode: "22222"), dc: 1, key: 12)?.message == "PHONE_CODE_INVALID")
        #expect(h.error(Api.functions.auth.signIn(phoneNumber: "9996610000", phoneCodeHash: "nope", phoneCode: "11111"),
                        dc: 1, key: 12)?.message == "PHONE_CODE_EXPIRED")
        // A signed-in key answers; logOut makes it 401 again.
        let users = try h.call(Api.functions.users.getUsers(id: [.inputUserSelf]), dc: 1, key: 11)
        #expect(users.map(\.userID) == [me.id])
        _ = try h.call(Api.functions.auth.logOut(), dc: 1, key: 11)
        #expect(h.error(Api.functions.users.getUsers(id: [.inputUserSelf]), dc: 1, key: 11)?.message == "AUTH_KEY_UNREGISTERED")
    }

    @Test func preRegisteredUsersSignInAndUserMigrateNamesTheirDC() throws {
        let h = ServiceHarness()
        try h.service.addUser(phone: "9996620005", firstName: "Bea", username: "bea_test")
        #expect(throws: RPCError.self) { try h.service.addUser(phone: "9996620005", firstName: "Again") }
        #expect(throws: RPCError.self) { try h.service.addUser(phone: "9996620006", firstName: "X", username: "1bad") }
        // A code asked on the right DC but used on another: signIn names the home DC.
        guard case .sentCode(let code) = try h.call(Api.functions.auth.sendCode(
            phoneNumber: "9996620005", apiId: 1, apiHash: "x", settings: .codeSettings(.init())), dc: 2, key: 20)
        else { Issue.record("no code"); return }
        #expect(h.error(Api.functions.auth.signIn(phoneNumber: "9996620005", phoneCodeHash: code.phoneCodeHash,
                                                  phoneCode: "22222"), dc: 1, key: 21)?.message == "USER_MIGRATE_2")
        let bea = try h.login("9996620005", dc: 2, key: 20)
        let resolved = try h.call(Api.functions.contacts.resolveUsername(username: "BEA_test"), dc: 2, key: 20)
        guard case .resolvedPeer(let peer) = resolved else { return }
        #expect(peer.users.map(\.userID) == [bea.userID])
        #expect(h.error(Api.functions.contacts.resolveUsername(username: "nobody_here"), dc: 2, key: 20)?.message
                == "USERNAME_NOT_OCCUPIED")
    }

    @Test func exportedAuthorizationLogsAnotherDCsKeyInOnce() throws {
        let h = ServiceHarness()
        let user = try h.login("9996620001", dc: 2, key: 30, signUpAs: "Cy")
        #expect(h.error(Api.functions.auth.exportAuthorization(dcId: 7), dc: 2, key: 30)?.message == "DC_ID_INVALID")
        guard case .exportedAuthorization(let exported) = try h.call(Api.functions.auth.exportAuthorization(dcId: 1),
                                                                     dc: 2, key: 30)
        else { return }
        #expect(exported.id == user.userID)
        // Only on the DC it was exported to, only once, only with the right id.
        let importCall = Api.functions.auth.importAuthorization(id: exported.id, bytes: exported.bytes)
        #expect(h.error(importCall, dc: 2, key: 31)?.message == "AUTH_BYTES_INVALID")
        #expect(h.error(Api.functions.auth.importAuthorization(id: exported.id + 1, bytes: exported.bytes), dc: 1, key: 31)?
                .message == "AUTH_BYTES_INVALID")
        guard case .authorization(let imported) = try h.call(importCall, dc: 1, key: 31) else { return }
        #expect(imported.user.userID == user.userID)
        #expect(h.service.userID(authKeyID: 31, dcID: 1) == user.userID)
        #expect(h.error(importCall, dc: 1, key: 32)?.message == "AUTH_BYTES_INVALID")
    }

    @Test func messagesLandInBothBoxesAndTheUpdateStateAgrees() throws {
        var h = ServiceHarness()
        let alice = try h.login("9996620001", dc: 2, key: 40, signUpAs: "Alice")
        let bob = try h.login("9996620002", dc: 2, key: 41, signUpAs: "Bob")
        guard case .state(let bobBefore) = try h.call(Api.functions.updates.getState(), dc: 2, key: 41) else { return }
        var aliceIDs: [Int32] = []
        for (index, text) in ["one", "two", "three"].enumerated() {
            h.now += 1
            let sent = try h.call(Api.functions.messages.sendMessage(peer: bob.inputPeer, message: text,
                                                                     randomId: Int64(index + 1)), dc: 2, key: 40)
            guard case .updates(let updates) = sent, case .updateMessageID(let id)? = updates.updates.first else {
                Issue.record("\(sent)")
                return
            }
            #expect(id.randomId == Int64(index + 1))
            aliceIDs.append(id.id)
        }
        #expect(aliceIDs == [1, 2, 3])
        // A resent request with the same random_id is refused, never stored twice.
        #expect(h.error(Api.functions.messages.sendMessage(peer: bob.inputPeer, message: "one", randomId: 1),
                        dc: 2, key: 40)?.message == "RANDOM_ID_DUPLICATE")
        #expect(h.error(Api.functions.messages.sendMessage(peer: .inputPeerUser(.init(userId: bob.userID, accessHash: 1)),
                                                           message: "x", randomId: 9), dc: 2, key: 40)?.message
                == "PEER_ID_INVALID")

        // Bob's box: the three, newest first, incoming (no from_id), unread.
        let history = try h.call(Api.functions.messages.getHistory(peer: alice.inputPeer, offsetId: 0, offsetDate: 0,
                                                                   addOffset: 0, limit: 10, maxId: 0, minId: 0, hash: 0),
                                 dc: 2, key: 41)
        guard case .messages(let page) = history else { Issue.record("\(history)"); return }
        let texts = page.messages.compactMap { message -> String? in
            guard case .message(let m) = message, !m.out, m.fromId == nil else { return nil }
            return m.message
        }
        #expect(texts == ["three", "two", "one"])
        // Paging: offset_id 3 with limit 1 is message 2, in a slice that counts all three.
        let slice = try h.call(Api.functions.messages.getHistory(peer: alice.inputPeer, offsetId: 3, offsetDate: 0,
                                                                 addOffset: 0, limit: 1, maxId: 0, minId: 0, hash: 0),
                               dc: 2, key: 41)
        guard case .messagesSlice(let part) = slice, case .message(let second)? = part.messages.first else {
            Issue.record("\(slice)")
            return
        }
        #expect(part.count == 3 && second.id == 2)

        // getDifference from the state before: the three messages, and a state whose pts moved by three.
        let difference = try h.call(Api.functions.updates.getDifference(pts: bobBefore.pts, date: bobBefore.date, qts: 0),
                                    dc: 2, key: 41)
        guard case .difference(let diff) = difference, case .state(let after) = diff.state else {
            Issue.record("\(difference)")
            return
        }
        #expect(diff.newMessages.count == 3 && after.pts == bobBefore.pts + 3 && after.seq == bobBefore.seq + 3)
        #expect(after.unreadCount == 3)
        guard case .differenceEmpty = try h.call(Api.functions.updates.getDifference(pts: after.pts, date: after.date, qts: 0),
                                                 dc: 2, key: 41)
        else { Issue.record("expected differenceEmpty"); return }

        // Bob reads up to his message 2: Alice's dialog shows her messages read up to her id 2.
        let affected = try h.call(Api.functions.messages.readHistory(peer: alice.inputPeer, maxId: 2), dc: 2, key: 41)
        guard case .affectedMessages(let read) = affected else { return }
        #expect(read.pts == after.pts + 1 && read.ptsCount == 1)
        let dialogs = try h.call(Api.functions.messages.getDialogs(offsetDate: 0, offsetId: 0, offsetPeer: .inputPeerEmpty,
                                                                   limit: 10, hash: 0), dc: 2, key: 40)
        guard case .dialogs(let list) = dialogs, case .dialog(let dialog)? = list.dialogs.first else {
            Issue.record("\(dialogs)")
            return
        }
        #expect(list.dialogs.count == 1 && dialog.topMessage == 3 && dialog.readOutboxMaxId == 2)
        let bobDialogs = try h.call(Api.functions.messages.getDialogs(offsetDate: 0, offsetId: 0, offsetPeer: .inputPeerEmpty,
                                                                      limit: 10, hash: 0), dc: 2, key: 41)
        guard case .dialogs(let bobList) = bobDialogs, case .dialog(let bobDialog)? = bobList.dialogs.first else { return }
        #expect(bobDialog.unreadCount == 1 && bobDialog.readInboxMaxId == 2)
    }

    @Test func aClientTooFarBehindGetsDifferenceTooLong() throws {
        var limits = TestTelegramService.Limits()
        limits.maxUpdateLog = 5
        let h = ServiceHarness(limits: limits)
        let me = try h.login("9996620001", dc: 2, key: 50, signUpAs: "Dee")
        for index in 0..<8 {
            _ = try h.call(Api.functions.messages.sendMessage(peer: .inputPeerSelf, message: "n\(index)",
                                                              randomId: Int64(index)), dc: 2, key: 50)
        }
        _ = me
        guard case .differenceTooLong(let long) = try h.call(Api.functions.updates.getDifference(pts: 1, date: 0, qts: 0),
                                                             dc: 2, key: 50)
        else { Issue.record("expected differenceTooLong"); return }
        #expect(long.pts == 9)
        guard case .difference(let recent) = try h.call(Api.functions.updates.getDifference(pts: 5, date: 0, qts: 0),
                                                        dc: 2, key: 50)
        else { Issue.record("expected a difference"); return }
        #expect(recent.newMessages.count == 4)
    }

    @Test func uploadSendAndDownloadWithTheFileRules() throws {
        let h = ServiceHarness()
        let alice = try h.login("9996620001", dc: 2, key: 60, signUpAs: "Alice")
        let bob = try h.login("9996610002", dc: 1, key: 61, signUpAs: "Bob")
        let random = SeededRandom(seed: 3)
        let data = random.bytes(300_000)
        let part = 128 * 1024
        let parts = stride(from: 0, to: data.count, by: part).map { Array(data[$0..<min($0 + part, data.count)]) }
        for (index, bytes) in parts.enumerated() {
            #expect(try h.call(Api.functions.upload.saveFilePart(fileId: 77, filePart: Int32(index), bytes: bytes),
                               dc: 2, key: 60))
        }
        #expect(h.error(Api.functions.upload.saveFilePart(fileId: 78, filePart: 0, bytes: [UInt8](repeating: 0, count: 600_000)),
                        dc: 2, key: 60)?.message == "FILE_PART_TOO_BIG")
        let wrongMD5 = Api.InputMedia.inputMediaUploadedDocument(.init(
            file: .inputFile(.init(id: 77, parts: Int32(parts.count), name: "a.bin", md5Checksum: String(repeating: "0", count: 32))),
            mimeType: "application/octet-stream", attributes: [.documentAttributeFilename(.init(fileName: "a.bin"))]))
        #expect(h.error(Api.functions.messages.sendMedia(peer: bob.inputPeer, media: wrongMD5, message: "", randomId: 1),
                        dc: 2, key: 60)?.message == "MD5_CHECKSUM_INVALID")
        let media = Api.InputMedia.inputMediaUploadedDocument(.init(
            file: .inputFile(.init(id: 77, parts: Int32(parts.count), name: "a.bin", md5Checksum: Hex.encode(Hash.md5(data)))),
            mimeType: "application/octet-stream", attributes: [.documentAttributeFilename(.init(fileName: "a.bin"))]))
        let sent = try h.call(Api.functions.messages.sendMedia(peer: bob.inputPeer, media: media, message: "", randomId: 2),
                              dc: 2, key: 60)
        guard case .updates(let updates) = sent, case .updateNewMessage(let new)? = updates.updates.last,
              case .message(let message) = new.message, case .messageMediaDocument(let mediaDocument)? = message.media,
              case .document(let document)? = mediaDocument.document
        else { Issue.record("\(sent)"); return }
        #expect(document.size == Int64(data.count) && document.dcId == 2)
        _ = alice

        let location = Api.InputFileLocation.inputDocumentFileLocation(.init(
            id: document.id, accessHash: document.accessHash, fileReference: document.fileReference, thumbSize: ""))
        // Bob's home DC 1 sends him to the document's DC.
        #expect(h.error(Api.functions.upload.getFile(location: location, offset: 0, limit: 65536), dc: 1, key: 61)
                == RPCError(code: 303, message: "FILE_MIGRATE_2"))
        // On DC 2 with an imported authorization, in 64 KiB chunks.
        guard case .exportedAuthorization(let exported) = try h.call(Api.functions.auth.exportAuthorization(dcId: 2), dc: 1, key: 61)
        else { return }
        _ = try h.call(Api.functions.auth.importAuthorization(id: exported.id, bytes: exported.bytes), dc: 2, key: 62)
        var downloaded: [UInt8] = []
        for offset in stride(from: 0, to: data.count + 65536, by: 65536) {
            guard case .file(let chunk) = try h.call(Api.functions.upload.getFile(location: location, offset: Int64(offset),
                                                                                  limit: 65536), dc: 2, key: 62)
            else { return }
            downloaded += chunk.bytes
            if chunk.bytes.count < 65536 { break }
        }
        #expect(downloaded == data)
        // The offset and limit rules (core.telegram.org/api/files).
        #expect(h.error(Api.functions.upload.getFile(location: location, offset: 0, limit: 1000), dc: 2, key: 62)?.message
                == "LIMIT_INVALID")
        #expect(h.error(Api.functions.upload.getFile(location: location, offset: 1024, limit: 4096), dc: 2, key: 62)?.message
                == "OFFSET_INVALID")
        #expect(h.error(Api.functions.upload.getFile(location: location, offset: 1_044_480, limit: 8192), dc: 2, key: 62)?
                .message == "OFFSET_INVALID")  // crosses a 1 MiB boundary
        guard case .file(let precise) = try h.call(Api.functions.upload.getFile(precise: true, location: location,
                                                                                offset: 1024, limit: 3072), dc: 2, key: 62)
        else { return }
        #expect(precise.bytes == Array(data[1024..<4096]))
        let stale = Api.InputFileLocation.inputDocumentFileLocation(.init(
            id: document.id, accessHash: document.accessHash, fileReference: [1, 2], thumbSize: ""))
        #expect(h.error(Api.functions.upload.getFile(location: stale, offset: 0, limit: 4096), dc: 2, key: 62)?.message
                == "FILE_REFERENCE_EXPIRED")
    }

    @Test func uploadsAndAccountsAreBounded() throws {
        var limits = TestTelegramService.Limits()
        limits.maxUploadBytesPerAccount = 256 * 1024
        limits.maxAccounts = 2
        let h = ServiceHarness(limits: limits)
        _ = try h.login("9996620001", dc: 2, key: 70, signUpAs: "Eve")
        let part = [UInt8](repeating: 7, count: 128 * 1024)
        #expect(try h.call(Api.functions.upload.saveFilePart(fileId: 1, filePart: 0, bytes: part), dc: 2, key: 70))
        #expect(try h.call(Api.functions.upload.saveFilePart(fileId: 1, filePart: 1, bytes: part), dc: 2, key: 70))
        // Rewriting a part does not count twice; a third part is over the bound.
        #expect(try h.call(Api.functions.upload.saveFilePart(fileId: 1, filePart: 1, bytes: part), dc: 2, key: 70))
        #expect(h.error(Api.functions.upload.saveFilePart(fileId: 1, filePart: 2, bytes: part), dc: 2, key: 70)?.message
                == "FILE_PARTS_TOO_MANY_BYTES")
        _ = try h.login("9996620002", dc: 2, key: 71, signUpAs: "Fay")
        #expect(throws: RPCError.self) { try h.login("9996620003", dc: 2, key: 72, signUpAs: "Gus") }
    }
}
