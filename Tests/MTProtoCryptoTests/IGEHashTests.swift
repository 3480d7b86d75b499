// IGE decryption fused with SHA-256 (`AES256IGE.decrypt(_:hashingAfter:)`, CAESNI's one-pass loop) against the
// two-pass path — decryption, then OpenSSL's SHA-256 of prefix ‖ plaintext — on 100,000 seeded random (key, IV,
// prefix, length) cases, in place as MTProto 2.0 uses it; likewise IGE encryption while hashing another buffer
// (`encrypt(_:hashing:after:)`) and `MTProto2Cipher.seal(all:direction:)` against sealing one message at a time;
// the FIPS 180-4 example digests through the one-pass path; and the inputs it leaves to the two-pass path.
import Foundation
import MTProto
import Testing
@testable import MTProtoCrypto

@Suite struct IGEHashTests {
    static let onePass = AES256IGE.hashesInOnePass

    /// Decrypts a copy of `ciphertext` in place; returns the plaintext and the digest.
    static func open(_ ige: AES256IGE, _ ciphertext: [UInt8], prefix: [UInt8],
                     onePass: Bool = true) throws -> (plaintext: [UInt8], digest: [UInt8]) {
        var data = ciphertext
        let result: Result<[UInt8], CryptoError> = data.withUnsafeMutableBytes { buffer in
            prefix.withUnsafeBytes { prefix in
                Result { () throws(CryptoError) in try ige.decrypt(buffer, hashingAfter: prefix, onePass: onePass) }
            }
        }
        return (data, try result.get())
    }

    /// Whether the one-pass and the two-pass (bytes, digest) both equal OpenSSL's.
    static func agree(_ fused: ([UInt8], [UInt8]), _ twoPass: ([UInt8], [UInt8]), _ openSSL: ([UInt8], [UInt8])) -> Bool {
        IGEImplementationTests.same(fused.0, openSSL.0) && fused.1 == openSSL.1
            && IGEImplementationTests.same(twoPass.0, openSSL.0) && twoPass.1 == openSSL.1
    }

    /// 10 shards × 10,000 cases: random key and IV; a prefix of 0…64 bytes (32, MTProto's, every third case);
    /// 0…4096 bytes of random data in steps of 16 (short ones every other case, where the hash blocks mix prefix,
    /// plaintext and padding). The one-pass result must equal both two-pass ones (AES-NI and OpenSSL decryption).
    /// A failure names the shard's seed and the case, so it replays.
    @Test(.enabled(if: onePass, "this CPU has no AES-NI with SHA extensions"), arguments: 0..<10)
    func onePassAgreesWithTwoPasses(shard: Int) throws {
        let seed = 0x5A_0000 + UInt64(shard)
        let random = SeededRandom(seed: seed)
        let pool = random.bytes(8192 + 4096 + 64)
        var mismatches: [String] = []
        for index in 0..<10_000 {
            let key = random.bytes(32), iv = random.bytes(32)
            let prefixLength = index % 3 == 0 ? 32 : Int(random.next() % 65)
            let blocks = index % 2 == 0 ? Int(random.next() % 9) : Int(random.next() % 257)
            let offset = Int(random.next() % 8192)
            let prefix = IGEImplementationTests.copy(pool, offset..<(offset + prefixLength))
            let data = IGEImplementationTests.copy(pool, (offset + 64)..<(offset + 64 + 16 * blocks))
            let fast = try AES256IGE(key: key, iv: iv, implementation: .aesni)
            let reference = try AES256IGE(key: key, iv: iv, implementation: .openssl)
            let fused = try Self.open(fast, data, prefix: prefix)
            let twoPass = try Self.open(fast, data, prefix: prefix, onePass: false)
            let openSSL = try Self.open(reference, data, prefix: prefix)
            if !Self.agree(fused, twoPass, openSSL) {
                mismatches.append("seed \(seed) case \(index) (prefix \(prefixLength), \(16 * blocks) bytes)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(5))")
    }

    /// Encrypts a copy of `plaintext` in place while hashing `prefix` ‖ `next`; returns both.
    static func seal(_ ige: AES256IGE, _ plaintext: [UInt8], next: [UInt8], prefix: [UInt8],
                     onePass: Bool = true) throws -> (ciphertext: [UInt8], digest: [UInt8]) {
        var data = plaintext
        let result: Result<[UInt8], CryptoError> = data.withUnsafeMutableBytes { buffer in
            next.withUnsafeBytes { next in
                prefix.withUnsafeBytes { prefix in
                    Result { () throws(CryptoError) in
                        try ige.encrypt(buffer, hashing: next, after: prefix, onePass: onePass)
                    }
                }
            }
        }
        return (data, try result.get())
    }

    /// 10 shards × 10,000 cases as above for encryption while hashing another buffer: the data and the hashed
    /// buffer get independent lengths (0…4,096 bytes; the hashed one also off the block grid every fifth case), so
    /// either the encryption or the hash finishes first.
    @Test(.enabled(if: onePass, "this CPU has no AES-NI with SHA extensions"), arguments: 0..<10)
    func encryptingWhileHashingAgreesWithTwoPasses(shard: Int) throws {
        let seed = 0x5E_0000 + UInt64(shard)
        let random = SeededRandom(seed: seed)
        let pool = random.bytes(3 * 4096 + 64)
        var mismatches: [String] = []
        for index in 0..<10_000 {
            let key = random.bytes(32), iv = random.bytes(32)
            let prefixLength = index % 3 == 0 ? 32 : Int(random.next() % 65)
            let blocks = index % 2 == 0 ? Int(random.next() % 9) : Int(random.next() % 257)
            let nextLength = 16 * Int(index % 4 < 2 ? random.next() % 257 : random.next() % 9)
                + (index % 5 == 0 ? Int(random.next() % 16) : 0)
            let offset = Int(random.next() % 4096)
            let prefix = IGEImplementationTests.copy(pool, offset..<(offset + prefixLength))
            let data = IGEImplementationTests.copy(pool, (offset + 64)..<(offset + 64 + 16 * blocks))
            let next = IGEImplementationTests.copy(pool, (offset + 4160 - nextLength)..<(offset + 4160))
            let fast = try AES256IGE(key: key, iv: iv, implementation: .aesni)
            let reference = try AES256IGE(key: key, iv: iv, implementation: .openssl)
            let fused = try Self.seal(fast, data, next: next, prefix: prefix)
            let twoPass = try Self.seal(fast, data, next: next, prefix: prefix, onePass: false)
            let openSSL = try Self.seal(reference, data, next: next, prefix: prefix)
            if !Self.agree(fused, twoPass, openSSL) {
                mismatches.append("seed \(seed) case \(index) (prefix \(prefixLength), \(16 * blocks) + \(nextLength) bytes)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(5))")
    }

    /// Sealing a batch (each message encrypted while the next is hashed) gives exactly the bytes and msg_key_large
    /// of sealing each message alone, for both directions, batches of 1…6 messages of 0…8 KiB, 300 seeded batches;
    /// and a batch with one bad message is refused before anything is touched.
    @Test func sealingABatchEqualsSealingEachMessage() throws {
        let random = SeededRandom(seed: 0x5EA1)
        let cipher = MTProto2Cipher(authKey: try AuthKey(random.bytes(256)))
        for round in 0..<300 {
            let direction: MessageDirection = round % 2 == 0 ? .client : .server
            let count = Int(random.next() % 6) + 1
            var batch: [[UInt8]] = (0..<count).map { _ in
                [UInt8](repeating: 0, count: 24) + random.bytes(16 * Int(random.next() % 513))
            }
            var alone = batch
            let larges = try cipher.seal(all: &batch, direction: direction)
            let expected = try alone.indices.map { try cipher.seal(&alone[$0], direction: direction) }
            #expect(batch == alone, "round \(round)")
            #expect(larges == expected, "round \(round)")
        }
        var bad: [[UInt8]] = [[UInt8](repeating: 1, count: 24 + 32), [UInt8](repeating: 2, count: 24 + 20)]
        let untouched = bad
        #expect(throws: CryptoError.notBlockAligned(length: 20)) { try cipher.seal(all: &bad, direction: .client) }
        #expect(bad == untouched)
    }

    /// A run of messages sealed over several calls, each leaving its last message hashed but unencrypted and the
    /// next call starting with it (`leavingLast`, `firstKeyLarge`), gives the bytes and msg_key_large of sealing
    /// each alone: 200 seeded runs of 2…7 messages in calls of 1…3 new messages; a held hash of the wrong length
    /// is refused.
    @Test func sealingARunAcrossCallsEqualsSealingEachMessage() throws {
        let random = SeededRandom(seed: 0x5EA2)
        let cipher = MTProto2Cipher(authKey: try AuthKey(random.bytes(256)))
        for round in 0..<200 {
            let direction: MessageDirection = round % 2 == 0 ? .client : .server
            let messages: [[UInt8]] = (0..<(Int(random.next() % 6) + 2)).map { _ in
                [UInt8](repeating: 0, count: 24) + random.bytes(16 * Int(random.next() % 300))
            }
            var alone = messages
            let expected = try alone.indices.map { try cipher.seal(&alone[$0], direction: direction) }
            var sealed: [[UInt8]] = [], larges: [[UInt8]] = []
            var held: (bytes: [UInt8], large: [UInt8])?
            var next = 0
            while next < messages.count {
                let take = min(messages.count - next, Int(random.next() % 3) + 1)
                var batch = (held.map { [$0.bytes] } ?? []) + messages[next..<(next + take)]
                next += take
                let leaving = next < messages.count
                var got = try cipher.seal(all: &batch, direction: direction, firstKeyLarge: held?.large,
                                          leavingLast: leaving)
                held = nil
                if leaving {
                    #expect(batch.last == messages[next - 1], "round \(round): the held message is untouched")
                    held = (batch.removeLast(), got.removeLast())
                }
                sealed += batch
                larges += got
            }
            #expect(sealed == alone, "round \(round)")
            #expect(larges == expected, "round \(round)")
        }
        var one = [[UInt8](repeating: 1, count: 24 + 32)]
        #expect(throws: CryptoError.invalidLength(what: "msg_key_large", expected: "32 bytes", actual: 16)) {
            try cipher.seal(all: &one, direction: .client, firstKeyLarge: [UInt8](repeating: 0, count: 16))
        }
    }

    /// FIPS 180-4's example messages (and the million-"a" one of its test suite) split into a prefix and a
    /// plaintext of whole blocks, which is encrypted and then opened: the digest is the published one whichever
    /// path runs.
    @Test(arguments: AES256IGE.available) func publishedDigests(implementation: AES256IGE.Implementation) throws {
        let examples: [(message: [UInt8], prefixLength: Int, digest: String)] = [
            (Array("abc".utf8), 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8), 8,
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            (Array(("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                    + "mnopqrstnopqrstu").utf8), 16,
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
            ([UInt8](repeating: 0x61, count: 1_000_000), 64,
             "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        ]
        let random = SeededRandom(seed: 0xF1B5)
        for example in examples {
            let key = random.bytes(32), iv = random.bytes(32)
            let prefix = Array(example.message[..<example.prefixLength])
            let plaintext = Array(example.message[example.prefixLength...])
            #expect(plaintext.count % 16 == 0)
            let ige = try AES256IGE(key: key, iv: iv, implementation: implementation)
            let opened = try Self.open(ige, try ige.encrypt(plaintext), prefix: prefix)
            #expect(opened.plaintext == plaintext)
            #expect(opened.digest == hex(example.digest), "\(example.message.count)-byte message")
            // The message as the buffer hashed beside an encryption (all of it, or the split as above).
            let sealed = try Self.seal(ige, plaintext, next: plaintext, prefix: prefix)
            #expect(sealed.ciphertext == (try ige.encrypt(plaintext)))
            #expect(sealed.digest == hex(example.digest), "\(example.message.count)-byte message beside an encryption")
        }
    }

    /// What the one-pass loop does not take goes through two passes with the same result: a prefix over 64 bytes;
    /// and a partial block is refused before anything is touched.
    @Test func inputsLeftToTwoPasses() throws {
        let random = SeededRandom(seed: 0x2BA5)
        let key = random.bytes(32), iv = random.bytes(32), data = random.bytes(4096), prefix = random.bytes(65)
        let ige = try AES256IGE(key: key, iv: iv)
        let opened = try Self.open(ige, data, prefix: prefix)
        #expect(opened.plaintext == (try ige.decrypt(data)))
        #expect(opened.digest == Hash.sha256(prefix + opened.plaintext))
        for length in [1, 15, 33] {
            let partial = [UInt8](repeating: 7, count: length)
            #expect(throws: CryptoError.notBlockAligned(length: length)) { try Self.open(ige, partial, prefix: []) }
        }
    }

    /// The CPUID check for the SHA extensions agrees with what the kernel reports.
    @Test func detectionMatchesTheCPU() throws {
        #if os(Linux) && (arch(x86_64) || arch(i386))
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }.map { $0.split(separator: " ") } ?? []
        let kernelSays = ["aes", "sha_ni", "ssse3", "sse4_1"].allSatisfy { flags.contains(Substring($0)) }
        #expect(Self.onePass == kernelSays)
        #elseif !(arch(x86_64) || arch(i386))
        #expect(!Self.onePass)
        #endif
    }
}
