#!/usr/bin/env python3
"""Two Telethon 1.45 users against `mtserver`, over each of Telethon's seven TCP connection classes.

For every class a fresh mtserver runs two DCs with two registered test accounts: Alice (9996620001, home DC 2) and
Bob (9996610002, home DC 1). Both clients start on DC 2, so Bob's login is answered PHONE_MIGRATE_1 and Telethon moves
to DC 1. Then:
  - both sign in with the test code (five X digits) and `get_me` names the right account;
  - Alice sends a message to herself (Saved Messages) and one to @bob_test, which Bob receives as a NewMessage event;
  - Bob reads the history; the server closes Bob's connection on his first messages.getHistory (fault
    close-once), so Telethon must reconnect and resend it; then he marks the chat read;
  - Alice uploads 5 MB (40 parts of 128 KiB with an MD5 checksum; 1 MB, 8 parts, over the obfuscated classes) and
    sends it to Bob as a document; Bob receives it and downloads it: the document lives on DC 2, so his DC 1 answers FILE_MIGRATE_2 and Telethon exports his
    authorization to DC 2 and downloads there; the bytes must be identical.
Every step has a timeout and every loop a bound; mtserver stops by itself after --server-timeout seconds.
Exit status 0 only if every class passed.

Usage: telethon_scenario.py [--mtserver PATH] [--classes NAME,...] [--jobs N]
"""
import argparse
import asyncio
import io
import logging
import os
import sys
import tempfile
import time
import warnings

from telethon import TelegramClient, events, types
from telethon.crypto import rsa
from telethon.sessions import MemorySession

from telethon_common import CLASSES, SECRET, proxy_arguments, start_mtserver, stop_mtserver

ALICE = ("9996620001", "22222", "alice_test")
BOB = ("9996610002", "11111", "bob_test")
FILE_SIZE = 5 * 1024 * 1024
# Telethon runs obfuscation's AES-CTR in pure Python (pyaes; cryptg has only IGE): 5 MB each way took 47-86 s of a
# CI run's time per obfuscated class, 29 s of it Telethon's CPU (2026-12-02), so those classes move 1 MB.
OBFUSCATED_FILE_SIZE = 1024 * 1024
# Lines mtserver logs (at level info) for the detours each run must take.
SERVER_SAW = ["auth.sendCode -> rpc_error 303 PHONE_MIGRATE_1", "closed on messages.getHistory by fault injection",
              "upload.getFile -> rpc_error 303 FILE_MIGRATE_2"]


def start_server(path, timeout, log):
    """Runs mtserver with its log (level info: every rpc_error and closed connection) going to `log`."""
    return start_mtserver(path, ["--secret", SECRET, "--timeout", str(timeout), "--dcs", "2",
                                 "--user", f"{ALICE[0]}:Alice::{ALICE[2]}", "--user", f"{BOB[0]}:Bob::{BOB[2]}",
                                 "--faults", "close-once=messages.getHistory", "--log-level", "info"], stderr=log)


def make_client(cls, ready):
    session = MemorySession()
    session.set_dc(2, "127.0.0.1", ready["ports"]["2"])
    extra = proxy_arguments(cls, ready)
    return TelegramClient(session, api_id=1, api_hash="0" * 32, connection=cls, timeout=10,
                          connection_retries=3, retry_delay=0.2, request_retries=4, **extra)


async def sign_in(client, account):
    phone, code, username = account
    await asyncio.wait_for(client.connect(), 30)
    await asyncio.wait_for(client.send_code_request(phone), 30)
    await asyncio.wait_for(client.sign_in(phone, code), 30)
    me = await asyncio.wait_for(client.get_me(), 15)
    assert me.phone == phone and me.username == username, f"get_me: {me.phone} {me.username}"
    return me


async def scenario(cls, ready, log):
    alice, bob = make_client(cls, ready), make_client(cls, ready)
    try:
        await sign_in(alice, ALICE)
        await sign_in(bob, BOB)
        assert bob.session.dc_id == 1, f"Bob's home DC is 1, Telethon is on {bob.session.dc_id}"
        log("signed in (Bob moved to DC 1)")

        saved = await asyncio.wait_for(alice.send_message("me", "note to self"), 15)
        own = await asyncio.wait_for(alice.get_messages("me", limit=5), 15)
        assert [m.id for m in own if m.message == "note to self"] == [saved.id], "Saved Messages"

        inbox = asyncio.Queue()
        async def deliver(event):
            inbox.put_nowait(event.message)

        bob.add_event_handler(deliver, events.NewMessage(incoming=True))
        sent = await asyncio.wait_for(alice.send_message("@" + BOB[2], "hello bob"), 15)
        received = await asyncio.wait_for(inbox.get(), 15)
        assert received.message == "hello bob" and received.sender_id == alice._self_id, "NewMessage"
        log(f"Bob got NewMessage {received.id} (Alice's id {sent.id})")

        history = await asyncio.wait_for(bob.get_messages("@" + ALICE[2], limit=10), 30)
        assert [m.message for m in history] == ["hello bob"], f"history: {[m.message for m in history]}"
        assert await asyncio.wait_for(bob.send_read_acknowledge("@" + ALICE[2], max_id=received.id), 15)
        log("history read after a connection reset")

        size = OBFUSCATED_FILE_SIZE if "Obfuscated" in cls.__name__ or "MTProxy" in cls.__name__ else FILE_SIZE
        data = os.urandom(size)
        started = time.monotonic()
        await asyncio.wait_for(alice.send_file(
            "@" + BOB[2], io.BytesIO(data), force_document=True,
            attributes=[types.DocumentAttributeFilename("blob.bin")]), 120)
        document = await asyncio.wait_for(inbox.get(), 15)
        assert document.document is not None and document.document.size == size, "document message"
        downloaded = await asyncio.wait_for(bob.download_media(document, file=bytes), 120)
        assert downloaded == data, f"downloaded {len(downloaded)} bytes, not the uploaded ones"
        log(f"{size >> 20} MB up and down (DC 2 to DC 1 via FILE_MIGRATE_2) in {time.monotonic() - started:.1f} s")
    finally:
        for client in (alice, bob):
            await asyncio.wait_for(client.disconnect(), 10)


async def run_classes(chosen, args):
    """Runs each class's scenario here, one after the other; returns (passed, failed)."""
    passed = failed = 0
    for cls in chosen:
        # Telethon caches help.getConfig in a class attribute; each class has a new server on new ports.
        TelegramClient._config = None
        log = tempfile.TemporaryFile("w+")
        process, ready = start_server(args.mtserver, args.server_timeout, log)
        rsa.add_key(ready["public_key"], old=False)
        started = time.monotonic()
        try:
            await asyncio.wait_for(scenario(cls, ready, lambda text: print(f"  {cls.__name__}: {text}", flush=True)),
                                   300)
            # What the client survived must have happened: the server's log names each.
            log.seek(0)
            text = log.read()
            for expected in SERVER_SAW:
                assert expected in text, f"the server log does not show {expected!r}"
            passed += 1
            print(f"{cls.__name__}: scenario passed in {time.monotonic() - started:.1f} s", flush=True)
        except Exception as error:  # report and go on: every class is tried
            failed += 1
            print(f"FAIL {cls.__name__}: {type(error).__name__}: {error!r}", flush=True)
        finally:
            stop_mtserver(process)
            log.close()
    return passed, failed


async def run_in_children(chosen, args):
    """Runs the classes in up to --jobs child processes at once (obfuscated classes spend most of their time in
    Telethon's pure-Python AES-CTR); prints each child's output when it ends."""
    jobs = asyncio.Semaphore(max(1, args.jobs))

    async def child(cls):
        async with jobs:
            process = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--mtserver", args.mtserver, "--classes", cls.__name__,
                "--server-timeout", str(args.server_timeout),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            try:
                output, _ = await asyncio.wait_for(process.communicate(), 330)
            except asyncio.TimeoutError:
                process.kill()
                return False, f"FAIL {cls.__name__}: no result in 330 s\n"
            return process.returncode == 0, output.decode(errors="replace")

    results = await asyncio.gather(*(child(cls) for cls in chosen))
    for _, output in results:
        print("\n".join(line for line in output.splitlines() if not line.startswith("telethon scenario:")), flush=True)
    passed = sum(1 for ok, _ in results if ok)
    return passed, len(results) - passed


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", default=".build/debug/mtserver")
    parser.add_argument("--classes", default="", help="comma-separated class names (default: all seven)")
    parser.add_argument("--jobs", type=int, default=2, help="classes run at once, each in its own process")
    parser.add_argument("--server-timeout", type=int, default=600)
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    warnings.filterwarnings("ignore", message="proxy argument will be ignored")
    chosen = [c for c in CLASSES if not args.classes or c.__name__ in args.classes.split(",")]
    if not chosen:
        raise SystemExit(f"no class named in --classes {args.classes!r}")
    if len(chosen) == 1 or args.jobs <= 1:
        passed, failed = await run_classes(chosen, args)
    else:
        passed, failed = await run_in_children(chosen, args)
    print(f"telethon scenario: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
