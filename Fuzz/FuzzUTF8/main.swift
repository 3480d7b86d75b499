// libFuzzer target: TLRuntime's UTF-8 validator against the standard library's, and TL strings read through it
// against `String(decoding:)` (Fuzz/Properties/UTF8Target.swift).
import FuzzSupport

runFuzzer { check("FuzzUTF8", input($0, $1)) }
