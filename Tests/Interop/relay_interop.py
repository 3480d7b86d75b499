#!/usr/bin/env python3
"""Pipelined calls through a hostile link: our client (`mtcall --repeat N help.getNearestDc`, 100 in flight) and
Telethon 1.45 with cryptg making the same N calls, 100 in flight, through `mtrelay` in front of one `mtserver`.

The relay cuts every connection with a reset after 4 to 64 KiB (both directions counted, so the cut lands at any
byte of either), passes bytes on in pieces of 1 to 4,096 bytes with up to 3 ms before each. Each round starts a
relay with the round's seed for each client, so both meet the same cut points; the clients take turns going first.
Checks, for each run: the client answered every call (mtcall exits 0 and reports its N-1 pipelined calls; every one
of Telethon's results is DC 2's nearestDc), and for ours the server's log shows help.getNearestDc run exactly N times
(Telethon re-sends a request under a new msg_id after a reconnect, so the server may run one of its calls twice; that
count is printed, not checked). Prints each run's time, cuts and time per cut, and ours ÷ Telethon's time
(min/median/max over the rounds) for the whole run (connect, handshake and calls) and for the pipelined calls alone.
With --full (or --max-ratio R) it fails when the median of the whole-run ratio is above 2 (or R); the default short
run only prints it, since there a debug mtcall's start-up is most of our time and a timing gate on a shared CI
machine would fail on load, not on the client.

Every subprocess and await is bounded in time; everything listens on 127.0.0.1. The default (3,000 calls, 3 rounds)
takes about 10 s here; --full runs 20,000 calls over 20 seeds.

Usage: relay_interop.py --mtserver PATH --mtcall PATH --mtrelay PATH [--calls N] [--rounds R] [--full]
"""
import argparse
import asyncio
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time

import cryptg  # noqa: F401  Telethon uses it for AES when it is importable; the comparison needs it there
from telethon import TelegramClient, functions, types
from telethon.crypto import rsa
from telethon.sessions import MemorySession

from telethon_common import start_mtserver, stop_mtserver

PLAN = "cut=4096-65536,piece=1-4096,delay=0-0.003"
WINDOW = 100
HANDLED = 'handled(method: "help.getNearestDc"'
# Telethon logs every reset it meets; the runs' lines say what matters.
logging.getLogger("telethon").setLevel(logging.ERROR)


class Relay:
    """`mtrelay` in front of DC 2 with `seed`; `stop()` returns its totals ({"connections", "cuts", "bytes"})."""

    def __init__(self, path, upstream_port, seed, log):
        self.process = subprocess.Popen(
            [path, "--to", f"127.0.0.1:{upstream_port}", "--seed", str(seed), "--plan", PLAN, "--timeout", "600"],
            stdout=subprocess.PIPE, stderr=log, text=True)
        line = self.process.stdout.readline()
        if not line:
            self.process.kill()
            raise AssertionError("mtrelay exited before it was ready")
        self.port = json.loads(line)["port"]

    def stop(self):
        self.process.terminate()
        try:
            out, _ = self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError("mtrelay did not stop on SIGTERM")
        lines = [line for line in out.splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if lines else {"connections": 0, "cuts": 0, "bytes": 0}


def run_ours(mtcall, port, keyfile, calls):
    """Whole-run and pipelined seconds of `mtcall --repeat CALLS help.getNearestDc` through the relay at `port`."""
    argv = [mtcall, "--server", f"127.0.0.1:{port}", "--dc", "2", "--rsa-key", keyfile, "--timeout", "30",
            "--repeat", str(calls), "help.getNearestDc"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    whole = time.monotonic() - started
    if done.returncode != 0:
        raise AssertionError(f"mtcall exit {done.returncode}: {done.stderr.strip()[-400:]}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer.get("this_dc") == 2, answer
    # "N calls in S s: R calls/s", for the calls after the first.
    report = [line for line in done.stderr.splitlines() if " calls in " in line]
    assert report and int(report[-1].split()[0]) == calls - 1, done.stderr[-400:]
    return whole, float(report[-1].split()[3])


async def run_telethon(port, calls, limit):
    """Whole-run and pipelined seconds of Telethon making CALLS help.getNearestDc calls, WINDOW at a time."""
    started = time.monotonic()
    client = TelegramClient(MemorySession(), api_id=1, api_hash="0" * 32, timeout=10, connection_retries=10,
                            retry_delay=0, request_retries=10)
    client.session.set_dc(2, "127.0.0.1", port)
    try:
        await asyncio.wait_for(client.connect(), 30)
        first = await asyncio.wait_for(client(functions.help.GetNearestDcRequest()), 30)
        assert isinstance(first, types.NearestDc) and first.this_dc == 2, first
        pipelined = time.monotonic()
        left = calls - 1
        right = 0

        async def worker():
            nonlocal left, right
            while left > 0:
                left -= 1
                answer = await client(functions.help.GetNearestDcRequest())
                if isinstance(answer, types.NearestDc) and answer.this_dc == 2:
                    right += 1

        await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(WINDOW))), limit)
        ended = time.monotonic()
        assert right == calls - 1, f"Telethon: {right} of {calls - 1} pipelined calls answered right"
    finally:
        await asyncio.wait_for(client.disconnect(), 10)
    return ended - started, ended - pipelined


def executed(log_path, offset, at_least, limit=10.0):
    """How many help.getNearestDc the server's log shows after byte `offset`, once it shows `at_least` or `limit`
    seconds passed (the log is written as the server runs them, beside the answers), and the new offset."""
    deadline = time.monotonic() + limit
    while True:
        with open(log_path, "rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
        count = text.count(HANDLED)
        if count >= at_least or time.monotonic() > deadline:
            # A second look: a request run twice would be logged after the N-th.
            time.sleep(0.2)
            with open(log_path, "rb") as log:
                log.seek(offset)
                text = log.read().decode(errors="replace")
            return text.count(HANDLED), offset + len(text.encode())
        time.sleep(0.05)


def spread(values):
    return f"min {min(values):.2f}, median {statistics.median(values):.2f}, max {max(values):.2f}"


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall", required=True)
    parser.add_argument("--mtrelay", required=True)
    parser.add_argument("--calls", type=int, default=3_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="20,000 calls over 20 seeds")
    parser.add_argument("--max-ratio", type=float, default=None)
    args = parser.parse_args()
    if args.full:
        args.calls, args.rounds = 20_000, 20
        args.max_ratio = args.max_ratio or 2.0
    assert 2 <= args.calls <= 1_000_000 and 1 <= args.rounds <= 100, "calls 2...1000000, rounds 1...100"
    limit = 60 + args.calls / 100
    failures = []
    ratios = {"whole": [], "pipelined": []}
    with tempfile.TemporaryDirectory() as workdir:
        keyfile = os.path.join(workdir, "key.pem")
        log_path = os.path.join(workdir, "mtserver.log")
        with open(log_path, "w") as log, open(os.path.join(workdir, "mtrelay.log"), "w") as relay_log:
            process, ready = start_mtserver(args.mtserver, ["--dcs", "2", "--log-level", "debug", "--timeout",
                                                            str(int(120 + args.rounds * limit))], stderr=log)
            try:
                with open(keyfile, "w") as handle:
                    handle.write(ready["public_key"])
                rsa.add_key(ready["public_key"], old=False)
                offset = 0
                for round_number in range(args.rounds):
                    seed = round_number + 1
                    order = ["ours", "telethon"] if round_number % 2 == 0 else ["telethon", "ours"]
                    times = {}
                    for who in order:
                        relay = Relay(args.mtrelay, ready["ports"]["2"], seed, relay_log)
                        try:
                            if who == "ours":
                                whole, pipelined = run_ours(args.mtcall, relay.port, keyfile, args.calls)
                            else:
                                whole, pipelined = await run_telethon(relay.port, args.calls, limit)
                        except Exception as error:
                            failures.append(f"seed {seed} {who}: {type(error).__name__}: {error}")
                            relay.stop()
                            # What this run had the server do is not the next run's.
                            _, offset = executed(log_path, offset, 0)
                            continue
                        totals = relay.stop()
                        count, offset = executed(log_path, offset, args.calls)
                        times[who] = (whole, pipelined)
                        cuts = totals["cuts"]
                        per_cut = f"{1000 * whole / cuts:.0f} ms per cut" if cuts else "no cut"
                        print(f"seed {seed:2} {who:8}: {args.calls} calls in {whole:.2f} s ({pipelined:.2f} s "
                              f"pipelined), {cuts} cuts, {per_cut}; the server ran {count}", flush=True)
                        if who == "ours" and count != args.calls:
                            failures.append(f"seed {seed}: the server ran our {args.calls} calls {count} times")
                        if cuts == 0:
                            failures.append(f"seed {seed} {who}: the relay cut nothing")
                    if len(times) == 2:
                        ratios["whole"].append(times["ours"][0] / times["telethon"][0])
                        ratios["pipelined"].append(times["ours"][1] / times["telethon"][1])
            finally:
                stop_mtserver(process)
    for name, values in ratios.items():
        if values:
            print(f"ours ÷ Telethon, {name}: {spread(values)} over {len(values)} rounds", flush=True)
    if args.max_ratio is not None and ratios["whole"] and statistics.median(ratios["whole"]) > args.max_ratio:
        failures.append(f"our whole run takes {statistics.median(ratios['whole']):.2f}× Telethon's (median)")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"relay interop: {args.rounds * 2} runs, {len(failures)} failures")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
