// The transport every connection of a `TelegramClient` speaks: its TCP framing and obfuscation, or the HTTP
// transport with the `Host` of the DC it reaches.
import MTProtoClient
import MTProtoTransport

extension TelegramClient {
    /// The transport for a connection to `dc` at `address`.
    func transportConfiguration(dc: Int32, address: DCAddress) -> TransportConfiguration {
        var http = configuration.httpTransport
        http?.host = HTTPTransportOptions.hostField(host: address.host, port: address.port)
        return TransportConfiguration(kind: configuration.transport, obfuscation: configuration.obfuscation,
                                      dcId: Int16(clamping: dc), http: http)
    }
}
