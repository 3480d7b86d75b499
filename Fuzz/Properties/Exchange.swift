// The auth-key exchange, both roles: a client and a server run against each other in memory while the fuzzer
// rewrites what one of them receives (replaces a message with its bytes, flips bytes, cuts it short), so answers
// behind valid nonces reach the deep checks. Neither side may trap, the exchange ends within a bound, and a client
// that reports a key shares it with a server that finished.
import Foundation
import MTProto
import MTProtoCrypto
import TLJSON

/// crypto_vectors.json's deterministic 2048-bit test key (never for real use), read from the fixtures.
let exchangeKey: RSAPrivateKey = {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/vectors/crypto_vectors.json").path
    guard let text = try? String(contentsOfFile: path, encoding: .utf8), let root = try? JSONParser.parse(text),
          case .string(let n)? = root["rsa_test_key"]?["n"], case .string(let d)? = root["rsa_test_key"]?["d"],
          let key = try? RSAPrivateKey(modulusDecimal: n, publicExponentDecimal: "65537", privateExponentDecimal: d)
    else { fatalError("the test RSA key does not load from \(path)") }
    return key
}()

let exchangeServerConfiguration: AuthKeyExchange.Server.Configuration = {
    do {
        return try AuthKeyExchange.Server.Configuration(keys: [exchangeKey], dcID: 2)
    } catch {
        fatalError("the exchange server refuses its configuration: \(error)")
    }
}()

/// Rewrites `frame` as the next input record says: op 1, a 2-byte length and that many bytes replacing it; op 2, a
/// 2-byte offset and 4 bytes XORed in there; op 3, cut at a 2-byte offset; anything else leaves it as is.
func tamper(_ frame: [UInt8], _ reader: inout InputReader) -> [UInt8] {
    let op = reader.byte()
    switch op & 3 {
    case 1:
        let length = Int(reader.byte()) | Int(reader.byte()) << 8
        return reader.take(length)
    case 2:
        var out = frame
        let offset = Int(reader.byte()) | Int(reader.byte()) << 8
        for (i, byte) in reader.take(4).enumerated() where offset + i < out.count { out[offset + i] ^= byte }
        return out
    case 3:
        let offset = Int(reader.byte()) | Int(reader.byte()) << 8
        return Array(frame.prefix(offset))
    default:
        return frame
    }
}

/// Input: one `tamper` record per message that `receiver` gets (`.client`: the server's answers; `.server`: the
/// client's requests).
public func fuzzExchange(tampered receiver: Role, _ data: [UInt8]) throws(Violation) {
    var client = AuthKeyExchange.Client(
        configuration: AuthKeyExchange.Client.Configuration(keys: [exchangeKey.publicKey], dcID: 2),
        random: SeededRandom(seed: 1))
    var server = AuthKeyExchange.Server(configuration: exchangeServerConfiguration, random: SeededRandom(seed: 2))
    var reader = InputReader(data)
    var now: Double = 1_700_000_000
    var frame = client.start(now: now)
    var serverKey: AuthKey?
    // req_pq, req_DH_params and set_client_DH_params, the last repeated for each dh_gen_retry: well within 40.
    for message in 0..<40 {
        let toServer = message % 2 == 0
        if toServer == (receiver == .server) { frame = tamper(frame, &reader) }
        now += 0.05
        if toServer {
            guard let output = try? server.receive(frame: frame, now: now) else { return }
            switch output {
            case .send(let next): frame = next
            case let .finished(next, result):
                frame = next
                serverKey = result.authKey
            case .refused: return
            }
        } else {
            guard let output = try? client.receive(frame: frame, now: now) else { return }
            switch output {
            case .send(let next): frame = next
            case .done(let result):
                guard let serverKey, serverKey == result.authKey else {
                    throw Violation("the client reports a key the server does not hold")
                }
                return
            }
        }
    }
    throw Violation("the exchange went on for 40 messages")
}
