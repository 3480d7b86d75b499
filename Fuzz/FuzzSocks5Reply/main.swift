// libFuzzer target: a SOCKS5 proxy's replies to our handshake, whole and split (Fuzz/Properties/Proxy.swift).
import FuzzSupport

runFuzzer { check("FuzzSocks5Reply", input($0, $1)) }
