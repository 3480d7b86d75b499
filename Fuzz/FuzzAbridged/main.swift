// libFuzzer target: the abridged framing decoder, both roles: split-independent, re-encodes to the same events
// (Fuzz/Properties/Transport.swift).
import FuzzSupport

runFuzzer { check("FuzzAbridged", input($0, $1)) }
