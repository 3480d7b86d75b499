#!/usr/bin/env python3
"""Two builds of our client against one mtserver: the pipelined call rate and the client process's own CPU per call,
start-up, key exchange and connection subtracted. Each build runs `mtcall --repeat` with N and with 2N calls
(`help.getNearestDc`, 100 in flight on one connection); CPU per call is the difference of the two runs' user+system
time (from the OS, getrusage of the finished child) divided by N. Builds alternate within a round, and which goes
first alternates between rounds, so a drift in the machine's speed reaches both. Prints each round and the
min / median / max of B/A for CPU per call and for the rate.

With --callgrind each mtcall runs under valgrind's callgrind and the figure is instructions per call (the two runs'
difference over N, every thread counted), which a loaded machine does not move: the way to compare two builds when
other work shares the cores. valgrind needs binaries without DWARF (build with -Xswiftc -gnone -Xcc -g0); the rate
under callgrind means nothing and is not printed.

Usage (from the repository root; build each tree in release first: swift build -c release --product mtcall):
  python3 Benchmarks/client_cpu_vs_build.py --mtserver .build/release/mtserver \\
      --a OLD_TREE/.build/release/mtcall --b .build/release/mtcall [--calls 20000] [--rounds 5] [--callgrind]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from mtserver_process import children_cpu, running_mtserver


def run(mtcall, port, keyfile, calls, callgrind=None):
    """One mtcall run of `calls` pipelined calls after a first one: (CPU seconds of the process, or with `callgrind`
    (a scratch folder) the instructions it executed; calls/s it printed)."""
    command = [mtcall, "--server", f"127.0.0.1:{port}", "--rsa-key", keyfile, "--repeat", str(calls + 1),
               "help.getNearestDc"]
    out = None
    if callgrind is not None:
        out = os.path.join(callgrind, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-line=no", *command]
    before = children_cpu()
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    cpu = children_cpu() - before
    match = re.search(r"([0-9.]+) calls/s", done.stderr)
    if done.returncode != 0 or not match:
        raise SystemExit(f"{mtcall} failed: {done.stderr.strip()[-2000:]}")
    if out is not None:
        with open(out) as profile:
            totals = re.search(r"^(?:totals|summary): ([0-9]+)", profile.read(), re.MULTILINE)
        if not totals:
            raise SystemExit(f"no instruction total in {out}")
        return int(totals.group(1)), float(match.group(1))
    return cpu, float(match.group(1))


def measure(mtcall, port, keyfile, calls, callgrind=None):
    """CPU µs (or instructions) per call (2N run less N run, over N) and the 2N run's rate."""
    cost_n, _ = run(mtcall, port, keyfile, calls, callgrind)
    cost_2n, rate = run(mtcall, port, keyfile, 2 * calls, callgrind)
    return (cost_2n - cost_n) / calls * (1 if callgrind is not None else 1e6), rate


def spread(values):
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mtserver", required=True, help="the one server both builds call (the mtserver binary)")
    parser.add_argument("--a", required=True, help="mtcall of the first build (the baseline)")
    parser.add_argument("--b", required=True, help="mtcall of the second build")
    parser.add_argument("--calls", type=int, default=20000, help="N: each build runs N and 2N calls a round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true", help="instructions per call under callgrind, not CPU")
    args = parser.parse_args()
    cpu_ratios, rate_ratios = [], []
    with tempfile.TemporaryDirectory() as workdir, \
            running_mtserver(os.path.dirname(os.path.abspath(args.mtserver)), workdir) as (ready, keyfile):
        run(args.a, ready["port"], keyfile, 100)  # warm-up: page cache, the server's first key
        for round in range(args.rounds):
            order = ["a", "b"] if round % 2 == 0 else ["b", "a"]
            results = {name: measure(getattr(args, name), ready["port"], keyfile, args.calls,
                                     workdir if args.callgrind else None) for name in order}
            (cpu_a, rate_a), (cpu_b, rate_b) = results["a"], results["b"]
            cpu_ratios.append(cpu_b / cpu_a)
            rate_ratios.append(rate_b / rate_a)
            if args.callgrind:
                print(f"round {round + 1} ({' then '.join(order)}): instructions per call A {cpu_a:,.0f}, "
                      f"B {cpu_b:,.0f} (B/A {cpu_b / cpu_a:.3f})", flush=True)
            else:
                print(f"round {round + 1} ({' then '.join(order)}): CPU per call A {cpu_a:.2f} µs, B {cpu_b:.2f} µs "
                      f"(B/A {cpu_b / cpu_a:.3f}); rate A {rate_a:,.0f}, B {rate_b:,.0f} calls/s "
                      f"(B/A {rate_b / rate_a:.3f})", flush=True)
    print(f"B/A {'instructions' if args.callgrind else 'CPU'} per call, min / median / max: {spread(cpu_ratios)}")
    if not args.callgrind:
        print(f"B/A call rate, min / median / max: {spread(rate_ratios)}")


if __name__ == "__main__":
    sys.exit(main())
