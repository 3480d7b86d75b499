// The MTProto HTTP transport's parsers fed anything a hostile peer might send: requests as the server reads them,
// responses as the client reads them. Neither traps; the outcome does not depend on how the bytes are split (a read
// that ends in an error drops the messages it completed, so whole input may return a prefix of the split one's);
// what is buffered stays within one head and one body; every message returned is within the limits and reads back
// the same when written again.
import MTProtoTransport

private let limits = HTTPLimits(maxHeadBytes: 256, maxHeaderFields: 8, maxBodyBytes: 512)

private struct Outcome {
    var bodies: [[UInt8]] = []
    var statuses: [Int] = []
    var error: HTTPTransportError?
}

/// Runs `pieces` through a request decoder (`request`) or a response decoder expecting 64 responses.
private func decode(request: Bool, _ pieces: [[UInt8]]) throws(Violation) -> Outcome {
    var requests = HTTPRequestDecoder(limits: limits)
    var responses = HTTPResponseDecoder(limits: limits)
    for _ in 0..<64 { responses.expectResponse() }
    var outcome = Outcome()
    for piece in pieces {
        do throws(HTTPTransportError) {
            if request {
                outcome.bodies += try requests.receive(piece).map(\.body)
            } else {
                let got = try responses.receive(piece)
                outcome.bodies += got.map(\.body)
                outcome.statuses += got.map(\.status)
            }
        } catch {
            outcome.error = error
            return outcome
        }
        let buffered = request ? requests.buffered : responses.buffered
        guard buffered <= limits.maxHeadBytes + 4 + limits.maxBodyBytes else {
            throw Violation("\(buffered) bytes buffered, more than a head and a body")
        }
    }
    do throws(HTTPTransportError) {
        if request { try requests.finish() } else { try responses.finish() }
    } catch {
        outcome.error = error
    }
    return outcome
}

/// Input: a control byte (bit 0: responses instead of requests; the rest seeds the split), then the bytes.
public func fuzzHTTPTransport(_ data: [UInt8]) throws(Violation) {
    var reader = InputReader(data)
    let control = reader.byte()
    let bytes = reader.rest()
    let request = control & 1 == 0
    let whole = try decode(request: request, [bytes])
    let split = try decode(request: request, chunks(bytes, seed: control >> 1))
    guard whole.error == split.error, split.bodies.starts(with: whole.bodies),
          whole.error != nil || whole.bodies == split.bodies
    else {
        throw Violation("the outcome depends on how the bytes are split: \(String(describing: whole.error)) "
                        + "vs \(String(describing: split.error)), \(whole.bodies.count) vs \(split.bodies.count) messages")
    }
    guard split.bodies.allSatisfy({ $0.count <= limits.maxBodyBytes }) else { throw Violation("a body over the limit") }
    guard split.statuses.allSatisfy({ (100...599).contains($0) }) else { throw Violation("a status outside 1xx-5xx") }
    if request {
        guard split.bodies.allSatisfy({ !$0.isEmpty }) else { throw Violation("a request with an empty body") }
    }
    // What was read, written again by our own writer, reads back the same.
    let written = split.bodies.flatMap { body in
        request ? HTTPTransportHead.request(host: "h", length: body.count) + body
            : HTTPTransportHead.response(length: body.count) + body
    }
    let again = try decode(request: request, [written])
    guard again.error == nil, again.bodies == split.bodies else {
        throw Violation("re-written messages read back differently: \(String(describing: again.error))")
    }
}
