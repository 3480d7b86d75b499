// mtcall's --proxy: a SOCKS5 or HTTP CONNECT proxy as a URL, an MTProxy as HOST:PORT with --proxy-secret, or one
// of each (the MTProxy is then reached through the other proxy).
import ArgumentParser
import MTProtoTransport

extension MTCall {
    /// The --proxy values that are URLs (socks5://, http://).
    var proxyURLs: [String] { proxy.filter { $0.contains("://") } }

    /// The --proxy value that names an MTProxy, if any.
    var mtproxyFlag: String? { proxy.first { !$0.contains("://") } }

    func validateProxies() throws {
        let urls = proxyURLs
        let mtproxies = proxy.count - urls.count
        if urls.count > 1 { throw ValidationError("--proxy: at most one socks5:// or http:// proxy") }
        if mtproxies > 1 { throw ValidationError("--proxy: at most one MTProxy HOST:PORT") }
        if (mtproxies == 1) != (proxySecret != nil) { throw ValidationError("an MTProxy --proxy HOST:PORT and --proxy-secret go together") }
        if server != nil, mtproxies == 1 { throw ValidationError("--server and an MTProxy --proxy exclude each other") }
        _ = try connectionProxy()
    }

    /// The SOCKS5 or HTTP CONNECT proxy of --proxy, if one was given.
    func connectionProxy() throws -> ProxyConfiguration? {
        guard let url = proxyURLs.first else { return nil }
        do {
            return try ProxyConfiguration(url: url)
        } catch {
            throw ValidationError("--proxy: \(error)")
        }
    }
}
