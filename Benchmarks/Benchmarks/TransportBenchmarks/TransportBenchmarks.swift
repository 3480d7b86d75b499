// Transport throughput: frames per second through each framing codec alone (encode + decode), and through the
// full client → server stacks with and without obfuscation (obfuscated2, dd, ee/fake-TLS). Each iteration moves
// one frame; MB/s = frames/s × payload size. Two sizes: 128 B (per-frame overhead) and 16 KiB (bulk bytes).
import Benchmark
import MTProtoTransport

/// An encrypted-message-shaped payload (24 + 16k bytes), so padded intermediate strips its padding exactly.
func payload(blocks: Int) -> [UInt8] {
    var bytes = (0..<(24 + 16 * blocks)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    bytes[0] = 1
    return bytes
}


let key: [UInt8] = Array(0x40..<0x50)

func stackPair(kind: TransportKind, mode: String) throws -> (ClientTransport, ServerTransport) {
    let time: Int32 = 1_700_000_000
    let (obfuscation, secret): (TransportConfiguration.Obfuscation, MTProxySecret?) =
        switch mode {
        case "obfuscated2": (.obfuscated2, nil)
        case "dd":
            try { let s = try MTProxySecret(key: key, kind: .paddedIntermediate); return (.mtproxy(s), s) }()
        case "ee":
            try { let s = try MTProxySecret(key: key, kind: .fakeTLS(domain: "example.com")); return (.mtproxy(s), s) }()
        default: (.none, nil)
        }
    var client = try ClientTransport(configuration: TransportConfiguration(kind: kind, obfuscation: obfuscation, dcId: 2),
                                     unixTime: time)
    var server = ServerTransport(configuration: ServerTransportConfiguration(secret: secret), unixTime: Int64(time))
    // Complete the opening (and the fake-TLS handshake) before measuring.
    let reply = try server.receive(client.start())
    _ = try server.receive(try client.receive(reply.outbound).outbound)
    return (client, server)
}

let benchmarks: @Sendable () -> Void = {
    // Small frames run a thousand per measured iteration.
    let sizes: [(name: String, payload: [UInt8], scaling: BenchmarkScalingFactor)] = [
        ("136 B", payload(blocks: 7), .kilo),
        ("16 KiB", payload(blocks: 1022), .one),
    ]
    for size in sizes {
        let configuration = Benchmark.Configuration(
            metrics: [.throughput, .wallClock], scalingFactor: size.scaling, maxDuration: .seconds(2),
            maxIterations: 1_000_000)

        for kind in TransportKind.allCases {
            Benchmark("codec \(kind) encode+decode \(size.name)", configuration: configuration) { benchmark in
                var client = makeFrameCodec(kind: kind, role: .client)
                var server = makeFrameCodec(kind: kind, role: .server)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    let wire = try client.encode(size.payload, quickAck: false)
                    blackHole(try server.decode(feed: wire))
                }
            }
        }

        let stacks: [(TransportKind, String)] =
            TransportKind.allCases.map { ($0, "plain") }
            + [TransportKind.abridged, .intermediate, .paddedIntermediate].map { ($0, "obfuscated2") }
            + [(.paddedIntermediate, "dd"), (.paddedIntermediate, "ee")]
        for (kind, mode) in stacks {
            Benchmark("stack \(kind) \(mode) client→server \(size.name)", configuration: configuration) { benchmark in
                var (client, server) = try stackPair(kind: kind, mode: mode)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    let wire = try client.send(size.payload)
                    blackHole(try server.receive(wire))
                }
            }
        }
    }
}
