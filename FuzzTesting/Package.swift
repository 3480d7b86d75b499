// swift-tools-version: 6.1
// libFuzzer targets, in their own package so the main build and CI never need the fuzzer runtime.
// Build and run (Linux, swift.org toolchain; gold fails to link libFuzzer here, hence lld):
//   cd FuzzTesting && swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
//   .build/release/FuzzAESIGE -max_total_time=60
import PackageDescription

let package = Package(
    name: "FuzzTesting",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "swift-mtproto", path: "..")],
    targets: [
        .target(name: "CFuzzerDriver", path: "CFuzzerDriver"),
        // AES-IGE: the AES-NI loop against the OpenSSL composition, both directions.
        .executableTarget(name: "FuzzAESIGE",
                          dependencies: ["CFuzzerDriver", .product(name: "MTProtoCrypto", package: "swift-mtproto")],
                          path: "FuzzAESIGE", swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
