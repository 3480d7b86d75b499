// Small helpers shared by the OpenSSL wrappers.
import COpenSSL

/// The oldest error on OpenSSL's thread-local queue as text, and the queue cleared.
func openSSLErrorDetail() -> String {
    let code = ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return "no OpenSSL error queued" }
    var buffer = [CChar](repeating: 0, count: 256)
    buffer.withUnsafeMutableBufferPointer { ERR_error_string_n(code, $0.baseAddress, $0.count) }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}

func openSSLFailure(_ function: String) -> CryptoError {
    .openSSL(function: function, detail: openSSLErrorDetail())
}
