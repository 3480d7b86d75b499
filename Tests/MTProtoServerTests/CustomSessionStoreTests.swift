// A session store written here, on dictionaries, that makes every change itself (without `SessionState.apply`): the
// protocol is small enough for a test to implement, and complete enough that a client signed in with it (through a
// PHONE_MIGRATE) is reopened from it signed in on the right DC with no new key exchange, and reconnects.
import Foundation
import MTProtoClient
import TelegramApi
import TelegramClient
import TelegramSession
import Testing

actor DictionaryStore: SessionStore {
    private(set) var homeDC: Int32?
    private(set) var addresses: [Int32: DCAddress] = [:]
    private(set) var dcKeys: [Int32: DCKeys] = [:]
    private(set) var box: UpdateBox?
    private(set) var channels: [Int64: ChannelBox] = [:]
    private(set) var peers: [PeerRecord.Key: PeerRecord] = [:]
    private(set) var secretChats = StoredSecretChats()

    func load() -> SessionState {
        SessionState(homeDC: homeDC, addresses: addresses, permanentKeys: dcKeys.compactMapValues(\.permanent),
                     temporaryKeys: dcKeys.compactMapValues(\.temporary), updateBox: box, channelBoxes: channels,
                     peers: peers, secretChats: secretChats)
    }

    func save(_ changes: [SessionChange]) {
        for change in changes {
            switch change {
                case .homeDC(let dc): homeDC = dc
                case let .keys(keys, dc): dcKeys[dc] = keys
                case let .address(address, dc): addresses[dc] = address
                case .updateBox(let new): box = new
                case .channelBoxes(let new): channels = new
                case let .peers(changed, removed):
                    for key in removed { peers[key] = nil }
                    for record in changed { peers[record.key] = record }
                case .secretChats(let new): secretChats = new
            }
        }
    }
}

@Suite struct CustomSessionStoreTests {
    @Test func aStoreOfItsOwnKeepsASignInAcrossReopening() async throws {
        let telegram = try await LocalTelegram.start(seed: 51)
        let store = DictionaryStore()
        let first = try telegram.client(store: store)
        guard case .user(let me) = try await LocalTelegram.signIn(first, phone: "9996610002") else {
            throw HarnessFailure(description: "no user signed in")
        }
        await first.close()
        #expect(await store.homeDC == 1, "the PHONE_MIGRATE to DC 1 was kept")
        #expect(await store.dcKeys[1]?.permanent != nil)
        #expect(await store.addresses[1] != nil)
        #expect(await store.peers[PeerRecord.Key(kind: .user, id: me.id)]?.isSelf == true)
        let keys = telegram.server.contexts.mapValues(\.keys.count)

        let reopened = try telegram.client(store: store)
        let users = try await reopened.invoke(Api.functions.users.getUsers(id: [.inputUserSelf]))
        guard case .user(let again)? = users.first else { throw HarnessFailure(description: "\(users)") }
        #expect(again.id == me.id && again.phone == "9996610002")
        #expect(await reopened.homeDC == 1)
        await reopened.dropHomeConnection()
        #expect(try await reopened.invoke(Api.functions.users.getUsers(id: [.inputUserSelf])).count == 1)
        #expect(telegram.server.contexts.mapValues(\.keys.count) == keys, "no new key exchange, reopened or reconnected")
        await reopened.close()
        try await telegram.server.shutdown()
    }
}
