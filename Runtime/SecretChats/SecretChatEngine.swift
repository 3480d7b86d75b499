// The secret-chat state machine, sans-IO: key exchange results, encrypted messages and time go in; encrypted
// envelopes to send and events come out. Randomness is injected. Rules and where they come from:
// - key exchange and fingerprints: core.telegram.org/api/end-to-end ("Key generation", "Key fingerprints");
// - layers: the chat speaks min(ours, theirs); until the peer's decryptedMessageActionNotifyLayer arrives it is
//   layer 8 (bare messages, MTProto 1.0); each party announces its layer when the chat starts and on upgrade;
// - sequence numbers, duplicates, gaps and decryptedMessageActionResend: end-to-end/seq_no;
// - re-keying every 100 messages or a week, and concurrent requests (the higher exchange_id wins): end-to-end/pfs.
// A security violation (parity, a peer claiming messages we never sent, a fingerprint mismatch in the initial
// exchange) aborts the chat: the application should discard it (`SecretChatEvent.aborted`).
import MTProtoCrypto
import SecretApi
import TLRuntime

/// Limits and policy of the engine.
public struct SecretChatConfiguration: Sendable {
    /// Our highest layer; a chat speaks the lower of this and the peer's.
    public var maxLayer: SecretLayer = .layer144
    /// Re-key after this many messages sent and received under one key (end-to-end/pfs: 100)...
    public var rekeyAfterMessages = 100
    /// ...or after this many seconds (a week).
    public var rekeyAfterSeconds: Double = 7 * 86_400
    /// Outgoing messages kept to answer resend requests (at least this many; trimmed in steps).
    public var historyLimit = 1_000
    /// Out-of-order incoming messages held while a gap is filled; more aborts the chat.
    public var heldLimit = 1_000
    /// Secret chats per engine.
    public var maxChats = 1_000

    /// A configuration offering `maxLayer`; every bound has its default.
    public init(maxLayer: SecretLayer = .layer144) {
        self.maxLayer = maxLayer
    }
}

/// A decrypted incoming message, in order.
public struct SecretIncoming: Sendable {
    /// Raw sequence number (0, 1, 2, …) of the message among the peer's; nil for bare layer-8 messages.
    public let sequence: Int32?
    /// The decrypted message, parsed with the chat's layer.
    public let payload: SecretPayload
    /// When the server received the message, Unix seconds.
    public let date: Int32
    /// The encrypted file the server attached, if any.
    public let file: SecretFileReference?
}

/// Something the application should know.
public enum SecretChatEvent: Sendable {
    /// A peer asks to start a chat; accept with `accept(chatID:…)` or discard it.
    case requested(chatID: Int32, peerUserID: Int64)
    /// The key is established; compare `keyVisualization` out of band.
    case ready(chatID: Int32, keyFingerprint: Int64)
    /// The chat now speaks `layer` (the lower of both parties' layers).
    case layerChanged(chatID: Int32, layer: SecretLayer)
    /// A message or a service action for the application (TTL, read, delete, screenshot, flush), in order.
    case message(chatID: Int32, SecretIncoming)
    /// A new key is in use.
    case rekeyed(chatID: Int32, keyFingerprint: Int64)
    /// A re-key was abandoned (by either side, or because the other party's exchange won).
    case rekeyAborted(chatID: Int32, exchangeID: Int64)
    /// We asked the peer to resend raw sequence numbers start...end.
    case resendRequested(chatID: Int32, start: Int32, end: Int32)
    /// We resent our messages start...end (raw) because the peer asked.
    case resent(chatID: Int32, start: Int32, end: Int32)
    /// The chat was discarded (by either party or the server); it is gone.
    case discarded(chatID: Int32)
    /// The chat broke a rule the spec says ends it; discard it on the server.
    case aborted(chatID: Int32, SecretChatError)
    /// One incoming message was rejected (tampered, unknown key, replayed) and the chat goes on.
    case dropped(chatID: Int32, SecretChatError)
}

/// An encrypted message to send with `messages.sendEncrypted`, `sendEncryptedService` or `sendEncryptedFile`.
public struct SecretOutgoing: Sendable {
    /// The chat the message belongs to.
    public let chatID: Int32
    /// The chat's access hash, for the call's `InputEncryptedChat`.
    public let accessHash: Int64
    /// The call's random_id (the server's duplicate guard; a fresh one for resends).
    public let randomID: Int64
    /// The encrypted envelope (`data` of the call): key fingerprint, msg_key and ciphertext.
    public let data: [UInt8]
    /// Whether it goes with `messages.sendEncryptedService` (a service action) rather than `sendEncrypted`.
    public let isService: Bool
    /// The encrypted file to attach (`sendEncryptedFile`), if any.
    public let attachment: SecretAttachment?
    /// The raw out_seq_no the message took, for `fileSent(chatID:outSeqNo:file:)`; nil for bare messages.
    public let outSeqNo: Int32?
}

/// What one input produced.
public enum SecretChatOutput: Sendable {
    /// Send this message with the matching `messages.sendEncrypted*` call, in order.
    case send(SecretOutgoing)
    /// Tell the application.
    case event(SecretChatEvent)
}

/// The engine for one account's secret chats. A value type: persist `chats` and `dhConfig` after each call.
public struct SecretChatEngine: Sendable {
    /// The settings the engine was made with.
    public let configuration: SecretChatConfiguration
    /// Every chat the engine holds, by chat id.
    public private(set) var chats: [Int32: SecretChatState] = [:]
    /// The last DH parameters from the server, used for re-keying.
    public private(set) var dhConfig: SecretDHConfig?
    private let random: any RandomSource

    /// An engine holding `chats` (restored from storage, or none) and the last DH parameters, if known.
    /// `random` supplies DH exponents, padding and random ids.
    public init(configuration: SecretChatConfiguration = .init(), random: any RandomSource,
                chats: [SecretChatState] = [], dhConfig: SecretDHConfig? = nil) {
        self.configuration = configuration
        self.random = random
        self.dhConfig = dhConfig
        for chat in chats { self.chats[chat.id] = chat }
    }

    // MARK: Key exchange

    /// A secret exponent and its public value, for `messages.requestEncryption` (originator) or the re-key.
    public struct KeyShare: Sendable {
        /// g^a (or g^b) mod p, 256 bytes big-endian, as the API call carries it.
        public let publicValue: [UInt8]
        let exponent: [UInt8]
    }

    /// Stores the server's DH parameters after checking them.
    public mutating func setDHConfig(_ config: SecretDHConfig) throws(SecretChatError) {
        _ = try config.checked()
        dhConfig = config
    }

    /// The originator's first step: a = random XOR the server's `random` from getDhConfig, g_a = g^a.
    public func makeRequest(serverRandom: [UInt8]) throws(SecretChatError) -> KeyShare {
        let dh = try currentDH()
        return try share(dh, serverRandom: serverRandom)
    }

    /// The server answered `requestEncryption` with `encryptedChatWaiting`: remember the exponent for the chat.
    public mutating func requestSent(chatID: Int32, accessHash: Int64, peerUserID: Int64, share: KeyShare,
                                     maxLayer: SecretLayer? = nil) throws(SecretChatError) {
        guard chats[chatID] != nil || chats.count < configuration.maxChats else {
            throw .invalidState("more than \(configuration.maxChats) secret chats")
        }
        var chat = SecretChatState(id: chatID, accessHash: accessHash, peerUserID: peerUserID, isOriginator: true,
                                   phase: .waiting, maxLayer: maxLayer ?? configuration.maxLayer)
        chat.exponent = share.exponent
        chats[chatID] = chat
    }

    /// `updateEncryption(encryptedChatRequested)`: a peer wants a chat.
    public mutating func handleRequested(chatID: Int32, accessHash: Int64, peerUserID: Int64,
                                         gA: [UInt8]) -> [SecretChatOutput] {
        guard chats[chatID] == nil else { return [] }  // a repeated update
        guard chats.count < configuration.maxChats else {
            return [.event(.aborted(chatID: chatID, .invalidState("more than \(configuration.maxChats) secret chats")))]
        }
        var chat = SecretChatState(id: chatID, accessHash: accessHash, peerUserID: peerUserID, isOriginator: false,
                                   phase: .requested, maxLayer: configuration.maxLayer)
        chat.gA = gA
        chats[chatID] = chat
        return [.event(.requested(chatID: chatID, peerUserID: peerUserID))]
    }

    /// The acceptor's step: b = random XOR server random, key = g_a^b. Returns g_b and the key fingerprint for
    /// `messages.acceptEncryption`; call `accepted(chatID:now:)` once the server confirms.
    public mutating func accept(chatID: Int32, serverRandom: [UInt8],
                                maxLayer: SecretLayer? = nil) throws(SecretChatError) -> (gB: [UInt8], keyFingerprint: Int64) {
        guard var chat = chats[chatID] else { throw .unknownChat(chatID) }
        guard chat.phase == .requested, let gA = chat.gA else { throw .invalidState("chat \(chatID) is not awaiting acceptance") }
        let dh = try currentDH()
        let mine = try share(dh, serverRandom: serverRandom)
        let key = try sharedKey(dh, peer: gA, exponent: mine.exponent)
        chat.key = key
        chat.keyFingerprint = SecretChatCrypto.keyFingerprint(key)
        chat.gA = nil
        if let maxLayer { chat.maxLayer = maxLayer }
        chats[chatID] = chat
        return (mine.publicValue, chat.keyFingerprint)
    }

    /// The server confirmed `acceptEncryption`: the chat is ready; announces our layer.
    public mutating func accepted(chatID: Int32, now: Double) -> [SecretChatOutput] {
        guard let chat = chats[chatID], chat.phase == .requested, !chat.key.isEmpty else { return [] }
        return becomeReady(chat, now: now)
    }

    /// `updateEncryption(encryptedChat)` for a chat we requested: key = g_b^a, checked against the fingerprint.
    public mutating func handleAccepted(chatID: Int32, accessHash: Int64, gB: [UInt8], keyFingerprint: Int64,
                                        now: Double) -> [SecretChatOutput] {
        guard var chat = chats[chatID] else { return [] }
        guard chat.phase == .waiting, let exponent = chat.exponent else { return [] }  // ours, or a repeat
        do throws(SecretChatError) {
            let key = try sharedKey(try currentDH(), peer: gB, exponent: exponent)
            let fingerprint = SecretChatCrypto.keyFingerprint(key)
            guard fingerprint == keyFingerprint else {
                throw .keyFingerprintMismatch(expected: keyFingerprint, actual: fingerprint)
            }
            chat.key = key
            chat.keyFingerprint = fingerprint
        } catch {
            return abort(chatID, error)
        }
        chat.accessHash = accessHash
        chat.exponent = nil
        return becomeReady(chat, now: now)
    }

    /// Both roles end the exchange the same way: the key's clock starts and our layer is announced.
    private mutating func becomeReady(_ chat: SecretChatState, now: Double) -> [SecretChatOutput] {
        var chat = chat
        chat.phase = .ready
        chat.keyCreatedAt = now
        chats[chat.id] = chat
        return [.event(.ready(chatID: chat.id, keyFingerprint: chat.keyFingerprint))] + announceLayer(chat.id)
    }

    /// `encryptedChatDiscarded`, or our own `discardEncryption`.
    public mutating func handleDiscarded(chatID: Int32) -> [SecretChatOutput] {
        guard var chat = chats[chatID], chat.phase != .discarded else { return [] }
        chat.phase = .discarded
        chat.key = []
        chat.previousKey = nil
        chat.rekey = nil
        chat.history = []
        chat.held = []
        chats[chatID] = chat
        return [.event(.discarded(chatID: chatID))]
    }

    /// Forgets a discarded chat entirely.
    public mutating func remove(chatID: Int32) {
        chats[chatID] = nil
    }

    // MARK: Sending

    /// Sends text and an optional document in the chat's layer.
    public mutating func send(chatID: Int32, content: SecretContent, attachment: SecretAttachment? = nil,
                              now: Double) throws(SecretChatError) -> (randomID: Int64, outputs: [SecretChatOutput]) {
        let chat = try readyChat(chatID)
        let randomID = random.int64()
        let payload = Self.makeMessage(chat.layer, randomID: randomID, content: content, random: random)
        let outputs = try send(chatID: chatID, payload: payload, isService: false, attachment: attachment, now: now)
        return (randomID, outputs)
    }

    /// Sends a message built by the application in the chat's layer namespace (`chats[id].layer`).
    public mutating func send(chatID: Int32, payload: SecretPayload, attachment: SecretAttachment? = nil,
                              now: Double) throws(SecretChatError) -> [SecretChatOutput] {
        let chat = try readyChat(chatID)
        guard payload.layer == chat.layer else {
            throw .invalidState("payload in \(payload.layer) but chat \(chatID) speaks \(chat.layer)")
        }
        return try send(chatID: chatID, payload: payload, isService: payload.action != nil, attachment: attachment,
                        now: now)
    }

    /// Sends a service action (TTL, read, delete, screenshot, flush) in the chat's layer.
    public mutating func send(chatID: Int32, action: SecretServiceAction, now: Double) throws(SecretChatError) -> [SecretChatOutput] {
        let chat = try readyChat(chatID)
        let payload = try Self.makeService(chat.layer, randomID: random.int64(), action: action, random: random)
        if case .setMessageTTL(let ttl) = action { chats[chatID]?.ttl = ttl }
        // Re-key messages themselves must not start another re-key (the count that triggered it is still high).
        return try send(chatID: chatID, payload: payload, isService: true, attachment: nil, now: now, mayRekey: false)
    }

    /// Raises (or lowers) our layer for a chat and tells the peer, as a client does after an upgrade.
    public mutating func setMaxLayer(chatID: Int32, _ layer: SecretLayer) throws(SecretChatError) -> [SecretChatOutput] {
        _ = try readyChat(chatID)
        let before = chats[chatID]?.layer
        chats[chatID]?.maxLayer = layer
        var out = announceLayer(chatID)
        if let after = chats[chatID]?.layer, after != before { out.append(.event(.layerChanged(chatID: chatID, layer: after))) }
        return out
    }

    /// After `sendEncryptedFile` answered: resends of that message refer to the stored file instead of the upload.
    public mutating func fileSent(chatID: Int32, outSeqNo: Int32, file: SecretFileReference) {
        guard let i = chats[chatID]?.history.firstIndex(where: { $0.rawOutSeqNo == outSeqNo }) else { return }
        chats[chatID]?.history[i].attachment = .existing(id: file.id, accessHash: file.accessHash)
    }

    /// Starts a re-key now (it also starts by itself after `rekeyAfterMessages` or `rekeyAfterSeconds`).
    public mutating func rekey(chatID: Int32, now: Double) throws(SecretChatError) -> [SecretChatOutput] {
        let chat = try readyChat(chatID)
        guard chat.layer.supportsRekeying else { throw .invalidState("\(chat.layer) has no re-keying") }
        guard chat.rekey == nil else { throw .invalidState("a re-key of chat \(chatID) is in progress") }
        let mine = try share(try currentDH(), serverRandom: [])
        let exchangeID = nonZeroID()
        chats[chatID]?.rekey = .init(exchangeID: exchangeID, exponent: mine.exponent)
        return try send(chatID: chatID, action: .requestKey(exchangeID: exchangeID, gA: mine.publicValue), now: now)
    }

    /// Time passes: starts the re-keys that are due by age.
    public mutating func tick(now: Double) -> [SecretChatOutput] {
        var out: [SecretChatOutput] = []
        for id in chats.keys.sorted() { out += rekeyIfDue(id, now: now) }
        return out
    }

    // MARK: Receiving

    /// `updateNewEncryptedMessage`: decrypts, checks, orders, and acts on one message.
    public mutating func handleMessage(chatID: Int32, data: [UInt8], date: Int32, file: SecretFileReference? = nil,
                                       now: Double) -> [SecretChatOutput] {
        guard let chat = chats[chatID], chat.phase == .ready else {
            return [.event(.dropped(chatID: chatID, .unknownChat(chatID)))]
        }
        let payload: [UInt8]
        let keyUsed: [UInt8]
        let version: SecretMTProtoVersion
        do throws(SecretChatError) {
            (payload, keyUsed, version) = try decrypt(chat, data)
        } catch {
            if error == .downgrade { return abort(chatID, error) }
            return [.event(.dropped(chatID: chatID, error))]
        }
        if version == .v2 { chats[chatID]?.peerSentV2 = true }
        if keyUsed == chat.key {
            chats[chatID]?.keyUseCount += 1
            chats[chatID]?.previousKey = nil  // the peer has switched: the old key is done
        }
        guard payload.count >= 4 else { return [.event(.dropped(chatID: chatID, .malformed("no constructor")))] }
        let constructor = payload.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        var out: [SecretChatOutput]
        if constructor == 0x1be3_1789 {
            out = receiveLayered(chatID, payload, date: date, file: file, now: now)
        } else {
            out = receiveBare(chatID, payload, date: date, file: file, now: now)
        }
        out += rekeyIfDue(chatID, now: now)
        return out
    }

    // MARK: Internals

    private func readyChat(_ id: Int32) throws(SecretChatError) -> SecretChatState {
        guard let chat = chats[id] else { throw .unknownChat(id) }
        guard chat.phase == .ready else { throw .invalidState("chat \(id) is \(chat.phase.rawValue), not ready") }
        return chat
    }

    private func currentDH() throws(SecretChatError) -> DHParameters {
        guard let dhConfig else { throw .invalidState("no DH parameters: call setDHConfig with messages.getDhConfig's answer") }
        return try dhConfig.checked()
    }

    private func share(_ dh: DHParameters, serverRandom: [UInt8]) throws(SecretChatError) -> KeyShare {
        // "a = random 2048-bit number XOR the random from getDhConfig" (end-to-end, "Sending a request").
        var exponent = random.bytes(256)
        for i in 0..<min(256, serverRandom.count) { exponent[i] ^= serverRandom[i] }
        do {
            let value = try dh.publicValue(exponent: exponent)
            try dh.checkPublicValue(value, name: "g_a")
            return KeyShare(publicValue: value, exponent: exponent)
        } catch {
            throw .diffieHellman(error)
        }
    }

    private func sharedKey(_ dh: DHParameters, peer: [UInt8], exponent: [UInt8]) throws(SecretChatError) -> [UInt8] {
        do {
            return try dh.sharedKey(peerPublicValue: peer, exponent: exponent)
        } catch {
            throw .diffieHellman(error)
        }
    }

    private func nonZeroID() -> Int64 {
        let id = random.int64()
        return id == 0 ? 1 : id
    }

    private mutating func abort(_ chatID: Int32, _ error: SecretChatError) -> [SecretChatOutput] {
        _ = handleDiscarded(chatID: chatID)
        return [.event(.aborted(chatID: chatID, error))]
    }

    /// decryptedMessageActionNotifyLayer with our layer, in the form the chat currently speaks.
    private mutating func announceLayer(_ chatID: Int32) -> [SecretChatOutput] {
        guard let chat = chats[chatID] else { return [] }
        let action = SecretServiceAction.notifyLayer(chat.maxLayer.rawValue)
        return (try? send(chatID: chatID, action: action, now: chat.keyCreatedAt)) ?? []
    }

    /// Tries the keys the fingerprint may name (current, the one before a re-key, the one a re-key will commit) and
    /// the MTProto versions the chat allows.
    private func decrypt(_ chat: SecretChatState, _ data: [UInt8]) throws(SecretChatError)
        -> ([UInt8], [UInt8], SecretMTProtoVersion) {
        guard data.count >= 8 else { throw .tooShort(data.count) }
        let fingerprint = data.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
        // The current key's fingerprint is kept; the others are hashed only when it does not match.
        let key = !chat.key.isEmpty && fingerprint == chat.keyFingerprint ? chat.key
            : [chat.previousKey, chat.rekey?.newKey].compactMap { $0 }
                .first { SecretChatCrypto.keyFingerprint($0) == fingerprint }
        guard let key, let authKey = try? AuthKey(key) else {
            throw .unknownKeyFingerprint(fingerprint)
        }
        // MTProto 2.0 is tried first when we are at layer 73+; 1.0 stays acceptable until the peer, knowing both
        // layers, has switched to 2.0 (a message it sent before our notifyLayer arrived may still be 1.0).
        let fromOriginator = !chat.isOriginator
        var versions: [SecretMTProtoVersion] = chat.maxLayer.mtproto == .v2 ? [.v2, .v1] : [.v1]
        if chat.layer.mtproto == .v2 && chat.peerSentV2 { versions = [.v2] }
        var firstError: SecretChatError?
        for version in versions {
            do {
                let payload = try SecretChatCrypto.decrypt(data, key: authKey, version: version,
                                                           fromOriginator: fromOriginator)
                return (payload, key, version)
            } catch {
                firstError = firstError ?? error
            }
        }
        if versions == [.v2], (try? SecretChatCrypto.decrypt(data, key: authKey, version: .v1,
                                                            fromOriginator: fromOriginator)) != nil {
            throw .downgrade
        }
        throw firstError ?? .msgKeyMismatch
    }

    private mutating func receiveBare(_ chatID: Int32, _ payload: [UInt8], date: Int32, file: SecretFileReference?,
                                      now: Double) -> [SecretChatOutput] {
        let message: SecretApi8.DecryptedMessage
        do {
            message = try Self.parse(payload, as: SecretApi8.DecryptedMessage.self)
        } catch {
            return [.event(.dropped(chatID: chatID, .malformed("layer-8 message: \(error)")))]
        }
        let randomID = SecretApi8.randomID(of: message)
        // Bare messages carry no sequence numbers: replays are caught by random_id.
        guard chats[chatID]?.seenBareRandomIDs.contains(randomID) == false else {
            return [.event(.dropped(chatID: chatID, .sequenceViolation("replayed layer-8 message \(randomID)")))]
        }
        chats[chatID]?.seenBareRandomIDs.append(randomID)
        if let n = chats[chatID]?.seenBareRandomIDs.count, n > 256 { chats[chatID]?.seenBareRandomIDs.removeFirst(n - 256) }
        return process(chatID, SecretIncoming(sequence: nil, payload: .layer8(message), date: date, file: file), now: now)
    }

    private mutating func receiveLayered(_ chatID: Int32, _ payload: [UInt8], date: Int32, file: SecretFileReference?,
                                         now: Double) -> [SecretChatOutput] {
        guard let chat = chats[chatID] else { return [] }
        guard chat.maxLayer.isLayered else {
            return [.event(.dropped(chatID: chatID, .malformed("decryptedMessageLayer in a layer-8 chat")))]
        }
        // Parse with the negotiated layer; before the peer's notifyLayer, with the layer the wrapper declares.
        let parseLayer: SecretLayer
        if chat.peerLayer != nil {
            parseLayer = max(chat.layer, .layer46)
        } else {
            var reader = BufferReader(bytes: payload)
            let declared = (try? Self.readWrapperHeader(&reader).layer) ?? 46
            parseLayer = max(min(chat.maxLayer, SecretLayer(atMost: declared)), .layer46)
        }
        let parsed: (layer: Int32, inSeqNo: Int32, outSeqNo: Int32, payload: SecretPayload)
        do throws(SecretChatError) {
            parsed = try Self.parseLayered(payload, layer: parseLayer)
        } catch {
            return [.event(.dropped(chatID: chatID, error))]
        }
        // Parity first: a mirrored message ends the chat (seq_no, "mirroring").
        guard parsed.outSeqNo >= 0, parsed.inSeqNo >= 0, parsed.outSeqNo & 1 == chat.xIn, parsed.inSeqNo & 1 == chat.xOut else {
            return abort(chatID, .sequenceViolation("seq_no parity: in \(parsed.inSeqNo), out \(parsed.outSeqNo)"))
        }
        let rawOut = parsed.outSeqNo >> 1, rawIn = parsed.inSeqNo >> 1
        guard rawIn <= chat.outSeqNo else {
            return abort(chatID, .sequenceViolation("peer acknowledges \(rawIn) messages of the \(chat.outSeqNo) sent"))
        }
        if rawOut < chat.inSeqNo || chat.held.contains(where: { $0.rawOutSeqNo == rawOut }) {
            return [.event(.dropped(chatID: chatID, .sequenceViolation("duplicate out_seq_no \(rawOut)")))]
        }
        if rawOut > chat.inSeqNo {
            return hold(chatID, rawOut: rawOut, rawIn: rawIn, payload: payload, parseLayer: parseLayer,
                        parsed: parsed.payload, date: date, file: file, now: now)
        }
        var out = deliverInOrder(chatID, rawIn: rawIn, parsed.payload, date: date, file: file, now: now)
        out += drainHeld(chatID, now: now)
        return out
    }

    /// A message from beyond a gap: kept until the gap is filled, and the gap asked for once.
    private mutating func hold(_ chatID: Int32, rawOut: Int32, rawIn: Int32, payload: [UInt8], parseLayer: SecretLayer,
                               parsed: SecretPayload, date: Int32, file: SecretFileReference?,
                               now: Double) -> [SecretChatOutput] {
        guard var chat = chats[chatID] else { return [] }
        guard chat.held.count < configuration.heldLimit else {
            return abort(chatID, .sequenceViolation("more than \(configuration.heldLimit) messages beyond a gap"))
        }
        var out: [SecretChatOutput] = []
        // Resend requests are answered at once even from beyond a gap (seq_no, "avoiding concurrent gaps").
        if case .resend(let start, let end)? = parsed.action { out += answerResend(chatID, start: start, end: end, now: now) }
        chat = chats[chatID] ?? chat
        chat.held.append(.init(rawOutSeqNo: rawOut, rawInSeqNo: rawIn, payload: payload, layer: parseLayer, date: date,
                               file: file))
        chat.held.sort { $0.rawOutSeqNo < $1.rawOutSeqNo }
        let from = max(chat.inSeqNo, chat.resendRequestedUpTo + 1), to = rawOut - 1
        chats[chatID] = chat
        if from <= to {
            chats[chatID]?.resendRequestedUpTo = to
            let action = SecretServiceAction.resend(start: 2 * from + chat.xIn, end: 2 * to + chat.xIn)
            out += (try? send(chatID: chatID, action: action, now: now)) ?? []
            out.append(.event(.resendRequested(chatID: chatID, start: from, end: to)))
        }
        return out
    }

    private mutating func drainHeld(_ chatID: Int32, now: Double) -> [SecretChatOutput] {
        var out: [SecretChatOutput] = []
        while let chat = chats[chatID], chat.phase == .ready, let next = chat.held.first, next.rawOutSeqNo == chat.inSeqNo {
            chats[chatID]?.held.removeFirst()
            guard let parsed = try? Self.parseLayered(next.payload, layer: next.layer) else { continue }
            // A held resend request was answered when it arrived.
            if case .resend? = parsed.payload.action {
                chats[chatID]?.inSeqNo += 1
                chats[chatID]?.peerInSeqNo = next.rawInSeqNo
                continue
            }
            out += deliverInOrder(chatID, rawIn: next.rawInSeqNo, parsed.payload, date: next.date, file: next.file, now: now)
        }
        return out
    }

    private mutating func deliverInOrder(_ chatID: Int32, rawIn: Int32, _ payload: SecretPayload, date: Int32,
                                         file: SecretFileReference?, now: Double) -> [SecretChatOutput] {
        guard let chat = chats[chatID] else { return [] }
        guard rawIn >= chat.peerInSeqNo else {
            return abort(chatID, .sequenceViolation("in_seq_no went back from \(chat.peerInSeqNo) to \(rawIn)"))
        }
        let sequence = chat.inSeqNo
        chats[chatID]?.inSeqNo += 1
        chats[chatID]?.peerInSeqNo = rawIn
        return process(chatID, SecretIncoming(sequence: sequence, payload: payload, date: date, file: file), now: now)
    }

    /// Acts on a message that arrived in order.
    private mutating func process(_ chatID: Int32, _ incoming: SecretIncoming, now: Double) -> [SecretChatOutput] {
        guard let action = incoming.payload.action else { return [.event(.message(chatID: chatID, incoming))] }
        switch action {
        case .notifyLayer(let layer):
            guard let before = chats[chatID]?.layer else { return [] }
            chats[chatID]?.peerLayer = max(8, layer)
            guard let after = chats[chatID]?.layer, after != before else { return [] }
            return [.event(.layerChanged(chatID: chatID, layer: after))]
        case .resend(let start, let end):
            return answerResend(chatID, start: start, end: end, now: now)
        case .requestKey(let exchangeID, let gA):
            return acceptRekey(chatID, exchangeID: exchangeID, gA: gA, now: now)
        case .acceptKey(let exchangeID, let gB, let fingerprint):
            return commitRekey(chatID, exchangeID: exchangeID, gB: gB, fingerprint: fingerprint, now: now)
        case .commitKey(let exchangeID, let fingerprint):
            return completeRekey(chatID, exchangeID: exchangeID, fingerprint: fingerprint, now: now)
        case .abortKey(let exchangeID):
            guard chats[chatID]?.rekey?.exchangeID == exchangeID else { return [] }
            chats[chatID]?.rekey = nil
            return [.event(.rekeyAborted(chatID: chatID, exchangeID: exchangeID))]
        case .noop:
            return []
        case .setMessageTTL(let ttl):
            chats[chatID]?.ttl = ttl
            return [.event(.message(chatID: chatID, incoming))]
        case .readMessages, .deleteMessages, .screenshotMessages, .flushHistory:
            return [.event(.message(chatID: chatID, incoming))]
        }
    }

    /// Resends our messages in wire range start...end (our parity) unchanged, under the current key.
    private mutating func answerResend(_ chatID: Int32, start: Int32, end: Int32, now: Double) -> [SecretChatOutput] {
        guard let chat = chats[chatID] else { return [] }
        guard start >= 0, start <= end, start & 1 == chat.xOut, end & 1 == chat.xOut else {
            return abort(chatID, .sequenceViolation("resend range \(start)...\(end) has the wrong parity"))
        }
        let from = start >> 1, to = end >> 1
        guard to < chat.outSeqNo else {
            return abort(chatID, .sequenceViolation("resend of \(from)...\(to) but only \(chat.outSeqNo) sent"))
        }
        var out: [SecretChatOutput] = []
        for record in chat.history where record.rawOutSeqNo >= from && record.rawOutSeqNo <= to {
            guard let data = try? encryptPayload(chat, record.layered) else { continue }
            out.append(.send(SecretOutgoing(chatID: chatID, accessHash: chat.accessHash, randomID: random.int64(),
                                            data: data, isService: record.isService, attachment: record.attachment,
                                            outSeqNo: record.rawOutSeqNo)))
        }
        if chat.history.first.map({ $0.rawOutSeqNo > from }) ?? true {
            out.append(.event(.dropped(chatID: chatID,
                                       .invalidState("resend of \(from)...\(to) reaches beyond the kept history"))))
        }
        out.append(.event(.resent(chatID: chatID, start: from, end: to)))
        return out
    }

    private mutating func send(chatID: Int32, payload: SecretPayload, isService: Bool, attachment: SecretAttachment?,
                               now: Double, mayRekey: Bool = true) throws(SecretChatError) -> [SecretChatOutput] {
        var out = mayRekey ? rekeyIfDue(chatID, now: now) : []
        let (bytes, data, outSeqNo, accessHash) = try seal(chatID, payload)
        // The chat is changed in place (no copy of it is alive here), so its history is not copied per message.
        if let outSeqNo {
            chats[chatID]?.history.append(.init(rawOutSeqNo: outSeqNo, layered: bytes, isService: isService,
                                                attachment: attachment))
            // Trimmed in steps of 64 so a full history is not shifted on every message.
            let limit = configuration.historyLimit
            if let n = chats[chatID]?.history.count, n > limit + 64 { chats[chatID]?.history.removeFirst(n - limit) }
            chats[chatID]?.outSeqNo += 1
        }
        chats[chatID]?.keyUseCount += 1
        out.append(.send(SecretOutgoing(chatID: chatID, accessHash: accessHash, randomID: random.int64(), data: data,
                                        isService: isService, attachment: attachment, outSeqNo: outSeqNo)))
        return out
    }

    /// The serialized message (wrapped with sequence numbers when the chat is layered) and its envelope.
    private func seal(_ chatID: Int32, _ payload: SecretPayload) throws(SecretChatError)
        -> (bytes: [UInt8], data: [UInt8], outSeqNo: Int32?, accessHash: Int64) {
        guard let chat = chats[chatID] else { throw .unknownChat(chatID) }
        guard chat.layer.isLayered else {
            let bytes = payload.object.boxedBytes
            return (bytes, try encryptPayload(chat, bytes), nil, chat.accessHash)
        }
        let bytes = try Self.serializeLayered(payload, layer: chat.layer, inSeqNo: 2 * chat.inSeqNo + chat.xIn,
                                              outSeqNo: 2 * chat.outSeqNo + chat.xOut, random: random)
        return (bytes, try encryptPayload(chat, bytes), chat.outSeqNo, chat.accessHash)
    }

    private func encryptPayload(_ chat: SecretChatState, _ bytes: [UInt8]) throws(SecretChatError) -> [UInt8] {
        do {
            return try SecretChatCrypto.encrypt(bytes, key: try AuthKey(chat.key), version: chat.mtproto,
                                                fromOriginator: chat.isOriginator, random: random)
        } catch {
            throw .invalidState("encryption failed: \(error)")
        }
    }

    // MARK: Re-keying (end-to-end/pfs)

    private mutating func rekeyIfDue(_ chatID: Int32, now: Double) -> [SecretChatOutput] {
        guard let chat = chats[chatID], chat.phase == .ready, chat.rekey == nil, chat.layer.supportsRekeying,
              dhConfig != nil else { return [] }
        let due = chat.keyUseCount >= configuration.rekeyAfterMessages
            || now - chat.keyCreatedAt >= configuration.rekeyAfterSeconds
        guard due else { return [] }
        return (try? rekey(chatID: chatID, now: now)) ?? []
    }

    private mutating func acceptRekey(_ chatID: Int32, exchangeID: Int64, gA: [UInt8], now: Double) -> [SecretChatOutput] {
        guard let chat = chats[chatID] else { return [] }
        if let mine = chat.rekey {
            // Concurrent requests: the larger exchange_id goes on, equal ones both stop.
            if mine.exponent != nil && mine.exchangeID > exchangeID { return [] }
            chats[chatID]?.rekey = nil
            if mine.exchangeID == exchangeID { return [.event(.rekeyAborted(chatID: chatID, exchangeID: exchangeID))] }
        }
        do throws(SecretChatError) {
            let dh = try currentDH()
            let mine = try share(dh, serverRandom: [])
            let key = try sharedKey(dh, peer: gA, exponent: mine.exponent)
            let fingerprint = SecretChatCrypto.keyFingerprint(key)
            chats[chatID]?.rekey = .init(exchangeID: exchangeID, newKey: key)
            return try send(chatID: chatID, action: .acceptKey(exchangeID: exchangeID, gB: mine.publicValue,
                                                                keyFingerprint: fingerprint), now: now)
        } catch {
            return abortRekey(chatID, exchangeID: exchangeID, now: now)
        }
    }

    private mutating func commitRekey(_ chatID: Int32, exchangeID: Int64, gB: [UInt8], fingerprint: Int64,
                                      now: Double) -> [SecretChatOutput] {
        guard let rekey = chats[chatID]?.rekey, rekey.exchangeID == exchangeID, let exponent = rekey.exponent else { return [] }
        chats[chatID]?.rekey = nil
        let key: [UInt8]
        do throws(SecretChatError) {
            key = try sharedKey(try currentDH(), peer: gB, exponent: exponent)
            let mine = SecretChatCrypto.keyFingerprint(key)
            guard mine == fingerprint else { throw .keyFingerprintMismatch(expected: fingerprint, actual: mine) }
        } catch {
            return abortRekey(chatID, exchangeID: exchangeID, now: now)
        }
        // commitKey goes under the old key; everything after it under the new one.
        var out = (try? send(chatID: chatID, action: .commitKey(exchangeID: exchangeID, keyFingerprint: fingerprint),
                             now: now)) ?? []
        switchKey(chatID, to: key, now: now)
        out.append(.event(.rekeyed(chatID: chatID, keyFingerprint: fingerprint)))
        return out
    }

    private mutating func completeRekey(_ chatID: Int32, exchangeID: Int64, fingerprint: Int64,
                                        now: Double) -> [SecretChatOutput] {
        guard let rekey = chats[chatID]?.rekey, rekey.exchangeID == exchangeID, let key = rekey.newKey else { return [] }
        chats[chatID]?.rekey = nil
        guard SecretChatCrypto.keyFingerprint(key) == fingerprint else {
            return abortRekey(chatID, exchangeID: exchangeID, now: now)
        }
        switchKey(chatID, to: key, now: now)
        // The noop is the first message under the new key, so the initiator sees the switch.
        var out: [SecretChatOutput] = [.event(.rekeyed(chatID: chatID, keyFingerprint: fingerprint))]
        out += (try? send(chatID: chatID, action: .noop, now: now)) ?? []
        return out
    }

    /// The exchange is off: abortKey to the peer, rekeyAborted to the application.
    private mutating func abortRekey(_ chatID: Int32, exchangeID: Int64, now: Double) -> [SecretChatOutput] {
        chats[chatID]?.rekey = nil
        return ((try? send(chatID: chatID, action: .abortKey(exchangeID: exchangeID), now: now)) ?? [])
            + [.event(.rekeyAborted(chatID: chatID, exchangeID: exchangeID))]
    }

    private mutating func switchKey(_ chatID: Int32, to key: [UInt8], now: Double) {
        guard var chat = chats[chatID] else { return }
        chat.previousKey = chat.key
        chat.key = key
        chat.keyFingerprint = SecretChatCrypto.keyFingerprint(key)
        chat.keyCreatedAt = now
        chat.keyUseCount = 0
        chats[chatID] = chat
    }

    // MARK: Namespaces

    static func namespace(_ layer: SecretLayer) -> any SecretNamespace.Type {
        layeredNamespace(layer) ?? SecretApi8.self
    }

    static func layeredNamespace(_ layer: SecretLayer) -> (any LayeredSecretNamespace.Type)? {
        switch layer {
        case .layer8: nil
        case .layer46: SecretApi46.self
        case .layer73: SecretApi73.self
        case .layer101: SecretApi101.self
        case .layer144: SecretApi144.self
        }
    }

    static func parse<T: TLParsable>(_ bytes: [UInt8], as: T.Type) throws(TLDecodingError) -> T {
        var reader = BufferReader(bytes: bytes)
        let value = try T.parse(&reader)
        try reader.expectEnd()
        return value
    }

    static func parseLayered(_ bytes: [UInt8], layer: SecretLayer) throws(SecretChatError)
        -> (layer: Int32, inSeqNo: Int32, outSeqNo: Int32, payload: SecretPayload) {
        func open<N: LayeredSecretNamespace>(_: N.Type) throws(SecretChatError)
            -> (layer: Int32, inSeqNo: Int32, outSeqNo: Int32, payload: SecretPayload) {
            do {
                let parts = N.unwrap(try parse(bytes, as: N.Layered.self))
                return (parts.layer, parts.inSeqNo, parts.outSeqNo, N.payload(parts.message))
            } catch {
                // A layer-8 message inside the wrapper (telethon-secret-chat wraps its layer-8 notifyLayer) is read
                // with SecretApi8, as it would be unwrapped; anything else is malformed.
                if let layer8 = try? layer8Inside(bytes) { return layer8 }
                throw .malformed("\(layer): \(error)")
            }
        }
        guard let namespace = layeredNamespace(layer) else { throw .malformed("layer 8 has no decryptedMessageLayer") }
        return try open(namespace)
    }

    /// decryptedMessageLayer read field by field with a layer-8 DecryptedMessage inside.
    static func layer8Inside(_ bytes: [UInt8]) throws(TLDecodingError)
        -> (layer: Int32, inSeqNo: Int32, outSeqNo: Int32, payload: SecretPayload) {
        var reader = BufferReader(bytes: bytes)
        let header = try readWrapperHeader(&reader)
        let message = try SecretApi8.DecryptedMessage.parse(&reader)
        try reader.expectEnd()
        return (header.layer, header.inSeqNo, header.outSeqNo, .layer8(message))
    }

    /// decryptedMessageLayer's fields before `message`, read without a namespace (random_bytes skipped).
    static func readWrapperHeader(_ reader: inout BufferReader) throws(TLDecodingError)
        -> (layer: Int32, inSeqNo: Int32, outSeqNo: Int32) {
        let id = try reader.readUInt32()
        guard id == 0x1be3_1789 else { throw TLDecodingError(.unknownConstructor(id, type: "DecryptedMessageLayer"), offset: 0) }
        _ = try reader.readTLBytes()
        return (try reader.readInt32(), try reader.readInt32(), try reader.readInt32())
    }

    static func serializeLayered(_ payload: SecretPayload, layer: SecretLayer, inSeqNo: Int32, outSeqNo: Int32,
                                 random: some RandomSource) throws(SecretChatError) -> [UInt8] {
        func open<N: LayeredSecretNamespace>(_: N.Type) throws(SecretChatError) -> [UInt8] {
            do {
                let message = try N.message(in: payload) ?? convert(payload.object, to: N.Message.self)
                return N.wrap(randomBytes: messageRandomBytes(random), layer: layer.rawValue, inSeqNo: inSeqNo,
                              outSeqNo: outSeqNo, message: message).boxedBytes
            } catch {
                throw .malformed("not a \(layer) message: \(error)")
            }
        }
        guard let namespace = layeredNamespace(layer) else { throw .malformed("layer 8 has no decryptedMessageLayer") }
        return try open(namespace)
    }

    static func makeService(_ layer: SecretLayer, randomID: Int64, action: SecretServiceAction,
                            random: some RandomSource) throws(SecretChatError) -> SecretPayload {
        func open<N: SecretNamespace>(_: N.Type) throws(SecretChatError) -> SecretPayload {
            do {
                let converted = try convert(action.model, to: N.Action.self)
                return N.payload(N.service(randomID: randomID, action: converted, random: random))
            } catch {
                throw .invalidState("\(layer) has no \(action)")
            }
        }
        return try open(namespace(layer))
    }

    static func makeMessage(_ layer: SecretLayer, randomID: Int64, content: SecretContent,
                            random: some RandomSource) -> SecretPayload {
        func open<N: SecretNamespace>(_: N.Type) -> SecretPayload {
            N.payload(N.message(randomID: randomID, content: content, random: random))
        }
        return open(namespace(layer))
    }
}
