// Uses both generated modules: builds a value of each, serializes it, and reads it back through the registry.
import ChatApi
import ShopApi
import TLRuntime

let cart = Shop.Cart.cart(.init(items: [.item(.init(id: 1, title: "tea", price: 3)), .itemGone(.init(id: 2))]))
let message = Chat.ChatMessage.chatMessage(.init(id: 7, text: "hello", pinned: true))
for (value, registry) in [(cart as any TLObject, Shop.registry), (message, Chat.registry)] {
    let buffer = Buffer()
    value.serialize(buffer, true)
    let back = try registry.parse(bytes: buffer.bytes)
    print("\(back.descriptionFields().0): \(buffer.bytes.count) bytes")
}
print("Chat layer \(Chat.layer), Shop layer \(Shop.layer); text: \(message.text)")
