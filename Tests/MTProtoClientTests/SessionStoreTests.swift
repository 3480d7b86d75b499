// The session stores: what is saved is what is loaded, across reopening the SQLite file; the file is owner-only;
// a damaged row is a typed error; keys never print.
import Foundation
import MTProtoClient
import MTProtoCrypto
import MTProto
import Testing

@Suite struct SessionStoreTests {
    func sampleState() throws -> ClientState {
        let permanent = StoredAuthKey(authKey: try AuthKey(SeededRandom(seed: 1).bytes(256)), salt: -77, timeOffset: 1.5)
        let temporary = StoredAuthKey(authKey: try AuthKey(SeededRandom(seed: 2).bytes(256)), salt: 9, timeOffset: -0.25)
        return ClientState(homeDC: 4,
                           addresses: [2: DCAddress(host: "127.0.0.1", port: 4430), 4: DCAddress(host: "::1", port: 443)],
                           permanentKeys: [2: permanent, 4: permanent],
                           temporaryKeys: [4: TemporaryAuthKey(key: temporary, expiresAt: 1_700_086_400)])
    }

    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UInt64.random(in: 0...UInt64.max)).sqlite").path
    }

    @Test func sqliteRoundTripsAcrossReopening() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let state = try sampleState()
        let store = try await SQLiteSessionStore.open(path: path)
        #expect(try await store.load() == ClientState())
        try await store.save(state)
        try await store.close()
        let again = try await SQLiteSessionStore.open(path: path)
        #expect(try await again.load() == state)
        var changed = state
        changed.homeDC = nil
        changed.temporaryKeys = [:]
        try await again.save(changed)
        #expect(try await again.load() == changed)
        try await again.close()
    }

    @Test func theFileIsOwnerOnlyEvenIfItWasNot() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644])
        let store = try await SQLiteSessionStore.open(path: path)
        try await store.save(try sampleState())
        try await store.close()
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        await #expect(throws: SessionStoreError.self) { _ = try await SQLiteSessionStore.open(path: "/nonexistent/dir/x") }
    }

    @Test func memoryStoreKeepsWhatItIsGiven() async throws {
        let store = MemorySessionStore()
        let state = try sampleState()
        await store.save(state)
        #expect(await store.load() == state)
    }

    @Test func keysNeverPrint() throws {
        let key = try AuthKey(SeededRandom(seed: 3).bytes(256))
        let stored = StoredAuthKey(authKey: key, salt: 5, timeOffset: 0)
        let hexPrefix = key.bytes.prefix(8).map { String($0, radix: 16) }.joined()
        for text in ["\(key)", String(describing: key), String(reflecting: key), "\(stored)", String(reflecting: stored)] {
            #expect(!text.contains(hexPrefix) && !text.contains("\(key.bytes.prefix(4))"), "\(text)")
            #expect(text.contains(String(key.idValue, radix: 16)))
        }
    }
}
