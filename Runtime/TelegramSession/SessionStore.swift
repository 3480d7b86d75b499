// The session a client keeps across runs, as typed values: the home DC, each DC's address and auth keys, where the
// update sequences stand, the peers seen and the secret chats. One protocol with two requirements, so a store of
// one's own (a keychain, a database the app already has) is a few lines; `apply(_:)` does the bookkeeping.
import MTProtoClient
import SecretChats

/// Where a client keeps its session: read whole once when it starts, then written as changes.
///
/// ``SQLiteSessionStore`` (a file only its owner can read) and ``MemorySessionStore`` are the two here. A store of
/// your own keeps a ``SessionState`` and applies each change to it:
///
/// ```swift
/// actor KeychainStore: SessionStore {
///     var state = SessionState()
///     func load() -> SessionState { state }
///     func save(_ changes: [SessionChange]) { for change in changes { state.apply(change) } }
/// }
/// ```
///
/// Every store is also an `AuthKeyStore`, the part `MTProtoClient` reads and writes.
public protocol SessionStore: AuthKeyStore {
    /// Everything saved; an empty ``SessionState`` when nothing was. Throws when the store cannot be read.
    func load() async throws -> SessionState
    /// Writes `changes`, in order, as one step: after a failure none of them is kept.
    func save(_ changes: [SessionChange]) async throws
}

extension SessionStore {
    /// The keys saved for `dc`, from ``load()``.
    public func keys(for dc: Int32) async throws -> DCKeys {
        let state = try await load()
        return DCKeys(permanent: state.permanentKeys[dc], temporary: state.temporaryKeys[dc])
    }

    /// Saves `dc`'s keys and the address they were made on, through ``save(_:)``.
    public func saveKeys(_ keys: DCKeys, for dc: Int32, address: DCAddress) async throws {
        try await save([.keys(keys, dc: dc), .address(address, dc: dc)])
    }
}

/// One change to a session, as a client makes it.
public enum SessionChange: Sendable {
    /// The DC the account lives on moved (nil: none chosen).
    case homeDC(Int32?)
    /// A DC's keys changed: a permanent key made, a temporary key bound or replaced, or either dropped.
    case keys(DCKeys, dc: Int32)
    /// A DC's address was learned (nil: forgotten).
    case address(DCAddress?, dc: Int32)
    /// The common update box moved (nil: logged out, the next start asks `updates.getState`).
    case updateBox(UpdateBox?)
    /// The channels' boxes, all of them: replaces what was saved.
    case channelBoxes([Int64: ChannelBox])
    /// Peers seen or changed (replacing records of the same key) and peers forgotten.
    case peers(changed: [PeerRecord], removed: [PeerRecord.Key])
    /// The secret chats, all of them: replaces what was saved.
    case secretChats(StoredSecretChats)
}

/// Everything a session keeps.
public struct SessionState: Sendable {
    /// The DC the account lives on; nil until a client has chosen one.
    public var homeDC: Int32?
    /// DC addresses learned or configured, by DC id.
    public var addresses: [Int32: DCAddress]
    /// The permanent auth key of each DC, by DC id.
    public var permanentKeys: [Int32: StoredAuthKey]
    /// The bound temporary key of each DC, by DC id (with temporary keys on).
    public var temporaryKeys: [Int32: TemporaryAuthKey]
    /// Where the account's update sequence stands; nil until `updates.getState` answered.
    public var updateBox: UpdateBox?
    /// Where each followed channel's update sequence stands, by channel id.
    public var channelBoxes: [Int64: ChannelBox]
    /// The peers seen, with their access hashes.
    public var peers: [PeerRecord.Key: PeerRecord]
    /// The secret chats and the DH parameters they were made with.
    public var secretChats: StoredSecretChats

    /// A state; empty by default.
    public init(homeDC: Int32? = nil, addresses: [Int32: DCAddress] = [:], permanentKeys: [Int32: StoredAuthKey] = [:],
                temporaryKeys: [Int32: TemporaryAuthKey] = [:], updateBox: UpdateBox? = nil,
                channelBoxes: [Int64: ChannelBox] = [:], peers: [PeerRecord.Key: PeerRecord] = [:],
                secretChats: StoredSecretChats = StoredSecretChats()) {
        self.homeDC = homeDC
        self.addresses = addresses
        self.permanentKeys = permanentKeys
        self.temporaryKeys = temporaryKeys
        self.updateBox = updateBox
        self.channelBoxes = channelBoxes
        self.peers = peers
        self.secretChats = secretChats
    }

    /// The state with `change` made.
    public mutating func apply(_ change: SessionChange) {
        switch change {
            case .homeDC(let dc): homeDC = dc
            case let .keys(keys, dc):
                permanentKeys[dc] = keys.permanent
                temporaryKeys[dc] = keys.temporary
            case let .address(address, dc): addresses[dc] = address
            case .updateBox(let box): updateBox = box
            case .channelBoxes(let boxes): channelBoxes = boxes
            case let .peers(changed, removed):
                for key in removed { peers[key] = nil }
                for record in changed { peers[record.key] = record }
            case .secretChats(let chats): secretChats = chats
        }
    }
}

/// The secret chats a session keeps: every chat's state (it holds chat keys) and the last DH parameters.
public struct StoredSecretChats: Sendable, Codable {
    /// Every chat, by id order.
    public var chats: [SecretChatState]
    /// The parameters of `messages.getDhConfig` last seen; nil until a chat was made.
    public var dhConfig: SecretDHConfig?

    /// Chats and parameters; none by default.
    public init(chats: [SecretChatState] = [], dhConfig: SecretDHConfig? = nil) {
        self.chats = chats
        self.dhConfig = dhConfig
    }
}
