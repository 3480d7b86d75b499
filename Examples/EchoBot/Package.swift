// swift-tools-version: 6.2
// A bot that answers every private message with the same text, following the account's typed events.
// It uses swift-mtproto as any package would (here by path; elsewhere by URL).
import PackageDescription

let package = Package(
    name: "EchoBot",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "swift-mtproto", path: "../..")],
    targets: [
        .executableTarget(
            name: "EchoBot",
            dependencies: [
                .product(name: "TelegramClient", package: "swift-mtproto"),
                .product(name: "TelegramApi", package: "swift-mtproto"),
                .product(name: "TelegramFormatting", package: "swift-mtproto"),   // the text of sendMessage(to:formatted:)
                .product(name: "MTProtoClient", package: "swift-mtproto"),   // DCAddress
                .product(name: "TelegramSession", package: "swift-mtproto"),   // the session stores
                .product(name: "MTProtoCrypto", package: "swift-mtproto"),   // RSAPublicKey
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
