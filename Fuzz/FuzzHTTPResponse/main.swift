// libFuzzer target: HTTP response heads, parsed alone and as an HTTP CONNECT proxy's answer
// (Fuzz/Properties/Proxy.swift).
import FuzzSupport

runFuzzer { check("FuzzHTTPResponse", input($0, $1)) }
