// libFuzzer target: the SecretApi8 registry. Parse, re-serialize, parse again; the two values and the two byte strings
// must agree (Fuzz/Properties/Registry.swift).
import FuzzSupport

runFuzzer { check("FuzzSecretApi8", input($0, $1)) }
