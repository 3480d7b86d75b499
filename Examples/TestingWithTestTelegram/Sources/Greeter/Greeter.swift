// The code under test: greets a user by username.
import MTProtoClient
import TelegramApi
import TelegramClient

/// Why a greeting was not sent.
public enum GreeterError: Error, Equatable {
    /// No user has this username.
    case noSuchUser(String)
}

/// Sends "Hello, @USERNAME!" to the user with `username`, through `client` (signed in).
public func greet(_ username: String, with client: TelegramClient) async throws {
    let found: Api.contacts.ResolvedPeer
    do {
        found = try await client.invoke(Api.functions.contacts.resolveUsername(username: username))
    } catch MTProtoClientError.rpc(let error) where error.message == "USERNAME_NOT_OCCUPIED" {
        throw GreeterError.noSuchUser(username)
    }
    guard case .resolvedPeer(let resolved) = found, case .peerUser(let peer) = resolved.peer,
          let accessHash = resolved.users.lazy.compactMap({ user -> Int64? in
              guard case .user(let u) = user, u.id == peer.userId else { return nil }
              return u.accessHash
          }).first
    else { throw GreeterError.noSuchUser(username) }
    _ = try await client.invoke(Api.functions.messages.sendMessage(
        peer: .inputPeerUser(.init(userId: peer.userId, accessHash: accessHash)), message: "Hello, @\(username)!",
        randomId: Int64.random(in: 1...Int64.max)))
}
