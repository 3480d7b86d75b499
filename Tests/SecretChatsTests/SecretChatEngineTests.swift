// Our engine against our engine: the key exchange, every pair of maximum layers, sequence numbers with gaps and
// replays, a flipped byte in every position, mirroring and downgrade, re-keying (also concurrent), persistence.
import Foundation
import MTProto
import MTProtoCrypto
import SecretApi
import TLRuntime
import Testing
@testable import SecretChats

/// Two engines and the relay between them; `drop`/`duplicate` decide per outgoing message.
struct Pair {
    var alice: SecretChatEngine
    var bob: SecretChatEngine
    let chatID: Int32 = 77
    var now: Double = 1_000
    var aliceEvents: [SecretChatEvent] = []
    var bobEvents: [SecretChatEvent] = []
    /// Every envelope relayed, by sender, in order.
    var aliceSent: [SecretOutgoing] = []
    var bobSent: [SecretOutgoing] = []

    static let dh = SecretDHConfig(prime: DHPrimeCache.telegramPrime, g: 3, version: 1)

    init(alice aliceLayer: SecretLayer = .layer144, bob bobLayer: SecretLayer = .layer144, seed: UInt64 = 1,
         configure: (inout SecretChatConfiguration) -> Void = { _ in }) throws {
        var a = SecretChatConfiguration(maxLayer: aliceLayer), b = SecretChatConfiguration(maxLayer: bobLayer)
        configure(&a)
        configure(&b)
        alice = SecretChatEngine(configuration: a, random: SeededRandom(seed: seed))
        bob = SecretChatEngine(configuration: b, random: SeededRandom(seed: seed &+ 1000))
        try alice.setDHConfig(Self.dh)
        try bob.setDHConfig(Self.dh)
        let share = try alice.makeRequest(serverRandom: SeededRandom(seed: 5).bytes(256))
        try alice.requestSent(chatID: chatID, accessHash: 11, peerUserID: 2, share: share)
        bobEvents += events(bob.handleRequested(chatID: chatID, accessHash: 22, peerUserID: 1, gA: share.publicValue))
        let (gB, fingerprint) = try bob.accept(chatID: chatID, serverRandom: SeededRandom(seed: 6).bytes(256))
        let fromBob = bob.accepted(chatID: chatID, now: now)
        let fromAlice = alice.handleAccepted(chatID: chatID, accessHash: 11, gB: gB, keyFingerprint: fingerprint, now: now)
        pump(fromAlice: fromAlice, fromBob: fromBob)
    }

    func events(_ outputs: [SecretChatOutput]) -> [SecretChatEvent] {
        outputs.compactMap { if case .event(let e) = $0 { e } else { nil } }
    }

    func sends(_ outputs: [SecretChatOutput]) -> [SecretOutgoing] {
        outputs.compactMap { if case .send(let s) = $0 { s } else { nil } }
    }

    /// Relays until nothing is left, in order; `keep` may drop an envelope (it is still recorded as sent).
    mutating func pump(fromAlice: [SecretChatOutput], fromBob: [SecretChatOutput],
                       keep: (_ fromAlice: Bool, _ index: Int) -> Bool = { _, _ in true }) {
        var toBob = sends(fromAlice), toAlice = sends(fromBob)
        aliceEvents += events(fromAlice)
        bobEvents += events(fromBob)
        var rounds = 0
        while (!toBob.isEmpty || !toAlice.isEmpty) && rounds < 10_000 {
            rounds += 1
            if !toBob.isEmpty {
                let m = toBob.removeFirst()
                aliceSent.append(m)
                if keep(true, aliceSent.count - 1) {
                    let out = bob.handleMessage(chatID: chatID, data: m.data, date: 0, now: now)
                    bobEvents += events(out)
                    toAlice += sends(out)
                }
            }
            if !toAlice.isEmpty {
                let m = toAlice.removeFirst()
                bobSent.append(m)
                if keep(false, bobSent.count - 1) {
                    let out = alice.handleMessage(chatID: chatID, data: m.data, date: 0, now: now)
                    aliceEvents += events(out)
                    toBob += sends(out)
                }
            }
        }
    }

    mutating func aliceSays(_ text: String, keep: (Bool, Int) -> Bool = { _, _ in true }) throws {
        let (_, out) = try alice.send(chatID: chatID, content: SecretContent(text: text), now: now)
        pump(fromAlice: out, fromBob: [], keep: keep)
    }

    mutating func bobSays(_ text: String, keep: (Bool, Int) -> Bool = { _, _ in true }) throws {
        let (_, out) = try bob.send(chatID: chatID, content: SecretContent(text: text), now: now)
        pump(fromAlice: [], fromBob: out, keep: keep)
    }

    static func messages(_ events: [SecretChatEvent]) -> [SecretIncoming] {
        events.compactMap { if case .message(_, let m) = $0 { m } else { nil } }
    }

    static func texts(_ events: [SecretChatEvent]) -> [String] {
        messages(events).compactMap(\.payload.text)
    }

    var aliceChat: SecretChatState? { alice.chats[chatID] }
    var bobChat: SecretChatState? { bob.chats[chatID] }
}

@Suite("Secret chat engine")
struct SecretChatEngineTests {
    @Test("both parties derive the same key; fingerprint and visualization agree")
    func keyExchange() throws {
        let pair = try Pair()
        let a = try #require(pair.aliceChat), b = try #require(pair.bobChat)
        #expect(a.phase == .ready && b.phase == .ready)
        #expect(a.keyFingerprint == b.keyFingerprint)
        #expect(a.keyFingerprint != 0)
        #expect(a.keyVisualization.count == 36)
        #expect(a.keyVisualization == b.keyVisualization)
        #expect(a.isOriginator && !b.isOriginator)
        #expect(pair.bobEvents.contains { if case .requested(77, 1) = $0 { true } else { false } })
    }

    static let layerPairs = SecretLayer.allCases.flatMap { a in SecretLayer.allCases.map { b in (a, b) } }

    @Test("every pair of maximum layers settles on the lower one and parses with its namespace",
          arguments: layerPairs)
    func layerNegotiation(aliceLayer: SecretLayer, bobLayer: SecretLayer) throws {
        var pair = try Pair(alice: aliceLayer, bob: bobLayer)
        let expected = min(aliceLayer, bobLayer)
        #expect(pair.aliceChat?.layer == expected)
        #expect(pair.bobChat?.layer == expected)
        try pair.aliceSays("hello from \(aliceLayer)")
        try pair.bobSays("hello from \(bobLayer)")
        try pair.aliceSays("second")
        #expect(Pair.texts(pair.bobEvents) == ["hello from \(aliceLayer)", "second"])
        #expect(Pair.texts(pair.aliceEvents) == ["hello from \(bobLayer)"])
        for m in Pair.messages(pair.bobEvents) + Pair.messages(pair.aliceEvents) { #expect(m.payload.layer == expected) }
        // Layered chats count sequence numbers; layer 8 sends bare messages without them.
        if expected.isLayered {
            #expect(pair.bobChat?.inSeqNo == 2 && pair.aliceChat?.outSeqNo == 2)
            #expect(Pair.messages(pair.bobEvents).map(\.sequence) == [0, 1])
        } else {
            #expect(pair.bobChat?.inSeqNo == 0 && Pair.messages(pair.bobEvents).allSatisfy { $0.sequence == nil })
        }
        // MTProto 2.0 exactly when both reach 73: the last envelope decrypts only as that version.
        let last = try #require(pair.aliceSent.last)
        let key = try AuthKey(try #require(pair.aliceChat).key)
        let version = expected.mtproto
        #expect(throws: Never.self) { _ = try SecretChatCrypto.decrypt(last.data, key: key, version: version, fromOriginator: true) }
        #expect(throws: SecretChatError.self) {
            _ = try SecretChatCrypto.decrypt(last.data, key: key, version: version == .v1 ? .v2 : .v1, fromOriginator: true)
        }
    }

    @Test("an upgrade mid-chat: the party that raises its layer notifies, and both move to the new common layer")
    func upgrade() throws {
        var pair = try Pair(alice: .layer46, bob: .layer144)
        #expect(pair.aliceChat?.layer == .layer46)
        try pair.aliceSays("at 46")
        let out = try pair.alice.setMaxLayer(chatID: 77, .layer101)
        pair.pump(fromAlice: out, fromBob: [])
        #expect(pair.aliceChat?.layer == .layer101 && pair.bobChat?.layer == .layer101)
        #expect(pair.bobEvents.contains { if case .layerChanged(77, .layer101) = $0 { true } else { false } })
        try pair.aliceSays("at 101")
        try pair.bobSays("back at 101")
        let layers = Pair.messages(pair.bobEvents).filter { $0.payload.text != nil }.map(\.payload.layer)
        #expect(layers == [.layer46, .layer101])
        #expect(Pair.messages(pair.aliceEvents).compactMap { $0.payload.text == nil ? nil : $0.payload.layer } == [.layer101])
    }

    @Test("a flipped byte in any position of an envelope is rejected with a typed error and changes nothing")
    func flippedBytes() throws {
        for layer in [SecretLayer.layer46, .layer144] {
            var pair = try Pair(alice: layer, bob: layer)
            let (_, out) = try pair.alice.send(chatID: 77, content: SecretContent(text: "integrity"), now: pair.now)
            let envelope = try #require(pair.sends(out).first).data
            let before = pair.bob
            for position in 0..<envelope.count {
                var bob = before
                var tampered = envelope
                tampered[position] ^= 0x01
                let events = pair.events(bob.handleMessage(chatID: 77, data: tampered, date: 0, now: pair.now))
                guard events.count == 1, case .dropped(77, let error) = events[0] else {
                    Issue.record("\(layer) byte \(position): \(events)")
                    continue
                }
                switch error {
                case .unknownKeyFingerprint, .msgKeyMismatch, .badPadding, .lengthMismatch: break
                default: Issue.record("\(layer) byte \(position): unexpected \(error)")
                }
                #expect(bob.chats[77]?.inSeqNo == before.chats[77]?.inSeqNo)
            }
            var bob = before
            #expect(Pair.texts(pair.events(bob.handleMessage(chatID: 77, data: envelope, date: 0, now: pair.now))) == ["integrity"])
        }
    }

    @Test("a replayed message is dropped", arguments: [SecretLayer.layer8, .layer73, .layer144])
    func replay(layer: SecretLayer) throws {
        var pair = try Pair(alice: layer, bob: layer)
        let (_, out) = try pair.alice.send(chatID: 77, content: SecretContent(text: "once"), now: pair.now)
        let data = try #require(pair.sends(out).first).data
        #expect(Pair.texts(pair.events(pair.bob.handleMessage(chatID: 77, data: data, date: 0, now: pair.now))) == ["once"])
        let again = pair.events(pair.bob.handleMessage(chatID: 77, data: data, date: 0, now: pair.now))
        guard case .dropped(77, .sequenceViolation)? = again.first, again.count == 1 else {
            Issue.record("replay not dropped: \(again)")
            return
        }
    }

    @Test("a dropped message opens a gap that a resend fills, in order")
    func gapHealedByResend() throws {
        var pair = try Pair()
        try pair.aliceSays("one")
        let dropIndex = pair.aliceSent.count  // the next envelope from Alice
        try pair.aliceSays("two") { fromAlice, i in !(fromAlice && i == dropIndex) }
        #expect(Pair.texts(pair.bobEvents) == ["one"])
        try pair.aliceSays("three")
        #expect(Pair.texts(pair.bobEvents) == ["one", "two", "three"])
        #expect(pair.bobEvents.contains { if case .resendRequested(77, 1, 1) = $0 { true } else { false } })
        #expect(pair.aliceEvents.contains { if case .resent(77, 1, 1) = $0 { true } else { false } })
        #expect(pair.bobChat?.inSeqNo == pair.aliceChat?.outSeqNo)
        #expect(pair.bobChat?.held.isEmpty == true)
        // Both directions still work after the heal.
        try pair.bobSays("ack")
        #expect(Pair.texts(pair.aliceEvents) == ["ack"])
    }

    @Test("gaps in both directions at once heal (resend requests are answered from beyond a gap)")
    func concurrentGaps() throws {
        var pair = try Pair()
        let a = pair.aliceSent.count, b = pair.bobSent.count
        try pair.aliceSays("a1") { fromAlice, i in !(fromAlice && i == a) }
        try pair.bobSays("b1") { fromAlice, i in !(!fromAlice && i == b) }
        try pair.aliceSays("a2")
        try pair.bobSays("b2")
        #expect(Pair.texts(pair.bobEvents) == ["a1", "a2"])
        #expect(Pair.texts(pair.aliceEvents) == ["b1", "b2"])
    }

    @Test("re-keying after 100 messages: both switch to the same new key and keep talking")
    func rekeyAfterMessages() throws {
        var pair = try Pair()
        let first = try #require(pair.aliceChat?.keyFingerprint)
        for i in 0..<60 {
            try pair.aliceSays("a\(i)")
            try pair.bobSays("b\(i)")
        }
        let a = try #require(pair.aliceChat), b = try #require(pair.bobChat)
        #expect(a.keyFingerprint == b.keyFingerprint)
        #expect(a.keyFingerprint != first)
        #expect(pair.aliceEvents.contains { if case .rekeyed = $0 { true } else { false } })
        #expect(pair.bobEvents.contains { if case .rekeyed = $0 { true } else { false } })
        #expect(Pair.texts(pair.bobEvents) == (0..<60).map { "a\($0)" })
        #expect(Pair.texts(pair.aliceEvents) == (0..<60).map { "b\($0)" })
        #expect(a.rekey == nil && b.rekey == nil)
    }

    @Test("re-keying after a week even without messages")
    func rekeyByAge() throws {
        var pair = try Pair()
        let first = pair.aliceChat?.keyFingerprint
        pair.now += 7 * 86_400
        let out = pair.alice.tick(now: pair.now)
        #expect(pair.sends(out).count == 1)
        pair.pump(fromAlice: out, fromBob: [])
        #expect(pair.aliceChat?.keyFingerprint == pair.bobChat?.keyFingerprint)
        #expect(pair.aliceChat?.keyFingerprint != first)
    }

    @Test("concurrent re-key requests: the larger exchange_id wins and both end on one key")
    func concurrentRekey() throws {
        for seed in UInt64(11)...16 {
            var pair = try Pair(seed: seed)
            let first = pair.aliceChat?.keyFingerprint
            let fromAlice = try pair.alice.rekey(chatID: 77, now: pair.now)
            let fromBob = try pair.bob.rekey(chatID: 77, now: pair.now)
            pair.pump(fromAlice: fromAlice, fromBob: fromBob)
            try pair.aliceSays("after")
            try pair.bobSays("after too")
            #expect(pair.aliceChat?.keyFingerprint == pair.bobChat?.keyFingerprint, "seed \(seed)")
            #expect(pair.aliceChat?.keyFingerprint != first, "seed \(seed)")
            #expect(Pair.texts(pair.bobEvents) == ["after"] && Pair.texts(pair.aliceEvents) == ["after too"])
        }
    }

    @Test("a message mirrored back to its sender aborts the chat (MTProto 1.0, where x is the same both ways)")
    func mirroring() throws {
        var pair = try Pair(alice: .layer46, bob: .layer46)
        let (_, out) = try pair.alice.send(chatID: 77, content: SecretContent(text: "mine"), now: pair.now)
        let data = try #require(pair.sends(out).first).data
        let events = pair.events(pair.alice.handleMessage(chatID: 77, data: data, date: 0, now: pair.now))
        guard case .aborted(77, .sequenceViolation)? = events.first else {
            Issue.record("mirrored message not refused: \(events)")
            return
        }
        #expect(pair.aliceChat?.phase == .discarded)
    }

    @Test("an MTProto 1.0 message after both parties use 2.0 aborts the chat")
    func downgrade() throws {
        var pair = try Pair()
        try pair.bobSays("v2 from bob")
        #expect(pair.aliceChat?.peerSentV2 == true)
        // Bob's engine forced to 1.0 for one message: what a downgrade attack would deliver.
        var bobChat = try #require(pair.bob.chats[77])
        let payload = try SecretChatEngine.serializeLayered(
            SecretChatEngine.makeMessage(.layer144, randomID: 9, content: SecretContent(text: "v1"), random: SystemRandom()),
            layer: .layer144, inSeqNo: 2 * bobChat.inSeqNo + bobChat.xIn, outSeqNo: 2 * bobChat.outSeqNo + bobChat.xOut,
            random: SystemRandom())
        bobChat.outSeqNo += 1
        let data = try SecretChatCrypto.encrypt(payload, key: try AuthKey(bobChat.key), version: .v1, fromOriginator: false,
                                                random: SystemRandom())
        let events = pair.events(pair.alice.handleMessage(chatID: 77, data: data, date: 0, now: pair.now))
        guard case .aborted(77, .downgrade)? = events.first else {
            Issue.record("downgrade accepted: \(events)")
            return
        }
    }

    @Test("the state survives encoding: a restored engine continues the chat")
    func persistence() throws {
        var pair = try Pair()
        try pair.aliceSays("before")
        let encoded = try JSONEncoder().encode(Array(pair.bob.chats.values))
        let restored = try JSONDecoder().decode([SecretChatState].self, from: encoded)
        pair.bob = SecretChatEngine(configuration: pair.bob.configuration, random: SeededRandom(seed: 99),
                                    chats: restored, dhConfig: pair.bob.dhConfig)
        try pair.aliceSays("after")
        try pair.bobSays("restored")
        #expect(Pair.texts(pair.bobEvents) == ["before", "after"])
        #expect(Pair.texts(pair.aliceEvents) == ["restored"])
    }

    @Test("a wrong key fingerprint in the peer's acceptance aborts the chat")
    func fingerprintMismatch() throws {
        var alice = SecretChatEngine(random: SeededRandom(seed: 3))
        var bob = SecretChatEngine(random: SeededRandom(seed: 4))
        try alice.setDHConfig(Pair.dh)
        try bob.setDHConfig(Pair.dh)
        let share = try alice.makeRequest(serverRandom: [])
        try alice.requestSent(chatID: 1, accessHash: 1, peerUserID: 2, share: share)
        _ = bob.handleRequested(chatID: 1, accessHash: 2, peerUserID: 1, gA: share.publicValue)
        let (gB, fingerprint) = try bob.accept(chatID: 1, serverRandom: [])
        let out = alice.handleAccepted(chatID: 1, accessHash: 1, gB: gB, keyFingerprint: fingerprint ^ 1, now: 0)
        guard case .event(.aborted(1, .keyFingerprintMismatch))? = out.first else {
            Issue.record("mismatch accepted: \(out)")
            return
        }
    }

    @Test("a g_b outside the safe range is refused")
    func badPublicValue() throws {
        var alice = SecretChatEngine(random: SeededRandom(seed: 3))
        try alice.setDHConfig(Pair.dh)
        let share = try alice.makeRequest(serverRandom: [])
        try alice.requestSent(chatID: 1, accessHash: 1, peerUserID: 2, share: share)
        let out = alice.handleAccepted(chatID: 1, accessHash: 1, gB: [1], keyFingerprint: 0, now: 0)
        guard case .event(.aborted(1, .diffieHellman))? = out.first else {
            Issue.record("g_b = 1 accepted: \(out)")
            return
        }
        #expect(throws: SecretChatError.self) { try alice.setDHConfig(SecretDHConfig(prime: [7], g: 3, version: 1)) }
    }

    @Test("service actions reach the application; TTL is remembered")
    func serviceActions() throws {
        var pair = try Pair(alice: .layer101, bob: .layer73)
        let out = try pair.alice.send(chatID: 77, action: .setMessageTTL(30), now: pair.now)
            + pair.alice.send(chatID: 77, action: .readMessages([1, 2]), now: pair.now)
        pair.pump(fromAlice: out, fromBob: [])
        let actions = Pair.messages(pair.bobEvents).compactMap(\.payload.action)
        #expect(actions == [.setMessageTTL(30), .readMessages([1, 2])])
        #expect(pair.bobChat?.ttl == 30)
        // Layer 8 has no resend action: the engine refuses to build it there.
        #expect(throws: SecretChatError.self) {
            _ = try SecretChatEngine.makeService(.layer8, randomID: 1, action: .resend(start: 0, end: 0), random: SystemRandom())
        }
    }

    @Test("a layer-8 message inside decryptedMessageLayer (telethon-secret-chat's notifyLayer) is read with SecretApi8")
    func layer8InsideWrapper() throws {
        var pair = try Pair(alice: .layer101, bob: .layer101)
        let bob = try #require(pair.bobChat)
        let notify = SecretApi8.DecryptedMessage.decryptedMessageService(.init(
            randomId: 5, randomBytes: [UInt8](repeating: 1, count: 15), action: .decryptedMessageActionNotifyLayer(.init(layer: 101))))
        let buffer = Buffer()
        buffer.appendUInt32(0x1be3_1789)
        buffer.appendTLBytes([UInt8](repeating: 2, count: 15))
        buffer.appendInt32(101)
        buffer.appendInt32(2 * bob.inSeqNo + bob.xIn)
        buffer.appendInt32(2 * bob.outSeqNo + bob.xOut)
        notify.serialize(buffer, true)
        let data = try SecretChatCrypto.encrypt(buffer.bytes, key: try AuthKey(bob.key), version: .v2, fromOriginator: false,
                                                random: SystemRandom())
        let events = pair.events(pair.alice.handleMessage(chatID: 77, data: data, date: 0, now: pair.now))
        #expect(events.isEmpty, "\(events)")  // a notify of the same layer changes nothing visible
        // It took its sequence number: the same message again is a duplicate.
        #expect(pair.aliceChat?.inSeqNo == bob.outSeqNo + 1)
        let again = pair.events(pair.alice.handleMessage(chatID: 77, data: data, date: 0, now: pair.now))
        guard case .dropped(77, .sequenceViolation)? = again.first else {
            Issue.record("not counted: \(again)")
            return
        }
    }

    @Test("files: AES-256-IGE with a random key and IV, the MD5 fingerprint rule, exact size back")
    func files() throws {
        let random = SeededRandom(seed: 8)
        let key = SecretFileKey.random(random)
        for size in [0, 1, 15, 16, 17, 100_000] {
            let file = random.bytes(size)
            let encrypted = try key.encrypt(file, random: random)
            #expect(encrypted.count % 16 == 0 && encrypted.count - size < 16)
            #expect(try key.decrypt(encrypted, size: size, fingerprint: key.fingerprint) == file)
        }
        let other = SecretFileKey.random(random)
        #expect(throws: SecretChatError.self) { _ = try other.decrypt([UInt8](repeating: 0, count: 16), size: 1, fingerprint: key.fingerprint) }
        // fingerprint = int32(md5[0..<4]) XOR int32(md5[4..<8]), little-endian.
        let digest = Hash.md5(key.key + key.iv)
        let expected = Int32(bitPattern: UInt32(digest[0]) | UInt32(digest[1]) << 8 | UInt32(digest[2]) << 16 | UInt32(digest[3]) << 24)
            ^ Int32(bitPattern: UInt32(digest[4]) | UInt32(digest[5]) << 8 | UInt32(digest[6]) << 16 | UInt32(digest[7]) << 24)
        #expect(key.fingerprint == expected)
    }
}
