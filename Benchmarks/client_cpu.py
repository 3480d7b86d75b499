#!/usr/bin/env python3
"""What our client costs, read from the OS: the user + system CPU of the `mtcall` process (release build), against
one mtserver, with the CPU of a process that only starts, connects and makes one call subtracted (measured in the
same round), so what is left is the transfer's own. Rounds alternate the variants, so drift in the machine's load
falls on each alike; every figure is printed as min / median / max over the rounds.

`--part-sizes` compares download part sizes: a file of `--megabytes` is uploaded once, then downloaded with each part
size in turn (`mtcall download --part-size`), giving CPU milliseconds per MB and the download's own wall clock (the
seconds mtcall reports for the transfer alone).

Usage (from the repository root; needs .venv-interop for the same Python as the other scripts):
  swift build -c release --product mtserver && swift build -c release --product mtcall
  .venv-interop/bin/python Benchmarks/client_cpu.py [--megabytes 64] [--rounds 3] [--part-sizes 524288,1048576]
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from mtserver_process import build_dir, children_cpu, running_mtserver


class Client:
    """Runs mtcall against the server, one process at a time, and reads each one's CPU from the OS."""

    def __init__(self, binary, port, keyfile, session):
        self.argv = [os.path.join(binary, "mtcall"), "--server", f"127.0.0.1:{port}", "--rsa-key", keyfile,
                     "--session", session, "--timeout", "60"]

    def run(self, *arguments):
        """(the last JSON line printed, the process's CPU seconds, its wall-clock seconds)."""
        cpu = children_cpu()
        started = time.monotonic()
        done = subprocess.run([*self.argv, *arguments], capture_output=True, text=True, timeout=900)
        wall = time.monotonic() - started
        spent = children_cpu() - cpu
        if done.returncode != 0:
            raise SystemExit(f"mtcall {arguments[0]}: {done.stderr.strip()}")
        lines = done.stdout.strip().splitlines()
        return (json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None), spent, wall


def spread(values, scale=1.0, unit=""):
    values = [value * scale for value in values]
    return f"min {min(values):.2f}, median {statistics.median(values):.2f}, max {max(values):.2f}{unit}"


def part_sizes(client, args, workdir, data_path, digest):
    sizes = [int(size) for size in args.part_sizes.split(",")]
    sent, _, _ = client.run("upload", data_path, "--to", "self")
    assert sent["sha256"] == digest, sent
    megabytes = sent["size"] / (1 << 20)
    flags = ["--parts-in-flight", str(args.parts_in_flight), "--media-connections", str(args.media_connections)]
    cpu = {size: [] for size in sizes}
    wall = {size: [] for size in sizes}
    for round_number in range(args.rounds):
        # Each round starts with a different size, so neither always runs first.
        order = sizes[round_number % len(sizes):] + sizes[:round_number % len(sizes)]
        for size in order:
            _, baseline, _ = client.run("help.getNearestDc")
            got, spent, _ = client.run("download", json.dumps(sent), "--out", os.path.join(workdir, "out.bin"),
                                       "--part-size", str(size), *flags)
            assert got["sha256"] == digest, got
            cpu[size].append((spent - baseline) / megabytes)
            wall[size].append(got["seconds"])
    print(f"download of {megabytes:.0f} MB, {args.parts_in_flight} parts in flight over {args.media_connections} "
          f"media connections, {args.rounds} rounds:")
    for size in sizes:
        print(f"  {size >> 10:5d} KiB parts: client CPU {spread(cpu[size], 1000, ' ms/MB')}; "
              f"wall {spread(wall[size], 1, ' s')} ({spread([megabytes / s for s in wall[size]], 1, ' MB/s')})")
    if len(sizes) == 2:
        first, second = sizes
        ratios = [b / a for a, b in zip(cpu[first], cpu[second])]
        walls = [b / a for a, b in zip(wall[first], wall[second])]
        print(f"  {second >> 10} KiB ÷ {first >> 10} KiB, same round: CPU/MB {spread(ratios)}; wall {spread(walls)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--part-sizes", default="524288,1048576", help="download part sizes to compare, in bytes")
    parser.add_argument("--parts-in-flight", type=int, default=8, help="mtcall's --parts-in-flight")
    parser.add_argument("--media-connections", type=int, default=2, help="mtcall's --media-connections")
    parser.add_argument("--server-threads", type=int, help="mtserver's --threads (default: one per core)")
    parser.add_argument("--debug", action="store_true", help="use the debug build")
    parser.add_argument("--bin", help="the folder with mtserver and mtcall (default: swift build's)")
    args = parser.parse_args()
    binary = args.bin or build_dir("debug" if args.debug else "release")
    size = args.megabytes << 20
    with tempfile.TemporaryDirectory() as workdir, \
            running_mtserver(binary, workdir, max(512, 4 * args.megabytes), "9996620001:Bench::bench_user",
                             *(["--threads", str(args.server_threads)] if args.server_threads else [])) \
            as (ready, keyfile):
        data_path = os.path.join(workdir, "data.bin")
        data = os.urandom(size)
        with open(data_path, "wb") as handle:
            handle.write(data)
        digest = hashlib.sha256(data).hexdigest()
        client = Client(binary, ready["port"], keyfile, os.path.join(workdir, "ours.sqlite"))
        client.run("--phone", "9996620001", "--code", "22222", "help.getNearestDc")
        part_sizes(client, args, workdir, data_path, digest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
