// Auth keys never print: a key and a stored key show only the key's id. (The stores are TelegramSessionTests'.)
import MTProtoClient
import MTProtoCrypto
import MTProto
import Testing

@Suite struct AuthKeyPrintingTests {
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
