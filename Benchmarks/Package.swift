// swift-tools-version: 6.2
// Benchmarks live in their own package so the main build and CI stay fast.
// Run: cd Benchmarks && swift package benchmark            (all)
//      cd Benchmarks && swift package benchmark --target CryptoBenchmarks
import PackageDescription

let benchmarkDeps: [Target.Dependency] = [.product(name: "Benchmark", package: "benchmark")]
let plugins: [Target.PluginUsage] = [.plugin(name: "BenchmarkPlugin", package: "benchmark")]

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // BackendBenchmarks times both crypto backends in one run; OpenSSL stays the default for the others.
        .package(name: "swift-mtproto", path: "..", traits: [.defaults, "PortableCryptoBackend"]),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "TLSchemaBenchmarks",
            dependencies: benchmarkDeps + [.product(name: "TLSchema", package: "swift-mtproto")],
            path: "Benchmarks/TLSchemaBenchmarks", plugins: plugins),
        .executableTarget(
            name: "TLRuntimeBenchmarks",
            dependencies: benchmarkDeps + [.product(name: "TLRuntime", package: "swift-mtproto")],
            path: "Benchmarks/TLRuntimeBenchmarks", plugins: plugins),
        // The golden corpus split into object records and requests, shared by the codec benchmark and the profiler.
        .target(
            name: "CodecCorpus",
            dependencies: [
                .product(name: "TelegramApi", package: "swift-mtproto"),
                .product(name: "MTProtoApi", package: "swift-mtproto"),
                .product(name: "TLRuntime", package: "swift-mtproto"),
                .product(name: "TLJSON", package: "swift-mtproto"),
                .product(name: "RequestReplay", package: "swift-mtproto"),
            ],
            path: "Support/CodecCorpus"),
        .executableTarget(
            name: "TLCodecBenchmarks",
            dependencies: benchmarkDeps + [
                "CodecCorpus",
                .product(name: "TLRuntime", package: "swift-mtproto"),
                .product(name: "TLSwiftGen", package: "swift-mtproto"),
            ],
            path: "Benchmarks/TLCodecBenchmarks", plugins: plugins),
        // A plain loop over one codec operation, for `valgrind --tool=callgrind` and `perf record`.
        .executableTarget(name: "TLCodecProfile",
                          dependencies: ["CodecCorpus", .product(name: "TelegramApi", package: "swift-mtproto")],
                          path: "Support/TLCodecProfile"),
        // A server reading the API's requests, typed against the dynamic reader; only the two API modules, so a release
        // build of it is short.
        .executableTarget(name: "ServerRequestProfile",
                          dependencies: [.product(name: "TelegramApi", package: "swift-mtproto"),
                                         .product(name: "TelegramApiServer", package: "swift-mtproto"),
                                         .product(name: "TLRuntime", package: "swift-mtproto")],
                          path: "Support/ServerRequestProfile"),
        // Both sessions of a pipelined call in memory, for callgrind.
        .executableTarget(name: "SessionProfile",
                          dependencies: ["BenchmarkSupport", .product(name: "MTProtoCrypto", package: "swift-mtproto")],
                          path: "Support/SessionProfile"),
        // The crypto a file transfer cannot skip, per MiB, for client_cost.py.
        .executableTarget(name: "CryptoFloor",
                          dependencies: [.product(name: "MTProtoCrypto", package: "swift-mtproto")],
                          path: "Support/CryptoFloor"),
        .executableTarget(name: "PipelineFloor",
                          dependencies: [.product(name: "MTProtoClient", package: "swift-mtproto"),
                                         .product(name: "NIOCore", package: "swift-nio"),
                                         .product(name: "NIOPosix", package: "swift-nio")],
                          path: "Support/PipelineFloor"),
        .executableTarget(
            name: "CryptoBenchmarks",
            dependencies: benchmarkDeps + ["MTProtoCrypto", "TelegramApi", "TelegramClient"].map {
                .product(name: $0, package: "swift-mtproto")
            },
            path: "Benchmarks/CryptoBenchmarks", plugins: plugins),
        .executableTarget(
            name: "BackendBenchmarks",
            dependencies: benchmarkDeps + [.product(name: "MTProtoCrypto", package: "swift-mtproto")],
            path: "Benchmarks/BackendBenchmarks", plugins: plugins),
        .executableTarget(
            name: "PasswordBenchmarks",
            dependencies: benchmarkDeps + ["MTProtoCrypto", "TelegramApi", "TelegramClient"].map {
                .product(name: $0, package: "swift-mtproto")
            },
            path: "Benchmarks/PasswordBenchmarks", plugins: plugins),
        .executableTarget(
            name: "SessionBenchmarks",
            dependencies: benchmarkDeps + ["BenchmarkSupport", .product(name: "MTProto", package: "swift-mtproto"),
                                           .product(name: "MTProtoCrypto", package: "swift-mtproto")],
            path: "Benchmarks/SessionBenchmarks", plugins: plugins),
        .executableTarget(
            name: "AuthKeyExchangeBenchmarks",
            dependencies: benchmarkDeps + ["BenchmarkSupport"] + [.product(name: "MTProto", package: "swift-mtproto"),
                                           .product(name: "MTProtoCrypto", package: "swift-mtproto")],
            path: "Benchmarks/AuthKeyExchangeBenchmarks", plugins: plugins),
        .executableTarget(
            name: "TransportBenchmarks",
            dependencies: benchmarkDeps + [.product(name: "MTProtoTransport", package: "swift-mtproto")],
            path: "Benchmarks/TransportBenchmarks", plugins: plugins),
        .target(name: "BenchmarkSupport", dependencies: [.product(name: "MTProto", package: "swift-mtproto"),
                                                         .product(name: "MTProtoCrypto", package: "swift-mtproto")],
                path: "Benchmarks/BenchmarkSupport"),
        .executableTarget(
            name: "ServerBenchmarks",
            dependencies: benchmarkDeps + ["BenchmarkSupport"] + ["MTProto", "MTProtoClient", "MTProtoCrypto", "MTProtoServer", "MTProtoTransport",
                                           "TLRuntime", "TelegramApi"].map {
                .product(name: $0, package: "swift-mtproto")
            },
            path: "Benchmarks/ServerBenchmarks", plugins: plugins),
        .executableTarget(
            name: "SecretChatBenchmarks",
            dependencies: benchmarkDeps + ["MTProtoCrypto", "SecretChats"].map {
                .product(name: $0, package: "swift-mtproto")
            },
            path: "Benchmarks/SecretChatBenchmarks", plugins: plugins),
        // A test Telegram with a signed-in client, for the SDK client's benchmarks.
        .target(name: "ClientSupport",
                dependencies: ["BenchmarkSupport"] + ["MTProtoClient", "MTProtoCrypto", "MTProtoServer", "TelegramApi",
                                                      "TelegramClient"].map {
                    .product(name: $0, package: "swift-mtproto")
                } + [.product(name: "NIOCore", package: "swift-nio")],
                path: "Benchmarks/ClientSupport"),
        .executableTarget(
            name: "ClientBenchmarks",
            dependencies: benchmarkDeps + ["BenchmarkSupport", "ClientSupport"] + ["MTProto", "MTProtoClient", "MTProtoCrypto", "MTProtoServer", "MTProtoTransport",
                                           "TLRuntime", "TelegramApi", "TelegramClient"].map {
                .product(name: $0, package: "swift-mtproto")
            } + [.product(name: "NIOPosix", package: "swift-nio")],
            path: "Benchmarks/ClientBenchmarks", plugins: plugins),
        .executableTarget(
            name: "FileBenchmarks",
            dependencies: benchmarkDeps + ["BenchmarkSupport", "ClientSupport"] + ["MTProto", "MTProtoClient", "MTProtoCrypto", "MTProtoServer",
                                           "TLRuntime", "TelegramApi", "TelegramClient"].map {
                .product(name: $0, package: "swift-mtproto")
            } + [.product(name: "NIOPosix", package: "swift-nio")],
            path: "Benchmarks/FileBenchmarks", plugins: plugins),
    ]
)
