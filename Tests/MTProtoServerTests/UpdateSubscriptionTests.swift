// Which sessions the server pushes an account's updates to: those subscribed by a query that is neither a file query
// nor wrapped in `invokeWithoutUpdates` (core.telegram.org/method/invokeWithoutUpdates: "this is enabled by default
// for file queries").
import MTProto
import MTProtoCrypto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramClient
import TestTelegram
import Testing

@Suite struct UpdateSubscriptionTests {
    /// A pair past its key exchange that has made no call yet, and its session's server key.
    static func handshaken(seed: UInt64) throws -> (Pair, ServerContext, SessionKey) {
        let context = try Fixture.context(seed: seed)
        var pair = try Pair(context: context, kind: .intermediate, wrapping: .plain, seed: seed)
        let key = try pair.handshake()
        return (pair, context, SessionKey(authKeyID: key.authKey.idValue, sessionID: pair.session?.sessionID ?? 0))
    }

    @Test func fileQueriesAndInvokeWithoutUpdatesDoNotSubscribeOtherQueriesDo() throws {
        var (pair, context, key) = try Self.handshaken(seed: 61)
        // Answered with an error here (no file), which does not matter: the query is what counts.
        _ = try pair.call(firstCall(Api.functions.upload.getFile(
            location: .inputDocumentFileLocation(.init(id: 1, accessHash: 2, fileReference: [], thumbSize: "")),
            offset: 0, limit: 4096)))
        #expect(context.sessions.keys(authKeyID: key.authKeyID) == [key], "the session exists")
        #expect(!context.sessions.isSubscribed(key), "a file query subscribed the session")
        guard case .success = try pair.call(Api.functions.invokeWithoutUpdates(query: Api.functions.help.getConfig()))
        else {
            Issue.record("help.getConfig inside invokeWithoutUpdates was not answered")
            return
        }
        #expect(!context.sessions.isSubscribed(key), "a query inside invokeWithoutUpdates subscribed the session")
        #expect(context.sessionKeys(authorizedAs: key.authKeyID, subscribedOnly: true).isEmpty)
        guard case .success = try pair.call(Api.functions.help.getConfig()) else {
            Issue.record("help.getConfig was not answered")
            return
        }
        #expect(context.sessions.isSubscribed(key))
        #expect(context.sessionKeys(authorizedAs: key.authKeyID, subscribedOnly: true) == [key])
        #expect(context.sessionKeys(authorizedAs: key.authKeyID) == [key])
    }

    @Test func aForgottenSessionIsNoLongerSubscribed() throws {
        var (pair, context, key) = try Self.handshaken(seed: 62)
        guard case .success = try pair.call(firstCall()) else {
            Issue.record("help.getConfig was not answered")
            return
        }
        #expect(context.sessions.isSubscribed(key))
        context.sessions.remove(key)
        #expect(!context.sessions.isSubscribed(key))
        #expect(context.sessionKeys(authorizedAs: key.authKeyID, subscribedOnly: true).isEmpty)
    }
}

@Suite struct MediaConnectionUpdateTests {
    /// Alice moves a file over her media connections on her home DC: those sessions carry only file queries, so
    /// her updates go to her main session alone.
    @Test func mediaConnectionsGetNoUpdates() async throws {
        let pair = try await FileTransferTests.Pair.start(seed: 97)
        let data = SeededRandom(seed: 7).bytes(3 << 20)
        let (location, _) = try await pair.share(try await pair.alice.upload(bytes: data, name: "m.bin"))
        var received: [UInt8] = []
        for try await chunk in pair.alice.download(location) { received += chunk }
        #expect(received == data)
        let context = try #require(pair.telegram.server.contexts[2])
        let aliceKeys = pair.telegram.authKeys(of: pair.aliceID, on: 2)
        let key = try #require(aliceKeys.first)
        #expect(aliceKeys.count == 1, "one key for the main and the media connections")
        let sessions = context.sessionKeys(authorizedAs: key)
        let subscribed = context.sessionKeys(authorizedAs: key, subscribedOnly: true)
        #expect(sessions.count >= 2, "the main session and at least one media connection's: \(sessions)")
        #expect(subscribed.count == 1, "only the main session is subscribed: \(subscribed) of \(sessions)")
        try await pair.close()
    }
}

@Suite struct ForeignDCUpdateTests {
    /// Bob (home DC 1, his client told only DC 1's address) downloads a file that lives on DC 2: his client imports
    /// his authorization there inside `invokeWithoutUpdates`, so none of his DC 2 sessions is subscribed and his
    /// updates come over DC 1 alone. (A client that started on DC 2 and was moved by PHONE_MIGRATE_1 subscribed its
    /// DC 2 session with `auth.sendCode` before it knew.)
    @Test func aForeignDCsSessionsAreNotSubscribed() async throws {
        let telegram = try await LocalTelegram.start(seed: 98, limits: FileTransferTests.bigLimits)
        let alice = try telegram.client(followsUpdates: false)
        let bob = try telegram.client(followsUpdates: false, dc: 1)
        guard case .user(let aliceUser) = try await LocalTelegram.signIn(alice, phone: "9996620001"),
              case .user(let bobUser) = try await LocalTelegram.signIn(bob, phone: "9996610002")
        else { throw HarnessFailure(description: "no users") }
        let pair = FileTransferTests.Pair(telegram: telegram, alice: alice, bob: bob, aliceID: aliceUser.id,
                                          bob_: try await alice.inputPeer(for: try await alice.resolve(username: "bob_test")))
        let data = SeededRandom(seed: 8).bytes(1 << 20)
        let (location, document) = try await pair.share(try await alice.upload(bytes: data, name: "f.bin"))
        #expect(document.dcId == 2)
        var received: [UInt8] = []
        for try await chunk in bob.download(location) { received += chunk }
        #expect(received == data)
        let context = try #require(telegram.server.contexts[2])
        let bobKeys = telegram.authKeys(of: bobUser.id, on: 2)
        #expect(bobKeys.count == 1, "Bob's authorization was imported on DC 2")
        for key in bobKeys {
            #expect(context.sessionKeys(authorizedAs: key).count >= 2, "the import's session and a media connection's")
            #expect(context.sessionKeys(authorizedAs: key, subscribedOnly: true).isEmpty,
                    "a session of Bob's on DC 2 is subscribed")
        }
        try await pair.close()
    }
}

extension LocalTelegram {
    /// The auth keys of DC `dc` that have open sessions and are logged in as `user`.
    func authKeys(of user: Int64, on dc: Int32) -> Set<UInt64> {
        guard let context = server.contexts[dc] else { return [] }
        return Set(context.sessions.allKeys.map(\.authKeyID).filter { service.userID(authKeyID: $0, dcID: dc) == user })
    }
}
