// libFuzzer target: the padded-intermediate framing decoder, both roles, padding kept or stripped: split-independent,
// re-encodes to the same events (Fuzz/Properties/Transport.swift).
import FuzzSupport

runFuzzer { check("FuzzPadded", input($0, $1)) }
