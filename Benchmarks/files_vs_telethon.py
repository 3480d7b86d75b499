#!/usr/bin/env python3
"""Upload and download throughput on one mtserver: our client (`mtcall upload` / `mtcall download`, release build,
8 parts in flight over 2 media connections) and Telethon 1.45 with cryptg (`upload_file` and `download_file` with
512 KiB parts, its largest: Telethon's own option, and faster than its default of 128 KiB for files up to 100 MB),
each moving the same file in the same run. Both sides time the transfer alone: mtcall reports the seconds its
`upload`/`download` call took (not the process's start, sign-in, `sendMedia` or the file's SHA-256), and Telethon's
calls are timed around `upload_file` and `download_file` (into memory, its fastest). Prints MB/s for both, best and
median of the rounds, and the ratios (the files issue expects ours at 10x or more); `--with-start` also prints ours
timed around the whole mtcall process.

Usage (from the repository root; needs .venv-interop with Telethon and cryptg):
  swift build -c release --product mtserver && swift build -c release --product mtcall
  .venv-interop/bin/python Benchmarks/files_vs_telethon.py [--megabytes 64] [--rounds 3] [--debug]
"""
import argparse
import asyncio
import hashlib
import json
import os
import statistics
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
    parser.add_argument("--with-start", action="store_true", help="also print ours timed with mtcall's start")
    parser.add_argument("--telethon-part-kb", type=int, default=512, help="Telethon's part_size_kb (default 512)")
    parser.add_argument("--parts-in-flight", type=int, default=8, help="mtcall's --parts-in-flight")
    parser.add_argument("--media-connections", type=int, default=2, help="mtcall's --media-connections")
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
            ours_up, ours_down, theirs_up, theirs_down, with_start_up, with_start_down = [], [], [], [], [], []
            ours_flags = ["--parts-in-flight", str(args.parts_in_flight),
                          "--media-connections", str(args.media_connections)]
            part_kb = args.telethon_part_kb
            try:
                for _ in range(args.rounds):
                    sent, elapsed = mtcall(binary, port, keyfile, session, "upload", path, "--to", "self", *ours_flags)
                    assert sent["sha256"] == digest
                    ours_up.append(size / sent["seconds"])
                    with_start_up.append(size / elapsed)
                    got, elapsed = mtcall(binary, port, keyfile, session, "download", json.dumps(sent),
                                          "--out", os.path.join(workdir, "ours.out"), *ours_flags)
                    assert got["sha256"] == digest, got
                    ours_down.append(size / got["seconds"])
                    with_start_down.append(size / elapsed)

                    started = time.monotonic()
                    uploaded = await telethon.upload_file(path, part_size_kb=part_kb)
                    theirs_up.append(size / (time.monotonic() - started))
                    message = await telethon.send_file("me", uploaded, force_document=True)
                    started = time.monotonic()
                    back = await telethon.download_file(message.document, file=bytes, part_size_kb=part_kb)
                    theirs_down.append(size / (time.monotonic() - started))
                    assert hashlib.sha256(back).hexdigest() == digest
            finally:
                await telethon.disconnect()
        finally:
            server.terminate()
            server.wait(10)
    mb = 1 << 20
    rate = lambda rates: f"best {max(rates) / mb:.1f}, median {statistics.median(rates) / mb:.1f} MB/s"
    for what, ours, theirs, started in (("upload", ours_up, theirs_up, with_start_up),
                                        ("download", ours_down, theirs_down, with_start_down)):
        print(f"{what}: ours {rate(ours)}; Telethon+cryptg ({part_kb} KiB parts) {rate(theirs)}; ratio best "
              f"{max(ours) / max(theirs):.1f}x, median {statistics.median(ours) / statistics.median(theirs):.1f}x")
        if args.with_start:
            print(f"  ours with mtcall's start and sign-in: {rate(started)}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
