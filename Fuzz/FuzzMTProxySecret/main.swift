// libFuzzer target: MTProxy secret parsing from text and bytes; a parsed secret survives its hex and byte forms
// (Fuzz/Properties/Transport.swift).
import FuzzSupport

runFuzzer { check("FuzzMTProxySecret", input($0, $1)) }
