#!/usr/bin/env python3
"""Upload and download throughput on one mtserver: our client (`mtcall upload` / `mtcall download`, release build,
8 parts in flight over 2 media connections) and Telethon 1.45 with cryptg (`send_file`, `download_media`), each
moving the same 64 MB file in the same run. Prints MB/s for both and the ratios (the files issue expects ours at 10x
or more). Our times include mtcall's start and sign-in (it is a new process each time), so they understate it.

Usage (from the repository root; needs .venv-interop with Telethon and cryptg):
  swift build -c release --product mtserver --product mtcall
  .venv-interop/bin/python Benchmarks/files_vs_telethon.py [--megabytes 64] [--rounds 3] [--debug]
"""
import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import cryptg  # noqa: F401  Telethon's native AES: without it the comparison would flatter us
from telethon import TelegramClient
from telethon.crypto import rsa
from telethon.sessions import MemorySession


def build_dir(configuration):
    return subprocess.run(["swift", "build", "-c", configuration, "--show-bin-path"], capture_output=True, text=True,
                          check=True).stdout.strip()


async def telethon_client(port):
    client = TelegramClient(MemorySession(), api_id=1, api_hash="0" * 32, timeout=60)
    client.session.set_dc(2, "127.0.0.1", port)
    await asyncio.wait_for(client.connect(), 30)
    await client.send_code_request("9996620001")
    await client.sign_in("9996620001", "22222")
    return client


def mtcall(binary, port, keyfile, session, *arguments):
    argv = [os.path.join(binary, "mtcall"), "--server", f"127.0.0.1:{port}", "--rsa-key", keyfile,
            "--session", session, "--timeout", "60", *arguments]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"mtcall {arguments[0]}: {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1]), elapsed


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--debug", action="store_true", help="use the debug build")
    parser.add_argument("--bin", help="the folder with mtserver and mtcall (default: swift build's)")
    args = parser.parse_args()
    binary = args.bin or build_dir("debug" if args.debug else "release")
    size = args.megabytes << 20
    with tempfile.TemporaryDirectory() as workdir:
        server = subprocess.Popen([os.path.join(binary, "mtserver"), "--generate-key", "--timeout", "1800",
                                   "--file-limit-mb", str(max(512, 8 * args.megabytes * args.rounds)),
                                   "--user", "9996620001:Bench::bench_user", "--log-level", "error"],
                                  stdout=subprocess.PIPE, text=True)
        try:
            ready = json.loads(server.stdout.readline())
            port = ready["port"]
            keyfile = os.path.join(workdir, "key.pem")
            with open(keyfile, "w") as handle:
                handle.write(ready["public_key"])
            rsa.add_key(ready["public_key"], old=False)
            path = os.path.join(workdir, "data.bin")
            data = os.urandom(size)
            with open(path, "wb") as handle:
                handle.write(data)
            digest = hashlib.sha256(data).hexdigest()
            session = os.path.join(workdir, "ours.sqlite")
            mtcall(binary, port, keyfile, session, "--phone", "9996620001", "--code", "22222", "help.getNearestDc")
            telethon = await telethon_client(port)
            ours_up, ours_down, theirs_up, theirs_down = [], [], [], []
            try:
                for _ in range(args.rounds):
                    sent, elapsed = mtcall(binary, port, keyfile, session, "upload", path, "--to", "self")
                    assert sent["sha256"] == digest
                    ours_up.append(size / elapsed)
                    got, elapsed = mtcall(binary, port, keyfile, session, "download", json.dumps(sent),
                                          "--out", os.path.join(workdir, "ours.out"))
                    assert got["sha256"] == digest, got
                    ours_down.append(size / elapsed)

                    started = time.monotonic()
                    message = await telethon.send_file("me", path, force_document=True)
                    theirs_up.append(size / (time.monotonic() - started))
                    started = time.monotonic()
                    back = await telethon.download_media(message, file=bytes)
                    theirs_down.append(size / (time.monotonic() - started))
                    assert hashlib.sha256(back).hexdigest() == digest
            finally:
                await telethon.disconnect()
        finally:
            server.terminate()
            server.wait(10)
    mb = 1 << 20
    best = lambda rates: max(rates) / mb
    print(f"upload:   ours {best(ours_up):.1f} MB/s, Telethon+cryptg {best(theirs_up):.1f} MB/s, "
          f"ratio {best(ours_up) / best(theirs_up):.1f}x")
    print(f"download: ours {best(ours_down):.1f} MB/s, Telethon+cryptg {best(theirs_down):.1f} MB/s, "
          f"ratio {best(ours_down) / best(theirs_down):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
