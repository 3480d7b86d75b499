// libFuzzer target: the HTML parser and writer of TelegramFormatting: no trap on any markup, parsed entities
// in bounds, parse -> write -> parse exact, and what the writers write from any entities parses
// (Fuzz/Properties/FormattingTargets.swift).
import FuzzSupport

runFuzzer { check("FuzzHTML", input($0, $1)) }
