#!/usr/bin/env python3
"""Two builds of our client against one mtserver: the pipelined call rate and the client process's own CPU per call,
start-up, key exchange and connection subtracted. Each build runs `mtcall --repeat` with N and with 2N calls
(`help.getNearestDc`, 100 in flight on one connection); CPU per call is the difference of the two runs' user+system
time (from the OS, getrusage of the finished child) divided by N. Builds alternate within a round, and which goes
first alternates between rounds, so a drift in the machine's speed reaches both. Prints each round and the
min / median / max of B/A for CPU per call and for the rate.

With --counts each mtcall runs under `perf stat` with uprobes on the runtime calls a pipelined call is made of
(malloc, swift_retain, swift_task_alloc, swift_task_switch, swift_task_create) and the figures are those calls per
RPC (the two runs' difference over N, every thread counted): counts a loaded machine does not move, the way to
compare two builds when other work shares the cores (valgrind 3.19 and 3.24 crash on mtcall, and this VM has no
hardware counters). It needs perf and root for the probes (`perf probe -x LIBRARY SYMBOL`, added here if missing);
the rate under probes means nothing and is not printed.

Usage (from the repository root; build each tree in release first: swift build -c release --product mtcall):
  python3 Benchmarks/client_cpu_vs_build.py --mtserver .build/release/mtserver \\
      --a OLD_TREE/.build/release/mtcall --b .build/release/mtcall [--calls 20000] [--rounds 5] [--counts]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from mtserver_process import children_cpu, running_mtserver


# The runtime calls --counts counts: (library, symbol).
PROBES = [("libc.so.6", "malloc"), ("libswiftCore.so", "swift_retain"), ("libswift_Concurrency.so", "swift_task_alloc"),
          ("libswift_Concurrency.so", "swift_task_switch"), ("libswift_Concurrency.so", "swift_task_create")]


def probe_events(mtcall):
    """The perf events of PROBES in the libraries `mtcall` loads, each probe added if it is not there yet."""
    libraries = dict(re.findall(r"^\s*(\S+) => (\S+)", subprocess.run(["ldd", mtcall], capture_output=True,
                                                                      text=True, check=True).stdout, re.MULTILINE))
    listed = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True).stdout
    events = []
    for library, symbol in PROBES:
        path = libraries.get(library)
        if path is None:
            raise SystemExit(f"{mtcall} does not load {library}")
        group = "probe_" + library.split(".so")[0].replace(".", "_").replace("-", "_")
        if f"{group}:{symbol} " not in listed:
            added = subprocess.run(["perf", "probe", "-x", path, symbol], capture_output=True, text=True)
            if added.returncode != 0:
                raise SystemExit(f"perf probe -x {path} {symbol}: {added.stderr.strip()}")
        events.append(f"{group}:{symbol}")
    return events


def run(mtcall, port, keyfile, calls, events=None):
    """One mtcall run of `calls` pipelined calls after a first one: (CPU seconds of the process, or with `events`
    a dict of how often each probed call ran; calls/s it printed)."""
    command = [mtcall, "--server", f"127.0.0.1:{port}", "--rsa-key", keyfile, "--repeat", str(calls + 1),
               "help.getNearestDc"]
    if events is not None:
        command = ["perf", "stat", "-x,", *[part for event in events for part in ("-e", event)], "--", *command]
    before = children_cpu()
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    cpu = children_cpu() - before
    match = re.search(r"([0-9.]+) calls/s", done.stderr)
    if done.returncode != 0 or not match:
        raise SystemExit(f"{mtcall} failed: {done.stderr.strip()[-2000:]}")
    if events is not None:
        counts = {}
        for line in done.stderr.splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2] in events and fields[0].isdigit():
                counts[fields[2].split(":")[1]] = int(fields[0])
        if len(counts) != len(events):
            raise SystemExit(f"perf stat counted {sorted(counts)} of {events}: {done.stderr.strip()[-1000:]}")
        return counts, float(match.group(1))
    return cpu, float(match.group(1))


def measure(mtcall, port, keyfile, calls, events=None):
    """CPU µs per call (or each probed call's count per call): the 2N run less the N run, over N; and the 2N run's
    rate."""
    cost_n, _ = run(mtcall, port, keyfile, calls, events)
    cost_2n, rate = run(mtcall, port, keyfile, 2 * calls, events)
    if events is not None:
        return {name: (cost_2n[name] - cost_n[name]) / calls for name in cost_n}, rate
    return (cost_2n - cost_n) / calls * 1e6, rate


def spread(values):
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mtserver", required=True, help="the one server both builds call (the mtserver binary)")
    parser.add_argument("--a", required=True, help="mtcall of the first build (the baseline)")
    parser.add_argument("--b", required=True, help="mtcall of the second build")
    parser.add_argument("--calls", type=int, default=20000, help="N: each build runs N and 2N calls a round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--counts", action="store_true",
                        help="runtime calls per RPC under perf uprobes, not CPU (needs perf and root)")
    args = parser.parse_args()
    events = probe_events(args.a) if args.counts else None
    cpu_ratios, rate_ratios = [], []
    count_ratios = {}
    with tempfile.TemporaryDirectory() as workdir, \
            running_mtserver(os.path.dirname(os.path.abspath(args.mtserver)), workdir) as (ready, keyfile):
        run(args.a, ready["port"], keyfile, 100)  # warm-up: page cache, the server's first key
        for round in range(args.rounds):
            order = ["a", "b"] if round % 2 == 0 else ["b", "a"]
            results = {name: measure(getattr(args, name), ready["port"], keyfile, args.calls, events)
                       for name in order}
            (cost_a, rate_a), (cost_b, rate_b) = results["a"], results["b"]
            if events is not None:
                for name in cost_a:
                    count_ratios.setdefault(name, []).append(cost_b[name] / cost_a[name])
                print(f"round {round + 1} ({' then '.join(order)}), per call A → B: " + ", ".join(
                    f"{name} {cost_a[name]:.2f} → {cost_b[name]:.2f}" for name in cost_a), flush=True)
                continue
            cpu_ratios.append(cost_b / cost_a)
            rate_ratios.append(rate_b / rate_a)
            print(f"round {round + 1} ({' then '.join(order)}): CPU per call A {cost_a:.2f} µs, B {cost_b:.2f} µs "
                  f"(B/A {cost_b / cost_a:.3f}); rate A {rate_a:,.0f}, B {rate_b:,.0f} calls/s "
                  f"(B/A {rate_b / rate_a:.3f})", flush=True)
    if events is not None:
        for name, ratios in count_ratios.items():
            print(f"B/A {name} per call, min / median / max: {spread(ratios)}")
        return
    print(f"B/A CPU per call, min / median / max: {spread(cpu_ratios)}")
    print(f"B/A call rate, min / median / max: {spread(rate_ratios)}")


if __name__ == "__main__":
    sys.exit(main())
