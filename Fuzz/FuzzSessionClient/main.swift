// libFuzzer target: a client-role MTProto session fed raw frames, valid envelopes around fuzzed bodies and fuzzed
// plaintexts; its frames and events are checked (Fuzz/Properties/SessionTargets.swift).
import FuzzSupport

runFuzzer { check("FuzzSessionClient", input($0, $1)) }
