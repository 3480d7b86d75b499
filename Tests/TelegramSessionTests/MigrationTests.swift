// Fixtures/session-store/v1.sqlite, written by the store of the first schema (see its README), opens with today's
// store: every value it held reads back, a second open reads the same, a newer schema is refused untouched, and a
// damaged old document stops the migration with a typed error and leaves the file as it was.
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import SecretChats
import SQLiteNIO
@testable import TelegramSession
import Testing

@Suite struct MigrationTests {
    /// A copy of the fixture to migrate (the committed file stays as it was written).
    static func copyOfVersion1() throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/session-store/v1.sqlite")
        let path = temporaryPath()
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
        return path
    }

    static func userVersion(_ path: String) async throws -> Int? {
        let connection = try await SQLiteConnection.open(storage: .file(path: path))
        let version = try await connection.query("PRAGMA user_version").first?.column("user_version")?.integer
        try await connection.close()
        return version
    }

    /// What the fixture's program wrote (Fixtures/session-store/MakeV1/main.swift).
    static func expectVersion1Contents(_ state: SessionState) throws {
        #expect(state.homeDC == 2)
        #expect(state.addresses == [1: DCAddress(host: "149.154.175.53", port: 443),
                                    2: DCAddress(host: "2001:67c:4e8:f002::a", port: 443)])
        #expect(state.permanentKeys == [1: try storedKey(seed: 101, salt: -7_000_000_001, offset: 1.5),
                                        2: try storedKey(seed: 102, salt: 42, offset: -0.25)])
        #expect(state.temporaryKeys == [2: TemporaryAuthKey(key: try storedKey(seed: 103, salt: 9, offset: -0.25),
                                                            expiresAt: 1_700_086_400)])
        #expect(state.updateBox == UpdateBox(pts: 1234, qts: 56, date: 1_700_000_000, seq: 78))
        #expect(state.channelBoxes == [1_000_000_001: ChannelBox(pts: 500, accessHash: -777),
                                       1_000_000_002: ChannelBox(pts: 9)])
        let peers: [PeerRecord] = [
            PeerRecord(kind: .user, id: 100, accessHash: 1001, username: "me", phone: "15550100", isSelf: true,
                       source: nil, lastUsed: 10),
            PeerRecord(kind: .user, id: 101, accessHash: -1002, username: "Alice", phone: nil, isSelf: false,
                       source: nil, lastUsed: 11),
            PeerRecord(kind: .user, id: 102, accessHash: nil, username: nil, phone: nil, isSelf: false,
                       source: .init(chatKind: .channel, chatID: 1_000_000_001, messageID: 77), lastUsed: 12),
            PeerRecord(kind: .basicGroup, id: 200, accessHash: nil, username: nil, phone: nil, isSelf: false,
                       source: nil, lastUsed: 13),
            PeerRecord(kind: .basicGroup, id: 201, accessHash: nil, username: nil, phone: nil, isSelf: false,
                       source: nil, lastUsed: 14),
            PeerRecord(kind: .channel, id: 1_000_000_001, accessHash: -777, username: "news", phone: nil,
                       isSelf: false, source: nil, lastUsed: 15),
            PeerRecord(kind: .channel, id: 1_000_000_002, accessHash: nil, username: nil, phone: nil, isSelf: false,
                       source: .init(chatKind: .basicGroup, chatID: 200, messageID: 5), lastUsed: 16),
        ]
        #expect(state.peers == Dictionary(uniqueKeysWithValues: peers.map { ($0.key, $0) }))
        let chat = try #require(state.secretChats.chats.first)
        #expect(state.secretChats.chats.count == 1)
        #expect(chat.id == 7 && chat.accessHash == 7007 && chat.peerUserID == 101 && chat.isOriginator)
        #expect(chat.phase == .ready)
        #expect(chat.keyFingerprint == 6_205_653_638_971_816_112)
        #expect(chat.keyVisualization.count > 0)
        #expect(state.secretChats.dhConfig == SecretDHConfig(prime: DHPrimeCache.telegramPrime, g: 3, version: 1))
    }

    @Test func aVersion1FileReadsBackWhole() async throws {
        let path = try Self.copyOfVersion1()
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try await Self.userVersion(path) == 0)
        let store = try await SQLiteSessionStore.open(path: path)
        try Self.expectVersion1Contents(try await store.load())
        #expect(try await store.keys(for: 2).temporary?.expiresAt == 1_700_086_400)
        try await store.close()
        #expect(try await Self.userVersion(path) == 2)

        let again = try await SQLiteSessionStore.open(path: path)
        try Self.expectVersion1Contents(try await again.load())
        try await again.close()
        #expect(try await Self.userVersion(path) == 2)
    }

    @Test func aFileOfANewerSchemaIsRefusedUntouched() async throws {
        let path = try Self.copyOfVersion1()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await execute("PRAGMA user_version = 3", on: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        await #expect(throws: SessionStoreError.unsupportedVersion(path: path, version: 3, newest: 2)) {
            _ = try await SQLiteSessionStore.open(path: path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aTruncatedBoxStopsTheMigrationAndLeavesTheFile() async throws {
        let path = try Self.copyOfVersion1()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await execute("UPDATE document SET value = substr(value, 1, 10) WHERE name = 'updates.box'", on: path)
        await #expect(throws: SessionStoreError.corrupt(path: path, location: "document updates.box",
                                                        reason: "10 bytes, not 17")) {
            _ = try await SQLiteSessionStore.open(path: path)
        }
        #expect(try await Self.userVersion(path) == 0, "rolled back: still version 1")
        try await execute("UPDATE document SET value = CAST(x'01' || zeroblob(16) AS BLOB) WHERE name = 'updates.box'", on: path)
        let store = try await SQLiteSessionStore.open(path: path)
        #expect(try await store.load().updateBox == UpdateBox(pts: 0, qts: 0, date: 0, seq: 0))
        try await store.close()
    }

    @Test func aDamagedChannelDocumentNamesTheByte() async throws {
        let path = try Self.copyOfVersion1()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The first channel's flag is byte 17 (5 header bytes, then id and pts); `||` makes text, so cast back.
        try await execute("""
            UPDATE document SET value = CAST(substr(value, 1, 17) || x'07' || substr(value, 19) AS BLOB)
                WHERE name = 'updates.channels'
            """, on: path)
        await #expect(throws: SessionStoreError.corrupt(path: path, location: "document updates.channels",
                                                        reason: "channel 0 (byte 17): flag 7, not 0 or 1")) {
            _ = try await SQLiteSessionStore.open(path: path)
        }
    }
}

/// The first schema's hand-serialised boxes, read only by the migration: what it wrote reads back, anything else is
/// refused with the byte that is wrong.
@Suite struct Version1DocumentTests {
    static func corrupt(_ reason: String) -> SessionStoreError { .corrupt(path: "p", location: "d", reason: reason) }

    /// What the first schema's `ChannelBox.serialized` wrote, written again here from its description.
    static func channels(_ boxes: [(id: Int64, pts: Int32, hash: Int64?)]) -> [UInt8] {
        func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        return [1] + bytes(UInt32(boxes.count)) + boxes.flatMap {
            bytes($0.id) + bytes($0.pts) + [$0.hash == nil ? 0 : 1] + bytes($0.hash ?? 0)
        }
    }

    @Test func channelBoxesReadBackAndOthersAreRefused() throws {
        let bytes = Self.channels([(77, 5, -3), (1 << 40, .max, nil)])
        #expect(try SQLiteSessionStore.version1Channels(bytes, corrupt: Self.corrupt)
                == [77: ChannelBox(pts: 5, accessHash: -3), 1 << 40: ChannelBox(pts: .max)])
        #expect(try SQLiteSessionStore.version1Channels(Self.channels([]), corrupt: Self.corrupt) == [:])
        #expect(throws: Self.corrupt("46 bytes do not hold 2 channels of 21 bytes")) {
            try SQLiteSessionStore.version1Channels(Array(bytes.dropLast()), corrupt: Self.corrupt)
        }
        #expect(throws: Self.corrupt("format tag 2, not 1")) {
            try SQLiteSessionStore.version1Channels([2] + bytes.dropFirst(), corrupt: Self.corrupt)
        }
        var badFlag = bytes
        badFlag[5 + 21 + 12] = 2
        #expect(throws: Self.corrupt("channel 1 (byte 38): flag 2, not 0 or 1")) {
            try SQLiteSessionStore.version1Channels(badFlag, corrupt: Self.corrupt)
        }
        #expect(throws: Self.corrupt("channel 77 twice")) {
            try SQLiteSessionStore.version1Channels(Self.channels([(77, 1, nil), (77, 2, nil)]), corrupt: Self.corrupt)
        }
        #expect(throws: Self.corrupt("0 bytes, fewer than the 5 of its header")) {
            try SQLiteSessionStore.version1Channels([], corrupt: Self.corrupt)
        }
        // A count far beyond the bytes is refused before anything is allocated for it.
        #expect(throws: Self.corrupt("5 bytes do not hold 4294967295 channels of 21 bytes")) {
            try SQLiteSessionStore.version1Channels([1, 0xff, 0xff, 0xff, 0xff], corrupt: Self.corrupt)
        }
    }

    @Test func theBoxReadsBackAndOthersAreRefused() throws {
        let box: [UInt8] = [1, 0x40, 0xe2, 0x01, 0x00, 0xfe, 0xff, 0xff, 0xff, 0x00, 0xf1, 0x53, 0x65,
                            0xff, 0xff, 0xff, 0x7f]
        #expect(try SQLiteSessionStore.version1Box(box, corrupt: Self.corrupt)
                == UpdateBox(pts: 123_456, qts: -2, date: 1_700_000_000, seq: .max))
        #expect(throws: Self.corrupt("16 bytes, not 17")) {
            try SQLiteSessionStore.version1Box(Array(box.dropLast()), corrupt: Self.corrupt)
        }
        #expect(throws: Self.corrupt("format tag 2, not 1")) {
            try SQLiteSessionStore.version1Box([2] + box.dropFirst(), corrupt: Self.corrupt)
        }
    }
}
