// libFuzzer target: obfuscated2 on the server side: raw headers and streams, and valid headers over fuzzed streams that
// must decode as the plain framing does (Fuzz/Properties/Transport.swift).
import FuzzSupport

runFuzzer { check("FuzzObfuscated2", input($0, $1)) }
