// For samples that use a client someone made: `client` and its `store`, a chat (`peer`, or `chat` as the peer cache
// names it), and what an app's UI (`ui`) or a message (`document`, `photo`) would supply.
import Foundation
import MTProtoClient
import MTProtoCrypto
import SecretChats
import TelegramApi
import TelegramClient
import TelegramSession
import TLRuntime

func sample(client: TelegramClient, store: SQLiteSessionStore, app: TelegramClient.App, keys: [RSAPublicKey],
            peer: Api.InputPeer, chat: PeerID, text: String, id: Int64, httpPort: Int, document: Api.Document.Cons_document,
            photo: [UInt8], bobID: Int64, bobHash: Int64, ui: some SampleUI,
            consume: ([UInt8]) -> Void) async throws {
    // sample
}
