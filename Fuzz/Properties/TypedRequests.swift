// The server side's typed requests (`Api.requests`) against the dynamic reader on the same bytes: whatever one of
// them reads as a request of the API, the other reads too (but for nesting, which they count differently); a typed
// request writes bytes that read back to the same typed request and bytes, and that the dynamic reader reads and
// writes identically.
import TLRuntime
import TelegramApi
import TelegramApiServer

/// Input: one boxed request (or any bytes).
public func fuzzTypedRequests(_ data: [UInt8]) throws(Violation) {
    let typed: any TLTypedRequest
    do {
        typed = try Api.requests.parse(bytes: data)
    } catch {
        // A request the dynamic reader takes must be one the typed side takes, unless the bound on nesting (which
        // each counts its own way) was what stopped it.
        if case .depthExceeded = error.reason { return }
        if let dynamic = (try? Api.registry.parseRequest(bytes: data)) ?? nil {
            throw Violation("Api: \(dynamic.name) reads dynamically but not as a typed request: \(error)")
        }
        return
    }
    let name = type(of: typed).tlFunctionName
    let bytes = typed.boxedBytes
    let again: any TLTypedRequest
    do {
        again = try Api.requests.parse(bytes: bytes)
    } catch {
        throw Violation("Api: a typed \(name) writes bytes that do not read back: \(error)")
    }
    guard again.boxedBytes == bytes else { throw Violation("Api: typed \(name) writes other bytes the second time") }
    guard let dynamic = (try? Api.registry.parseRequest(bytes: bytes)) ?? nil else {
        throw Violation("Api: the dynamic reader does not read what typed \(name) writes")
    }
    guard dynamic.name == name, dynamic.boxedBytes == bytes else {
        throw Violation("Api: the dynamic reader writes typed \(name)'s bytes back otherwise (as \(dynamic.name))")
    }
}
