// Cloud-password SRP against Telethon's known answers (Fixtures/srp/srp_vectors.json, made by
// Fixtures/srp/make_srp_vectors.py), both sides, and the checks a client makes of a hostile server's challenge.
import Foundation
import Testing
@testable import MTProtoCrypto

struct SRPVector: Decodable {
    let password: String
    let salt1, salt2, p, x, v, k, b, u, A, M1: String
    let srp_B: String
    let a: String
    let g: Int
}

private struct SRPVectorFile: Decodable {
    let vectors: [SRPVector]
}

enum SRPVectors {
    static let all: [SRPVector] = {
        let url = VectorFiles.directory.deletingLastPathComponent().appendingPathComponent("srp/srp_vectors.json")
        return (try? VectorFiles.load(SRPVectorFile.self, from: url).vectors) ?? []
    }()
}

@Suite struct SRPTests {
    @Test func theFixturesAreThere() {
        #expect(SRPVectors.all.count == 6)
    }

    @Test(arguments: SRPVectors.all.indices)
    func clientMatchesTelethon(index: Int) throws {
        let vector = SRPVectors.all[index]
        let parameters = try SRPParameters(salt1: hex(vector.salt1), salt2: hex(vector.salt2), g: vector.g, p: hex(vector.p))
        #expect(parameters.k == hex(vector.k))
        let x = try SRP.passwordHash(vector.password, salt1: parameters.salt1, salt2: parameters.salt2)
        #expect(x == hex(vector.x))
        #expect(try SRP.verifier(passwordHash: x, parameters: parameters) == hex(vector.v))
        let challenge = try SRPChallenge(parameters: parameters, gB: hex(vector.srp_B))
        #expect(Hash.sha256(hex(vector.A), challenge.gB) == hex(vector.u))
        let proof = try challenge.proof(passwordHash: x, a: hex(vector.a))
        #expect(proof.a == hex(vector.A))
        #expect(proof.m1 == hex(vector.M1))
    }

    @Test(arguments: SRPVectors.all.indices)
    func serverMatchesTelethon(index: Int) throws {
        let vector = SRPVectors.all[index]
        let parameters = try SRPParameters(salt1: hex(vector.salt1), salt2: hex(vector.salt2), g: vector.g, p: hex(vector.p))
        let gB = try SRP.serverPublic(verifier: hex(vector.v), b: hex(vector.b), parameters: parameters)
        #expect(Array(gB.drop { $0 == 0 }) == hex(vector.srp_B))
        let proof = SRPProof(a: hex(vector.A), m1: hex(vector.M1))
        #expect(try SRP.serverVerifies(proof, verifier: hex(vector.v), b: hex(vector.b), gB: gB, parameters: parameters))
        var wrong = proof.m1
        wrong[0] ^= 1
        #expect(try !SRP.serverVerifies(SRPProof(a: proof.a, m1: wrong), verifier: hex(vector.v), b: hex(vector.b),
                                        gB: gB, parameters: parameters))
        // Another password's verifier does not accept this proof.
        let other = SRPVectors.all[(index + 1) % SRPVectors.all.count]
        #expect(try !SRP.serverVerifies(proof, verifier: hex(other.v), b: hex(vector.b), gB: gB, parameters: parameters))
    }

    @Test func pbkdf2MatchesRFC7914() throws {
        // P="password", S="salt", c=1, 64 bytes: the value Python's hashlib.pbkdf2_hmac('sha512', …) gives.
        let out = try SRP.pbkdf2SHA512(Array("password".utf8), salt: Array("salt".utf8), iterations: 1)
        #expect(out == hex("867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252"
                           + "c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce"))
        #expect(throws: CryptoError.self) { try SRP.pbkdf2SHA512([], salt: [], iterations: 0) }
    }

    // MARK: A hostile server's challenge

    private var good: SRPVector { SRPVectors.all[1] }

    @Test func aPrimeThatIsNotSafeIsRefused() throws {
        var composite = hex(good.p)
        composite[255] ^= 2  // still odd, still 2048 bits, no longer prime
        #expect(throws: CryptoError.dhPrimeNotSafe) {
            try SRPParameters(salt1: [1], salt2: [2], g: 4, p: composite, cache: DHPrimeCache())
        }
    }

    @Test func aPrimeOfTheWrongSizeIsRefused() throws {
        let p = hex(good.p)
        #expect(throws: CryptoError.dhPrimeWrongSize(bits: 2037)) {
            try SRPParameters(salt1: [1], salt2: [2], g: 3, p: Array(p.dropFirst()), cache: DHPrimeCache())
        }
        #expect(throws: CryptoError.dhPrimeWrongSize(bits: 2049)) {
            try SRPParameters(salt1: [1], salt2: [2], g: 3, p: [1] + p, cache: DHPrimeCache())
        }
    }

    @Test func aBadGeneratorIsRefused() throws {
        let p = hex(good.p)
        #expect(throws: CryptoError.dhGeneratorOutOfRange(1)) { try SRPParameters(salt1: [1], salt2: [2], g: 1, p: p) }
        #expect(throws: CryptoError.dhGeneratorOutOfRange(9)) { try SRPParameters(salt1: [1], salt2: [2], g: 9, p: p) }
        // Telegram's prime is not 7 mod 8, so 2 does not generate its order-(p−1)/2 subgroup.
        #expect(throws: CryptoError.dhGeneratorCondition(g: 2)) { try SRPParameters(salt1: [1], salt2: [2], g: 2, p: p) }
    }

    @Test func gBOutOfRangeIsRefused() throws {
        let parameters = try SRPParameters(salt1: hex(good.salt1), salt2: hex(good.salt2), g: good.g, p: hex(good.p))
        let p = hex(good.p)
        var pMinusOne = p
        pMinusOne[255] -= 1
        for bad in [[], [1], pMinusOne, p, [0xff] + [UInt8](repeating: 0xff, count: 255), [1] + [UInt8](repeating: 0, count: 240)] {
            #expect(throws: CryptoError.self) { try SRPChallenge(parameters: parameters, gB: bad) }
        }
        #expect(throws: CryptoError.dhValueOutOfRange(what: "srp_B is wider than 2048 bits")) {
            try SRPChallenge(parameters: parameters, gB: [1] + p)
        }
    }

    @Test func uZeroIsRefusedBeforeAProofExists() throws {
        let parameters = try SRPParameters(salt1: hex(good.salt1), salt2: hex(good.salt2), g: good.g, p: hex(good.p))
        let challenge = try SRPChallenge(parameters: parameters, gB: hex(good.srp_B))
        #expect(throws: CryptoError.srpHashZero) {
            try challenge.proof(passwordHash: hex(good.x), a: hex(good.a)) { _, _ in [UInt8](repeating: 0, count: 32) }
        }
    }
}
