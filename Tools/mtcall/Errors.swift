// How mtcall reports a failure: one `error:` line that says what failed in words (not a library's dump), then, where
// the next step is known, `hint:` lines that name it. Exit status 1; usage errors (flags, files they name, tl-json)
// are ArgumentParser's ValidationError and exit 64 before anything connects.
import ArgumentParser
import Foundation
import MTProto
import MTProtoClient
import MTProtoCrypto
import TelegramClient

extension MTCall {
    /// Prints `error` as mtcall reports failures and exits with status 1.
    func fail(_ error: any Error) throws -> Never {
        // A usage error found once the call was under way (a peer's form, a method's arguments) is still one.
        if let usage = error as? ValidationError { throw usage }
        let (message, hints) = explain(error)
        let text = (["error: \(message)"] + hints.map { "hint: \($0)" }).joined(separator: "\n") + "\n"
        FileHandle.standardError.write(Data(text.utf8))
        throw ExitCode(1)
    }

    /// The error's one-line message and what to do about it.
    func explain(_ error: any Error) -> (String, [String]) {
        let serverFlags = server.map { "the server \($0)" } ?? mtserverReady.map { "mtserver's DC \(dc) (\($0))" }
            ?? "Telegram's DC \(dc)"
        switch error {
            case MTProtoClientError.rpc(let rpc):
                return ("\(rpc.code) \(rpc.message)", hints(for: rpc))
            case MTProtoClientError.connection(.exchange(let exchange)):
                if case .unknownFingerprints(let fingerprints) = exchange.reason {
                    let theirs = fingerprints.map(RSAPublicKey.hexFingerprint).joined(separator: ", ")
                    return ("\(serverFlags) offers RSA key fingerprints \(theirs), and --rsa-key holds none of them",
                            ["give the server's own public key: mtserver prints it in its ready line as \"public_key\", "
                             + "with its \"fingerprint\""])
                }
                if case .refusedByServer(-404) = exchange.reason {
                    return ("\(serverFlags) refused a key for DC \(dc) (transport error -404): that address serves "
                            + "another DC",
                            [server == nil ? "--dc must name the DC of the address you connect to"
                             : "an mtserver's ready line lists each DC's port under \"ports\" (\"port\" is DC 1's)"])
                }
                return ("the auth-key exchange with \(serverFlags) failed: \(exchange)", [])
            case PeerCacheError.unknownPeer(let peer):
                return ("\(error)",
                        ["the session's peer cache has not seen \(peer): name it by @username, or let it appear in "
                         + "`dialogs` or `history` first"])
            case MessageError.notFound:
                return ("\(error)", ["`history PEER` prints the chat's messages with their ids"])
            case MTProtoClientError.closed where server != nil:
                return ("\(serverFlags) closed the connection",
                        ["an mtserver closes it when --dc (\(dc)) is not the DC of that port: its ready line lists "
                         + "each DC's port under \"ports\" (\"port\" is DC 1's); its log says why"])
            default:
                let text = String(describing: error)
                if text.contains("Connection refused") {
                    return ("cannot connect to \(server ?? serverFlags): connection refused",
                            ["is the server running and listening on that port? mtserver prints its ports in its "
                             + "ready line"])
                }
                return (text, [])
        }
    }

    private func hints(for rpc: RPCError) -> [String] {
        let session = self.session ?? "FILE"
        switch (rpc.kind, rpc.name) {
            case (.unauthorized, _):
                return self.session == nil
                    ? ["without --session every run makes a new key that is signed in to nothing: give --session "
                       + "FILE and sign in once with `mtcall … --session FILE login` (or --phone and --code)"]
                    : ["\(session) is not signed in: run `mtcall … --session \(session) login` first, or give "
                       + "--phone and --code"]
            case (.floodWait(let seconds), _):
                return ["Telegram asks for \(seconds) s before this call again; calling sooner makes the wait longer"]
            case (_, "SESSION_PASSWORD_NEEDED"):
                return ["the account has a cloud password: give --password, or run `login`, which asks for it"]
            case (_, "PHONE_CODE_INVALID"):
                return ["on a test number 99966XYYYY the code is X five times (9996620001: 22222)"]
            case (_, "USERNAME_NOT_OCCUPIED"), (_, "USERNAME_INVALID"):
                return ["no account has that username; check it, or name the peer as user:ID"]
            case (_, "METHOD_NOT_IMPLEMENTED"):
                return ["the test Telegram does not serve this method; TestingAgainstALocalTelegram lists what it does"]
            default:
                return []
        }
    }
}
