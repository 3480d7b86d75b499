// swift-tools-version: 6.2
// The Telegram protocol toolchain: the TL schema compiler (`tlgen`), the runtime its output compiles against,
// the generated API modules, and the MTProto 2.0 stack. Layout and dependency rules: ARCHITECTURE.md.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

// The portable crypto backend's libraries: on Apple platforms always, on Linux through PortableCryptoLinux, which
// MTProtoCrypto depends on only with a trait that asks for it (one product listed under two conditions is a
// duplicate SwiftPM warns about, so Linux's goes through a target).
let portableLibraries: [Target.Dependency] = [
    .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux])),
    .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(platforms: [.linux])),
    .product(name: "BigInt", package: "BigInt", condition: .when(platforms: [.linux])),
]
let applePlatforms: [Platform] = [.macOS, .iOS, .macCatalyst, .tvOS, .watchOS, .visionOS]
let portableBackend: [Target.Dependency] = [
    .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: applePlatforms)),
    .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(platforms: applePlatforms)),
    .product(name: "BigInt", package: "BigInt", condition: .when(platforms: applePlatforms)),
    .target(name: "PortableCryptoLinux", condition: .when(traits: ["PortableCryptoBackend"])),
]

let package = Package(
    name: "swift-mtproto",
    // As low as the APIs used allow: Synchronization's Mutex and Atomic (TLRuntime, MTProto, MTProtoClient,
    // TelegramClient, MTProtoServer) set every minimum; the next, swift-crypto's _CryptoExtras and SwiftNIO, need
    // only macOS 10.15 / iOS 13. No Apple build runs in this project's CI (README, "Platforms").
    platforms: [.macOS(.v15), .iOS(.v18), .macCatalyst(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .executable(name: "tlgen", targets: ["tlgen"]),
        .executable(name: "tl", targets: ["tl"]),
        .executable(name: "mtcall", targets: ["mtcall"]),
        .library(name: "TLSchema", targets: ["TLSchema"]),
        .library(name: "TLSwiftGen", targets: ["TLSwiftGen"]),
        .library(name: "TLRuntime", targets: ["TLRuntime"]),
        .library(name: "TelegramApi", targets: ["TelegramApi"]),
        .library(name: "MTProtoApi", targets: ["MTProtoApi"]),
        .library(name: "SecretApi", targets: ["SecretApi"]),
        // The server side of the API: every function as a typed request (for servers, the test Telegram, tools).
        .library(name: "TelegramApiServer", targets: ["TelegramApiServer"]),
        .library(name: "TLJSON", targets: ["TLJSON"]),
        .library(name: "MTProtoCrypto", targets: ["MTProtoCrypto"]),
        .library(name: "MTProtoTransport", targets: ["MTProtoTransport", "MTProtoTransportNIO"]),
        .library(name: "MTProto", targets: ["MTProto"]),
        .library(name: "MTProtoClient", targets: ["MTProtoClient"]),
        .library(name: "TelegramSession", targets: ["TelegramSession"]),
        .library(name: "TelegramClient", targets: ["TelegramClient"]),
        .library(name: "TelegramFormatting", targets: ["TelegramFormatting"]),
        .library(name: "TelegramMedia", targets: ["TelegramMedia"]),
        .library(name: "SecretChats", targets: ["SecretChats"]),
        // For the tests and benchmarks: each generated request writer, driven by a parsed request.
        .library(name: "RequestReplay", targets: ["RequestReplay"]),
        // For the fuzz package (Fuzz/) only: what its targets check.
        .library(name: "FuzzProperties", targets: ["FuzzProperties"]),
        // SwiftPM plugins around `tlgen`: generate at build time from a target's `.tl`, or regenerate committed sources.
        .plugin(name: "TLGenPlugin", targets: ["TLGenBuildTool"]),
        .plugin(name: "TLGenCommand", targets: ["TLGenCommand"]),
        .library(name: "MTProtoServer", targets: ["MTProtoServer", "TestTelegram"]),
        .executable(name: "mtserver", targets: ["mtserver"]),
        .executable(name: "mtrelay", targets: ["mtrelay"]),
    ],
    traits: [
        .trait(name: "PortableCrypto",
               description: "MTProtoCrypto computes on swift-crypto and BigInt instead of OpenSSL on Linux too "
                   + "(Apple platforms always do).",
               enabledTraits: ["PortableCryptoBackend"]),
        // Without it a Linux build compiles neither swift-crypto (BoringSSL) nor BigInt.
        .trait(name: "PortableCryptoBackend",
               description: "Linux: compile the portable backend beside OpenSSL, which stays the default (for "
                   + "comparing the two: the differential tests and BackendBenchmarks)."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // File I/O through one API on Linux and Darwin (FileDescriptor), for uploads and downloads.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // MTProtoCrypto's portable backend: digests, PBKDF2 and AES, and the numbers around its own Montgomery code.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"4.0.0"),
        .package(url: "https://github.com/attaswift/BigInt", from: "6.0.1"),
        // `swift package generate-documentation` for the DocC catalogs (Tests/run checks them).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
        .plugin(name: "TLGenBuildTool", capability: .buildTool(), dependencies: ["tlgen"], path: "Plugins/TLGenBuildTool"),
        .plugin(name: "TLGenCommand",
                capability: .command(intent: .custom(verb: "tlgen", description: "Regenerate or check sources generated from TL schemas"),
                                     permissions: [.writeToPackageDirectory(reason: "tlgen writes the generated Swift sources")]),
                dependencies: ["tlgen"], path: "Plugins/TLGenCommand"),

        // MARK: Runtime
        .systemLibrary(name: "CZlib", path: "Runtime/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(name: "COpenSSL", path: "Runtime/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // UTF-8 validation on AVX2 or SSSE3 for the string reader, chosen at run time by CPUID (scalar elsewhere).
        .target(name: "CUTF8", path: "Runtime/CUTF8"),
        .target(name: "TLRuntime", dependencies: ["CZlib", "CUTF8"], path: "Runtime/TLRuntime",
                swiftSettings: swiftSettings),
        // AES-IGE on AES-NI (CPUID) or the ARMv8 Cryptography Extensions (HWCAP on Linux, always on Apple), chosen at
        // run time; MTProtoCrypto falls back to its backend's AES without them.
        .target(name: "CAESNI", path: "Runtime/CAESNI"),
        // The portable backend's Montgomery exponentiation (constant-time for secret exponents), in C for debug speed.
        .target(name: "CMontgomery", path: "Runtime/CMontgomery"),
        // Two backends (Runtime/MTProtoCrypto/Backends): OpenSSL, linked on Linux only and the default there, and the
        // portable one on swift-crypto and BigInt, the only one elsewhere and the default with `PortableCrypto`.
        // Re-exports swift-crypto and BigInt on Linux, for MTProtoCrypto with the trait `PortableCryptoBackend`.
        .target(name: "PortableCryptoLinux", dependencies: portableLibraries, path: "Runtime/PortableCryptoLinux",
                swiftSettings: swiftSettings),
        .target(name: "MTProtoCrypto",
                dependencies: [.target(name: "COpenSSL", condition: .when(platforms: [.linux])),
                               "CAESNI", "CMontgomery"] + portableBackend,
                path: "Runtime/MTProtoCrypto", swiftSettings: swiftSettings),
        // Sans-IO transport codecs (framing, obfuscated2, MTProxy, fake-TLS): bytes in, frames and bytes out.
        .target(name: "MTProtoTransport", dependencies: ["MTProtoCrypto", "CZlib"], path: "Runtime/MTProtoTransport",
                swiftSettings: swiftSettings),
        // Thin SwiftNIO handlers around the sans-IO codecs, shared by the client and the test server.
        .target(name: "MTProtoTransportNIO",
                dependencies: ["MTProtoTransport", .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "NIOPosix", package: "swift-nio")],
                path: "Runtime/MTProtoTransportNIO", swiftSettings: swiftSettings),

        // The sans-IO MTProto core: the auth-key exchange and the encrypted session, both roles. Bytes and time in,
        // bytes and events out, randomness injected; no sockets, no clocks.
        .target(name: "MTProto", dependencies: ["MTProtoApi", "MTProtoCrypto", "TLRuntime"], path: "Runtime/MTProto",
                swiftSettings: swiftSettings),

        // The client: a sans-IO connection (transport, key exchange, session); SwiftNIO and async/await on top.
        .target(name: "MTProtoClient",
                dependencies: ["MTProto", "MTProtoCrypto", "MTProtoTransport", "MTProtoTransportNIO", "TLRuntime",
                               .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "NIOPosix", package: "swift-nio")],
                path: "Runtime/MTProtoClient", swiftSettings: swiftSettings),
        // The session a client keeps across runs, typed: one protocol, a store in SQLite and one in memory.
        .target(name: "TelegramSession",
                dependencies: ["MTProtoClient", "MTProtoCrypto", "SecretChats",
                               .product(name: "SQLiteNIO", package: "sqlite-nio")],
                path: "Runtime/TelegramSession", swiftSettings: swiftSettings),
        // The SDK client over the generated API: initConnection, DC routing and migrations, typed updates.
        .target(name: "TelegramClient",
                dependencies: ["MTProtoClient", "MTProto", "MTProtoCrypto", "MTProtoTransport", "TLRuntime", "TelegramApi",
                               "SecretChats", "TelegramSession", "TelegramFormatting", "TelegramMedia",
                               .product(name: "Logging", package: "swift-log"),
                               .product(name: "NIOPosix", package: "swift-nio"),
                               .product(name: "SystemPackage", package: "swift-system")],
                path: "Runtime/TelegramClient", swiftSettings: swiftSettings),
        // Message text with its formatting: HTML and MarkdownV2 to text and `MessageEntity` values and back.
        .target(name: "TelegramFormatting", dependencies: ["TelegramApi", "TLRuntime"],
                path: "Runtime/TelegramFormatting", swiftSettings: swiftSettings),
        // Media files' headers: a video's duration and size, an image's size, bounded parsers with no network.
        .target(name: "TelegramMedia", dependencies: [.product(name: "SystemPackage", package: "swift-system")],
                path: "Runtime/TelegramMedia", swiftSettings: swiftSettings),
        // The server role over SwiftNIO: a sans-IO connection (transport detection, key exchange, sessions, RPC
        // dispatch by method name) and the NIO listener around it. Speaks no API layer: requests are decoded with
        // the registry it is given.
        .target(name: "MTProtoServer",
                dependencies: ["MTProto", "MTProtoApi", "MTProtoCrypto", "MTProtoTransport", "MTProtoTransportNIO",
                               "TLRuntime", .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "NIOPosix", package: "swift-nio")],
                path: "Runtime/MTProtoServer", swiftSettings: swiftSettings),
        // The in-memory test Telegram: API handlers compiled against TelegramApi, on top of MTProtoServer.
        .target(name: "TestTelegram", dependencies: ["MTProtoServer", "TelegramApi", "TelegramApiServer", "TLRuntime",
                                                     "MTProtoCrypto", "TelegramFormatting", "TelegramMedia"],
                path: "Runtime/TestTelegram", swiftSettings: swiftSettings),
        .executableTarget(
            name: "mtserver",
            dependencies: ["TestTelegram", "MTProtoServer", "MTProto", "MTProtoCrypto", "MTProtoTransport", "TLRuntime", "COpenSSL",
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Logging", package: "swift-log")],
            path: "Tools/mtserver", swiftSettings: swiftSettings),
        // The fault relay as a command, for interop scripts (cuts, pieces, delays, stalls; seeded).
        .executableTarget(
            name: "mtrelay",
            dependencies: ["MTProtoServer", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/mtrelay", swiftSettings: swiftSettings),

        .executableTarget(
            name: "mtcall",
            dependencies: ["TelegramClient", "TelegramSession", "MTProtoClient", "MTProto", "MTProtoCrypto", "MTProtoTransport", "TLJSON",
                           "TLRuntime", "TLSchema", "TelegramApi", "SecretChats", "TelegramFormatting",
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Logging", package: "swift-log")],
            path: "Tools/mtcall", swiftSettings: swiftSettings),

        // tl-json (the golden corpus's format): schema-driven reading and writing of TL values.
        .target(name: "TLJSON", dependencies: ["TLRuntime", "TLSchema"], path: "Runtime/TLJSON",
                swiftSettings: swiftSettings),
        .executableTarget(
            name: "tl",
            dependencies: ["TLJSON", "TLSchema", "TelegramApi", "MTProtoApi", "SecretApi",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/tl", swiftSettings: swiftSettings),

        // MARK: Generated by tlgen from Schemas/ (never edited by hand)
        .target(name: "TelegramApi", dependencies: ["TLRuntime"], path: "Generated/TelegramApi",
                swiftSettings: swiftSettings),
        // Apps that only call Telegram do not build this: TelegramApi's clean build does not include it.
        .target(name: "TelegramApiServer", dependencies: ["TLRuntime", "TelegramApi"], path: "Generated/TelegramApiServer",
                swiftSettings: swiftSettings),
        .target(name: "MTProtoApi", dependencies: ["TLRuntime"], path: "Generated/MTProtoApi",
                swiftSettings: swiftSettings),
        .target(name: "SecretApi", dependencies: ["TLRuntime"], path: "Generated/SecretApi",
                swiftSettings: swiftSettings),
        .target(name: "RequestReplay", dependencies: ["TLRuntime", "TelegramApi", "MTProtoApi"],
                path: "Generated/RequestReplay", swiftSettings: swiftSettings),

        // Secret chats: the sans-IO end-to-end engine over the generated secret layers.
        .target(name: "SecretChats", dependencies: ["MTProtoCrypto", "TLRuntime", "SecretApi"],
                path: "Runtime/SecretChats", swiftSettings: swiftSettings),

        // What each libFuzzer target (Fuzz/, its own package) checks, here so the regression tests replay saved
        // findings through the same code.
        .target(name: "FuzzProperties",
                dependencies: ["TLRuntime", "TelegramApi", "MTProtoApi", "SecretApi", "TLJSON", "TLSchema",
                               "MTProtoTransport", "MTProtoCrypto", "MTProto", "SecretChats", "RequestReplay",
                               "TelegramApiServer",
                               "TelegramFormatting", "TelegramMedia"],
                path: "Fuzz/Properties", swiftSettings: swiftSettings),

        // MARK: Tests
        .testTarget(name: "TLSchemaTests", dependencies: ["TLSchema"], path: "Tests/TLSchemaTests",
                    swiftSettings: swiftSettings),
        .testTarget(name: "TLSwiftGenTests", dependencies: ["TLSwiftGen", "TLSchema"], path: "Tests/TLSwiftGenTests",
                    swiftSettings: swiftSettings),
        .testTarget(name: "GeneratedApiTests",
                    dependencies: ["TLJSON", "TLRuntime", "TelegramApi", "TelegramApiServer", "MTProtoApi", "SecretApi",
                                   "RequestReplay"],
                    path: "Tests/GeneratedApiTests", swiftSettings: swiftSettings),
        .testTarget(name: "TLToolTests", dependencies: ["tl", "TLJSON", "TLSchema", "TLRuntime", "TelegramApi", "MTProtoApi"],
                    path: "Tests/TLToolTests", swiftSettings: swiftSettings),
        .testTarget(name: "TLRuntimeTests", dependencies: ["TLRuntime", "TLSwiftGen"], path: "Tests/TLRuntimeTests",
                    swiftSettings: swiftSettings),
        .testTarget(name: "MTProtoCryptoTests", dependencies: ["MTProtoCrypto", "MTProto"], path: "Tests/MTProtoCryptoTests",
                    swiftSettings: swiftSettings),
        .testTarget(name: "MTProtoTransportTests",
                    dependencies: ["MTProtoTransport", "MTProtoTransportNIO", "MTProtoCrypto",
                                   .product(name: "NIOCore", package: "swift-nio"),
                                   .product(name: "NIOPosix", package: "swift-nio"),
                                   .product(name: "NIOEmbedded", package: "swift-nio")],
                    path: "Tests/MTProtoTransportTests", swiftSettings: swiftSettings),
        .testTarget(name: "MTProtoClientTests",
                    dependencies: ["MTProtoClient", "MTProto", "MTProtoCrypto", "MTProtoTransport", "TLRuntime",
                                   "MTProtoApi", "TelegramSession", .product(name: "NIOCore", package: "swift-nio"),
                                   .product(name: "NIOPosix", package: "swift-nio")],
                    path: "Tests/MTProtoClientTests", swiftSettings: swiftSettings),
        .testTarget(name: "MTProtoServerTests",
                    dependencies: ["MTProtoServer", "TestTelegram", "MTProto", "MTProtoApi", "MTProtoClient", "TelegramClient",
                                   "SecretChats", "TelegramSession",
                                   "MTProtoCrypto", "MTProtoTransport", "TLRuntime", "TelegramApi", "TelegramApiServer",
                                   "TelegramFormatting",
                                   .product(name: "NIOCore", package: "swift-nio"),
                                   .product(name: "NIOEmbedded", package: "swift-nio"),
                                   .product(name: "NIOPosix", package: "swift-nio")],
                    path: "Tests/MTProtoServerTests", swiftSettings: swiftSettings),
        .testTarget(name: "TelegramSessionTests",
                    dependencies: ["TelegramSession", "MTProtoClient", "MTProto", "MTProtoCrypto", "SecretChats",
                                   .product(name: "SQLiteNIO", package: "sqlite-nio")],
                    path: "Tests/TelegramSessionTests", swiftSettings: swiftSettings),
        .testTarget(name: "MTProtoTests", dependencies: ["MTProto", "MTProtoApi", "MTProtoCrypto", "TLRuntime"],
                    path: "Tests/MTProtoTests", swiftSettings: swiftSettings),
        .testTarget(name: "SecretChatsTests",
                    dependencies: ["SecretChats", "SecretApi", "MTProtoCrypto", "MTProto", "TLRuntime"],
                    path: "Tests/SecretChatsTests", swiftSettings: swiftSettings),
        .testTarget(name: "TelegramFormattingTests", dependencies: ["TelegramFormatting", "TelegramApi"],
                    path: "Tests/TelegramFormattingTests", swiftSettings: swiftSettings),
        .testTarget(name: "TelegramMediaTests", dependencies: ["TelegramMedia"], path: "Tests/TelegramMediaTests",
                    swiftSettings: swiftSettings),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzProperties"], path: "Tests/FuzzRegressionTests",
                    swiftSettings: swiftSettings),
    ]
)
