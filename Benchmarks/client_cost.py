#!/usr/bin/env python3
"""What each client costs the machine, read from the OS: the user + system CPU of our client's process (`mtcall`,
release build) and of Telethon 1.45 with cryptg's (a Python process of its own), doing the same work on one
`mtserver`, beside the crypto no MTProto 2.0 client can skip (`CryptoFloor`: AES-256-IGE and SHA-256 of the same
bytes in the same parts, timed in its own process in the same round).

The work, each round, in an order that rotates from round to round:
- pipelined calls: `help.getNearestDc` N times, 100 in flight (`mtcall --repeat N`; Telethon: 100 tasks awaiting
  its calls); CPU per call.
- download of a file of `--megabytes` (ours: `mtcall download --out FILE --no-digest`, 512 KiB parts, 8 in flight
  over 2 media connections; Telethon: `download_file(part_size_kb=512)` into a file, one part at a time, its only
  way); CPU per MiB. Both copies are checked against the file's SHA-256 by this script, outside the measured
  processes.
- upload of the same file (ours: `mtcall upload FILE`, the same options; Telethon: `upload_file(part_size_kb=512)`);
  CPU per MiB.
Each measured process is paired with one that starts, connects and makes one call (Telethon's download: fetches the
message too) just before it; its CPU is subtracted, so what is left is the work's own, without start-up, imports and
the connection. Every ratio is printed as min / median / max over the rounds, each taken within one round.

Usage (from the repository root; Telethon and cryptg from .venv-interop):
  swift build -c release --product mtserver && swift build -c release --product mtcall
  (cd Benchmarks && swift build -c release --product CryptoFloor)
  .venv-interop/bin/python Benchmarks/client_cost.py [--rounds 3] [--calls 50000] [--megabytes 64]
      [--server-threads N] [--only calls,download,upload]
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

from mtserver_process import build_dir, children_cpu, running_mtserver

PHONE, CODE = "9996620001", "22222"
WINDOW = 100
PART_KB = 512


# --- Telethon's side, run as `client_cost.py --telethon-child JSON` in a process of its own -----------------------

async def telethon_child(job):
    import cryptg  # noqa: F401  Telethon's native AES: without it the comparison would flatter us
    from telethon import TelegramClient, functions, types
    from telethon.crypto import rsa
    from telethon.sessions import StringSession

    rsa.add_key(job["public_key"], old=False)
    client = TelegramClient(StringSession(job["session"]), api_id=1, api_hash="0" * 32, timeout=60,
                            receive_updates=False)
    await asyncio.wait_for(client.connect(), 30)
    result = {}
    try:
        kind = job["kind"]
        if kind in ("download", "download-baseline"):
            message = await asyncio.wait_for(client.get_messages("me", ids=job["message_id"]), 30)
            if kind == "download":
                started = time.monotonic()
                await asyncio.wait_for(client.download_file(message.document, file=job["path"],
                                                            part_size_kb=PART_KB), 600)
                result["seconds"] = time.monotonic() - started
        else:
            await asyncio.wait_for(client(functions.help.GetNearestDcRequest()), 30)
        if kind == "upload":
            started = time.monotonic()
            await asyncio.wait_for(client.upload_file(job["path"], part_size_kb=PART_KB), 600)
            result["seconds"] = time.monotonic() - started
        elif kind == "calls":
            left = job["calls"] - 1
            right = 0

            async def worker():
                nonlocal left, right
                while left > 0:
                    left -= 1
                    answer = await client(functions.help.GetNearestDcRequest())
                    right += isinstance(answer, types.NearestDc)
            started = time.monotonic()
            await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(WINDOW))), 600)
            result["seconds"] = time.monotonic() - started
            result["answered"] = right
    finally:
        await asyncio.wait_for(client.disconnect(), 10)
    print(json.dumps(result), flush=True)


# --- The measuring side ---------------------------------------------------------------------------------------------

def measured(argv, timeout=900):
    """(the last JSON line printed, the process's CPU seconds) of running `argv` to its end."""
    cpu = children_cpu()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    spent = children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{os.path.basename(argv[0])} {' '.join(argv[1:4])}…: exit {done.returncode}: "
                         f"{done.stderr.strip()[-800:]}")
    lines = [line for line in done.stdout.strip().splitlines() if line.startswith("{")]
    return (json.loads(lines[-1]) if lines else {}), spent


class Ours:
    def __init__(self, binary, port, keyfile, session, transfer_flags):
        self.argv = [os.path.join(binary, "mtcall"), "--server", f"127.0.0.1:{port}", "--rsa-key", keyfile,
                     "--session", session, "--timeout", "120"]
        self.transfer_flags = transfer_flags

    def run(self, *arguments):
        return measured([*self.argv, *arguments])

    def baseline(self):
        return self.run("help.getNearestDc")[1]

    def calls(self, count):
        line, cpu = self.run("--repeat", str(count), "help.getNearestDc")
        return cpu, None

    def download(self, location, out):
        line, cpu = self.run("download", location, "--out", out, "--no-digest", *self.transfer_flags)
        return cpu, line["seconds"]

    def upload(self, path):
        line, cpu = self.run("upload", path, *self.transfer_flags)
        return cpu, None


class Telethon:
    def __init__(self, public_key, session):
        self.job = {"public_key": public_key, "session": session}

    def run(self, **job):
        return measured([sys.executable, os.path.abspath(__file__), "--telethon-child",
                         json.dumps({**self.job, **job})])

    def baseline(self, **job):
        return self.run(**{"kind": "baseline", **job})[1]


def spread(values, digits=2):
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


async def prepare_telethon(port, public_key, path):
    """Signs Telethon in once; returns its StringSession and the id of a message in Saved Messages with `path`."""
    from telethon import TelegramClient
    from telethon.crypto import rsa
    from telethon.sessions import StringSession

    rsa.add_key(public_key, old=False)
    client = TelegramClient(StringSession(), api_id=1, api_hash="0" * 32, timeout=60)
    client.session.set_dc(2, "127.0.0.1", port)
    await asyncio.wait_for(client.connect(), 30)
    try:
        await client.send_code_request(PHONE)
        await client.sign_in(PHONE, CODE)
        uploaded = await client.upload_file(path, part_size_kb=PART_KB)
        message = await client.send_file("me", uploaded, force_document=True)
        return client.session.save(), message.id
    finally:
        await client.disconnect()


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=50_000)
    parser.add_argument("--megabytes", type=int, default=64)
    parser.add_argument("--only", default="calls,download,upload", help="a comma-separated subset of the work")
    parser.add_argument("--server-threads", type=int, help="mtserver's --threads (default: one per core)")
    parser.add_argument("--parts-in-flight", type=int, default=8, help="mtcall's --parts-in-flight")
    parser.add_argument("--media-connections", type=int, default=2, help="mtcall's --media-connections")
    parser.add_argument("--bin", help="the folder with mtserver and mtcall (default: swift build -c release's)")
    parser.add_argument("--floor", help="the CryptoFloor binary (default: Benchmarks' release build)")
    parser.add_argument("--telethon-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.telethon_child:
        asyncio.run(telethon_child(json.loads(args.telethon_child)))
        return 0
    work = args.only.split(",")
    if not set(work) <= {"calls", "download", "upload"} or not 1 <= args.rounds <= 50 \
            or not 2 <= args.calls <= 10_000_000 or not 1 <= args.megabytes <= 1024:
        parser.error("--only takes calls, download, upload; --rounds 1...50, --calls 2...10000000, "
                     "--megabytes 1...1024")
    binary = args.bin or build_dir("release")
    here = os.path.dirname(os.path.abspath(__file__))
    floor_binary = args.floor or os.path.join(here, ".build", "release", "CryptoFloor")
    if not os.path.exists(floor_binary):
        raise SystemExit(f"no {floor_binary}: (cd Benchmarks && swift build -c release --product CryptoFloor)")
    size = args.megabytes << 20
    megabytes = size / (1 << 20)
    with tempfile.TemporaryDirectory() as workdir, \
            running_mtserver(binary, workdir, max(512, 4 * args.megabytes * (args.rounds + 2)),
                             f"{PHONE}:Bench::bench_user",
                             *(["--threads", str(args.server_threads)] if args.server_threads else [])) \
            as (ready, keyfile):
        path = os.path.join(workdir, "data.bin")
        with open(path, "wb") as handle:
            handle.write(os.urandom(size))
        digest = sha256_of(path)
        ours = Ours(binary, ready["port"], keyfile, os.path.join(workdir, "ours.sqlite"),
                    ["--parts-in-flight", str(args.parts_in_flight),
                     "--media-connections", str(args.media_connections)])
        ours.run("--phone", PHONE, "--code", CODE, "help.getNearestDc")
        sent, _ = ours.run("upload", path, "--to", "self", "--no-digest", *ours.transfer_flags)
        location = json.dumps(sent)
        session, message_id = asyncio.run(prepare_telethon(ready["port"], ready["public_key"], path))
        theirs = Telethon(ready["public_key"], session)
        out = os.path.join(workdir, "copy.bin")

        results = {key: [] for key in ("ours calls", "theirs calls", "ours download", "theirs download",
                                       "ours upload", "theirs upload", "ours download s", "theirs download s",
                                       "theirs upload s", "floor decrypt", "floor encrypt")}

        def checked_copy(who):
            got = sha256_of(out)
            os.remove(out)
            if got != digest:
                raise SystemExit(f"{who}'s download is not the file: SHA-256 {got}, expected {digest}")

        jobs = []
        if "calls" in work:
            def ours_calls():
                base = ours.baseline()
                cpu, _ = ours.calls(args.calls)
                results["ours calls"].append((cpu - base) / (args.calls - 1))

            def theirs_calls():
                base = theirs.baseline()
                line, cpu = theirs.run(kind="calls", calls=args.calls)
                if line.get("answered") != args.calls - 1:
                    raise SystemExit(f"Telethon: {line.get('answered')} of {args.calls - 1} calls answered right")
                results["theirs calls"].append((cpu - base) / (args.calls - 1))
            jobs += [ours_calls, theirs_calls]
        if "download" in work:
            def ours_download():
                base = ours.baseline()
                cpu, seconds = ours.download(location, out)
                checked_copy("our client")
                results["ours download"].append((cpu - base) / megabytes)
                results["ours download s"].append(seconds)

            def theirs_download():
                base = theirs.baseline(kind="download-baseline", message_id=message_id)
                line, cpu = theirs.run(kind="download", message_id=message_id, path=out)
                checked_copy("Telethon")
                results["theirs download"].append((cpu - base) / megabytes)
                results["theirs download s"].append(line["seconds"])
            jobs += [ours_download, theirs_download]
        if "upload" in work:
            def ours_upload():
                base = ours.baseline()
                cpu, _ = ours.upload(path)
                results["ours upload"].append((cpu - base) / megabytes)

            def theirs_upload():
                base = theirs.baseline()
                line, cpu = theirs.run(kind="upload", path=path)
                results["theirs upload"].append((cpu - base) / megabytes)
                results["theirs upload s"].append(line["seconds"])
            jobs += [ours_upload, theirs_upload]

        def floor():
            line, _ = measured([floor_binary, str(min(args.megabytes, 256))])
            results["floor decrypt"].append(line["decrypt_ms_per_mb"] / 1000)
            results["floor encrypt"].append(line["encrypt_ms_per_mb"] / 1000)
        jobs.append(floor)

        for round_number in range(args.rounds):
            turn = round_number % len(jobs)
            for job in jobs[turn:] + jobs[:turn]:
                job()
            print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr, flush=True)

    r = results
    per_round = lambda a, b: [x / y for x, y in zip(r[a], r[b])]
    print(f"{args.rounds} rounds; min / median / max; CPU is user + system of the client's process, its start-up "
          "and connection subtracted")
    if "calls" in work:
        print(f"pipelined calls ({args.calls:,}, {WINDOW} in flight):")
        print(f"  ours      {spread([v * 1e6 for v in r['ours calls']])} µs of CPU per call")
        print(f"  Telethon  {spread([v * 1e6 for v in r['theirs calls']])} µs of CPU per call")
        print(f"  Telethon ÷ ours, per round: {spread(per_round('theirs calls', 'ours calls'))}")
    floor_decrypt = [v * 1e3 for v in r["floor decrypt"]]
    floor_encrypt = [v * 1e3 for v in r["floor encrypt"]]
    for what, floor_values in (("download", floor_decrypt), ("upload", floor_encrypt)):
        if what not in work:
            continue
        print(f"{what} of {megabytes:.0f} MiB:")
        print(f"  ours      {spread([v * 1e3 for v in r[f'ours {what}']])} ms of CPU per MiB")
        print(f"  Telethon  {spread([v * 1e3 for v in r[f'theirs {what}']])} ms of CPU per MiB")
        print(f"  mandatory {spread(floor_values)} ms per MiB (AES-256-IGE + SHA-256, CryptoFloor)")
        key = "floor decrypt" if what == "download" else "floor encrypt"
        print(f"  ours ÷ mandatory, per round: {spread(per_round(f'ours {what}', key))}")
        print(f"  Telethon ÷ ours, per round: {spread(per_round(f'theirs {what}', f'ours {what}'))}")
        if what == "download":
            ours_rate = [megabytes / s for s in r["ours download s"]]
            floor_rate = [1 / v for v in r["floor decrypt"]]
            print(f"  wall clock: ours {spread(ours_rate, 0)} MiB/s, Telethon "
                  f"{spread([megabytes / s for s in r['theirs download s']], 0)} MiB/s; ours ÷ AES-IGE alone "
                  f"({spread(floor_rate, 0)} MiB/s), per round: "
                  f"{spread([a / b for a, b in zip(ours_rate, floor_rate)])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
