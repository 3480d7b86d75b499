import Testing
import MTProtoApi
import SecretApi
import TLJSON
import TLRuntime
import TelegramApi

/// The generated surface, exercised the way users call it.
@Suite struct GeneratedApiExampleTests {
    func bytes(_ value: some TLSerializable, boxed: Bool = true) -> [UInt8] {
        let buffer = Buffer()
        value.serialize(buffer, boxed)
        return buffer.bytes
    }

    func hex(_ text: String) -> [UInt8] { Hex.decode(text) ?? [] }

    @Test func boolIsBoxedTrueOrFalse() throws {
        #expect(bytes(true) == hex("b5757299"))
        #expect(bytes(false) == hex("379779bc"))
        var reader = BufferReader(bytes: hex("379779bc"))
        #expect(try Bool.parse(&reader) == false)
        var bad = BufferReader(bytes: hex("15c4b51c"))
        #expect(throws: TLDecodingError.self) { try Bool.parse(&bad) }
    }

    @Test func userWithFlagsAndFlags2() throws {
        let user = Api.User.user(.init(
            isSelf: true, botCanEdit: true, id: 42, accessHash: -7, firstName: "Ann", phone: "15550001",
            usernames: [.username(.init(active: true, username: "ann"))], botActiveUsers: nil))
        guard case .user(let payload) = user else { Issue.record("not a user"); return }
        // self is flags.10; access_hash .0, first_name .1, phone .4; flags2: usernames .0, bot_can_edit .1.
        #expect(payload.flags == 0x400 | 0x1 | 0x2 | 0x10)
        #expect(payload.flags2 == 0x1 | 0x2)
        let wire = bytes(user)
        #expect(Array(wire[0..<12]) == hex("83ccb8b1") + hex("13040000") + hex("03000000"))
        var reader = BufferReader(bytes: wire)
        let parsed = try Api.User.parse(&reader)
        try reader.expectEnd()
        #expect(bytes(parsed) == wire)
        guard case .user(let back) = parsed else { Issue.record("not a user"); return }
        #expect(back.isSelf && back.botCanEdit && !back.bot && !back.contact)
        #expect(back.phone == "15550001" && back.accessHash == -7 && back.firstName == "Ann" && back.lastName == nil)
        #expect(back.usernames?.count == 1)
    }

    @Test func trueFlagSharingABitIsDerivedFromItsValueField() {
        // user: bot:flags.14?true and bot_info_version:flags.14?int travel together.
        let bot = Api.User.Cons_user(id: 1, botInfoVersion: 3)
        #expect(bot.bot)
        #expect(bot.flags & 0x4000 != 0)
        #expect(!Api.User.Cons_user(id: 1).bot)
    }

    /// `true` flags are bits of the stored `flags` word, which the init computes once: they read back, travel on
    /// the wire in it, and a bit this layer does not define is not kept (the word is rebuilt from the fields).
    @Test func trueFlagsAreBitsOfTheStoredWord() throws {
        let rights = Api.ChatBannedRights.Cons_chatBannedRights(
            viewMessages: true, sendPolls: true, manageLinkedPeers: true, untilDate: 7)
        #expect(rights.flags == 0x1 | 0x100 | 0x1000_0000)
        #expect(rights.viewMessages && rights.sendPolls && rights.manageLinkedPeers)
        #expect(!rights.sendMessages && !rights.changeInfo && !rights.sendReactions)
        let wire = bytes(Api.ChatBannedRights.chatBannedRights(rights))
        #expect(wire == hex("1804129f") + hex("01010010") + hex("07000000"))
        var withUnknownBit = wire
        withUnknownBit[5] |= 0x02  // flags.9: no field of this layer
        var reader = BufferReader(bytes: withUnknownBit)
        guard case .chatBannedRights(let parsed) = try Api.ChatBannedRights.parse(&reader) else {
            Issue.record("not chatBannedRights"); return
        }
        #expect(parsed.flags == rights.flags && parsed.untilDate == 7 && parsed.sendPolls)
        #expect(bytes(Api.ChatBannedRights.chatBannedRights(parsed)) == wire)
    }

    /// A field whose bit is its own is written when it is set; fields sharing a bit (`saved_from_peer` and
    /// `saved_from_msg_id` on `flags.4`) set it, and are written, only together.
    @Test func fieldsSharingABitTravelOnlyTogether() throws {
        let peer = Api.Peer.peerUser(.init(userId: 5))
        let half = Api.MessageFwdHeader.Cons_messageFwdHeader(date: 1, postAuthor: "a", savedFromPeer: peer)
        let both = Api.MessageFwdHeader.Cons_messageFwdHeader(date: 1, postAuthor: "a", savedFromPeer: peer,
                                                              savedFromMsgId: 9)
        #expect(half.flags == 0x8)
        #expect(both.flags == 0x8 | 0x10)
        let halfWire = bytes(Api.MessageFwdHeader.messageFwdHeader(half))
        #expect(halfWire == hex("bbf44d4e") + hex("08000000") + hex("01000000") + [1, 0x61, 0, 0])
        let bothWire = bytes(Api.MessageFwdHeader.messageFwdHeader(both))
        #expect(bothWire == hex("bbf44d4e") + hex("18000000") + hex("01000000") + [1, 0x61, 0, 0] + bytes(peer)
                    + hex("09000000"))
        var reader = BufferReader(bytes: bothWire)
        guard case .messageFwdHeader(let back) = try Api.MessageFwdHeader.parse(&reader) else {
            Issue.record("not messageFwdHeader"); return
        }
        #expect(back.flags == both.flags && back.savedFromMsgId == 9 && back.postAuthor == "a")
    }

    /// Fixed-size payloads within one word are structs held in the enum, at the sizes the emitter's layout model
    /// gives (TLSwiftGenTests' `PayloadLayoutTests` holds the same numbers); all others are classes.
    @Test func smallFixedSizePayloadsAreInlineStructs() {
        #expect(MemoryLayout<Api.Peer.Cons_peerUser>.size == 8)
        #expect(MemoryLayout<Api.EncryptedChat.Cons_encryptedChatDiscarded>.size == 8)  // the flags word and an Int32
        #expect(MemoryLayout<Api.UserStatus.Cons_userStatusOffline>.size == 4)
        #expect(MemoryLayout<Api.ReplyMarkup.Cons_replyKeyboardHide>.size == 4)
        #expect(MemoryLayout<Api.ChatBannedRights.Cons_chatBannedRights>.size == 8)  // 23 `true` flags in one word
        func isClass<T>(_: T.Type) -> Bool { T.self is AnyClass }  // generic: decided at run time, not by the compiler
        #expect(!isClass(Api.Peer.Cons_peerUser.self))
        #expect(!isClass(Api.EncryptedChat.Cons_encryptedChatDiscarded.self))
        #expect(!isClass(Api.ChatBannedRights.Cons_chatBannedRights.self))
        #expect(isClass(Api.RecentStory.Cons_recentStory.self))
        #expect(isClass(Api.StarsAmount.Cons_starsAmount.self))
        #expect(isClass(Api.InputPeer.Cons_inputPeerUser.self))
        #expect(isClass(Api.User.Cons_user.self))
        // An enum grows by a tag byte at most (`inputPeerChat` is inline); one of class payloads stays one word.
        #expect(MemoryLayout<Api.Peer>.size == 9)
        #expect(MemoryLayout<Api.InputPeer>.size == 9)
        #expect(MemoryLayout<Api.Message>.size == 8)
        #expect(bytes(Api.Peer.peerUser(.init(userId: 42))) == [0x22, 0x17, 0x51, 0x59, 42, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func vectorResultHasTheVectorIDAndCount() throws {
        let (description, request, response) = Api.functions.contacts.getContactIDs(hash: 5)
        #expect(description.name == "contacts.getContactIDs")
        #expect(request.bytes == hex("9d66dc7a") + hex("0500000000000000"))
        let reply = Buffer()
        reply.appendVector([Int32(7), Int32(-1)], boxed: true)
        #expect(reply.bytes == hex("15c4b51c 02000000 07000000 ffffffff"))
        #expect(try response.parse(reply) == [7, -1])
        // A bare count where the boxed vector's ID belongs is a typed error, not a misread.
        #expect(throws: TLDecodingError.self) { try response.parse(bytes: hex("02000000 07000000 ffffffff")) }
    }

    @Test func getHistoryTripleBytesAndResponse() throws {
        let (description, request, response) = Api.functions.messages.getHistory(
            peer: .inputPeerUser(.init(userId: 100, accessHash: 200)), offsetId: 1, offsetDate: 2, addOffset: 3,
            limit: 20, maxId: 0, minId: 0, hash: 0)
        #expect(description.name == "messages.getHistory")
        #expect(description.parameters.map(\.0) == ["peer", "offset_id", "offset_date", "add_offset", "limit", "max_id", "min_id", "hash"])
        let expected = hex("c5e62344") + hex("4ca5e8dd 6400000000000000 c800000000000000")
            + hex("01000000 02000000 03000000 14000000 00000000 00000000 0000000000000000")
        #expect(request.bytes == expected)

        let messages = Api.messages.Messages.messages(.init(
            messages: [.messageEmpty(.init(id: 9, peerId: .peerUser(.init(userId: 100))))], topics: [], chats: [],
            users: [.userEmpty(.init(id: 100))]))
        let reply = Buffer()
        messages.serialize(reply, true)
        let parsed = try response.parse(reply)
        #expect(bytes(parsed) == reply.bytes)
        guard case .messages(let m) = parsed, case .messageEmpty(let first)? = m.messages.first else {
            Issue.record("unexpected \(parsed)")
            return
        }
        #expect(first.id == 9)
        #expect(m.users.count == 1)
    }

    @Test func invokeWithLayerInitConnectionGetConfigMatchesTheGoldenRecord() throws {
        let (description, request, response) = Api.functions.invokeWithLayer(
            layer: Api.layer,
            query: Api.functions.initConnection(
                apiId: 12345, deviceModel: "PC 64bit", systemVersion: "Linux", appVersion: "1.0", systemLangCode: "en",
                langPack: "", langCode: "en", query: Api.functions.help.getConfig()))
        let golden = try #require(Corpus.records.first { $0.section == "wrapper" && $0.name == "invokeWithLayer" })
        #expect(request.bytes == golden.bytes)
        #expect(description.name == "invokeWithLayer")
        // The server side: the request parses back into nested function values.
        let parsed = try Api.registry.parse(request)
        #expect(TLJSONWriter.json(parsed) == golden.tl)
        // The response type is the innermost function's: Config.
        let config = try Corpus.registry.parse(bytes: try #require(Corpus.records.first { $0.name == "config" }).bytes)
        let reply = Buffer()
        config.serialize(reply, true)
        let _: Api.Config = try response.parse(reply)
    }

    @Test func secretLayerMessagesRoundTripInTheirOwnNamespace() throws {
        let message = SecretApi73.DecryptedMessage.decryptedMessage(.init(
            silent: true, randomId: 77, ttl: 5, message: "hi", entities: [.messageEntityBold(.init(offset: 0, length: 2))]))
        let wire = bytes(message)
        #expect(Array(wire[0..<8]) == hex("7446cc91") + hex("a0000000"))  // silent .5, entities .7
        let parsed = try SecretApi73.registry.parse(bytes: wire)
        #expect(bytes(parsed) == wire)
        #expect(parsed.descriptionFields().0 == "decryptedMessage")
        // Layer 8's decryptedMessage is another constructor with another ID: each layer has its own registry.
        #expect(!SecretApi8.registry.contains(0x91cc_4674))
        #expect(SecretApi8.registry.contains(0x1f81_4f1f))
        #expect(SecretApi144.registry.count == 54)
    }

    @Test func mtprotoServiceMessagesIncludingContainers() throws {
        let ping = MT.functions.ping(pingId: 0x1122)
        #expect(ping.1.bytes == hex("ec77be7a") + hex("2211000000000000"))
        let inner = ping.1.bytes
        let container = MT.MessageContainer.msg_container(.init(messages: [
            .message(.init(msgId: 4, seqno: 1, bytes: Int32(inner.count), body: inner)),
        ]))
        let wire = bytes(container)
        let parsed = try MT.registry.parse(bytes: wire)
        guard let back = parsed as? MT.MessageContainer, case .msg_container(let c) = back,
              case .message(let m)? = c.messages.first else {
            Issue.record("unexpected \(parsed)")
            return
        }
        #expect(m.body == inner && m.msgId == 4)
        let function = try MT.registry.parse(bytes: m.body)
        #expect(function.descriptionFields().0 == "ping")
    }

    @Test func logsRedactSensitiveFields() {
        let user = Api.User.user(.init(id: 1, firstName: "Ann", phone: "15550001"))
        let text = TLLogFormatter.telegram.format(user)
        #expect(!text.contains("15550001"))
        #expect(text.contains("[[redacted]]"))
        #expect(text.contains("Ann"))
        let send = Api.functions.messages.sendMessage(peer: .inputPeerSelf, message: "secret text", randomId: 1)
        let line = TLLogFormatter.telegram.format(send.0)
        #expect(!line.contains("secret text"))
        #expect(line.contains("[[redacted]]"))
    }
}
