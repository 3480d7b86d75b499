// The seam's operations on a backend chosen at run time, so one process can time both (Benchmarks/,
// BackendBenchmarks). Behind an SPI: an app uses the build's backend through the ordinary API.

/// The operations whose cost differs between the backends, on the one named.
@_spi(CryptoBackends)
public enum BackendOperations {
    /// base^exponent mod modulus as 256 big-endian bytes (`secretExponent` as the library's own calls pass it).
    public static func modularPower(_ base: [UInt8], _ exponent: [UInt8], _ modulus: [UInt8], secretExponent: Bool,
                                    on backend: CryptoBackend) throws(CryptoError) -> [UInt8] {
        switch backend {
        case .portable:
            #if PortableCryptoBackend || !canImport(COpenSSL)
            try power(PortableInteger.self, base, exponent, modulus, secretExponent)
            #else
            throw .implementationUnavailable(AES256IGE.portableMissing)
            #endif
        case .openSSL:
            #if canImport(COpenSSL)
            try power(OpenSSLInteger.self, base, exponent, modulus, secretExponent)
            #else
            throw .implementationUnavailable("the OpenSSL backend in this build")
            #endif
        }
    }

    /// PBKDF2-HMAC-SHA512, 64 bytes.
    public static func pbkdf2SHA512(_ password: [UInt8], salt: [UInt8], iterations: Int,
                                    on backend: CryptoBackend) throws(CryptoError) -> [UInt8] {
        switch backend {
        case .portable:
            #if PortableCryptoBackend || !canImport(COpenSSL)
            try PortableBackend.pbkdf2SHA512(password, salt: salt, iterations: iterations)
            #else
            throw .implementationUnavailable(AES256IGE.portableMissing)
            #endif
        case .openSSL:
            #if canImport(COpenSSL)
            try OpenSSLBackend.pbkdf2SHA512(password, salt: salt, iterations: iterations)
            #else
            throw .implementationUnavailable("the OpenSSL backend in this build")
            #endif
        }
    }

    /// SHA-256 of `first ‖ second`; the build's backend when the one named is not compiled.
    public static func sha256(_ first: [UInt8], _ second: [UInt8], on backend: CryptoBackend) -> [UInt8] {
        first.withUnsafeBytes { a in
            second.withUnsafeBytes { b in
                #if canImport(COpenSSL) && PortableCryptoBackend
                backend == .openSSL ? OpenSSLBackend.sha256(a, b) : PortableBackend.sha256(a, b)
                #else
                Backend.sha256(a, b)
                #endif
            }
        }
    }

    private static func power<I: BackendInteger>(_ type: I.Type, _ base: [UInt8], _ exponent: [UInt8],
                                                 _ modulus: [UInt8], _ secret: Bool) throws(CryptoError) -> [UInt8] {
        let result = try I.modExp(I(bigEndian: base), I(bigEndian: exponent), I(bigEndian: modulus),
                                  secretExponent: secret)
        guard let bytes = result.bigEndianBytes(paddedTo: 256) else {
            throw .invalidLength(what: "modular power", expected: "at most 256 bytes", actual: result.bitCount / 8)
        }
        return bytes
    }
}
