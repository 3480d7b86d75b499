// libFuzzer target: the Api registry. Parse, re-serialize, parse again; the two values and the two byte strings
// must agree (Fuzz/Properties/Registry.swift).
import FuzzSupport

runFuzzer { check("FuzzApi", input($0, $1)) }
