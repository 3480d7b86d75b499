// libFuzzer target: `tl encode` line handling: JSON text that encodes decodes to JSON that encodes to the same bytes
// (Fuzz/Properties/TLJSONTargets.swift).
import FuzzSupport

runFuzzer { check("FuzzTLEncode", input($0, $1)) }
