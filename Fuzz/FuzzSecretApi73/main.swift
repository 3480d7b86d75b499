// libFuzzer target: the SecretApi73 registry. Parse, re-serialize, parse again; the two values and the two byte strings
// must agree (Fuzz/Properties/Registry.swift).
import FuzzSupport

runFuzzer { check("FuzzSecretApi73", input($0, $1)) }
