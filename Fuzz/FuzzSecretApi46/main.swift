// libFuzzer target: the SecretApi46 registry. Parse, re-serialize, parse again; the two values and the two byte strings
// must agree (Fuzz/Properties/Registry.swift).
import FuzzSupport

runFuzzer { check("FuzzSecretApi46", input($0, $1)) }
