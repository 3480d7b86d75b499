#!/usr/bin/env python3
"""Peak memory of our client downloading a large file to disk: `mtcall upload` puts a file of --megabytes (1024 by
default) on mtserver, then `mtcall download --out` fetches it in a process of its own, whose peak resident set size
(`wait4`'s ru_maxrss) is printed with the bytes' SHA-256 check. The files issue expects under 64 MB for 1 GB:
memory is bounded by the parts in flight, not by the file.

Usage (from the repository root):
  swift build -c release --product mtserver && swift build -c release --product mtcall
  python3 Benchmarks/download_memory.py [--megabytes 1024] [--debug]
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

from mtserver_process import build_dir, running_mtserver


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=int, default=1024)
    parser.add_argument("--debug", action="store_true", help="use the debug build")
    parser.add_argument("--bin", help="the folder with mtserver and mtcall (default: swift build's)")
    args = parser.parse_args()
    configuration = "debug" if args.debug else "release"
    binary = args.bin or build_dir(configuration)
    size = args.megabytes << 20
    with tempfile.TemporaryDirectory() as workdir, \
            running_mtserver(binary, workdir, args.megabytes + 64, "9996620001:Mem::mem_user") as (ready, keyfile):
        path = os.path.join(workdir, "big.bin")
        digest = hashlib.sha256()
        with open(path, "wb") as handle:
            for _ in range(args.megabytes):
                block = os.urandom(1 << 20)
                digest.update(block)
                handle.write(block)
        base = [os.path.join(binary, "mtcall"), "--server", f"127.0.0.1:{ready['port']}", "--rsa-key", keyfile,
                "--session", os.path.join(workdir, "s.sqlite"), "--timeout", "120"]
        started = time.monotonic()
        done = subprocess.run(base + ["--phone", "9996620001", "--code", "22222", "upload", path, "--to", "self"],
                              capture_output=True, text=True, timeout=3600, check=True)
        uploaded = time.monotonic() - started
        line = done.stdout.strip().splitlines()[-1]
        assert json.loads(line)["sha256"] == digest.hexdigest()
        os.remove(path)
        out = os.path.join(workdir, "out.bin")
        started = time.monotonic()
        child = subprocess.Popen(base + ["download", line, "--out", out], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        output = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        downloaded = time.monotonic() - started
        if status != 0:
            raise SystemExit(f"mtcall download: status {status}")
        got = json.loads(output.strip().splitlines()[-1])
        assert got["sha256"] == digest.hexdigest() and got["size"] == size, got
        print(f"{args.megabytes} MB ({configuration}): upload {args.megabytes / uploaded:.1f} MB/s, download "
              f"{args.megabytes / downloaded:.1f} MB/s (with the SHA-256 of the written file), SHA-256 equal; "
              f"peak RSS of mtcall download: {usage.ru_maxrss / 1024:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
