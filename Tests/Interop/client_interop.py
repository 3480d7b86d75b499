#!/usr/bin/env python3
"""Our client (`mtcall`) against `mtserver`, and our client and Telethon 1.45 in one conversation.

1. `mtcall help.getNearestDc` over every framing and wrapping our client speaks: abridged, intermediate, padded
   intermediate and full, plain; the first three obfuscated; padded intermediate through MTProxy with a `dd` secret
   and with an `ee` (fake-TLS) secret (Telegram's clients use padded intermediate under both).
2. Bob signs in with `mtcall` (his home is DC 1, so the login follows PHONE_MIGRATE_1; the session file keeps the
   key and the home DC), Alice with Telethon. Bob sends Alice a message: Telethon gets it as a NewMessage event.
   Alice answers: Bob's `mtcall updates.getDifference` from his earlier state carries it, and his history shows both.
Every subprocess and await is bounded in time. Exit status 0 only if every check passed.

Usage: client_interop.py --mtserver PATH --mtcall PATH
"""
import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile

from telethon import events
from telethon.crypto import rsa

from telethon_common import signed_in, start_mtserver, stop_mtserver

SECRET = "0123456789abcdef" * 2
FAKE_TLS_DOMAIN = "localhost".encode().hex()


def start_server(path, secret, log):
    return start_mtserver(path, ["--dcs", "2", "--secret", secret, "--timeout", "300",
                                 "--user", "9996620001:Alice::alice_test", "--user", "9996610002:Bob::bob_test",
                                 "--log-level", "info"], stderr=log)


class Mtcall:
    def __init__(self, path, ready, keyfile):
        self.path, self.ready, self.keyfile = path, ready, keyfile

    def __call__(self, method, params="{}", *flags, server_dc="2"):
        argv = [self.path, "--server", f"127.0.0.1:{self.ready['ports'][server_dc]}", "--rsa-key", self.keyfile,
                "--timeout", "20", *flags, method, params]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise AssertionError(f"mtcall {method} {' '.join(flags)}: exit {done.returncode}: {done.stderr.strip()}")
        return json.loads(done.stdout)

    def via_proxy(self, method, secret):
        argv = [self.path, "--dc", "2", "--proxy", f"127.0.0.1:{self.ready['proxy_port']}", "--proxy-secret", secret,
                "--rsa-key", self.keyfile, "--transport", "padded", "--timeout", "20", method]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise AssertionError(f"mtcall via proxy {secret[:2]}: exit {done.returncode}: {done.stderr.strip()}")
        return json.loads(done.stdout)


def check(results, name, action):
    try:
        action()
        results.append((name, None))
        print(f"ok   {name}", flush=True)
    except Exception as error:  # report and go on
        results.append((name, error))
        print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)


def temp_keys(mtcall, workdir):
    """Alice signs in and calls over a temporary key bound to her permanent one; a second run reuses it from the
    session file (the server's log shows one binding, checked by the Swift tests; here: both calls answer as her)."""
    flags = ("--session", os.path.join(workdir, "alice-temp.sqlite"), "--temp-keys", "3600")
    first = mtcall("users.getUsers", '{"id": [{"_": "inputUserSelf"}]}', *flags, "--phone", "9996620001",
                   "--code", "22222")
    again = mtcall("users.getUsers", '{"id": [{"_": "inputUserSelf"}]}', *flags)
    assert first[0]["phone"] == again[0]["phone"] == "9996620001", (first, again)


async def conversation(mtcall, ready, workdir, results):
    """Bob on mtcall, Alice on Telethon, one message each way."""
    session = os.path.join(workdir, "bob.sqlite")
    bob_flags = ("--session", session)
    me = mtcall("users.getUsers", '{"id": [{"_": "inputUserSelf"}]}', *bob_flags, "--phone", "9996610002",
                "--code", "11111")
    bob_id = me[0]["id"]
    state = mtcall("updates.getState", "{}", *bob_flags)

    alice = await signed_in(ready, "9996620001", "22222")
    try:
        inbox = asyncio.Queue()
        async def deliver(event):
            inbox.put_nowait(event.message)

        alice.add_event_handler(deliver, events.NewMessage(incoming=True))

        resolved = mtcall("contacts.resolveUsername", '{"username": "alice_test"}', *bob_flags)
        user = resolved["users"][0]
        peer = {"_": "inputPeerUser", "user_id": user["id"], "access_hash": user["access_hash"]}
        mtcall("messages.sendMessage", json.dumps({"peer": peer, "message": "hi from swift", "random_id": "7"}),
               *bob_flags)
        received = await asyncio.wait_for(inbox.get(), 15)
        assert received.message == "hi from swift" and str(received.sender_id) == bob_id, \
            f"Telethon got {received.message!r} from {received.sender_id}"
        print("ok   Telethon received our client's message as NewMessage", flush=True)

        await asyncio.wait_for(alice.send_message("@bob_test", "hi from telethon"), 15)
        difference = mtcall("updates.getDifference", json.dumps(
            {"pts": state["pts"], "date": state["date"], "qts": 0}), *bob_flags)
        texts = [m.get("message") for m in difference.get("new_messages", [])]
        assert "hi from telethon" in texts, f"getDifference: {difference.get('_')} {texts}"
        history = mtcall("messages.getHistory", json.dumps(
            {"peer": peer, "offset_id": 0, "offset_date": 0, "add_offset": 0, "limit": 10, "max_id": 0, "min_id": 0,
             "hash": "0"}), *bob_flags)
        assert [m["message"] for m in history["messages"]] == ["hi from telethon", "hi from swift"], history
        print("ok   our client received Telethon's message (getDifference and history)", flush=True)
        results.append(("conversation", None))
    finally:
        await asyncio.wait_for(alice.disconnect(), 10)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall", required=True)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        keyfile = os.path.join(workdir, "key.pem")
        for secret in ("dd" + SECRET, "ee" + SECRET + FAKE_TLS_DOMAIN):
            log = open(os.path.join(workdir, "mtserver.log"), "a")
            process, ready = start_server(args.mtserver, secret, log)
            try:
                with open(keyfile, "w") as handle:
                    handle.write(ready["public_key"])
                rsa.add_key(ready["public_key"], old=False)
                mtcall = Mtcall(args.mtcall, ready, keyfile)
                if secret.startswith("dd"):
                    for framing in ("abridged", "intermediate", "padded", "full"):
                        check(results, f"mtcall {framing}",
                              lambda f=framing: mtcall("help.getNearestDc", "{}", "--transport", f))
                    for framing in ("abridged", "intermediate", "padded"):
                        check(results, f"mtcall {framing} obfuscated",
                              lambda f=framing: mtcall("help.getNearestDc", "{}", "--transport", f, "--obfuscated"))
                    check(results, "mtcall via MTProxy dd", lambda: mtcall.via_proxy("help.getNearestDc", secret))
                    check(results, "mtcall --temp-keys: sign-in and a call over a bound temporary key",
                          lambda: temp_keys(mtcall, workdir))
                    try:
                        await asyncio.wait_for(conversation(mtcall, ready, workdir, results), 120)
                    except Exception as error:
                        results.append(("conversation", error))
                        print(f"FAIL conversation: {type(error).__name__}: {error}", flush=True)
                else:
                    check(results, "mtcall via MTProxy ee (fake TLS)",
                          lambda: mtcall.via_proxy("help.getNearestDc", secret))
            finally:
                stop_mtserver(process)
                log.close()
    failed = [name for name, error in results if error is not None]
    print(f"client interop: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
