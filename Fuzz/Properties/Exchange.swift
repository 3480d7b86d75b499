// The auth-key exchange, both roles: a client and a server run against each other in memory while the fuzzer
// rewrites what one of them receives (replaces a message with its bytes, flips bytes, cuts it short), so answers
// behind valid nonces reach the deep checks. Neither side may trap, the exchange ends within a bound, and a client
// that reports a key shares it with a server that finished.
import MTProto
import MTProtoCrypto

/// A 2048-bit key generated with `openssl genrsa 2048` for the tests (Tests/MTProtoTests/Support.swift); never
/// for real use.
let exchangeKey: RSAPrivateKey = {
    do {
        return try RSAPrivateKey(pem: """
-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAkKirTQHo7iMcJsjEcBivjUeoGnUp13EvR12Zy4xvgxhl19KE
J61x7xL6L1rUV3W3nKzphD1lfYAi461Dp8Rc3qQaEiAHVLDImRv5eS5fBEexM1Vi
AQ0mmozyA1GyXoIeUOGYJLdbwThDy/iz+0JxfZxQO7kaxcRHwvzu3hQCWwJZqG1f
GXC3MyyxYxidslBowDdRYkXzLZgmgFgttJ1H7O6f9I6pigNTCgvo/XZByHFm4Hrq
YluQFpVghzuxcyWtq6j2cZRpxnT91mSnBGdAWl53YC71aDHZTpOhPaG08pe6tqUw
8AocEl8R4OPVqPhQNeeOttIQv0MuuGf8iun4IwIDAQABAoIBADifDI3T1YyAiaBU
rS8DOpOeHJpeicYeM1dHt88IZQ13G0XizH+LUDE3yF2Iu9yP4xKcS7rLHVKGOSHM
y9J69a7fpKS7jKMFnz7uyDM6h05xkVZ6cSXgM+ACkyfhbmO3oo4d/yM/8dYrY74O
1sPeOfXknTMDPQtzzHLx9b1PL6zXI/X9dG9OL8zV4ncVDBQwguMO9jLdAitN84aB
lXjT1WpfHeQu/8vHJSoGX0x/05G14QxvAom5wsMmKI0Fo8/5yYsJnz0jqdJlCT75
/JquRbmoUukS265KJoI2Q8AG5sLtFnT3QebAuoE7YOzMb1Z73m6aPljTHlZRd0P6
U3YHDCECgYEAxX143R7W2DOaSBu8r9vq2RM0yP+qxm1XSQG73StwD9nncyOHzZHe
zWKyQcOxqzpzJ+y9gKKpOZLmqQWTJlN0ldwhx+ZBXkDMXLBtVhJkM88KrKmOdiMF
rvCOhTsvbg3XXY0rxTKxVRPGgpsfd/qT4CREXEKwNB0cRyQPr5VZLe8CgYEAu4Q9
VeadjXQog2p+G6btX+WtIjbnIVTAI22N3TnYP8vtWEuRqFORSq6KTRmaHRshyT+B
YqLK1+Hr/s9Rl3uHe3reTVWGT67dzhjM7S5roevpH3KB859UwUwMeY5+0tS+1Uwl
kAGAhiWJumxQrfgM916N82QcM6Rt55CoEHBKjQ0CgYBTWqMByTtq41TR7IsWOp8D
4hxcXbSprYqysL2nGudgeVs7+JogBNpiG68bHMrHd5MVHdHaEk2UlFEws76o5X6G
pfPIGIIskvLuiDSNqJOMXm2l9KbBbATBEp1E1HcvXz4wKR55S+0W+JLHm0uL60Iw
z33e5vLR/BtsV2cbd9C9FwKBgQCMrxUZapEP/HMczXvZoS58gSOZBNn5fs08h0gl
Du34RzZFxUR9plzeS/8FA01FwwJhK50V9I780sos/Tv4y7wE31UDbkP7anWM17x/
whEMhaL8bfujXQnIkBbX6BmsceLOwnd4CDh17JndXMBXFUAdIzqavaQO9rFiR3xg
AO9dzQKBgQCxkINWhnw/2PXwrPpJeIos7wn7443alzlMa+1+skjcnMc0HDEBzUiw
NQQggoYRJY18w00OXqnmZC3gzt8glLPzRNH0L7WuyOYCyMDIr1QkLxW6c6ceO+zB
FBo/8mTZQjbGuy+oEMh68uaEGaeJlD0VCewnwIQRiTrMt2RUn/VWaQ==
-----END RSA PRIVATE KEY-----
""")
    } catch {
        fatalError("the test RSA key does not load: \(error)")
    }
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
