// libFuzzer target: the intermediate framing decoder, both roles: split-independent, re-encodes to the same events
// (Fuzz/Properties/Transport.swift).
import FuzzSupport

runFuzzer { check("FuzzIntermediate", input($0, $1)) }
