// Telegram's own data centres and RSA keys, as the official apps ship them (my.telegram.org lists the DC 2
// addresses and both keys; the other DCs' addresses come from help.getConfig and are the ones every client
// bootstraps with). The keys are public: they only let a client check it talks to Telegram during the exchange.
import MTProtoClient
import MTProtoCrypto

/// Telegram's own DCs and RSA keys, as the official apps ship them.
public enum TelegramDCs {
    /// Production DCs 1–5 (IPv4, port 443).
    public static let production: [Int32: DCAddress] = [
        1: DCAddress(host: "149.154.175.53", port: 443),
        2: DCAddress(host: "149.154.167.51", port: 443),
        3: DCAddress(host: "149.154.175.100", port: 443),
        4: DCAddress(host: "149.154.167.91", port: 443),
        5: DCAddress(host: "91.108.56.130", port: 443),
    ]

    /// Test DCs 1–3, where the `99966XYYYY` test numbers log in.
    public static let test: [Int32: DCAddress] = [
        1: DCAddress(host: "149.154.175.10", port: 443),
        2: DCAddress(host: "149.154.167.40", port: 443),
        3: DCAddress(host: "149.154.175.117", port: 443),
    ]

    /// The production key, fingerprint 0xd09d1d85de64fd85.
    public static let productionKeyPEM = """
        -----BEGIN RSA PUBLIC KEY-----
        MIIBCgKCAQEA6LszBcC1LGzyr992NzE0ieY+BSaOW622Aa9Bd4ZHLl+TuFQ4lo4g
        5nKaMBwK/BIb9xUfg0Q29/2mgIR6Zr9krM7HjuIcCzFvDtr+L0GQjae9H0pRB2OO
        62cECs5HKhT5DZ98K33vmWiLowc621dQuwKWSQKjWf50XYFw42h21P2KXUGyp2y/
        +aEyZ+uVgLLQbRA1dEjSDZ2iGRy12Mk5gpYc397aYp438fsJoHIgJ2lgMv5h7WY9
        t6N/byY9Nw9p21Og3AoXSL2q/2IJ1WRUhebgAdGVMlV1fkuOQoEzR7EdpqtQD9Cs
        5+bfo3Nhmcyvk5ftB0WkJ9z6bNZ7yxrP8wIDAQAB
        -----END RSA PUBLIC KEY-----
        """

    /// The test DCs' key, fingerprint 0xb25898df208d2603.
    public static let testKeyPEM = """
        -----BEGIN RSA PUBLIC KEY-----
        MIIBCgKCAQEAyMEdY1aR+sCR3ZSJrtztKTKqigvO/vBfqACJLZtS7QMgCGXJ6XIR
        yy7mx66W0/sOFa7/1mAZtEoIokDP3ShoqF4fVNb6XeqgQfaUHd8wJpDWHcR2OFwv
        plUUI1PLTktZ9uW2WE23b+ixNwJjJGwBDJPQEQFBE+vfmH0JP503wr5INS1poWg/
        j25sIWeYPHYeOrFp/eXaqhISP6G+q2IeTaWTXpwZj4LzXq5YOpk4bYEQ6mvRq7D1
        aHWfYmlEGepfaYR8Q0YqvvhYtMte3ITnuSJs171+GDqpdKcSwHnd6FudwGO4pcCO
        j4WcDuXc2CTHgH8gFTNhp/Y8/SpDOhvn9QIDAQAB
        -----END RSA PUBLIC KEY-----
        """

    /// Telegram's production RSA public key. Throws only if the embedded PEM were unreadable.
    public static func productionKey() throws -> RSAPublicKey { try RSAPublicKey(pem: productionKeyPEM) }
    /// Telegram's test-DC RSA public key. Throws only if the embedded PEM were unreadable.
    public static func testKey() throws -> RSAPublicKey { try RSAPublicKey(pem: testKeyPEM) }
}
