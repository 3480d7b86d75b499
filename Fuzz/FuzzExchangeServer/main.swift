// libFuzzer target: the auth-key exchange's server role, fed the client's requests rewritten by the fuzzer; no trap,
// bounded, and a client key is the server's too (Fuzz/Properties/Exchange.swift).
import FuzzSupport

runFuzzer { check("FuzzExchangeServer", input($0, $1)) }
