// Updates and connection states: every DC's pushed updates and every call's result go to the updates driver
// (UpdatesDriver.swift), which puts them in the account's order; what it hands back comes out on `updates` and, taken
// apart, on `events` (Events.swift). The home DC's state, with `.updating` while missed updates are fetched, comes
// out on `connectionStates` (core.telegram.org/api/updates).
import MTProtoClient
import TLRuntime
import TelegramApi
import TelegramSession

extension TelegramClient: UpdatesHost {
    /// Messages and updates asked per `updates.getChannelDifference` (Telegram's most for a user account).
    public static let channelDifferenceLimit: Int32 = 100

    /// Where the account's update sequence stands (nil until `updates.getState` answered or a box was restored).
    public var updateBox: UpdateBox? { updatesDriver.box }

    /// Where each followed channel's update sequence stands, by channel id.
    public var channelBoxes: [Int64: ChannelBox] { updatesDriver.channels }

    /// The channel a call acts on, from its target (its `channel` or `peer` argument, recorded when the call was
    /// built): its `messages.affected…` result then carries that channel's pts, not the common one
    /// (core.telegram.org/api/updates#pts).
    public static func channelID(of request: FunctionDescription) -> Int64? {
        switch request.target {
            case let channel as Api.InputChannel:
                switch channel {
                    case .inputChannel(let c): c.channelId
                    case .inputChannelFromMessage(let c): c.channelId
                    case .inputChannelEmpty: nil
                }
            case let peer as Api.InputPeer:
                switch peer {
                    case .inputPeerChannel(let c): c.channelId
                    case .inputPeerChannelFromMessage(let c): c.channelId
                    default: nil
                }
            default: nil
        }
    }

    // MARK: Into the driver

    /// A DC's connection changed: every DC's change goes to `states`; the home DC's to `connectionStates`, and
    /// each time it is ready again the driver asks for what was missed.
    func stateChanged(_ state: MTProtoClient.State, dc: Int32) {
        statesSink.yield(DCState(dc: dc, state: state))
        dcStates[dc] = state
        if dc == homeDC, state == .ready, !closed { updatesDriver.homeReady(in: self) }
        reportState()
    }

    /// Updates a DC pushed: their peers are learned, a login token's arrival signalled, and the driver orders them.
    func received(_ updates: Api.Updates) {
        guard !closed else { return }
        learnPeers(from: updates)
        if LoginTokenSignal.carriesLoginToken(updates) { loginTokenSignal.signal() }
        updatesDriver.receive(updates, in: self)
    }

    /// A call's result: its peers are learned, and the driver reads what it tells the update sequence.
    func noteResult<T>(_ result: T, of request: FunctionDescription) {
        guard !closed else { return }
        learnPeers(from: result)
        updatesDriver.noteResult(result, of: request, in: self)
    }

    // MARK: Out of the driver

    /// Out on `updates`, and as typed events on `events`.
    func deliver(_ updates: Api.Updates) {
        updatesSink.yield(updates)
        emitEvents(for: updates)
    }

    /// The home DC's state as an app sees it, on `connectionStates` when it changed.
    func reportState() {
        guard !closed, let home = dcStates[homeDC] else { return }
        let overall: ConnectionState = switch home {
            case .waitingForNetwork(let attempt, let retryIn): .waitingForNetwork(attempt: attempt, retryIn: retryIn)
            case .connecting: .connecting
            case .connected: .connected
            case .ready: updatesDriver.isFetching ? .updating : .ready
            case .closed: .closed
        }
        guard overall != reportedState else { return }
        reportedState = overall
        connectionStatesSink.yield(overall)
    }
}
