// swift-tools-version: 6.2
// A user's own package, Greeter, whose test suite starts the test Telegram in process and runs its code against it:
// no network, no real accounts, a fresh server per test.
import PackageDescription

let package = Package(
    name: "Greeter",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "swift-mtproto", path: "../..")],
    targets: [
        .target(
            name: "Greeter",
            dependencies: [
                .product(name: "TelegramClient", package: "swift-mtproto"),
                .product(name: "TelegramApi", package: "swift-mtproto"),
                .product(name: "MTProtoClient", package: "swift-mtproto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]),
        .testTarget(
            name: "GreeterTests",
            dependencies: [
                "Greeter",
                .product(name: "TelegramClient", package: "swift-mtproto"),
                .product(name: "TelegramApi", package: "swift-mtproto"),
                .product(name: "MTProtoClient", package: "swift-mtproto"),
                .product(name: "MTProtoCrypto", package: "swift-mtproto"),
                .product(name: "TelegramSession", package: "swift-mtproto"),
                .product(name: "MTProto", package: "swift-mtproto"),
                // The test Telegram: MTProtoServer carries TestTelegram; TelegramApiServer names its typed requests.
                .product(name: "MTProtoServer", package: "swift-mtproto"),
                .product(name: "TelegramApiServer", package: "swift-mtproto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
