// libFuzzer target: the MTProto HTTP transport's request and response parsers (Fuzz/Properties/HTTPTransport.swift).
import FuzzSupport

runFuzzer { check("FuzzHTTPTransport", input($0, $1)) }
