// libFuzzer target: the client's fake-TLS ServerHello parse and the records after it, with the HMAC recomputed
// (Fuzz/Properties/Transport.swift).
import FuzzSupport

runFuzzer { check("FuzzFakeTLSServerHello", input($0, $1)) }
