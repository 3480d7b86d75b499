#!/usr/bin/env python3
"""Pipelined RPCs per second against one mtserver: our client (`mtcall --repeat`, release build) and Telethon 1.45,
each with 100 `help.getNearestDc` calls in flight on one connection, in the same run. Prints both rates and the
ratio (the client issue expects ours at 10x or more).

Usage (from the repository root; needs .venv-interop with Telethon):
  swift build -c release --product mtserver && swift build -c release --product mtcall
  .venv-interop/bin/python Benchmarks/client_vs_telethon.py [--calls 5000] [--rounds 3]
"""
import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from telethon import TelegramClient, functions
from telethon.crypto import rsa
from telethon.sessions import MemorySession


async def telethon_rate(port, calls):
    client = TelegramClient(MemorySession(), api_id=1, api_hash="0" * 32, timeout=30)
    client.session.set_dc(2, "127.0.0.1", port)
    await asyncio.wait_for(client.connect(), 30)
    try:
        await client(functions.help.GetNearestDcRequest())
        window = asyncio.Semaphore(100)

        async def one():
            async with window:
                await client(functions.help.GetNearestDcRequest())

        started = time.monotonic()
        await asyncio.wait_for(asyncio.gather(*(one() for _ in range(calls))), 600)
        return calls / (time.monotonic() - started)
    finally:
        await client.disconnect()


def our_rate(mtcall, port, keyfile, calls):
    done = subprocess.run([mtcall, "--server", f"127.0.0.1:{port}", "--rsa-key", keyfile, "--repeat", str(calls + 1),
                           "help.getNearestDc"], capture_output=True, text=True, timeout=600)
    match = re.search(r"([0-9.]+) calls/s", done.stderr)
    if done.returncode != 0 or not match:
        raise SystemExit(f"mtcall failed: {done.stderr.strip()}")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    server = subprocess.Popen([os.path.join(args.bin, "mtserver"), "--generate-key", "--timeout", "900",
                               "--log-level", "error"], stdout=subprocess.PIPE, text=True)
    ready = json.loads(server.stdout.readline())
    try:
        rsa.add_key(ready["public_key"], old=False)
        with tempfile.NamedTemporaryFile("w", suffix=".pem") as keyfile:
            keyfile.write(ready["public_key"])
            keyfile.flush()
            for round in range(args.rounds):
                ours = our_rate(os.path.join(args.bin, "mtcall"), ready["port"], keyfile.name, args.calls)
                theirs = asyncio.run(telethon_rate(ready["port"], args.calls))
                print(f"round {round + 1}: ours {ours:,.0f} calls/s, Telethon {theirs:,.0f} calls/s, "
                      f"ratio {ours / theirs:.1f}x", flush=True)
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    sys.exit(main())
