// libFuzzer target: the auth-key exchange's client role, fed the server's answers rewritten by the fuzzer; no trap,
// bounded, and a client key is the server's too (Fuzz/Properties/Exchange.swift).
import FuzzSupport

runFuzzer { check("FuzzExchangeClient", input($0, $1)) }
