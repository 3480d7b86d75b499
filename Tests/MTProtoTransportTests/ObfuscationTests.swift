// obfuscated2: the `obfuscated2` family of crypto_vectors.json replayed through the header builder, the server's
// header parser and both transport stacks; forbidden headers; MTProxy secret parsing.
import MTProtoCrypto
import Testing

@testable import MTProtoTransport

@Suite struct Obfuscated2VectorTests {
    @Test func headersAndKeysMatch() throws {
        let vectors = try Vectors.crypto().obfuscated2
        #expect(vectors.count == 50)
        for v in vectors {
            let made = try Obfuscated2.clientHeader(
                random64: hex(v.random64), tag: hex(v.tag), dcId: v.dcId, secret: v.secret.map(hex))
            #expect(made.header == hex(v.header))
            #expect(made.keys == (try v.keys.value))
            #expect(v.kind.obfuscatedTag == hex(v.tag))
        }
    }

    @Test func packetsReplayThroughHeaderAndServerParser() throws {
        for v in try Vectors.crypto().obfuscated2 {
            let client = try Obfuscated2.clientHeader(
                random64: hex(v.random64), tag: hex(v.tag), dcId: v.dcId, secret: v.secret.map(hex))
            let server = try Obfuscated2.acceptClientHeader(hex(v.header), secret: v.secret.map(hex))
            #expect(server.kind == v.kind)
            if let dc = v.dcId { #expect(server.dcId == dc) }
            #expect(server.keys == (try v.keys.value))
            for packet in v.packets {
                var c2s = hex(packet.c2sFrame)
                client.cipher.encrypt(&c2s)
                #expect(c2s == hex(packet.c2sWire))
                server.cipher.decrypt(&c2s)
                #expect(c2s == hex(packet.c2sFrame))
                var s2c = hex(packet.s2cFrame)
                server.cipher.encrypt(&s2c)
                #expect(s2c == hex(packet.s2cWire))
                client.cipher.decrypt(&s2c)
                #expect(s2c == hex(packet.s2cFrame))
            }
        }
    }

    /// The same exchanges through `ClientTransport` and `ServerTransport`, which frame the payloads themselves.
    @Test func packetsReplayThroughTheStacks() throws {
        for v in try Vectors.crypto().obfuscated2 {
            let kind = v.kind
            // Padded vectors carry intermediate frames, i.e. zero padding: a draw with count 0 per frame.
            let zeroPadding = v.packets.flatMap { _ in paddingDraw([]) }
            let clientRandom = ReplayRandom(hex(v.random64) + (kind == .paddedIntermediate ? zeroPadding : []))
            let obfuscation: TransportConfiguration.Obfuscation =
                if let secret = v.secret { .mtproxy(try MTProxySecret(bytes: hex(secret))) } else { .obfuscated2 }
            var client = try ClientTransport(
                configuration: TransportConfiguration(kind: kind, obfuscation: obfuscation, dcId: v.dcId, padding: .keep),
                random: clientRandom, unixTime: 0)
            let serverSecret = try v.secret.map { try MTProxySecret(bytes: hex($0)) }
            var server = ServerTransport(
                configuration: ServerTransportConfiguration(secret: serverSecret, padding: .keep),
                random: ReplayRandom(kind == .paddedIntermediate ? zeroPadding : []), unixTime: 0)

            #expect(client.start() == hex(v.header))
            #expect(try server.receive(hex(v.header)).events.isEmpty)
            #expect(server.negotiated?.kind == kind)
            #expect(server.negotiated?.obfuscated == true)
            if let dc = v.dcId { #expect(server.negotiated?.dcId == dc) }
            for packet in v.packets {
                let c2sPayload = try framePayload(hex(packet.c2sFrame), kind: kind)
                #expect(try client.send(c2sPayload) == hex(packet.c2sWire))
                #expect(try server.receive(hex(packet.c2sWire)).events == [.frame(c2sPayload)])
                let s2cPayload = try framePayload(hex(packet.s2cFrame), kind: kind)
                #expect(try server.send(s2cPayload) == hex(packet.s2cWire))
                #expect(try client.receive(hex(packet.s2cWire)).events == [.frame(s2cPayload)])
            }
            #expect(clientRandom.overrun == 0)
        }
    }

    func framePayload(_ frame: [UInt8], kind: TransportKind) throws -> [UInt8] {
        var codec = makeFrameCodec(kind: kind == .abridged ? .abridged : .intermediate, role: .server)
        guard case let .frame(payload, _)? = try codec.decode(feed: frame).first else { return [] }
        return payload
    }
}

@Suite struct Obfuscated2HeaderTests {
    @Test func forbiddenFirstWordsAreRedrawn() throws {
        var good = [UInt8](repeating: 0x42, count: 64)
        #expect(Obfuscated2.isAllowed(good))
        var forbidden: [[UInt8]] = []
        for word: UInt32 in [0x4441_4548, 0x5453_4f50, 0x2054_4547, 0x4954_504f, 0x0201_0316, 0xdddd_dddd, 0xeeee_eeee] {
            var bytes = good
            for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: word >> UInt32(8 * i)) }
            forbidden.append(bytes)
        }
        var efFirst = good
        efFirst[0] = 0xef
        forbidden.append(efFirst)
        var zeroSecond = good
        zeroSecond.replaceSubrange(4..<8, with: [0, 0, 0, 0])
        forbidden.append(zeroSecond)
        for bytes in forbidden { #expect(!Obfuscated2.isAllowed(bytes)) }
        #expect(String(decoding: forbidden[0].prefix(4), as: UTF8.self) == "HEAD")

        // A source that yields every forbidden header first: the builder skips all of them.
        good[7] = 0x99
        let random = ReplayRandom(forbidden.flatMap { $0 } + good)
        let made = try Obfuscated2.clientHeader(kind: .intermediate, dcId: 2, secret: nil, random: random)
        #expect(Array(made.header.prefix(56)) == Array(good.prefix(56)))
        #expect(random.overrun == 0)
        let parsed = try Obfuscated2.acceptClientHeader(made.header, secret: nil)
        #expect(parsed.kind == .intermediate)
        #expect(parsed.dcId == 2)
    }

    @Test func fullCannotBeObfuscatedAndWrongSecretIsRejected() throws {
        #expect(throws: TransportError.self) {
            try Obfuscated2.clientHeader(kind: .full, dcId: nil, secret: nil, random: SeededRandom(seed: 1))
        }
        let secret = [UInt8](repeating: 0x11, count: 16)
        let made = try Obfuscated2.clientHeader(kind: .abridged, dcId: -2, secret: secret, random: SeededRandom(seed: 2))
        #expect(try Obfuscated2.acceptClientHeader(made.header, secret: secret).dcId == -2)
        var wrong = secret
        wrong[0] ^= 1
        #expect(throws: TransportError.self) { try Obfuscated2.acceptClientHeader(made.header, secret: wrong) }
        #expect(throws: TransportError.self) { try Obfuscated2.acceptClientHeader(Array(made.header.prefix(63)), secret: nil) }
    }
}

@Suite struct MTProxySecretTests {
    let key = "0123456789abcdef0123456789abcdef"

    @Test func parsesHexForms() throws {
        let plain = try MTProxySecret(parsing: key)
        #expect(plain.kind == .plain)
        #expect(plain.key == hex(key))
        let dd = try MTProxySecret(parsing: "  dd" + key.uppercased() + "\n")
        #expect(dd.kind == .paddedIntermediate)
        #expect(dd.requiredKind == .paddedIntermediate)
        #expect(dd.hexString == "dd" + key)
        let ee = try MTProxySecret(parsing: "ee" + key + "676f6f676c652e636f6d")
        #expect(ee.kind == .fakeTLS(domain: "google.com"))
        #expect(ee.domain == "google.com")
        #expect(ee.key == hex(key))
        #expect(ee.bytes == [0xee] + hex(key) + Array("google.com".utf8))
    }

    @Test func parsesBase64FromProxyLinks() throws {
        // ee ‖ key ‖ "google.com" in URL-safe base64 without padding, and standard base64 with padding.
        let bytes: [UInt8] = [0xee] + hex(key) + Array("google.com".utf8)
        #expect(try MTProxySecret(parsing: "7gEjRWeJq83vASNFZ4mrze9nb29nbGUuY29t").bytes == bytes)
        // 17 bytes dd ‖ key: '+' and '/' versus '-' and '_'.
        let ddKey: [UInt8] = [0xdd] + [UInt8](repeating: 0xfb, count: 16)
        #expect(try MTProxySecret(parsing: "3fv7-_v7-_v7-_v7-_v7-_s").bytes == ddKey)
        #expect(try MTProxySecret(parsing: "3fv7+/v7+/v7+/v7+/v7+/s=").bytes == ddKey)
    }

    @Test(arguments: [
        ("", "empty"),
        ("0123", "has 2 bytes"),
        ("ee" + "0123456789abcdef0123456789abcdef", "needs a domain"),
        ("ab" + "0123456789abcdef0123456789abcdef", "starts with 0xab"),
        ("dd" + "0123456789abcdef0123456789abcdef00", "starts with 0xdd"),
        ("ee" + "0123456789abcdef0123456789abcdef" + "676f6f67206c65", "byte 0x20 at position 4"),
        ("not a secret!", "neither hex nor base64"),
    ])
    func rejectsMalformedSecretsWithAClearMessage(text: String, reason: String) {
        do {
            _ = try MTProxySecret(parsing: text)
            Issue.record("accepted \(text)")
        } catch {
            guard case let .invalidSecret(message) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(message.contains(reason), "\(message)")
        }
    }

    @Test func rejectsOverlongDomain() {
        let domain = String(repeating: "a", count: 183)
        #expect(throws: TransportError.self) { try MTProxySecret(key: [UInt8](repeating: 1, count: 16), kind: .fakeTLS(domain: domain)) }
        #expect(throws: TransportError.self) { try MTProxySecret(key: [1, 2, 3], kind: .plain) }
    }
}
