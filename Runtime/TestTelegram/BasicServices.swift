// The services every client calls right after connecting, answered as Telegram answers a fresh, logged-out client:
// `help.getConfig` listing this DC, `help.getNearestDc`, `help.getAppConfig`, the `langpack.*` calls (empty packs,
// which Telegram allows), and `updates.getState`. Login, messages and files register into the same `RPCHandlers`.
import MTProto
import MTProtoServer
import TLRuntime
import TelegramApi

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
        handlers.register("help.getConfig") { call in serialized(config(for: call)) }
        handlers.register("help.getNearestDc") { call in
            serialized(Api.NearestDc.nearestDc(.init(country: "ZZ", thisDc: call.endpoint.dcID,
                                                     nearestDc: call.endpoint.dcID)))
        }
        handlers.register("help.getAppConfig") { _ in
            serialized(Api.help.AppConfig.appConfig(.init(hash: 0, config: .jsonObject(.init(value: [])))))
        }
        handlers.register("langpack.getLangPack") { call in emptyLangPack(call) }
        handlers.register("langpack.getDifference") { call in emptyLangPack(call) }
        // Vector<LangPackString> and Vector<LangPackLanguage>: empty.
        handlers.register("langpack.getStrings") { _ in emptyVector() }
        handlers.register("langpack.getLanguages") { _ in emptyVector() }
        // No key is signed in until login exists: Telegram answers calls about the user this way, and clients
        // (Telethon's get_me after connect) read it as "logged out".
        for method in ["users.getUsers", "users.getFullUser"] {
            handlers.register(method) { _ throws(RPCError) in throw RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED") }
        }
        handlers.register("updates.getState") { call in
            serialized(Api.updates.State.state(.init(pts: 1, qts: 0, date: Int32(clamping: Int64(call.now)), seq: 0,
                                                     unreadCount: 0)))
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

    static func emptyLangPack(_ call: RPCCall) -> [UInt8] {
        var code = "en"
        if case .string(let value)? = call.request["lang_code"] { code = value }
        return serialized(Api.LangPackDifference.langPackDifference(.init(langCode: code, fromVersion: 0, version: 0,
                                                                          strings: [])))
    }

    static func emptyVector() -> [UInt8] {
        let buffer = Buffer()
        buffer.appendVectorHeader(count: 0, boxed: true)
        return buffer.bytes
    }

    /// A boxed value's wire bytes.
    public static func serialized(_ value: some TLSerializable) -> [UInt8] {
        value.boxedBytes
    }
}
