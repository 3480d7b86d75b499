// libFuzzer target: the full framing decoder (length, seqno, CRC32), both roles: split-independent, re-encodes to the
// same events (Fuzz/Properties/Transport.swift).
import FuzzSupport

runFuzzer { check("FuzzFull", input($0, $1)) }
