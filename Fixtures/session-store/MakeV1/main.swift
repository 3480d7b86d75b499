// Writes Fixtures/session-store/v1.sqlite with the session store API of commit 792d64a (schema v1: the `dc`, `meta`,
// `document` and `peer` tables, the update box and channel boxes as hand-serialised documents, secret chats as the
// manager's JSON document). Built as a temporary executable target against that commit; see README.md.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import SecretChats
import TelegramClient

/// The manager's internal document (SecretChatManager.Snapshot): the same fields, so the same JSON.
struct SecretChatsDocument: Codable {
    var chats: [SecretChatState]
    var dhConfig: SecretDHConfig?
}

let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "v1.sqlite"
try? FileManager.default.removeItem(atPath: path)
let store = try await SQLiteSessionStore.open(path: path)

func key(seed: UInt64, salt: Int64, offset: Double) throws -> StoredAuthKey {
    StoredAuthKey(authKey: try AuthKey(SeededRandom(seed: seed).bytes(256)), salt: salt, timeOffset: offset)
}

try await store.save(ClientState(
    homeDC: 2,
    addresses: [1: DCAddress(host: "149.154.175.53", port: 443), 2: DCAddress(host: "2001:67c:4e8:f002::a", port: 443)],
    permanentKeys: [1: try key(seed: 101, salt: -7_000_000_001, offset: 1.5),
                    2: try key(seed: 102, salt: 42, offset: -0.25)],
    temporaryKeys: [2: TemporaryAuthKey(key: try key(seed: 103, salt: 9, offset: -0.25), expiresAt: 1_700_086_400)]))

try await store.saveDocument(UpdateBox(pts: 1234, qts: 56, date: 1_700_000_000, seq: 78).serialized,
                             named: TelegramClient.updateBoxDocument)
try await store.saveDocument(ChannelBox.serialized([1_000_000_001: ChannelBox(pts: 500, accessHash: -777),
                                                    1_000_000_002: ChannelBox(pts: 9)]),
                             named: TelegramClient.channelBoxesDocument)

try await store.savePeers([
    PeerRecord(kind: 1, id: 100, accessHash: 1001, username: "me", phone: "15550100", isSelf: true, source: nil,
               lastUsed: 10),
    PeerRecord(kind: 1, id: 101, accessHash: -1002, username: "Alice", phone: nil, isSelf: false, source: nil,
               lastUsed: 11),
    PeerRecord(kind: 1, id: 102, accessHash: nil, username: nil, phone: nil, isSelf: false,
               source: .init(chatKind: 3, chatID: 1_000_000_001, messageID: 77), lastUsed: 12),
    PeerRecord(kind: 2, id: 200, accessHash: nil, username: nil, phone: nil, isSelf: false, source: nil, lastUsed: 13),
    PeerRecord(kind: 2, id: 201, accessHash: nil, username: nil, phone: nil, isSelf: false, source: nil, lastUsed: 14),
    PeerRecord(kind: 3, id: 1_000_000_001, accessHash: -777, username: "news", phone: nil, isSelf: false, source: nil,
               lastUsed: 15),
    PeerRecord(kind: 3, id: 1_000_000_002, accessHash: nil, username: nil, phone: nil, isSelf: false,
               source: .init(chatKind: 2, chatID: 200, messageID: 5), lastUsed: 16),
], removing: [])

// A ready secret chat (id 7, with user 101), made as the engine tests make one: request, accept, accepted.
let dh = SecretDHConfig(prime: DHPrimeCache.telegramPrime, g: 3, version: 1)
var alice = SecretChatEngine(random: SeededRandom(seed: 201))
var bob = SecretChatEngine(random: SeededRandom(seed: 202))
try alice.setDHConfig(dh)
try bob.setDHConfig(dh)
let share = try alice.makeRequest(serverRandom: SeededRandom(seed: 203).bytes(256))
try alice.requestSent(chatID: 7, accessHash: 7007, peerUserID: 101, share: share)
_ = bob.handleRequested(chatID: 7, accessHash: 7007, peerUserID: 100, gA: share.publicValue)
let (gB, fingerprint) = try bob.accept(chatID: 7, serverRandom: SeededRandom(seed: 204).bytes(256))
_ = alice.handleAccepted(chatID: 7, accessHash: 7007, gB: gB, keyFingerprint: fingerprint, now: 1_700_000_000)
let chats = alice.chats.keys.sorted().compactMap { alice.chats[$0] }
try await store.saveDocument(Array(try JSONEncoder().encode(SecretChatsDocument(chats: chats, dhConfig: alice.dhConfig))),
                             named: "secret_chats")
try await store.close()
print("wrote \(path): secret chat 7 fingerprint \(fingerprint), phase \(chats.first.map { "\($0.phase)" } ?? "none")")
