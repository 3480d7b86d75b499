// The updates driver: runs the account's `UpdatesState` against the server for the client that owns it. The client
// feeds it every pushed update and every call's result and tells it when the home DC is ready; the driver asks
// `updates.getState`, `updates.getDifference` and each channel's `updates.getChannelDifference` when the sequence
// says so, times the open gap, hands back what is in order for the client to deliver, and saves the boxes to the
// session store when they move (core.telegram.org/api/updates).
import Logging
import MTProtoClient
import TLRuntime
import TelegramApi
import TelegramSession

/// What an `UpdatesDriver` needs of the client it runs in: a way to make calls, a way out for updates in order,
/// and a word when whether it is fetching changes. The driver runs on the host's actor (each of its methods takes
/// the host as its isolation), so what it hands out keeps the order it was decided in.
protocol UpdatesHost: Actor {
    /// The driver the host runs; its fetches' answers find it here.
    var updatesDriver: UpdatesDriver { get }
    /// Makes a call the way the app's calls are made (middlewares, routing, the result noted like theirs).
    nonisolated func invoke<T: Sendable>(_ call: (FunctionDescription, Buffer, DeserializeFunctionResponse<T>),
                                         timeout: Duration?) async throws -> T
    /// Hands out updates the sequence put in order.
    func deliver(_ updates: Api.Updates)
    /// The sequence moved: whether missed updates are being fetched may have changed.
    func reportState()
}

/// The account's update sequence run against the server: fetches, the gap timer and the saved boxes around an
/// `UpdatesState`. Owned by one `UpdatesHost` and used only on its actor.
final class UpdatesDriver {
    /// Whether the sequence is followed at all (`TelegramClient.Configuration.followsUpdates`): when not, updates
    /// and results that are `Api.Updates` are handed out unchecked and nothing is fetched.
    private let follows: Bool
    private let store: (any SessionStore)?
    private let logger: Logger
    private let taskExecutor: EventLoopTaskExecutor
    /// The account's update sequence; its boxes are restored from the store in `start(box:channels:)`.
    private var state = UpdatesState()
    /// `updates.getState` was refused as unauthorized: none is asked again until a sign-in.
    private var signedOut = false
    private var stopped = false
    /// The `getState`/`getDifference` out (the sequence asks one at a time), and a count of the sequences begun,
    /// so an answer for one that a sign-in or log-out replaced is ignored.
    private var fetchTask: Task<Void, Never>?
    private var generation = 0
    private var gapTimer: (task: Task<Void, Never>, deadline: Double)?
    private var savedBox: UpdateBox?
    private var savedChannels: [Int64: ChannelBox] = [:]
    private var boxSave: Task<Void, Never>?
    /// The `getChannelDifference`s out, one per channel at most.
    private var channelFetches: [Int64: Task<Void, Never>] = [:]
    /// The monotonic origin of the times `state` is given (gaps are timed on it, not on the configured clock).
    private let started = ContinuousClock.now

    init(follows: Bool, store: (any SessionStore)?, logger: Logger, taskExecutor: EventLoopTaskExecutor) {
        self.follows = follows
        self.store = store
        self.logger = logger
        self.taskExecutor = taskExecutor
    }

    /// Where the account's sequence stands (nil until `updates.getState` answered or a box was restored).
    var box: UpdateBox? { state.box }
    /// Where each followed channel's sequence stands, by channel id.
    var channels: [Int64: ChannelBox] { state.channels }
    /// Whether a `getState`, `getDifference` or `getChannelDifference` is out.
    var isFetching: Bool { state.isFetching }

    // MARK: Lifecycle

    /// Starts from the boxes the store kept (none: from `updates.getState` once signed in).
    func start(box: UpdateBox?, channels: [Int64: ChannelBox]) {
        guard box != nil || !channels.isEmpty else { return }
        state = UpdatesState(box: box, channels: channels)
        savedBox = box
        savedChannels = state.channels
    }

    /// Takes no more input, cancels the fetches and the timer, and waits for the boxes' last save.
    func stop(in host: isolated any UpdatesHost) async {
        stopped = true
        fetchTask?.cancel()
        for task in channelFetches.values { task.cancel() }
        gapTimer?.task.cancel()
        while let save = boxSave {
            boxSave = nil
            await save.value
        }
    }

    // MARK: Input

    /// The home DC is ready again: what was missed is asked for (core.telegram.org/api/updates#recovering-gaps).
    func homeReady(in host: isolated any UpdatesHost) {
        guard follows, !signedOut, !stopped else { return }
        perform(state.catchUp(), in: host)
    }

    /// Updates a DC pushed.
    func receive(_ updates: Api.Updates, in host: isolated any UpdatesHost) {
        guard !stopped else { return }
        guard follows else { return host.deliver(updates) }
        perform(state.receive(updates, now: elapsed()), in: host)
    }

    /// What a call's result tells the sequence: `Api.Updates` go through it like pushed ones (and on to the host),
    /// `messages.affected*` move pts, a sign-in starts it afresh (the box may be another account's) and a log-out
    /// ends it.
    func noteResult<T>(_ result: T, of request: FunctionDescription, in host: isolated any UpdatesHost) {
        guard !stopped else { return }
        guard follows else {
            if let updates = result as? Api.Updates { host.deliver(updates) }
            return
        }
        let now = elapsed()
        let affected: (pts: Int32, count: Int32)
        switch result {
            case let updates as Api.Updates:
                return perform(state.receive(updates, now: now), in: host)
            case let messages as Api.messages.AffectedMessages:
                guard case .affectedMessages(let a) = messages else { return }
                affected = (a.pts, a.ptsCount)
            case let history as Api.messages.AffectedHistory:
                guard case .affectedHistory(let a) = history else { return }
                affected = (a.pts, a.ptsCount)
            case let found as Api.messages.AffectedFoundMessages:
                guard case .affectedFoundMessages(let a) = found else { return }
                affected = (a.pts, a.ptsCount)
            case let authorization as Api.auth.Authorization:
                guard case .authorization = authorization else { return }
                signedOut = false
                restart()
                return perform(state.catchUp(), in: host)
            case let token as Api.auth.LoginToken:
                guard case .loginTokenSuccess = token else { return }
                signedOut = false
                restart()
                return perform(state.catchUp(), in: host)
            case is Api.auth.LoggedOut:
                signedOut = true
                restart()
                return perform([], in: host)
            default:
                return
        }
        // The pts of the box the call acted on: its channel's, or the common one.
        perform(state.receive(pts: affected.pts, ptsCount: affected.count,
                              channelID: TelegramClient.channelID(of: request), now: now), in: host)
    }

    // MARK: Carrying out

    private func restart() {
        state = UpdatesState()
        generation += 1
        fetchTask?.cancel()
        fetchTask = nil
        for task in channelFetches.values { task.cancel() }
        channelFetches.removeAll()
    }

    /// Seconds since the driver was made, on the monotonic clock.
    private func elapsed() -> Double {
        (ContinuousClock.now - started) / .seconds(1)
    }

    /// Carries out what the sequence asks: hands out, fetches, and keeps the gap timer, the saved boxes and the
    /// host's reported state in step.
    private func perform(_ actions: [UpdatesAction], in host: isolated any UpdatesHost) {
        for action in actions {
            switch action {
                case .deliver(let updates):
                    host.deliver(updates)
                case .getState:
                    fetch(in: host) { .state(try await $0.invoke(Api.functions.updates.getState(), timeout: nil)) }
                case .getDifference(let box):
                    fetch(in: host) { .difference(try await $0.invoke(Api.functions.updates.getDifference(
                        pts: box.pts, date: box.date, qts: box.qts), timeout: nil)) }
                case .differenceTooLong(let pts):
                    logger.warning("updates: the difference is too long; pts moved to \(pts), refetch what is shown")
                case .getChannelDifference(let id, let hash, let pts):
                    fetchChannel(id, accessHash: hash, pts: pts, in: host)
                case .channelDifferenceTooLong(let id, let pts):
                    let moved = pts.map(String.init) ?? "?"
                    logger.warning(
                        "updates: channel \(id)'s difference is too long; its pts moved to \(moved), refetch its history")
            }
        }
        armGapTimer(in: host)
        saveBox(in: host)
        host.reportState()
    }

    private enum Fetched: Sendable {
        case state(Api.updates.State)
        case difference(Api.updates.Difference)
    }

    private func fetch(in host: isolated any UpdatesHost,
                       _ call: @escaping @Sendable (any UpdatesHost) async throws -> Fetched) {
        let generation = generation
        fetchTask = Self.spawn(on: taskExecutor, for: host) { host in
            do {
                let answer = try await call(host)
                await Self.fetched(answer, generation: generation, in: host)
            } catch {
                await Self.fetchFailed(error, generation: generation, in: host)
            }
        }
    }

    private static func fetched(_ answer: Fetched, generation: Int, in host: isolated any UpdatesHost) {
        let driver = host.updatesDriver
        guard !driver.stopped, generation == driver.generation else { return }
        switch answer {
            case .state(let state): driver.perform(driver.state.receiveState(state, now: driver.elapsed()), in: host)
            case .difference(let difference):
                driver.perform(driver.state.receiveDifference(difference, now: driver.elapsed()), in: host)
        }
    }

    private static func fetchFailed(_ error: any Error, generation: Int, in host: isolated any UpdatesHost) {
        let driver = host.updatesDriver
        guard !driver.stopped, generation == driver.generation else { return }
        if case MTProtoClientError.rpc(let rpc) = error, rpc.code == 401 {
            // Not signed in: nothing to catch up with until a sign-in.
            driver.signedOut = true
        } else {
            driver.logger.warning("updates: fetching missed updates failed: \(error)")
        }
        driver.perform(driver.state.fetchFailed(now: driver.elapsed()), in: host)
        if driver.signedOut { driver.cancelGapTimer() }
    }

    private func fetchChannel(_ id: Int64, accessHash: Int64, pts: Int32, in host: isolated any UpdatesHost) {
        let generation = generation
        channelFetches[id] = Self.spawn(on: taskExecutor, for: host) { host in
            do {
                let answer = try await host.invoke(Api.functions.updates.getChannelDifference(
                    channel: .inputChannel(.init(channelId: id, accessHash: accessHash)),
                    filter: .channelMessagesFilterEmpty, pts: pts, limit: TelegramClient.channelDifferenceLimit),
                    timeout: nil)
                await Self.channelFetched(answer, id: id, generation: generation, in: host)
            } catch {
                await Self.channelFetchFailed(error, id: id, generation: generation, in: host)
            }
        }
    }

    private static func channelFetched(_ answer: Api.updates.ChannelDifference, id: Int64, generation: Int,
                                       in host: isolated any UpdatesHost) {
        let driver = host.updatesDriver
        guard !driver.stopped, generation == driver.generation else { return }
        driver.channelFetches[id] = nil
        driver.perform(driver.state.receiveChannelDifference(answer, channelID: id, now: driver.elapsed()), in: host)
    }

    /// A `CHANNEL_…` error (`CHANNEL_PRIVATE`: the account left or was removed; `CHANNEL_INVALID`) ends following
    /// that channel; any other failure is retried after a wait.
    private static func channelFetchFailed(_ error: any Error, id: Int64, generation: Int,
                                           in host: isolated any UpdatesHost) {
        let driver = host.updatesDriver
        guard !driver.stopped, generation == driver.generation else { return }
        driver.channelFetches[id] = nil
        var permanent = false
        if case MTProtoClientError.rpc(let rpc) = error {
            permanent = rpc.message.hasPrefix("CHANNEL_")
            if rpc.code == 401 { driver.signedOut = true }
        }
        let outcome = permanent ? "no longer following it" : "asking again later"
        driver.logger.warning("updates: fetching channel \(id)'s missed updates failed: \(error); \(outcome)")
        driver.perform(driver.state.channelFetchFailed(channelID: id, permanent: permanent, now: driver.elapsed()),
                       in: host)
        if driver.signedOut { driver.cancelGapTimer() }
    }

    /// A task on the client's executor that runs `body` with the host (after `wait` seconds, when given). The host
    /// is held weakly until `body` starts unless `holding`: a client let go of does not wait for its fetches.
    private static func spawn(on executor: EventLoopTaskExecutor, for host: any UpdatesHost, after wait: Double? = nil,
                              holding: Bool = false,
                              _ body: @escaping @Sendable (any UpdatesHost) async -> Void) -> Task<Void, Never> {
        Task(executorPreference: executor) { [weak host, held = holding ? host : nil] in
            if let wait {
                do { try await Task.sleep(for: .seconds(wait)) } catch { return }
            }
            guard let host = held ?? host else { return }
            await body(host)
        }
    }

    // MARK: The gap timer

    /// One timer for the open gap's deadline.
    private func armGapTimer(in host: isolated any UpdatesHost) {
        guard !signedOut, let deadline = state.gapDeadline else { return cancelGapTimer() }
        if gapTimer?.deadline == deadline { return }
        gapTimer?.task.cancel()
        let wait = max(0, deadline - elapsed())
        gapTimer = (Self.spawn(on: taskExecutor, for: host, after: wait) { host in
            await Self.gapTimerFired(deadline, in: host)
        }, deadline)
    }

    private func cancelGapTimer() {
        gapTimer?.task.cancel()
        gapTimer = nil
    }

    private static func gapTimerFired(_ deadline: Double, in host: isolated any UpdatesHost) {
        let driver = host.updatesDriver
        guard driver.gapTimer?.deadline == deadline, !driver.stopped else { return }
        driver.gapTimer = nil
        driver.perform(driver.state.tick(now: max(driver.elapsed(), deadline)), in: host)
    }

    // MARK: Saving

    /// Saves the boxes when they moved, one save at a time (the newest boxes win); no box (logged out) is saved as
    /// none.
    private func saveBox(in host: isolated any UpdatesHost) {
        let box = state.box, channels = state.channels
        let boxMoved = box != savedBox, channelsMoved = channels != savedChannels
        guard boxSave == nil, boxMoved || channelsMoved, let store else { return }
        savedBox = box
        savedChannels = channels
        // The host is held to the end, so a save that follows this one is not lost with it.
        boxSave = Self.spawn(on: taskExecutor, for: host, holding: true) { [logger] host in
            do {
                try await store.save((boxMoved ? [.updateBox(box)] : []) + (channelsMoved ? [.channelBoxes(channels)] : []))
            } catch {
                logger.warning("updates: saving the box failed: \(error)")
            }
            await Self.boxSaved(in: host)
        }
    }

    private static func boxSaved(in host: isolated any UpdatesHost) {
        let driver = host.updatesDriver
        driver.boxSave = nil
        driver.saveBox(in: host)
    }
}
