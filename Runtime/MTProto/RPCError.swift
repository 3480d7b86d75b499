// `rpc_error#2144ca19 error_code:int error_message:string` as a typed error. Telegram puts numbers in the message
// (core.telegram.org/api/errors): `FLOOD_WAIT_30`, `PHONE_MIGRATE_2`, `SLOWMODE_WAIT_10`, `2FA_CONFIRM_WAIT_86400`,
// `FLOOD_PREMIUM_WAIT_5`, `FILE_PART_3_MISSING`; callers act on the name and the number, so both are parsed here.

/// An error a server answered an RPC with.
public struct RPCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP-like code: 303 (see other), 400, 401, 403, 404, 406, 420 (flood), 500…
    public let code: Int32
    /// The message exactly as sent (`FLOOD_WAIT_30`).
    public let message: String
    /// The message with its number taken out (`FLOOD_WAIT`, `FILE_PART_MISSING`), or the whole message.
    public let name: String
    /// The number the message carries, if any (`30` in `FLOOD_WAIT_30`, `3` in `FILE_PART_3_MISSING`).
    public let value: Int?

    /// An error from its code and message; `name` and `value` are parsed out of the message.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
        (name, value) = RPCError.split(message)
    }

    /// What the error asks the caller to do, for the errors a client handles itself.
    public enum Kind: Sendable, Hashable {
        /// `FLOOD_WAIT_X`, `FLOOD_PREMIUM_WAIT_X`, `SLOWMODE_WAIT_X`: retry after X seconds.
        case floodWait(seconds: Int)
        /// `*_MIGRATE_X`: the call (or the account, for phone/user/network) belongs on DC X.
        case migrate(MigrationKind, dc: Int)
        /// `AUTH_KEY_UNREGISTERED` and friends (401): the key is not logged in.
        case unauthorized
        /// Anything else.
        case other
    }

    /// Which `*_MIGRATE_X` error: the first three move the home DC, the last two run one call elsewhere.
    public enum MigrationKind: String, Sendable, Hashable, CaseIterable {
        /// The phone number belongs to another DC (`auth.sendCode`): move the home DC there.
        case phone = "PHONE_MIGRATE"
        /// The account belongs to another DC (`auth.signIn`): move the home DC there.
        case user = "USER_MIGRATE"
        /// The DC asks the client to use another one for now: move the home DC there.
        case network = "NETWORK_MIGRATE"
        /// The file lives on another DC: run this call there.
        case file = "FILE_MIGRATE"
        /// The statistics live on another DC: run this call there.
        case stats = "STATS_MIGRATE"
    }

    /// What the error asks of the caller: wait, go to another DC, sign in, or nothing in particular.
    public var kind: Kind {
        if let value {
            switch name {
                case "FLOOD_WAIT", "FLOOD_PREMIUM_WAIT", "SLOWMODE_WAIT": return .floodWait(seconds: value)
                default:
                    if let migration = MigrationKind(rawValue: name) { return .migrate(migration, dc: value) }
            }
        }
        return code == 401 ? .unauthorized : .other
    }

    /// `rpc_error CODE MESSAGE`.
    public var description: String { "rpc_error \(code) \(message)" }

    /// Takes the first all-digit `_`-separated part out of the message: `FILE_PART_3_MISSING` → (`FILE_PART_MISSING`,
    /// 3). A message that starts with digits (`2FA_CONFIRM_WAIT_86400`) keeps them: only whole parts after the
    /// first count. Numbers that do not fit an `Int` are left in the name.
    static func split(_ message: String) -> (String, Int?) {
        let parts = message.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count > 1 else { return (message, nil) }
        for index in 1..<parts.count {
            let part = parts[index]
            guard !part.isEmpty, part.utf8.count <= 18, part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                  let number = Int(part) else { continue }
            var rest = parts
            rest.remove(at: index)
            return (rest.joined(separator: "_"), number)
        }
        return (message, nil)
    }
}
