// The session stores: what is saved is what is loaded, across reopening the SQLite file; the file is owner-only;
// a damaged row is a typed error naming its table and row; concurrent saves do not interleave their transactions.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import SecretChats
import SQLiteNIO
import TelegramSession
import Testing

func temporaryPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UInt64.random(in: 0...UInt64.max)).sqlite").path
}

func storedKey(seed: UInt64, salt: Int64, offset: Double) throws -> StoredAuthKey {
    StoredAuthKey(authKey: try AuthKey(SeededRandom(seed: seed).bytes(256)), salt: salt, timeOffset: offset)
}

/// Runs one statement on the file outside the store (to damage it as a disk or another program would).
func execute(_ sql: String, _ binds: [SQLiteData] = [], on path: String) async throws {
    let connection = try await SQLiteConnection.open(storage: .file(path: path))
    _ = try await connection.query(sql, binds)
    try await connection.close()
}

/// The parts of a state that compare as values (secret chats are compared by their ids and fingerprints).
struct Snapshot: Equatable {
    var homeDC: Int32?
    var addresses: [Int32: DCAddress]
    var permanentKeys: [Int32: StoredAuthKey]
    var temporaryKeys: [Int32: TemporaryAuthKey]
    var updateBox: UpdateBox?
    var channelBoxes: [Int64: ChannelBox]
    var peers: [PeerRecord.Key: PeerRecord]
    var secretChats: [[Int64]]
    var dhConfig: SecretDHConfigValue?

    struct SecretDHConfigValue: Equatable {
        var prime: [UInt8], g: Int32, version: Int32
    }

    init(_ state: SessionState) {
        homeDC = state.homeDC
        addresses = state.addresses
        permanentKeys = state.permanentKeys
        temporaryKeys = state.temporaryKeys
        updateBox = state.updateBox
        channelBoxes = state.channelBoxes
        peers = state.peers
        secretChats = state.secretChats.chats.map { [Int64($0.id), $0.accessHash, $0.peerUserID, $0.keyFingerprint] }
        dhConfig = state.secretChats.dhConfig.map { SecretDHConfigValue(prime: $0.prime, g: $0.g, version: $0.version) }
    }
}

@Suite struct SessionStoreTests {
    static func sampleChanges() throws -> [SessionChange] {
        let permanent = try storedKey(seed: 1, salt: -77, offset: 1.5)
        let temporary = try storedKey(seed: 2, salt: 9, offset: -0.25)
        return [
            .homeDC(4),
            .address(DCAddress(host: "127.0.0.1", port: 4430), dc: 2),
            .keys(DCKeys(permanent: permanent, temporary: nil), dc: 2),
            .keys(DCKeys(permanent: permanent, temporary: TemporaryAuthKey(key: temporary, expiresAt: 1_700_086_400)),
                  dc: 4),
            .address(DCAddress(host: "::1", port: 443), dc: 4),
            .updateBox(UpdateBox(pts: 10, qts: -1, date: 1_700_000_000, seq: 3)),
            .channelBoxes([5: ChannelBox(pts: 7, accessHash: -8), 6: ChannelBox(pts: 1)]),
            .peers(changed: [
                PeerRecord(kind: .user, id: 1, accessHash: 11, username: "a", phone: "1", isSelf: true, source: nil,
                           lastUsed: 1),
                PeerRecord(kind: .basicGroup, id: 1, accessHash: nil, username: nil, phone: nil, isSelf: false,
                           source: nil, lastUsed: 2),
                PeerRecord(kind: .user, id: 2, accessHash: nil, username: nil, phone: nil, isSelf: false,
                           source: .init(chatKind: .channel, chatID: 5, messageID: 9), lastUsed: 3),
            ], removed: []),
            .secretChats(StoredSecretChats(chats: [], dhConfig: SecretDHConfig(prime: [1, 2, 3], g: 3, version: 2))),
        ]
    }

    static func expected() throws -> SessionState {
        var state = SessionState()
        for change in try sampleChanges() { state.apply(change) }
        return state
    }

    @Test func sqliteRoundTripsAcrossReopening() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try await SQLiteSessionStore.open(path: path)
        #expect(Snapshot(try await store.load()) == Snapshot(SessionState()))
        try await store.save(try Self.sampleChanges())
        try await store.close()
        let again = try await SQLiteSessionStore.open(path: path)
        var expected = try Self.expected()
        #expect(Snapshot(try await again.load()) == Snapshot(expected))
        #expect(try await again.keys(for: 4) == DCKeys(permanent: expected.permanentKeys[4], temporary: expected.temporaryKeys[4]))
        let forgotten = [SessionChange.homeDC(nil), .keys(DCKeys(permanent: expected.permanentKeys[4], temporary: nil), dc: 4),
                         .updateBox(nil), .channelBoxes([:]),
                         .peers(changed: [], removed: [PeerRecord.Key(kind: .user, id: 2)])]
        try await again.save(forgotten)
        for change in forgotten { expected.apply(change) }
        #expect(Snapshot(try await again.load()) == Snapshot(expected))
        #expect(expected.peers.count == 2 && expected.temporaryKeys.isEmpty)
        try await again.close()
    }

    @Test func memoryStoreKeepsWhatItIsGiven() async throws {
        let store = MemorySessionStore()
        await store.save(try Self.sampleChanges())
        #expect(Snapshot(await store.load()) == Snapshot(try Self.expected()))
        #expect(try await store.keys(for: 2).permanent == (try Self.expected()).permanentKeys[2])
    }

    @Test func theFileIsOwnerOnlyEvenIfItWasNot() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        let store = try await SQLiteSessionStore.open(path: path)
        try await store.save(try Self.sampleChanges())
        try await store.close()
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        await #expect {
            _ = try await SQLiteSessionStore.open(path: "/nonexistent/dir/x")
        } throws: { error in
            if case .file(path: "/nonexistent/dir/x", _)? = error as? SessionStoreError { true } else { false }
        }
    }

    /// Saves started together, each a transaction of several statements, all land: none starts inside another.
    @Test func concurrentSavesDoNotInterleave() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try await SQLiteSessionStore.open(path: path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in Int64(1)...40 {
                group.addTask {
                    try await store.save([
                        .peers(changed: [PeerRecord(kind: .channel, id: id, accessHash: id, username: nil, phone: nil,
                                                    isSelf: false, source: nil, lastUsed: UInt64(id))], removed: []),
                        .channelBoxes([id: ChannelBox(pts: Int32(id))]),
                    ])
                }
            }
            try await group.waitForAll()
        }
        let state = try await store.load()
        #expect(state.peers.count == 40)
        #expect(state.channelBoxes.count == 1)
        try await store.close()
    }

    /// A file holding the sample session, then damaged by `statement` run outside the store, opened again.
    static func damaged(_ path: String, by statement: String) async throws -> SQLiteSessionStore {
        let store = try await SQLiteSessionStore.open(path: path)
        try await store.save(try sampleChanges())
        try await store.close()
        try await execute(statement, on: path)
        return try await SQLiteSessionStore.open(path: path)
    }

    @Test func aTruncatedKeyIsACorruptRowNamed() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let damaged = try await Self.damaged(path, by: "UPDATE dc SET auth_key = substr(auth_key, 1, 100) WHERE id = 2")
        await #expect(throws: SessionStoreError.corrupt(path: path, location: "dc row 2",
                                                        reason: "auth_key is 100 bytes, not 256")) {
            _ = try await damaged.load()
        }
        await #expect(throws: SessionStoreError.self) { _ = try await damaged.keys(for: 2) }
        #expect(try await damaged.keys(for: 4).permanent != nil, "another DC's row still reads")
        try await damaged.close()
    }

    @Test(arguments: [
        ("UPDATE peer SET kind = 9 WHERE kind = 2 AND id = 1", "peer row kind 9, id 1",
         "kind 9 is not 1 (user), 2 (basic group) or 3 (channel)"),
        ("UPDATE peer SET source_kind = 0 WHERE id = 2", "peer row kind 1, id 2",
         "source_kind 0 is not 1 (user), 2 (basic group) or 3 (channel)"),
        ("UPDATE update_box SET pts = 'ten'", "update_box row", "pts is text, not an integer"),
        ("UPDATE update_box SET pts = 4294967296", "update_box row", "pts 4294967296 is not a 32-bit integer"),
        ("UPDATE dc SET port = 70000 WHERE id = 4", "dc row 4", "port 70000 is not a TCP port"),
        ("UPDATE channel_box SET access_hash = 1.5 WHERE id = 5", "channel_box row 5", "access_hash is a real, not an integer"),
        ("UPDATE secret_chats SET format = 2", "secret_chats row", "format 2 is not 1"),
    ])
    func aWrongKindOrTypeIsACorruptRowNamed(statement: String, location: String, reason: String) async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let damaged = try await Self.damaged(path, by: statement)
        await #expect(throws: SessionStoreError.corrupt(path: path, location: location, reason: reason)) {
            _ = try await damaged.load()
        }
        try await damaged.close()
    }

    @Test func secretChatsThatDoNotDecodeAreACorruptRowNamed() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let damaged = try await Self.damaged(path, by: "UPDATE secret_chats SET value = x'7b22'")
        await #expect {
            _ = try await damaged.load()
        } throws: { error in
            guard case .corrupt(path, "secret_chats row", let reason)? = error as? SessionStoreError else { return false }
            return reason.hasPrefix("value does not decode")
        }
        try await damaged.close()
    }

    @Test func aFileThatIsNotADatabaseIsATypedError() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x5a, count: 4096)))
        await #expect {
            _ = try await SQLiteSessionStore.open(path: path)
        } throws: { error in
            if case .database(path: path, _)? = error as? SessionStoreError { true } else { false }
        }
    }
}
