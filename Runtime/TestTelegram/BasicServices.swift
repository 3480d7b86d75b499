// The services every client calls right after connecting, answered as Telegram answers a fresh, logged-out client:
// `help.getConfig` listing this DC, `help.getNearestDc`, `help.getAppConfig`, the `langpack.*` calls (empty packs,
// which Telegram allows), and `updates.getState`. Login, messages and files register into the same `RPCHandlers`.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

/// The in-memory test Telegram's API handlers.
public enum TestTelegram {
    /// Handlers decoding with `Api.registry`, with the basic services registered.
    public static func handlers() -> RPCHandlers {
        var handlers = RPCHandlers(registry: Api.registry)
        registerBasicServices(into: &handlers)
        return handlers
    }

    /// Registers the services a client calls on connect.
    public static func registerBasicServices(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.help.GetConfig.self) { call, _ in config(for: call) }
        handlers.on(Api.functions.help.GetNearestDc.self) { call, _ in
            .nearestDc(.init(country: "ZZ", thisDc: call.endpoint.dcID, nearestDc: call.endpoint.dcID))
        }
        handlers.on(Api.functions.help.GetAppConfig.self) { _, _ in
            .appConfig(.init(hash: 0, config: .jsonObject(.init(value: []))))
        }
        handlers.on(Api.functions.langpack.GetLangPack.self) { _, request in emptyLangPack(request.langCode) }
        handlers.on(Api.functions.langpack.GetDifference.self) { _, request in emptyLangPack(request.langCode) }
        // Vector<LangPackString> and Vector<LangPackLanguage>: empty.
        handlers.on(Api.functions.langpack.GetStrings.self) { _, _ in [] }
        handlers.on(Api.functions.langpack.GetLanguages.self) { _, _ in [] }
        // No key is signed in until login exists: Telegram answers calls about the user this way, and clients
        // (Telethon's get_me after connect) read it as "logged out".
        let loggedOut = RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")
        handlers.on(Api.functions.users.GetUsers.self) { _, _ throws(RPCError) in throw loggedOut }
        handlers.on(Api.functions.users.GetFullUser.self) { _, _ throws(RPCError) in throw loggedOut }
        handlers.on(Api.functions.updates.GetState.self) { call, _ in
            .state(.init(pts: 1, qts: 0, date: Int32(clamping: Int64(call.now)), seq: 0, unreadCount: 0))
        }
    }

    /// The cluster's configuration: an option per DC, limits as Telegram's production ones.
    static func config(for call: RPCCall, extraOptions: [Api.DcOption] = []) -> Api.Config {
        let now = Int32(clamping: Int64(call.now))
        let options = call.dcs.flatMap { dc in
            [Api.DcOption.dcOption(.init(id: dc.dcID, ipAddress: dc.host, port: Int32(clamping: dc.port)))]
                + (dc.ipv6Host.map {
                    [.dcOption(.init(ipv6: true, id: dc.dcID, ipAddress: $0, port: Int32(clamping: dc.port)))]
                } ?? [])
        } + extraOptions
        return .config(.init(
            date: now, expires: now &+ 3600, testMode: true, thisDc: call.endpoint.dcID, dcOptions: options,
            dcTxtDomainName: "localhost", chatSizeMax: 200, megagroupSizeMax: 200_000, forwardedCountMax: 100,
            onlineUpdatePeriodMs: 210_000, offlineBlurTimeoutMs: 5000, offlineIdleTimeoutMs: 30_000,
            onlineCloudTimeoutMs: 300_000, notifyCloudDelayMs: 30_000, notifyDefaultDelayMs: 1500,
            pushChatPeriodMs: 60_000, pushChatLimit: 2, editTimeLimit: 172_800, revokeTimeLimit: Int32.max,
            revokePmTimeLimit: Int32.max, ratingEDecay: 2_419_200, stickersRecentLimit: 200,
            channelsReadMediaPeriod: 604_800, callReceiveTimeoutMs: 20_000, callRingTimeoutMs: 90_000,
            callConnectTimeoutMs: 30_000, callPacketTimeoutMs: 10_000, meUrlPrefix: "https://t.me/",
            captionLengthMax: 1024, messageLengthMax: 4096, webfileDcId: call.endpoint.dcID))
    }

    static func emptyLangPack(_ code: String) -> Api.LangPackDifference {
        .langPackDifference(.init(langCode: code, fromVersion: 0, version: 0, strings: []))
    }

    /// A boxed value's wire bytes.
    public static func serialized(_ value: some TLSerializable) -> [UInt8] {
        value.boxedBytes
    }
}
