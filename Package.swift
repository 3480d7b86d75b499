// swift-tools-version: 6.1
// The Telegram protocol toolchain: the TL schema compiler (`tlgen`), the runtime its output compiles against,
// the generated API modules, and the MTProto 2.0 stack. Layout and dependency rules: ARCHITECTURE.md.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

let package = Package(
    name: "swift-mtproto",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "tlgen", targets: ["tlgen"]),
        .library(name: "TLSchema", targets: ["TLSchema"]),
        .library(name: "TLSwiftGen", targets: ["TLSwiftGen"]),
        .library(name: "TLRuntime", targets: ["TLRuntime"]),
        .library(name: "MTProtoCrypto", targets: ["MTProtoCrypto"]),
        .library(name: "MTProtoTransport", targets: ["MTProtoTransport", "MTProtoTransportNIO"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // MARK: Generator: TL text -> checked model -> Swift text. No dependency on the runtime.
        .target(name: "TLSchema", path: "Generator/TLSchema", swiftSettings: swiftSettings),
        .target(name: "TLSwiftGen", dependencies: ["TLSchema"], path: "Generator/TLSwiftGen",
                swiftSettings: swiftSettings),
        .executableTarget(
            name: "tlgen",
            dependencies: ["TLSwiftGen", "TLSchema", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Generator/tlgen", swiftSettings: swiftSettings),

        // MARK: Runtime
        .systemLibrary(name: "CZlib", path: "Runtime/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(name: "COpenSSL", path: "Runtime/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .target(name: "TLRuntime", dependencies: ["CZlib"], path: "Runtime/TLRuntime", swiftSettings: swiftSettings),
        .target(name: "MTProtoCrypto", dependencies: ["COpenSSL"], path: "Runtime/MTProtoCrypto",
                swiftSettings: swiftSettings),
        // Sans-IO transport codecs (framing, obfuscated2, MTProxy, fake-TLS): bytes in, frames and bytes out.
        .target(name: "MTProtoTransport", dependencies: ["MTProtoCrypto", "CZlib"], path: "Runtime/MTProtoTransport",
                swiftSettings: swiftSettings),
        // Thin SwiftNIO handlers around the sans-IO codecs, shared by the client and the test server.
        .target(name: "MTProtoTransportNIO",
                dependencies: ["MTProtoTransport", .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "NIOPosix", package: "swift-nio")],
                path: "Runtime/MTProtoTransportNIO", swiftSettings: swiftSettings),

        // MARK: Tests
        .testTarget(name: "TLSchemaTests", dependencies: ["TLSchema"], path: "Tests/TLSchemaTests",
                    swiftSettings: swiftSettings),
        .testTarget(name: "TLRuntimeTests", dependencies: ["TLRuntime"], path: "Tests/TLRuntimeTests",
                    swiftSettings: swiftSettings),
        .testTarget(name: "MTProtoCryptoTests", dependencies: ["MTProtoCrypto"], path: "Tests/MTProtoCryptoTests",
                    swiftSettings: swiftSettings),
        .testTarget(name: "MTProtoTransportTests",
                    dependencies: ["MTProtoTransport", "MTProtoTransportNIO", "MTProtoCrypto",
                                   .product(name: "NIOCore", package: "swift-nio"),
                                   .product(name: "NIOPosix", package: "swift-nio"),
                                   .product(name: "NIOEmbedded", package: "swift-nio")],
                    path: "Tests/MTProtoTransportTests", swiftSettings: swiftSettings),
    ]
)
