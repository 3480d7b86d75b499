// libFuzzer target: the proxy's fake-TLS ClientHello check and the records after it, with the HMAC recomputed so
// the checks behind it are reached (Fuzz/Properties/Transport.swift).
import FuzzSupport

runFuzzer { check("FuzzFakeTLSClientHello", input($0, $1)) }
