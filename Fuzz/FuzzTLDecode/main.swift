// libFuzzer target: `tl decode` line handling: bytes that parse become tl-json that reads back and encodes to the same bytes
// (Fuzz/Properties/TLJSONTargets.swift).
import FuzzSupport

runFuzzer { check("FuzzTLDecode", input($0, $1)) }
