// The client role against recorded exchanges with Telegram: grammers' real exchange byte for byte from its recorded
// randomness, and the documentation's 2024 sample (every client message reproduced; RSA_PAD's unpublished temp_key
// supplied by the test). The 2013 sample is checked as far as today's rules allow (see its test).
import Foundation
import MTProtoApi
import MTProtoCrypto
import TLRuntime
import Testing
@testable import MTProto

@Suite struct AuthKeyExchangeReplayTests {
    typealias Client = AuthKeyExchange.Client

    static func string(_ path: String...) throws -> String {
        var node = KnownAnswerFile.root
        for key in path { node = node?[key] }
        guard let s = node?.string else {
            throw MissingVector(description: "known_answer_vectors.json: no string at \(path.joined(separator: "."))")
        }
        return s
    }

    /// A JSON integer of the grammers group read from the file's text: `expected_first_salt` is above 2^53, where
    /// a JSON number decoded as Double loses digits.
    static func integer(_ key: String) throws -> Int64? {
        let text = try String(contentsOf: KnownAnswerFile.directory.appendingPathComponent("known_answer_vectors.json"),
                              encoding: .utf8)
        guard let range = text.range(of: "\"\(key)\": ") else { return nil }
        return Int64(text[range.upperBound...].prefix { $0 == "-" || $0.isNumber })
    }

    /// grammers' two Telegram keys (production and test), by fingerprint.
    static func grammersKeys() throws -> [RSAPublicKey] {
        guard case .object(let keys)? = KnownAnswerFile.root?["vectors"]?["grammers"]?["keys"] else {
            throw MissingVector(description: "grammers.keys")
        }
        return try keys.values.map { value in
            guard let n = value.string else { throw MissingVector(description: "grammers.keys value") }
            return try RSAPublicKey(modulusDecimal: n, exponentDecimal: "65537")
        }
    }

    /// A server frame around a recorded body: msg_id at `time` with the response residue.
    static func serverFrame(_ body: [UInt8], time: Int64, sequence: Int64) -> [UInt8] {
        UnencryptedMessage(messageID: time << 32 | sequence << 4 | 1, body: body).bytes
    }

    /// The body of a frame the client produced.
    static func body(_ frame: [UInt8]) -> [UInt8] { Array(frame.dropFirst(20)) }

    @Test func grammersRecordedExchangeReplaysByteForByte() throws {
        func g(_ key: String) throws -> [UInt8] { hex(try Self.string("vectors", "grammers", key)) }
        let random = ReplayRandom(try g("step1_random") + g("step2_random") + g("step3_random"))
        // grammers sends p_q_inner_data without a DC; dcID nil selects that form.
        var client = Client(configuration: .init(keys: try Self.grammersKeys(), dcID: nil), random: random)
        let now = try Self.integer("step3_now").map(Double.init) ?? 0
        let serverTime = Int64(now)

        let step1 = client.start(now: now)
        #expect(Self.body(step1) == (try g("step1_request")))
        #expect(Array(step1.prefix(8)) == [UInt8](repeating: 0, count: 8))

        guard case .send(let step2) = try client.receive(frame: Self.serverFrame(try g("step1_response"), time: serverTime, sequence: 1), now: now) else {
            Issue.record("resPQ did not produce req_DH_params"); return
        }
        #expect(Self.body(step2) == (try g("step2_request")))

        guard case .send(let step3) = try client.receive(frame: Self.serverFrame(try g("step2_response"), time: serverTime, sequence: 2), now: now) else {
            Issue.record("server_DH_params_ok did not produce set_client_DH_params"); return
        }
        #expect(Self.body(step3) == (try g("step3_request")))

        guard case .done(let result) = try client.receive(frame: Self.serverFrame(try g("step3_response"), time: serverTime, sequence: 3), now: now) else {
            Issue.record("dh_gen_ok did not finish"); return
        }
        #expect(result.authKey.bytes == (try g("expected_auth_key")))
        #expect(result.firstSalt == (try Self.integer("expected_first_salt")))
        #expect(result.timeOffset == 0)  // grammers' expected_time_offset: server_time − now = 0
        #expect(result.fingerprint == -5_595_554_452_916_591_101)
        #expect(result.retries == 0 && result.expiresAt == nil && result.dcID == nil)
        // Exactly the recorded randomness was used, in order: 16 + 256 + 256 bytes and the client padding.
        #expect(!random.overrun)
        #expect(random.consumed > 16 + 256 + 256 && random.consumed <= 16 + 256 + 256 + 15)
    }

    /// The 2024 page's messages are whole unencrypted frames, but three declare a wrong message_length (errata in
    /// README.md); this fixes the declared length so the frame is what a server would really send.
    static func docsFrame(_ key: String) throws -> [UInt8] {
        var frame = try KnownAnswerFile.docs2024Hex(key)
        let length = UInt32(frame.count - 20)
        for i in 0..<4 { frame[16 + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(i))) }
        return frame
    }

    @Test func docs2024SampleReplays() throws {
        func d(_ key: String) throws -> [UInt8] { try KnownAnswerFile.docs2024Hex(key) }
        let keys = try Self.grammersKeys()
        guard let production = keys.first(where: { $0.fingerprintBytes == hex("85fd64de851d9dd0") }) else {
            Issue.record("the sample's key is not among grammers' keys"); return
        }
        let inner = try d("p_q_inner_data_dc"), padding = try d("random_padding_bytes")
        #expect(inner.count + padding.count == RSAPad.paddedLength)
        // The page does not publish RSA_PAD's temp_key: this one stands in, and the expected encrypted_data is
        // computed from the page's inner data and padding with it. Equality then proves the client built exactly
        // the page's p_q_inner_data_dc and padding.
        let tempKey = [UInt8](repeating: 0x11, count: 32)
        var keysTried = [tempKey].makeIterator()
        let expectedEncrypted = try RSAPad.encrypt(data: inner, key: production, padding: padding) { keysTried.next() }
        let filler = [UInt8](repeating: 0xee, count: RSAPad.paddedLength - padding.count)
        let random = ReplayRandom(try d("nonce") + d("new_nonce") + padding + filler + tempKey + d("b") + d("client_padding"))
        var client = Client(configuration: .init(keys: [production], dcID: 2), random: random)

        let now = 1_707_425_104.5
        let first = client.start(now: now)
        #expect(Self.body(first) == Self.body(try d("req_pq_multi")))

        guard case .send(let reqDH) = try client.receive(frame: try Self.docsFrame("res_pq"), now: now) else {
            Issue.record("resPQ did not produce req_DH_params"); return
        }
        let sampleReqDH = try d("req_dh_params")
        // Everything up to encrypted_data's TL length (ctor, nonces, p, q, fingerprint, 0xfe 00 01 00) is the page's.
        #expect(Array(Self.body(reqDH).prefix(64)) == Array(Self.body(sampleReqDH).prefix(64)))
        #expect(Array(Self.body(reqDH).dropFirst(64)) == expectedEncrypted)
        #expect(Array(Self.body(sampleReqDH).dropFirst(64)) == (try d("encrypted_data")))

        let later = 1_707_425_105.2
        guard case .send(let setDH) = try client.receive(frame: try Self.docsFrame("server_dh_params_ok"), now: later) else {
            Issue.record("server_DH_params_ok did not produce set_client_DH_params"); return
        }
        // The page dumps only the first 64 bytes of this message, and its client_encrypted_data whole.
        let sampleSetDH = try d("set_client_dh_params")
        #expect(Array(setDH[16..<64]) == Array(sampleSetDH[16..<64]))
        #expect(Array(Self.body(setDH).dropFirst(40)) == (try d("client_encrypted_data")))
        #expect(Self.body(setDH).count == 40 + (try d("client_encrypted_data")).count)

        guard case .done(let result) = try client.receive(frame: try Self.docsFrame("dh_gen_ok"), now: later) else {
            Issue.record("dh_gen_ok did not finish"); return
        }
        #expect(result.authKey.bytes == (try d("auth_key")))
        #expect(result.authKey.id == hex(try Self.string("derived", "docs-2024", "auth_key_id")))
        let salt = hex(try Self.string("derived", "docs-2024", "first_server_salt"))
        #expect(result.firstSalt == AuthKeyExchange.long(salt))
        #expect(result.serverTime == 1_707_425_105)
        #expect(abs(result.timeOffset - (1_707_425_105 - later)) < 1e-6)
        #expect(result.dcID == 2)
        #expect(!random.overrun && random.consumed == 16 + 32 + 192 + 32 + 256 + 12)
    }

    /// What of the 2013 sample can be replayed: its resPQ offers only a key we do not have (fingerprint
    /// c3b42b026ce86b21, retired), which the client reports by name; its server_DH_params_ok decrypts with the
    /// page's nonces and passes the hash check, and then its prime is rejected, as it must be: g = 2 needs
    /// dh_prime mod 8 = 7 and the 2013 prime does not satisfy it. (Its req_DH_params used the old RSA scheme with
    /// unpublished randomness, so the client's messages cannot be reproduced.)
    @Test func docs2013SampleIsRejectedWhereTodaysRulesDiffer() throws {
        func d(_ key: String) throws -> [UInt8] { hex(try Self.string("vectors", "docs_2013", key)) }
        let keys = try Self.grammersKeys()
        var client = Client(configuration: .init(keys: keys, dcID: nil),
                            random: ReplayRandom(Array(try d("req_pq").dropFirst(24))))
        _ = client.start(now: 1_373_993_675)
        var resPQ = try d("res_pq")
        resPQ[16..<20] = [UInt8(resPQ.count - 20), 0, 0, 0]
        let fingerprint = Int64(bitPattern: 0xc3b4_2b02_6ce8_6b21)  // the page writes the long in hex
        #expect(throws: AuthKeyExchangeError(.resPQ, .unknownFingerprints([fingerprint]))) {
            try client.receive(frame: resPQ, now: 1_373_993_675)
        }

        let okBody = Array(try d("server_dh_params_ok").dropFirst(20))
        var reader = BufferReader(bytes: okBody)
        guard case .server_DH_params_ok(let ok) = try MT.Server_DH_Params.parse(&reader) else {
            Issue.record("not server_DH_params_ok"); return
        }
        let tmpKey = try NonceKDF.temporaryKey(newNonce: d("new_nonce"), serverNonce: ok.serverNonce.wireBytes)
        #expect(try tmpKey.key == d("tmp_aes_key") && tmpKey.iv == d("tmp_aes_iv"))
        let inner = try AuthKeyExchange.decryptInnerData(ok.encryptedAnswer, key: tmpKey, step: .serverDHParams) {
            (r: inout BufferReader) throws(TLDecodingError) in try MT.Server_DH_inner_data.parse(&r)
        }
        guard case .server_DH_inner_data(let data) = inner else { Issue.record("no inner data"); return }
        #expect(data.g == 2 && data.serverTime == 1_373_993_675)
        #expect(throws: CryptoError.dhGeneratorCondition(g: 2)) {
            try DHParameters(prime: data.dhPrime, g: Int(data.g), cache: DHPrimeCache())
        }
    }
}
