// libFuzzer target: the secret-chat engine's receive path for a ready chat, fed raw envelopes and fuzzed payloads
// under the chat key between real messages (Fuzz/Properties/SecretChatTarget.swift).
import FuzzSupport

runFuzzer { check("FuzzSecretChat", input($0, $1)) }
