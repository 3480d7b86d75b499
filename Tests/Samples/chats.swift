// For the chats article's samples: a client, a supergroup (`group`), a user in it (`user`) and one to add (`bob`).
import Foundation
import TelegramClient

func sample(client: TelegramClient, group: PeerID, user: PeerID, bob: PeerID) async throws {
    // sample
}
