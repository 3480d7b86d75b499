// libFuzzer target: the TL schema parser and checker (`tlgen lint`) on arbitrary text: no trap, every location inside the
// text (Fuzz/Properties/Schema.swift).
import FuzzSupport

runFuzzer { check("FuzzSchema", input($0, $1)) }
