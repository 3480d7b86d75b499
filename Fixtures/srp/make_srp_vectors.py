#!/usr/bin/env python3
"""Writes srp_vectors.json: known answers for Telegram's cloud-password SRP
(passwordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow, core.telegram.org/api/srp), computed by
Telethon's telethon/password.py (Telethon 1.45) with its randomness fixed.

x comes from password.compute_hash, v from password.compute_digest, A and M1 from password.compute_check with
os.urandom replaced by the vector's `a`; k and u are the spec's H(p | g) and H(A | B) with Telethon's helpers.
The server side (b, srp_B = k*v + g^b mod p) is the spec's formula: Telethon has no server.

Run: .venv-interop/bin/python Fixtures/srp/make_srp_vectors.py > Fixtures/srp/srp_vectors.json
"""
import hashlib
import json
import sys

import telethon
from telethon import password as tpw
from telethon.tl import types

TELEGRAM_PRIME = bytes.fromhex(
    "c71caeb9c6b1c9048e6c522f70f13f73980d40238e3e21c14934d037563d930f48198a0aa7c14058229493d22530f4dbfa336f6e0ac92513"
    "9543aed44cce7c3720fd51f69458705ac68cd4fe6b6b13abdc9746512969328454f18faf8c595f642477fe96bb2a941d5bcd1d4ac8cc4988"
    "0708fa9b378e3c4f3a9060bee67cf9a4a4a695811051907e162753b56b0f6b410dba74d8a84b2a14b3144e0ef1284754fd17ed950d5965b4"
    "b9dd46582db1178d169c6bc465b0d6ff9ca3928fef5b9ae4e418fc15e83ebea0f87fa9ff5eed70050ded2849f47bf959d956850ce929851f"
    "0d8115f635b105ee2e4e15d04b2454bf6f4fadf034b10403119cd8e3b92fcc5b")


def stream(label: str, n: int) -> bytes:
    """Deterministic bytes: SHA-512 in counter mode over a label."""
    out = b""
    counter = 0
    while len(out) < n:
        out += hashlib.sha512(f"{label}/{counter}".encode()).digest()
        counter += 1
    return out[:n]


def vector(index: int, password: str, g: int, salt1_len: int, short_b: bool) -> dict:
    p = int.from_bytes(TELEGRAM_PRIME, "big")
    salt1 = stream(f"salt1/{index}", salt1_len)
    salt2 = stream(f"salt2/{index}", 16)
    algo = types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
        salt1=salt1, salt2=salt2, g=g, p=TELEGRAM_PRIME)
    x = tpw.compute_hash(algo, password)
    v = tpw.compute_digest(algo, password)
    k = tpw.sha256(tpw.num_bytes_for_hash(TELEGRAM_PRIME), tpw.big_num_for_hash(g))
    kv = int.from_bytes(k, "big") * int.from_bytes(v, "big") % p
    attempt = 0
    while True:  # a b whose srp_B is 255 bytes when asked for, to cover padding
        b = stream(f"b/{index}/{attempt}", 256)
        B = (kv + pow(g, int.from_bytes(b, "big"), p)) % p
        if not short_b or B.bit_length() <= 2040:
            break
        attempt += 1
        if attempt > 10_000:
            raise SystemExit("no short srp_B found")
    srp_b = B.to_bytes((B.bit_length() + 7) // 8, "big")
    a = stream(f"a/{index}", 256)
    draws = [a]

    def fixed_urandom(n: int) -> bytes:
        if n != 256 or not draws:
            raise SystemExit("Telethon asked for unexpected randomness")
        return draws.pop()

    original = tpw.os.urandom
    tpw.os.urandom = fixed_urandom
    try:
        request = types.account.Password(
            new_algo=types.PasswordKdfAlgoUnknown(), new_secure_algo=types.SecurePasswordKdfAlgoUnknown(),
            secure_random=b"", has_password=True, current_algo=algo, srp_B=srp_b, srp_id=1000 + index)
        check = tpw.compute_check(request, password)
    finally:
        tpw.os.urandom = original
    u = tpw.sha256(check.A, tpw.num_bytes_for_hash(srp_b))
    return {
        "password": password, "salt1": salt1.hex(), "salt2": salt2.hex(), "g": g, "p": TELEGRAM_PRIME.hex(),
        "x": x.hex(), "v": v.hex(), "k": k.hex(), "b": b.hex(), "srp_B": srp_b.hex(), "srp_id": check.srp_id,
        "a": a.hex(), "u": u.hex(), "A": check.A.hex(), "M1": check.M1.hex(),
    }


def main() -> None:
    cases = [
        ("", 3, 40, False),
        ("password", 3, 40, False),
        ("correct horse battery staple", 4, 40, False),
        ("пароль 🔑 ключ", 3, 8, False),
        ("x" * 300, 4, 40, False),
        ("short B", 3, 40, True),
    ]
    out = {
        "about": "Telegram cloud-password SRP known answers computed by Telethon "
                 f"{telethon.__version__}'s telethon/password.py with fixed randomness; made by "
                 "Fixtures/srp/make_srp_vectors.py. Byte strings are big-endian hex; srp_B is minimal (it may be "
                 "shorter than 256 bytes), A is 256 bytes as Telethon sends it.",
        "vectors": [vector(i, *case) for i, case in enumerate(cases)],
    }
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
