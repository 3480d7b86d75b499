// libFuzzer target: the API's typed requests (TelegramApiServer) against the dynamic reader on the same bytes
// (Fuzz/Properties/TypedRequests.swift).
import FuzzSupport

runFuzzer { check("FuzzApiRequests", input($0, $1)) }
