// `--mtserver FILE`: the JSON line mtserver prints when ready, saved to a file, in place of --server and --rsa-key.
// mtcall takes the port of --dc from its "ports" and the key from its "public_key", so a two-DC server's "port"
// (DC 1's) is never taken for DC 2's, and no script has to pull the key out first.
import ArgumentParser
import Foundation
import MTProtoClient
import MTProtoCrypto
import TLJSON

extension MTCall {
    /// The address of --dc and the server's key, from --mtserver's ready line; nil without --mtserver.
    func readyLineServer() throws -> (address: DCAddress, key: RSAPublicKey)? {
        guard let mtserverReady else { return nil }
        guard let text = try? String(contentsOfFile: mtserverReady, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("{") }) else {
            throw ValidationError("--mtserver \(mtserverReady): no ready line (save mtserver's standard output to it)")
        }
        let ready: JSONValue
        do {
            ready = try JSONParser.parse(String(line))
        } catch {
            throw ValidationError("--mtserver \(mtserverReady): not mtserver's ready line: \(error)")
        }
        guard case .object(let ports)? = ready["ports"], case .string(let pem)? = ready["public_key"] else {
            throw ValidationError("--mtserver \(mtserverReady): the ready line has no \"ports\" or \"public_key\"")
        }
        guard case .number(let text)? = ports.first(where: { $0.0 == String(dc) })?.1, let port = Int(text) else {
            let served = ports.map(\.0).joined(separator: ", ")
            throw ValidationError("--mtserver \(mtserverReady): the server has no DC \(dc) (it serves \(served)): give --dc")
        }
        do {
            return (DCAddress(host: "127.0.0.1", port: port), try RSAPublicKey(pem: pem))
        } catch {
            throw ValidationError("--mtserver \(mtserverReady): its \"public_key\" is not an RSA public key: \(error)")
        }
    }
}
