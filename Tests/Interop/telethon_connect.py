#!/usr/bin/env python3
"""Telethon 1.45 against `mtserver`, over each of Telethon's seven TCP connection classes.

Starts mtserver on 127.0.0.1 with a generated RSA key and an MTProxy secret (used plain, and as a `dd` secret by
the randomized-intermediate class), then for every connection class
connects with a fresh MemorySession (so every run makes a new auth key) and calls help.getConfig, checking that the
answer names this DC and its port; then once with a key the server never made, which must end in -404
(AuthKeyNotFound). Everything is bounded: each connection and call has a timeout, the run count is
fixed, and mtserver itself stops after --server-timeout seconds. Exit status 0 only if every run passed.

Usage: telethon_connect.py [--mtserver PATH] [--runs N]
"""
import argparse
import asyncio
import logging
import os
import sys
import time
import warnings

from telethon import TelegramClient, functions
from telethon.crypto import AuthKey, rsa
from telethon.errors import AuthKeyNotFound
from telethon.sessions import MemorySession

from telethon_common import CLASSES, SECRET, proxy_arguments, start_mtserver, stop_mtserver

DC = 2


class RetryCounter(logging.Handler):
    """Counts Telethon's failed auth-key attempts. Telethon builds its key without left-padding, so about 1 DH result
    in 256 gives it a wrong key; its new_nonce_hash1 check then fails and it starts a new exchange."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        if "at new auth_key failed" in record.getMessage():
            self.count += 1


def start_server(path, timeout):
    """Runs mtserver and returns (process, the JSON line it printed when ready)."""
    return start_mtserver(path, ["--secret", SECRET, "--timeout", str(timeout), "--dc", str(DC),
                                 "--log-level", os.environ.get("MTSERVER_LOG", "warning")])


async def connect_once(cls, ready, unknown_key=False):
    """Connects and calls help.getConfig. With `unknown_key`, the session holds a key the server never made: the
    server answers transport error -404, which Telethon 1.45 raises as AuthKeyNotFound (it does not re-handshake
    by itself; a client that drops the key gets a new one)."""
    session = MemorySession()
    session.set_dc(DC, "127.0.0.1", ready["port"])
    if unknown_key:
        session.auth_key = AuthKey(os.urandom(256))
    extra = proxy_arguments(cls, ready)
    client = TelegramClient(session, api_id=1, api_hash="0" * 32, connection=cls, timeout=5,
                            connection_retries=3, retry_delay=0.1, request_retries=3, **extra)
    try:
        if unknown_key:
            try:
                await asyncio.wait_for(client.connect(), 30)
                await asyncio.wait_for(client(functions.help.GetConfigRequest()), 15)
            except AuthKeyNotFound:
                return
            raise AssertionError("a key the server never made was accepted")
        await asyncio.wait_for(client.connect(), 30)
        config = await asyncio.wait_for(client(functions.help.GetConfigRequest()), 15)
        # One option per address the server listens on: IPv4, and IPv6 when its ready line names one.
        expected = [(False, None, ready["port"])]
        if ready.get("ipv6_host"):
            expected.append((True, ready["ipv6_host"], ready["port"]))
        options = [(bool(o.ipv6), o.ip_address if o.ipv6 else None, o.port) for o in config.dc_options]
        if config.this_dc != DC or options != expected:
            raise AssertionError(f"unexpected config: this_dc={config.this_dc} options={options}, expected {expected}")
    finally:
        await asyncio.wait_for(client.disconnect(), 10)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", default=".build/debug/mtserver")
    parser.add_argument("--runs", type=int, default=3, help="connections per class")
    parser.add_argument("--server-timeout", type=int, default=900)
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    retries = RetryCounter()
    sender_log = logging.getLogger("telethon.network.mtprotosender")
    sender_log.setLevel(logging.WARNING)
    sender_log.addHandler(retries)
    sender_log.propagate = False
    warnings.filterwarnings("ignore", message="proxy argument will be ignored")  # MTProxy needs no python-socks

    process, ready = start_server(args.mtserver, args.server_timeout)
    passed = failed = 0
    try:
        rsa.add_key(ready["public_key"], old=False)
        for cls in CLASSES:
            started = time.monotonic()
            ok = 0
            for run in range(args.runs):
                try:
                    await connect_once(cls, ready)
                    ok += 1
                except Exception as error:  # report and go on: every class is tried
                    print(f"FAIL {cls.__name__} run {run}: {type(error).__name__}: {error}", flush=True)
            try:
                await connect_once(cls, ready, unknown_key=True)
                ok += 1
            except Exception as error:
                print(f"FAIL {cls.__name__} unknown key: {type(error).__name__}: {error}", flush=True)
            passed += ok
            failed += args.runs + 1 - ok
            print(f"{cls.__name__}: {ok}/{args.runs + 1} (the last with an unknown key, -404) in "
                  f"{time.monotonic() - started:.1f} s", flush=True)
    finally:
        stop_mtserver(process)
    print(f"auth-key exchanges Telethon retried: {retries.count}")
    print(f"telethon: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
