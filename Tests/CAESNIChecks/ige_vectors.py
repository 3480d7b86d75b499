#!/usr/bin/env python3
"""Prints the AES-IGE known-answer vectors of Fixtures/vectors (crypto_vectors.json's aes256_ige, and
known_answer_vectors.json's openssl_ige128) as `ige KEY IV PLAINTEXT CIPHERTEXT` lines, hex, for armv8_check.c."""
import json
import pathlib

root = pathlib.Path(__file__).resolve().parents[2] / "Fixtures" / "vectors"
vectors = json.loads((root / "crypto_vectors.json").read_text())["aes256_ige"]
vectors += json.loads((root / "known_answer_vectors.json").read_text())["vectors"]["openssl_ige128"]
for v in vectors:
    print("ige", *(v[name].lower() for name in ("key", "iv", "plaintext", "ciphertext")))
