// libFuzzer target: the MT registry. Parse, re-serialize, parse again; the two values and the two byte strings
// must agree (Fuzz/Properties/Registry.swift).
import FuzzSupport

runFuzzer { check("FuzzMT", input($0, $1)) }
