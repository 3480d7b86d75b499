// AES-IGE's two implementations against each other: our AES-NI loop (CAESNI) must agree with the chaining
// composed around OpenSSL on 100,000 seeded random (key, IV, length) cases in both directions, through every
// entry point; plus how the implementation is chosen, the forced fallback, and the errors both paths share. The
// known-answer vectors run through both implementations in CryptoVectorTests and KnownAnswerTests.
import Foundation
import MTProto
import Testing
@testable import MTProtoCrypto

@Suite struct IGEImplementationTests {
    static let shards = 0..<10
    static let casesPerShard = 10_000
    static let hasAESNI = AES256IGE.available.contains(.aesni)

    /// The three ways to run a cipher: a new array, an array in place, a raw buffer in place.
    static func run(_ ige: AES256IGE, encrypting: Bool, _ input: [UInt8], entry: Int) throws -> [UInt8] {
        switch entry {
        case 0:
            return encrypting ? try ige.encrypt(input) : try ige.decrypt(input)
        case 1:
            var data = input
            if encrypting { try ige.encrypt(inPlace: &data) } else { try ige.decrypt(inPlace: &data) }
            return data
        default:
            var data = input
            let result: Result<Void, CryptoError> = data.withUnsafeMutableBytes { buffer in
                Result { () throws(CryptoError) in
                    if encrypting { try ige.encrypt(buffer) } else { try ige.decrypt(buffer) }
                }
            }
            try result.get()
            return data
        }
    }

    // Byte-array copy and comparison through memcpy/memcmp: the generic Array paths cost more than the AES work in
    // a debug build.
    static func copy(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: range.count) { buffer, count in
            bytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: .init(rebasing: $0[range])) }
            count = range.count
        }
    }

    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                guard let p = x.baseAddress, let q = y.baseAddress else { return true }    // both empty
                return memcmp(p, q, x.count) == 0
            }
        }
    }

    /// 10 shards × 10,000 cases: random 32-byte key and IV, a length of 16…4096 bytes in steps of 16, random data
    /// decrypted as well as encrypted (so decryption sees inputs no encryption produced). A failure names the shard's
    /// seed and the case, so it replays.
    @Test(.enabled(if: hasAESNI, "this CPU has no AES-NI"), arguments: shards)
    func aesniAgreesWithOpenSSL(shard: Int) throws {
        let seed = 0x1CE_0000 + UInt64(shard)
        let random = SeededRandom(seed: seed)
        let pool = random.bytes(8192 + 4096)
        var mismatches: [String] = []
        for index in 0..<Self.casesPerShard {
            let key = random.bytes(32), iv = random.bytes(32)
            let length = 16 * Int(random.next() % 256 + 1)
            let offset = Int(random.next() % 8192)
            let input = Self.copy(pool, offset..<(offset + length))
            let fast = try AES256IGE(key: key, iv: iv, implementation: .aesni)
            let reference = try AES256IGE(key: key, iv: iv, implementation: .openssl)
            let entry = index % 3

            let encrypted = try Self.run(fast, encrypting: true, input, entry: entry)
            let decrypted = try Self.run(fast, encrypting: false, input, entry: entry)
            if !Self.same(encrypted, try reference.encrypt(input)) { mismatches.append("encrypt seed \(seed) case \(index)") }
            if !Self.same(decrypted, try reference.decrypt(input)) { mismatches.append("decrypt seed \(seed) case \(index)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(5))")
    }

    /// The CPUID check agrees with what the kernel reports, so the AES-NI path is neither skipped on a CPU that has
    /// it nor taken on one that does not.
    @Test func detectionMatchesTheCPU() throws {
        #if os(Linux) && (arch(x86_64) || arch(i386))
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }.map { $0.split(separator: " ") }
        let kernelSaysAES = flags?.contains("aes") ?? false
        #expect(Self.hasAESNI == kernelSaysAES)
        #elseif !(arch(x86_64) || arch(i386))
        #expect(!Self.hasAESNI)
        #endif
        #expect(AES256IGE.available.suffix(CryptoBackend.compiled.count) == CryptoBackend.compiled.map(\.chaining)[...])
    }

    @Test func defaultIsTheFastestAvailable() throws {
        let zero = [UInt8](repeating: 0, count: 32)
        #expect(try AES256IGE(key: zero, iv: zero).implementation == AES256IGE.available[0])
        #expect(try AES256IGE.encrypt(zero, key: zero, iv: zero)
                == AES256IGE(key: zero, iv: zero, implementation: CryptoBackend.current.chaining).encrypt(zero))
        // AES-NI takes 16- and 32-byte keys; a 24-byte key (test-only initializer) stays on the backend's chaining.
        #expect(try AES256IGE(anyKey: [UInt8](repeating: 1, count: 24), iv: zero).implementation
                == CryptoBackend.current.chaining)
        #expect(throws: CryptoError.implementationUnavailable("AES-NI IGE with a 24-byte key")) {
            try AES256IGE(anyKey: [UInt8](repeating: 1, count: 24), iv: zero, implementation: .aesni)
        }
        if !Self.hasAESNI {
            #expect(throws: CryptoError.implementationUnavailable("AES-NI on this CPU")) {
                try AES256IGE(key: zero, iv: zero, implementation: .aesni)
            }
        }
    }

    /// A Linux build compiles the portable backend only when a trait asks for it (so a default build compiles no
    /// swift-crypto or BigInt); asking for its chaining in a build without it is a typed error, not a trap.
    @Test func thePortableBackendIsCompiledWhereTheBuildSays() throws {
        #if os(Linux) && !PortableCryptoBackend
        #expect(CryptoBackend.compiled == [.openSSL])
        let zero = [UInt8](repeating: 0, count: 32)
        #expect(throws: CryptoError.implementationUnavailable(AES256IGE.portableMissing)) {
            try AES256IGE(key: zero, iv: zero, implementation: .portable)
        }
        #else
        #expect(CryptoBackend.compiled.contains(.portable))
        #endif
    }

    /// Forcing a backend's chaining runs it even where AES-NI is present, and round-trips a multi-piece buffer (the
    /// chaining's encryption works in 4 KiB pieces).
    @Test(arguments: CryptoBackend.compiled) func forcedFallback(backend: CryptoBackend) throws {
        let random = SeededRandom(seed: 0xFA11)
        let key = random.bytes(32), iv = random.bytes(32), plaintext = random.bytes(3 * 4096 + 48)
        let fallback = try AES256IGE(key: key, iv: iv, implementation: backend.chaining)
        #expect(fallback.implementation == backend.chaining)
        let ciphertext = try fallback.encrypt(plaintext)
        #expect(ciphertext != plaintext)
        #expect(try fallback.decrypt(ciphertext) == plaintext)
        for implementation in AES256IGE.available {
            #expect(try AES256IGE(key: key, iv: iv, implementation: implementation).encrypt(plaintext) == ciphertext)
        }
    }

    /// Both paths refuse a partial block before touching the data, through every entry point, and pass empty
    /// input through.
    @Test(arguments: AES256IGE.available) func lengthsBothPathsShare(implementation: AES256IGE.Implementation) throws {
        let ige = try AES256IGE(key: [UInt8](repeating: 2, count: 32), iv: [UInt8](repeating: 3, count: 32),
                                implementation: implementation)
        for length in [1, 15, 17, 31, 4095] {
            let input = [UInt8](repeating: 9, count: length)
            for entry in 0..<3 {
                for encrypting in [true, false] {
                    #expect(throws: CryptoError.notBlockAligned(length: length)) {
                        try Self.run(ige, encrypting: encrypting, input, entry: entry)
                    }
                }
            }
            var untouched = input
            #expect(throws: CryptoError.notBlockAligned(length: length)) { try ige.decrypt(inPlace: &untouched) }
            #expect(untouched == input)
        }
        for entry in 0..<3 {
            #expect(try Self.run(ige, encrypting: true, [], entry: entry) == [])
            #expect(try Self.run(ige, encrypting: false, [], entry: entry) == [])
        }
    }
}
