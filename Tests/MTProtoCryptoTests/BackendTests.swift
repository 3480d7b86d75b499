// The two crypto backends against each other: every operation of the seam (Backends/CryptoPrimitives.swift) on
// seeded random inputs must give OpenSSL's answer on the portable backend, and both must refuse the same malformed
// input. The known-answer vectors run through the current backend in the other suites (and, on a Linux build with
// the `PortableCrypto` trait, through the portable one). Linux builds compile the portable backend only with a trait
// (`PortableCryptoBackend`, which `PortableCrypto` enables), so these run in the test command's portable pass.
// A failure names its seed, so it replays.
#if canImport(COpenSSL) && PortableCryptoBackend
import Foundation
import MTProto
import Testing
@testable import MTProtoCrypto

@Suite struct BackendTests {
    typealias O = OpenSSLBackend
    typealias P = PortableBackend

    /// 0...300 bytes, then a few long ones (several SHA blocks, more than a CTR keystream piece).
    static func lengths(_ random: SeededRandom) -> [Int] {
        (0..<40).map { _ in Int(random.next() % 301) } + [0, 55, 56, 63, 64, 65, 4095, 4096, 4097, 9000]
    }

    @Test func currentBackendIsTheBuildsChoice() {
        #if PortableCrypto
        #expect(CryptoBackend.current == .portable)
        #else
        #expect(CryptoBackend.current == .openSSL)
        #endif
        #expect(CryptoBackend.compiled.first == CryptoBackend.current)
        #expect(Set(CryptoBackend.compiled) == [.openSSL, .portable])
    }

    @Test func digestsAgree() {
        let random = SeededRandom(seed: 0xD16E57)
        for length in Self.lengths(random) {
            let data = random.bytes(length), other = random.bytes(Int(random.next() % 100))
            #expect(P.sha1(data) == O.sha1(data), "SHA-1, \(length) bytes")
            #expect(P.sha256(data) == O.sha256(data), "SHA-256, \(length) bytes")
            #expect(P.md5(data) == O.md5(data), "MD5, \(length) bytes")
            #expect(P.sha1(parts: [data, other, data]) == O.sha1(parts: [data, other, data]))
            #expect(P.sha256(parts: [other, data]) == O.sha256(parts: [other, data]))
            #expect(P.sha256(parts: []) == O.sha256(parts: []))
            let split = data.withUnsafeBytes { d in other.withUnsafeBytes { o in (P.sha256(d, o), O.sha256(d, o)) } }
            #expect(split.0 == split.1)
            #expect(split.0 == O.sha256(data + other))
            #expect(P.hmacSHA256(key: other, data: data) == O.hmacSHA256(key: other, data: data))
            // Keys longer than SHA-256's block are hashed first.
            #expect(P.hmacSHA256(key: data, data: other) == O.hmacSHA256(key: data, data: other))
        }
    }

    @Test func incrementalSHA256Agrees() {
        let random = SeededRandom(seed: 0x5712EA)
        let o = O.SHA256Hasher(), p = P.SHA256Hasher()
        var whole: [UInt8] = []
        for length in Self.lengths(random) {
            let piece = random.bytes(length)
            whole += piece
            piece.withUnsafeBytes { o.update($0); p.update($0) }
        }
        let digest = p.finish()
        #expect(digest == o.finish())
        #expect(digest == O.sha256(whole))
    }

    @Test func pbkdf2Agrees() throws {
        let random = SeededRandom(seed: 0x9B4D2)
        for iterations in [1, 2, 3, 1000] {
            let password = random.bytes(Int(random.next() % 80)), salt = random.bytes(Int(random.next() % 40))
            #expect(try P.pbkdf2SHA512(password, salt: salt, iterations: iterations)
                    == O.pbkdf2SHA512(password, salt: salt, iterations: iterations), "\(iterations) iterations")
        }
    }

    /// The same keystream whatever the chunking, including a counter that carries across all 16 bytes.
    @Test func ctrAgrees() throws {
        let random = SeededRandom(seed: 0xC72)
        let ivs = [random.bytes(16), [UInt8](repeating: 0xff, count: 16), [UInt8](repeating: 0xff, count: 15) + [0xf0]]
        for iv in ivs {
            let key = random.bytes(32)
            let o = try O.Keystream(key: key, iv: iv), p = try P.Keystream(key: key, iv: iv)
            for length in Self.lengths(random) {
                var a = random.bytes(length)
                var b = a
                a.withUnsafeMutableBytes { o.process($0) }
                b.withUnsafeMutableBytes { p.process($0) }
                #expect(a == b, "CTR, IV \(iv.prefix(2)), \(length) bytes")
            }
        }
    }

    /// Both chainings, every key size, lengths across the 4 KiB pieces, random data both ways.
    @Test func igeChainingAgrees() throws {
        let random = SeededRandom(seed: 0x16E)
        for keyLength in [16, 24, 32] {
            for blocks in [0, 1, 2, 3, 255, 256, 257, 600] {
                let key = random.bytes(keyLength), iv = random.bytes(32), data = random.bytes(16 * blocks)
                let o = try AES256IGE(anyKey: key, iv: iv, implementation: .openssl)
                let p = try AES256IGE(anyKey: key, iv: iv, implementation: .portable)
                #expect(try p.encrypt(data) == o.encrypt(data), "encrypt, \(keyLength)-byte key, \(blocks) blocks")
                #expect(try p.decrypt(data) == o.decrypt(data), "decrypt, \(keyLength)-byte key, \(blocks) blocks")
            }
        }
    }

    @Test func constantTimeEqualsAgrees() {
        let random = SeededRandom(seed: 0xE9)
        for length in Self.lengths(random) where length > 0 {
            let a = random.bytes(length)
            var b = a
            b[Int(random.next() % UInt64(length))] ^= 1 << (random.next() % 8)
            for (x, y) in [(a, a), (a, b)] {
                let results = x.withUnsafeBytes { x in y.withUnsafeBytes { y in
                    (P.constantTimeEquals(x, y), O.constantTimeEquals(x, y)) } }
                #expect(results.0 == results.1)
                #expect(results.0 == (x == y))
            }
        }
    }

    /// Both fill every byte: 64 draws of 64 bytes are all different and none is all zeros.
    @Test func randomFills() {
        for fill in [P.fillRandom, O.fillRandom] {
            var draws = Set<[UInt8]>()
            for _ in 0..<64 {
                var bytes = [UInt8](repeating: 0, count: 64)
                #expect(bytes.withUnsafeMutableBytes { fill($0) })
                #expect(bytes != [UInt8](repeating: 0, count: 64))
                draws.insert(bytes)
            }
            #expect(draws.count == 64)
        }
    }

    // MARK: Numbers

    static func number<I: BackendInteger>(_ type: I.Type, _ bytes: [UInt8]) throws -> I { try I(bigEndian: bytes) }

    /// A value of 0...`maxBytes` random bytes, sometimes with leading zeros.
    static func value(_ random: SeededRandom, maxBytes: Int) -> [UInt8] {
        let bytes = random.bytes(Int(random.next() % UInt64(maxBytes + 1)))
        return random.next() % 4 == 0 ? [0, 0] + bytes : bytes
    }

    @Test func arithmeticAgrees() throws {
        let random = SeededRandom(seed: 0xA217)
        for round in 0..<200 {
            let a = Self.value(random, maxBytes: 300), b = Self.value(random, maxBytes: 300)
            var m = Self.value(random, maxBytes: 256)
            if m.allSatisfy({ $0 == 0 }) { m = [7] }
            let (oa, ob, om) = (try O.Integer(bigEndian: a), try O.Integer(bigEndian: b), try O.Integer(bigEndian: m))
            let (pa, pb, pm) = (try P.Integer(bigEndian: a), try P.Integer(bigEndian: b), try P.Integer(bigEndian: m))
            let context = "round \(round)"
            #expect(pa.bigEndianBytes == oa.bigEndianBytes, "\(context)")
            #expect(pa.bitCount == oa.bitCount && pa.isZero == oa.isZero, "\(context)")
            #expect(pa.bigEndianBytes(paddedTo: 256) == oa.bigEndianBytes(paddedTo: 256), "\(context)")
            #expect(P.Integer.compare(pa, pb) == O.Integer.compare(oa, ob).signum(), "\(context)")
            #expect(try P.Integer.add(pa, pb).bigEndianBytes == O.Integer.add(oa, ob).bigEndianBytes, "\(context)")
            #expect(try P.Integer.multiply(pa, pb).bigEndianBytes == O.Integer.multiply(oa, ob).bigEndianBytes)
            #expect(try P.Integer.modMul(pa, pb, pm).bigEndianBytes == O.Integer.modMul(oa, ob, om).bigEndianBytes)
            #expect(try P.Integer.modAdd(pa, pb, pm).bigEndianBytes == O.Integer.modAdd(oa, ob, om).bigEndianBytes)
            #expect(try P.Integer.modSub(pa, pb, pm).bigEndianBytes == O.Integer.modSub(oa, ob, om).bigEndianBytes)
            #expect(try pa.halved().bigEndianBytes == oa.halved().bigEndianBytes, "\(context)")
            let word = UInt(random.next() % 1000 + 1)
            #expect(pa.remainder(word) == oa.remainder(word), "\(context)")
            if O.Integer.compare(oa, ob) >= 0 {
                #expect(try P.Integer.subtract(pa, pb).bigEndianBytes == O.Integer.subtract(oa, ob).bigEndianBytes)
            } else {
                #expect(throws: CryptoError.self) { try P.Integer.subtract(pa, pb) }
                #expect(throws: CryptoError.self) { try O.Integer.subtract(oa, ob) }
            }
        }
        for bits in [0, 1, 63, 64, 65, 1984, 2047, 2048] {
            #expect(try P.Integer.powerOfTwo(bits).bigEndianBytes == O.Integer.powerOfTwo(bits).bigEndianBytes)
        }
        for text in ["0", "1", "18446744073709551616", String(repeating: "9", count: 620)] {
            #expect(try P.Integer(decimal: text).bigEndianBytes == O.Integer(decimal: text).bigEndianBytes)
        }
        for text in ["", "-1", "12a", " 1", "1.0"] {
            #expect(throws: CryptoError.self) { try P.Integer(decimal: text) }
            #expect(throws: CryptoError.self) { try O.Integer(decimal: text) }
        }
    }

    /// Both exponentiations (secret and public) against OpenSSL's, over odd moduli of 1...2048 bits (the ones MTProto
    /// uses) and exponents from zero to wider than the modulus, bases from zero to above it.
    @Test func modularPowerAgrees() throws {
        let random = SeededRandom(seed: 0x90E7)
        for round in 0..<60 {
            var m = random.bytes(round < 20 ? 256 : Int(random.next() % 256 + 1))
            m[m.count - 1] |= 1
            if round < 20 { m[0] |= 0x80 }
            let base = round % 7 == 0 ? [] : Self.value(random, maxBytes: 260)
            let exponent = round % 11 == 0 ? [] : Self.value(random, maxBytes: round % 3 == 0 ? 300 : 256)
            for secret in [true, false] {
                let o = try O.Integer.modExp(O.Integer(bigEndian: base), O.Integer(bigEndian: exponent),
                                             O.Integer(bigEndian: m), secretExponent: secret)
                let p = try P.Integer.modExp(P.Integer(bigEndian: base), P.Integer(bigEndian: exponent),
                                             P.Integer(bigEndian: m), secretExponent: secret)
                #expect(p.bigEndianBytes == o.bigEndianBytes, "round \(round), secret \(secret)")
            }
        }
        // An even modulus (never MTProto's) takes the variable-time path for public exponents and is refused for
        // secret ones rather than computed differently.
        let even = try P.Integer(bigEndian: [0x10, 0x00]), three = try P.Integer(3), big = try P.Integer(65537)
        #expect(try P.Integer.modExp(big, three, even, secretExponent: false).bigEndianBytes
                == O.Integer.modExp(O.Integer(65537), O.Integer(3), O.Integer(bigEndian: [0x10, 0x00]),
                                    secretExponent: false).bigEndianBytes)
        #expect(throws: CryptoError.self) { try P.Integer.modExp(big, three, even, secretExponent: true) }
        #expect(throws: CryptoError.self) { try P.Integer.modExp(big, three, P.Integer(0), secretExponent: false) }
    }

    @Test func primalityAgrees() throws {
        let prime = DHPrimeCache.telegramPrime
        let o = try O.Integer(bigEndian: prime), p = try P.Integer(bigEndian: prime)
        #expect(try p.isProbablePrime() && o.isProbablePrime())
        #expect(try p.halved().isProbablePrime() && o.halved().isProbablePrime())
        // Composites: the prime times small factors, a Carmichael number, a product of two 1024-bit halves' worth.
        let composites: [[UInt8]] = [
            try O.Integer.multiply(o, O.Integer(3)).bigEndianBytes,
            try O.Integer(561).bigEndianBytes,
            try O.Integer.subtract(o, O.Integer(2)).bigEndianBytes,
            try O.Integer.multiply(O.Integer(bigEndian: Array(prime[0..<128])),
                                   O.Integer(bigEndian: Array(prime[128...]))).bigEndianBytes,
        ]
        for value in composites {
            let expected = try O.Integer(bigEndian: value).isProbablePrime()
            #expect(try P.Integer(bigEndian: value).isProbablePrime() == expected)
        }
        for small: UInt64 in [0, 1, 2, 3, 4, 97, 251, 257, 65537, 65535] {
            #expect(try P.Integer(small).isProbablePrime() == O.Integer(small).isProbablePrime(), "\(small)")
        }
    }

    // MARK: RSA keys

    static func keyFile(_ name: String) throws -> String {
        try String(contentsOf: VectorFiles.directory.appendingPathComponent(name), encoding: .utf8)
    }

    /// One key in its four PEM forms: both readers find the same numbers in each, the public ones in the private
    /// forms, and neither reads a public form as a private key.
    @Test func rsaKeysAgree() throws {
        let privates = try ["cdn_test_key.pem", "cdn_test_key.pkcs8.pem"].map(Self.keyFile)
        let publics = try ["cdn_test_key.pkcs1.pub.pem", "cdn_test_key.spki.pem"].map(Self.keyFile)
        let reference = try O.rsaKey(pem: privates[0], wantPrivate: true)
        #expect(reference.modulus.count == 256 && reference.privateExponent?.count ?? 0 > 200)
        for pem in privates {
            #expect(try O.rsaKey(pem: pem, wantPrivate: true) == reference)
            #expect(try P.rsaKey(pem: pem, wantPrivate: true) == reference)
        }
        let publicNumbers = RSAKeyNumbers(modulus: reference.modulus, publicExponent: reference.publicExponent,
                                          privateExponent: nil)
        for pem in publics {
            #expect(try O.rsaKey(pem: pem, wantPrivate: false) == publicNumbers)
            #expect(try P.rsaKey(pem: pem, wantPrivate: false) == publicNumbers)
            #expect(throws: CryptoError.self) { try P.rsaKey(pem: pem, wantPrivate: true) }
            #expect(throws: CryptoError.self) { try O.rsaKey(pem: pem, wantPrivate: true) }
        }
    }

    /// Truncated, re-labelled and corrupted PEMs: both refuse each with `invalidPEM`, neither traps.
    @Test func malformedKeysAreRefusedByBoth() throws {
        let pem = try Self.keyFile("cdn_test_key.pkcs1.pub.pem")
        let lines = pem.split(separator: "\n").map(String.init)
        let body = lines.dropFirst().dropLast().joined()
        var cases = [
            "",
            "-----BEGIN RSA PUBLIC KEY-----\n-----END RSA PUBLIC KEY-----",
            pem.replacingOccurrences(of: "RSA PUBLIC KEY", with: "CERTIFICATE"),
            "-----BEGIN RSA PUBLIC KEY-----\n!!!!\n-----END RSA PUBLIC KEY-----",
        ]
        for cut in [4, 8, 40, body.count - 8] {
            let truncated = String(body.prefix(cut - cut % 4))
            cases.append("-----BEGIN RSA PUBLIC KEY-----\n\(truncated)\n-----END RSA PUBLIC KEY-----")
        }
        for (index, text) in cases.enumerated() {
            #expect(throws: CryptoError.self, "case \(index)") { try P.rsaKey(pem: text, wantPrivate: false) }
            #expect(throws: CryptoError.self, "case \(index)") { try O.rsaKey(pem: text, wantPrivate: false) }
        }
    }
}
#endif
