// Fake-TLS against faketls_vectors.json: each recorded ClientHello is matched against its template to recover
// the random choices, then rebuilt byte for byte (digest included); the records, the ServerHello check and the
// proxy side are replayed through the stacks.
import Foundation
import MTProtoCrypto
import Testing

@testable import MTProtoTransport

/// Walks a template over a recorded hello, collecting the random choices in the order the builder consumes them.
struct HelloMatcher {
    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    let hello: [UInt8]
    let domain: [UInt8]
    var offset = 0
    var grease = [UInt8](repeating: 0x0a, count: 7)
    var scopes: [(start: Int, declared: Int)] = []

    init(hello: [UInt8], domain: String) {
        self.hello = hello
        self.domain = Array(domain.utf8)
    }

    struct Collected {
        var randomFields: [[UInt8]] = []
        var keys: [[UInt8]] = []
        var mlkem: [[UInt8]] = []
        var permutations: [[Int]] = []

        mutating func merge(_ other: Collected) {
            randomFields += other.randomFields
            keys += other.keys
            mlkem += other.mlkem
            permutations += other.permutations
        }
    }

    mutating func take(_ count: Int) throws -> [UInt8] {
        guard count >= 0, offset + count <= hello.count else { throw Mismatch(description: "hello ends at \(offset)") }
        defer { offset += count }
        return Array(hello[offset..<(offset + count)])
    }

    mutating func match(_ ops: [HelloOp]) throws -> Collected {
        var collected = Collected()
        for op in ops {
            switch op {
            case let .bytes(expected):
                let got = try take(expected.count)
                guard got == expected else { throw Mismatch(description: "bytes differ at \(offset - expected.count)") }
            case let .zero(count):
                // The 32 bytes at 11 hold the digest in a finished hello.
                let got = try take(count)
                guard offset - count == 11 || got.allSatisfy({ $0 == 0 }) else { throw Mismatch(description: "zeros at \(offset)") }
            case let .random(count): collected.randomFields.append(try take(count))
            case .ech:
                guard let scope = scopes.last else { throw Mismatch(description: "ech outside a scope") }
                collected.randomFields.append(try take(scope.declared - (offset - scope.start)))
            case let .grease(index):
                let pair = try take(2)
                guard pair[0] == pair[1], pair[0] & 0x0f == 0x0a else { throw Mismatch(description: "GREASE at \(offset - 2)") }
                grease[index] = pair[0]
            case .domain:
                guard try take(domain.count) == domain else { throw Mismatch(description: "domain at \(offset)") }
            case .key: collected.keys.append(try take(32))
            case .mlkem: collected.mlkem.append(try take(1184))
            case .begin:
                let length = try take(2)
                scopes.append((offset, Int(length[0]) << 8 | Int(length[1])))
            case .end:
                guard let scope = scopes.popLast(), offset - scope.start == scope.declared else {
                    throw Mismatch(description: "scope length at \(offset)")
                }
            case let .permutation(parts):
                var perPart = [Collected?](repeating: nil, count: parts.count)
                var order: [Int] = []
                for _ in parts.indices {
                    // Every part opens with distinct bytes (its extension type).
                    let candidates = parts.indices.filter { index in
                        guard perPart[index] == nil, case let .bytes(prefix)? = parts[index].first else { return false }
                        return offset + prefix.count <= hello.count && Array(hello[offset..<(offset + prefix.count)]) == prefix
                    }
                    guard let index = candidates.first else { throw Mismatch(description: "no part fits at \(offset)") }
                    perPart[index] = try match(parts[index])
                    order.append(index)
                }
                for part in perPart { if let part { collected.merge(part) } }
                collected.permutations.append(order)
            case .padding:
                if offset < 513 {
                    let size = 513 - offset
                    guard try take(2) == [0x00, 0x15], try take(2) == [UInt8(size >> 8), UInt8(size & 0xff)],
                        try take(size).allSatisfy({ $0 == 0 })
                    else { throw Mismatch(description: "padding at \(offset)") }
                }
            case .legacyPadding:
                let size = 515 - offset
                guard try take(2) == [UInt8(size >> 8), UInt8(size & 0xff)], try take(size).allSatisfy({ $0 == 0 })
                else { throw Mismatch(description: "legacy padding at \(offset)") }
            }
        }
        return collected
    }

    /// The randomness that rebuilds `hello` from `template`.
    static func randomness(of hello: [UInt8], template: FakeTLSTemplate, domain: String) throws -> ClientHelloRandomness {
        var matcher = HelloMatcher(hello: hello, domain: domain)
        let collected = try matcher.match(template.ops)
        guard matcher.offset == hello.count else { throw Mismatch(description: "\(hello.count - matcher.offset) bytes left") }
        return ClientHelloRandomness(grease: matcher.grease, randomFields: collected.randomFields,
                                     x25519Keys: collected.keys, mlkemKeys: collected.mlkem,
                                     permutations: collected.permutations)
    }
}

/// Converts the fixture's JSON op lists to `HelloOp`s.
func helloOps(_ json: Any) -> [HelloOp] {
    guard let list = json as? [[Any]] else { return [] }
    return list.compactMap { op -> HelloOp? in
        guard let name = op.first as? String else { return nil }
        let argument = op.count > 1 ? op[1] : nil
        switch name {
        case "str": return .bytes(hex(argument as? String ?? ""))
        case "zero": return .zero(argument as? Int ?? -1)
        case "random": return .random(argument as? Int ?? -1)
        case "grease": return .grease(argument as? Int ?? -1)
        case "domain": return .domain
        case "key": return .key
        case "mlkem": return .mlkem
        case "begin": return .begin
        case "end": return .end
        case "perm": return .permutation((argument as? [Any] ?? []).map(helloOps))
        case "ech": return .ech
        case "padding": return .padding
        case "legacy_pad": return .legacyPadding
        default: return nil
        }
    }
}

@Suite struct FakeTLSVectorTests {
    @Test func embeddedTemplatesEqualTheFixture() throws {
        let templates = try Vectors.templatesJSON()["templates"] as? [String: Any] ?? [:]
        #expect(templates.count == 2)
        for template in FakeTLSTemplate.allCases {
            #expect(helloOps(templates[template.rawValue] as Any) == template.ops, "\(template)")
        }
    }

    @Test func clientHellosRebuildByteForByte() throws {
        let vectors = try Vectors.fakeTLS()
        #expect(vectors.count == 20)
        for v in vectors {
            let template = try #require(FakeTLSTemplate(rawValue: v.template))
            let recorded = hex(v.clientHello)
            #expect(recorded.count == v.clientHelloLen)
            let randomness = try HelloMatcher.randomness(of: recorded, template: template, domain: v.domain)
            let rebuilt = try FakeTLSClientHello(template: template, domain: v.domain, key: hex(v.secret),
                                                 unixTime: v.unixTime, randomness: randomness)
            #expect(rebuilt.bytes == recorded, "vector with \(v.template) template, \(v.domain)")
            // The keys are real curve points and the ML-KEM key has coefficients below q.
            for key in randomness.x25519Keys { #expect(Curve25519.isOnCurve(littleEndianX: key)) }
            for key in randomness.mlkemKeys {
                for i in stride(from: 0, to: 1152, by: 3) {
                    #expect(Int(key[i]) | Int(key[i + 1] & 0x0f) << 8 < 3329)
                    #expect(Int(key[i + 1] >> 4) | Int(key[i + 2]) << 4 < 3329)
                }
            }
            #expect(randomness.x25519Keys.count == (template == .current ? 2 : 1))
        }
    }

    @Test func proxyVerifiesRecordedHellosAndRejectsOneBitChanges() throws {
        for v in try Vectors.fakeTLS() {
            let hello = hex(v.clientHello)
            let info = try FakeTLSHandshake.verifyClientHello(
                hello, key: hex(v.secret), domain: v.domain, now: Int64(v.unixTime) + 5, allowedSkew: -60...60)
            #expect(info.unixTime == v.unixTime)
            #expect(info.serverName == v.domain)
            #expect(info.digest == Array(hello[11..<43]))
            var flipped = hello
            flipped[200] ^= 0x04
            #expect(throws: TransportError.self) {
                try FakeTLSHandshake.verifyClientHello(flipped, key: hex(v.secret), domain: nil,
                                                       now: Int64(v.unixTime), allowedSkew: -60...60)
            }
            #expect(throws: TransportError.self) {
                try FakeTLSHandshake.verifyClientHello(hello, key: hex(v.secret), domain: nil,
                                                       now: Int64(v.unixTime) + 3600, allowedSkew: -60...60)
            }
            #expect(throws: TransportError.self) {
                try FakeTLSHandshake.verifyClientHello(hello, key: hex(v.secret), domain: "example.com",
                                                       now: Int64(v.unixTime), allowedSkew: -60...60)
            }
        }
    }

    @Test func serverHelloReferenceVerifiesAndTamperingIsCaught() throws {
        for v in try Vectors.fakeTLS() {
            let response = hex(v.serverHelloRef)
            let digest = Array(hex(v.clientHello)[11..<43])
            #expect(try FakeTLSHandshake.serverHelloLength(ByteQueue(response)) == response.count)
            #expect(try FakeTLSHandshake.serverHelloLength(ByteQueue(Array(response.dropLast()))) == nil)
            try FakeTLSHandshake.verifyServerHello(response, clientDigest: digest, key: hex(v.secret))
            for position in [11, 42, 60, response.count - 1] {
                var tampered = response
                tampered[position] ^= 0x80
                #expect(throws: TransportError.self) {
                    try FakeTLSHandshake.verifyServerHello(tampered, clientDigest: digest, key: hex(v.secret))
                }
            }
        }
    }

    /// The whole client side: hello, then (after the ServerHello) ChangeCipherSpec and one record holding the
    /// obfuscated2 header and the encrypted first frame.
    @Test func clientStackReplaysTheExchange() throws {
        for v in try Vectors.fakeTLS() {
            let template = try #require(FakeTLSTemplate(rawValue: v.template))
            let secret = try MTProxySecret(parsing: v.eeSecret)
            #expect(secret.domain == v.domain)
            let frame = hex(v.firstFrame)
            let payload = try #require(PaddedIntermediateCodec.stripPadding(Array(frame.dropFirst(4))))
            let padding = Array(frame.dropFirst(4 + payload.count))
            let random = ReplayRandom(hex(v.obfRandom64) + paddingDraw(padding))
            let randomness = try HelloMatcher.randomness(of: hex(v.clientHello), template: template, domain: v.domain)
            var client = try ClientTransport(
                configuration: TransportConfiguration(kind: .abridged, obfuscation: .mtproxy(secret), dcId: v.dcId,
                                                      fakeTLSTemplate: template),
                random: random, unixTime: v.unixTime, helloRandomness: randomness)
            #expect(client.configuration.effectiveKind == .paddedIntermediate)
            #expect(client.start() == hex(v.clientHello))
            #expect(try client.send(payload).isEmpty)
            #expect(client.isAwaitingServerHello)
            let response = hex(v.serverHelloRef)
            // The response arrives in two pieces; only the second completes it.
            #expect(try client.receive(Array(response.prefix(100))) == TransportOutput())
            let output = try client.receive(Array(response.dropFirst(100)))
            #expect(output.outbound == hex(v.clientRecords))
            #expect(output.events.isEmpty)
            #expect(!client.isAwaitingServerHello)
            #expect(random.overrun == 0)
        }
    }

    /// The proxy side: hello and records in, a verifiable ServerHello out, the first frame recovered.
    @Test func serverStackAcceptsTheRecordedClient() throws {
        for (index, v) in try Vectors.fakeTLS().enumerated() {
            let secret = try MTProxySecret(parsing: v.eeSecret)
            var server = ServerTransport(configuration: ServerTransportConfiguration(secret: secret),
                                         random: SeededRandom(seed: UInt64(index + 1)), unixTime: Int64(v.unixTime))
            let wire = hex(v.clientHello) + hex(v.clientRecords)
            var output = TransportOutput()
            for piece in chunks(wire, random: SeededRandom(seed: 7), maxChunk: 97) {
                let step = try server.receive(piece)
                output.events += step.events
                output.outbound += step.outbound
            }
            try FakeTLSHandshake.verifyServerHello(output.outbound, clientDigest: Array(hex(v.clientHello)[11..<43]),
                                                   key: secret.key)
            let frame = hex(v.firstFrame)
            let payload = try #require(PaddedIntermediateCodec.stripPadding(Array(frame.dropFirst(4))))
            #expect(output.events == [.frame(payload)])
            #expect(server.negotiated == NegotiatedTransport(kind: .paddedIntermediate, obfuscated: true, fakeTLS: true,
                                                             dcId: v.dcId))
        }
    }

    @Test func obfuscatedHeaderInsideTLSMatches() throws {
        for v in try Vectors.fakeTLS() {
            let made = try Obfuscated2.clientHeader(random64: hex(v.obfRandom64), tag: [0xdd, 0xdd, 0xdd, 0xdd],
                                                    dcId: v.dcId, secret: hex(v.secret))
            #expect(made.header == hex(v.obfHeader))
            #expect(made.keys == (try v.keys.value))
        }
    }
}

@Suite struct FakeTLSBehaviourTests {
    @Test(arguments: FakeTLSTemplate.allCases) func freshHellosHaveTheTemplateShape(template: FakeTLSTemplate) throws {
        let random = SeededRandom(seed: 42)
        for echChoice in 0...3 {
            let randomness = try ClientHelloRandomness.generate(for: template, echChoice: echChoice, random: random)
            let hello = try FakeTLSClientHello(template: template, domain: "example.com", key: [UInt8](repeating: 3, count: 16),
                                               unixTime: 1_700_000_000, randomness: randomness)
            // current: 1710 bytes + the domain + the ECH payload beyond 144 bytes.
            let expectedLength = template == .legacy ? 517 : 1710 + 11 + 32 * echChoice
            #expect(hello.bytes.count == expectedLength)
            // The matcher recovers exactly the randomness used (GREASE 1 and 5 appear in no template).
            var recovered = try HelloMatcher.randomness(of: hello.bytes, template: template, domain: "example.com")
            recovered.grease[1] = randomness.grease[1]
            recovered.grease[5] = randomness.grease[5]
            #expect(recovered == randomness)
            let info = try FakeTLSHandshake.verifyClientHello(hello.bytes, key: [UInt8](repeating: 3, count: 16),
                                                              domain: "example.com", now: 1_700_000_000, allowedSkew: 0...0)
            #expect(info.unixTime == 1_700_000_000)
            for key in randomness.x25519Keys { #expect(Curve25519.isOnCurve(littleEndianX: key)) }
            #expect(Set(randomness.grease.indices.map { randomness.grease[$0] & 0x0f }) == [0x0a])
        }
    }

    @Test func curveArithmeticAgreesWithKnownValues() {
        // The base point x = 9 is on the curve; its double has a known x coordinate (RFC 7748 ladder values).
        var nine = [UInt8](repeating: 0, count: 32)
        nine[0] = 9
        #expect(Curve25519.isOnCurve(littleEndianX: nine))
        let doubled = Curve25519.doubleX(FieldElement(littleEndian: nine))
        #expect(doubled.map { Array($0.littleEndianBytes) } == hex("fb4e68dd9c46ae5c5c0b351eed5c3f8f1471157d680c75d9b7f17318d542d320"))
        // Some x is on the twist instead: 2 is not a valid x for Curve25519.
        var two = [UInt8](repeating: 0, count: 32)
        two[0] = 2
        #expect(!Curve25519.isOnCurve(littleEndianX: two))
        let a = FieldElement(bigEndian: hex("7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffec"))
        #expect(a + .one == .zero)
        #expect(a * a == .one)
        #expect(FieldElement(12345).inverse * FieldElement(12345) == .one)
    }

    @Test func recordsSplitAtTheLimitAndReassemble() throws {
        var writer = TLSRecordWriter(maximumRecordPayload: TLSRecordWriter.clientRecordLimit, sendChangeCipherSpec: true)
        let data = SeededRandom(seed: 8).bytes(10_000)
        let wire = writer.wrap(data)
        #expect(Array(wire.prefix(6)) == [0x14, 0x03, 0x03, 0x00, 0x01, 0x01])
        #expect(Array(wire[6..<11]) == [0x17, 0x03, 0x03, 0x0b, 0x3e])
        #expect(wire.count == 6 + 10_000 + 5 * 4)
        #expect(Array(writer.wrap([1, 2]).prefix(5)) == [0x17, 0x03, 0x03, 0x00, 0x02])
        var reader = TLSRecordReader()
        var out: [UInt8] = []
        for piece in chunks(wire, random: SeededRandom(seed: 9), maxChunk: 700) { out += try reader.feed(piece) }
        #expect(out == data)
        try reader.finish()
    }

    @Test func malformedRecordsAreRejected() throws {
        var reader = TLSRecordReader()
        #expect(throws: TransportError.self) { try reader.feed([0x16, 0x03, 0x03, 0x00, 0x01, 0x00]) }
        var versions = TLSRecordReader()
        #expect(throws: TransportError.self) { try versions.feed([0x17, 0x03, 0x01, 0x00, 0x01, 0x00]) }
        var huge = TLSRecordReader()
        #expect(throws: TransportError.self) { try huge.feed([0x17, 0x03, 0x03, 0xff, 0xff]) }
        var late = TLSRecordReader()
        #expect(try late.feed([0x17, 0x03, 0x03, 0x00, 0x01, 0x42]) == [0x42])
        #expect(throws: TransportError.self) { try late.feed([0x14, 0x03, 0x03, 0x00, 0x01, 0x01]) }
        var truncated = TLSRecordReader()
        #expect(try truncated.feed([0x17, 0x03, 0x03, 0x00, 0x05, 1]).isEmpty)
        #expect(throws: TransportError.truncated(context: "a TLS record", buffered: 6)) { try truncated.finish() }
    }
}
