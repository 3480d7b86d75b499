// swift-tools-version: 6.2
// A command-line tool that signs in, sends a message to a user by username, and prints the reply if one comes.
// It uses swift-mtproto as any package would (here by path; elsewhere by URL).
import PackageDescription

let package = Package(
    name: "SignInAndSend",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "swift-mtproto", path: "../..")],
    targets: [
        .executableTarget(
            name: "SignInAndSend",
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
