// The secret-chat engine's receive path for one ready layer-144 chat: raw envelopes, and payloads from the fuzzer
// encrypted under the chat key (MTProto 2.0 and 1.0) so the TL, sequence-number, resend, re-key and layer paths are
// reached; between them the peer sends real messages. Checked: no trap; the received count never goes back while the
// chat is ready; an abort leaves the chat discarded; every envelope the engine sends is 24 bytes + whole blocks.
import Foundation
import MTProto
import MTProtoCrypto
import SecretChats

/// Alice (originator) and Bob with one ready chat, built once (each input starts from copies), and the chat key,
/// read from Bob's saved state as an application's store would hold it.
let secretPair: (alice: SecretChatEngine, bob: SecretChatEngine, key: AuthKey)? = {
    let dh = SecretDHConfig(prime: DHPrimeCache.telegramPrime, g: 3, version: 1)
    var alice = SecretChatEngine(random: SeededRandom(seed: 1)), bob = SecretChatEngine(random: SeededRandom(seed: 2))
    guard (try? alice.setDHConfig(dh)) != nil, (try? bob.setDHConfig(dh)) != nil,
          let share = try? alice.makeRequest(serverRandom: []),
          (try? alice.requestSent(chatID: 1, accessHash: 1, peerUserID: 2, share: share)) != nil else { return nil }
    _ = bob.handleRequested(chatID: 1, accessHash: 2, peerUserID: 1, gA: share.publicValue)
    guard let (gB, fingerprint) = try? bob.accept(chatID: 1, serverRandom: []) else { return nil }
    let toAlice = bob.accepted(chatID: 1, now: 0)
    let toBob = alice.handleAccepted(chatID: 1, accessHash: 1, gB: gB, keyFingerprint: fingerprint, now: 0)
    for case .send(let m) in toBob { _ = bob.handleMessage(chatID: 1, data: m.data, date: 0, now: 0) }
    for case .send(let m) in toAlice { _ = alice.handleMessage(chatID: 1, data: m.data, date: 0, now: 0) }
    guard let state = bob.chats[1], let json = try? JSONEncoder().encode(state),
          let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
          let key = (object["key"] as? [Int])?.map({ UInt8(truncatingIfNeeded: $0) }),
          let authKey = try? AuthKey(key) else { return nil }
    return (alice, bob, authKey)
}()

/// Input: up to 32 records `op, length (2 bytes LE), bytes`. `op % 5`: 0 the bytes as a raw envelope; 1 and 2 the
/// bytes as a payload from Alice under MTProto 2.0 / 1.0; 3 Alice sends a text; 4 Bob sends a text to Alice. Each
/// record first moves the clock by `op / 5` hours (re-keys by age).
public func fuzzSecretChat(_ data: [UInt8]) throws(Violation) {
    guard let pair = secretPair else { throw Violation("the secret-chat fixture could not be built") }
    var alice = pair.alice, bob = pair.bob
    var reader = InputReader(data)
    var now: Double = 0
    let random = SeededRandom(seed: 3)
    for _ in 0..<32 {
        let op = reader.byte()
        let length = Int(reader.byte()) | Int(reader.byte()) << 8
        let bytes = reader.take(min(length, 4096))
        if op == 0 && length == 0 && bytes.isEmpty { break }
        now += Double(op / 5) * 3600
        let before = bob.chats[1]
        var outputs: [SecretChatOutput] = []
        switch op % 5 {
        case 0:
            outputs = bob.handleMessage(chatID: 1, data: bytes, date: 0, now: now)
        case 1, 2:
            guard let envelope = try? SecretChatCrypto.encrypt(bytes, key: pair.key, version: op % 5 == 1 ? .v2 : .v1,
                                                               fromOriginator: true, random: random) else { continue }
            outputs = bob.handleMessage(chatID: 1, data: envelope, date: 0, now: now)
        case 3:
            guard let (_, sent) = try? alice.send(chatID: 1, content: SecretContent(text: "a"), now: now) else { continue }
            for case .send(let m) in sent { outputs += bob.handleMessage(chatID: 1, data: m.data, date: 0, now: now) }
        default:
            guard let (_, sent) = try? bob.send(chatID: 1, content: SecretContent(text: "b"), now: now) else { continue }
            outputs = sent
            for case .send(let m) in sent { _ = alice.handleMessage(chatID: 1, data: m.data, date: 0, now: now) }
        }
        try checkSecretChat(before: before, after: bob.chats[1], outputs)
    }
}

private func checkSecretChat(before: SecretChatState?, after: SecretChatState?, _ outputs: [SecretChatOutput])
    throws(Violation) {
    guard let before, let after else { throw Violation("the chat disappeared") }
    if before.phase == .ready, after.phase == .ready, after.inSeqNo < before.inSeqNo {
        throw Violation("in_seq_no went back from \(before.inSeqNo) to \(after.inSeqNo)")
    }
    for output in outputs {
        switch output {
        case .event(.aborted):
            if after.phase != .discarded { throw Violation("an abort left the chat \(after.phase)") }
        case .send(let m):
            if m.data.count < 40 || (m.data.count - 24) % 16 != 0 {
                throw Violation("an envelope of \(m.data.count) bytes")
            }
        default:
            break
        }
    }
}
