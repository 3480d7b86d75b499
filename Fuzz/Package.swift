// swift-tools-version: 6.2
// libFuzzer targets, one executable per decoder, in their own package so the main build and CI never need the
// fuzzer runtime. `Fuzz/run` builds and runs them; by hand (Linux, swift.org toolchain; gold fails to link
// libFuzzer here, hence lld):
//   cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
//   .build/release/FuzzAESIGE -max_total_time=60
import PackageDescription

let mtproto = "swift-mtproto"
let settings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

/// Each target: its name and the library products it needs beyond FuzzProperties. What each checks: its main.swift
/// and Properties/. The runner (`Fuzz/run --list`) reads the names from this list.
let targets: [(String, [String])] = [
    ("FuzzAESIGE", ["MTProtoCrypto"]),
    ("FuzzApi", []),
    ("FuzzMT", []),
    ("FuzzSecretApi8", []),
    ("FuzzSecretApi46", []),
    ("FuzzSecretApi73", []),
    ("FuzzSecretApi101", []),
    ("FuzzSecretApi144", []),
    ("FuzzTLDecode", []),
    ("FuzzTLEncode", []),
    ("FuzzSchema", []),
    ("FuzzAbridged", []),
    ("FuzzIntermediate", []),
    ("FuzzPadded", []),
    ("FuzzFull", []),
    ("FuzzObfuscated2", []),
    ("FuzzFakeTLSClientHello", []),
    ("FuzzFakeTLSServerHello", []),
    ("FuzzMTProxySecret", []),
    ("FuzzSessionClient", []),
    ("FuzzSessionServer", []),
    ("FuzzExchangeClient", []),
    ("FuzzExchangeServer", []),
    ("FuzzSecretChat", []),
    ("FuzzUTF8", []),
    ("FuzzHTML", []),
    ("FuzzMarkdown", []),
    ("FuzzSocks5Reply", []),
    ("FuzzHTTPResponse", []),
    ("FuzzHTTPTransport", []),
    ("FuzzApiRequests", []),
    ("FuzzMediaInfo", []),
]

let package = Package(
    name: "Fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: mtproto, path: "..")],
    targets: [
        .target(name: "CFuzzerDriver", path: "CFuzzerDriver"),
        // The driver call; the properties themselves are the main package's FuzzProperties (Properties/), which
        // its regression tests replay.
        .target(name: "FuzzSupport",
                dependencies: ["CFuzzerDriver", .product(name: "FuzzProperties", package: mtproto)],
                path: "FuzzSupport", swiftSettings: settings),
    ] + targets.map { name, products in
        .executableTarget(name: name,
                          dependencies: ["FuzzSupport"] + (products + ["FuzzProperties"]).map {
                              .product(name: $0, package: mtproto)
                          },
                          path: name, swiftSettings: settings)
    }
)
