#!/usr/bin/env python3
"""Signing in with Telethon 1.45 and our client (`mtcall`) against `mtserver`: cloud passwords, bots and QR codes.

1. Our client signs Alice in and sets her cloud password (`mtcall password`): the verifier is ours.
2. Telethon signs in as Alice: the code, then SESSION_PASSWORD_NEEDED; a wrong password fails with
   PasswordHashInvalidError; the right one signs in (Telethon's SRP against our verifier and our server's check).
3. Telethon signs in as a bot with start(bot_token=…); our client does with `mtcall login --bot-token`.
4. QR, Telethon showing: Telethon's qr_login() on DC 2 for Bob (home DC 1); our client, signed in as Bob, accepts the
   token from the URL with auth.acceptLoginToken; Telethon's wait() follows loginTokenMigrateTo and signs in.
5. QR, our client showing: `mtcall qr-login` prints the URL; Telethon, signed in as Alice, accepts it with
   AcceptLoginTokenRequest; mtcall finishes with Alice's password and prints her user.
6. `mtcall login` on a pseudo-terminal: the phone, the code, a wrong password and the right one typed at its
   prompts; the phone is echoed, neither password is.
Every subprocess and await is bounded in time. Exit status 0 only if every check passed.

Usage: signin_interop.py --mtserver PATH --mtcall PATH
"""
import argparse
import asyncio
import base64
import json
import os
import pty
import select
import subprocess
import sys
import tempfile
import time

from telethon import TelegramClient, errors, functions
from telethon.crypto import rsa
from telethon.sessions import MemorySession

from telethon_common import start_mtserver, stop_mtserver

PASSWORD = "set by our client ✓"
BOT_TOKEN = "123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


class Mtcall:
    def __init__(self, path, ready, keyfile):
        self.path, self.ready, self.keyfile = path, ready, keyfile

    def argv(self, method, params, flags):
        return [self.path, "--server", f"127.0.0.1:{self.ready['ports']['2']}", "--rsa-key", self.keyfile,
                "--timeout", "20", *flags, method, params]

    def __call__(self, method, params="{}", *flags):
        done = subprocess.run(self.argv(method, params, flags), capture_output=True, text=True, timeout=90,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise AssertionError(f"mtcall {method}: exit {done.returncode}: {done.stderr.strip()}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def telethon_client(ready):
    client = TelegramClient(MemorySession(), api_id=1, api_hash="0" * 32, timeout=10, connection_retries=3)
    client.session.set_dc(2, "127.0.0.1", ready["ports"]["2"])
    return client


def token_of(url):
    prefix = "tg://login?token="
    assert url.startswith(prefix), url
    text = url[len(prefix):]
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def password_set_by_our_client(mtcall, ready, workdir):
    assert mtcall("password", "{}", "--session", os.path.join(workdir, "alice.sqlite"), "--phone", "9996620001",
                  "--code", "22222", "--new-password", PASSWORD, "--hint", "ours") is True
    client = telethon_client(ready)
    try:
        await asyncio.wait_for(client.connect(), 30)
        await asyncio.wait_for(client.send_code_request("9996620001"), 30)
        try:
            await asyncio.wait_for(client.sign_in("9996620001", "22222"), 30)
            raise AssertionError("signed in without the password")
        except errors.SessionPasswordNeededError:
            pass
        state = await asyncio.wait_for(client(functions.account.GetPasswordRequest()), 30)
        assert state.has_password and state.hint == "ours", state
        try:
            await asyncio.wait_for(client.sign_in(password="not it"), 60)
            raise AssertionError("a wrong password signed in")
        except errors.PasswordHashInvalidError:
            print("ok   Telethon: a wrong password is PASSWORD_HASH_INVALID", flush=True)
        me = await asyncio.wait_for(client.sign_in(password=PASSWORD), 60)
        assert me.first_name == "Alice" and me.phone == "9996620001", me
        print("ok   Telethon signed in with the password our client set", flush=True)
    finally:
        await asyncio.wait_for(client.disconnect(), 10)


async def bots(mtcall, ready):
    client = telethon_client(ready)
    try:
        await asyncio.wait_for(client.start(bot_token=BOT_TOKEN), 30)
        me = await asyncio.wait_for(client.get_me(), 30)
        assert me.bot and me.username == "helper_bot", me
        print("ok   Telethon start(bot_token=…)", flush=True)
    finally:
        await asyncio.wait_for(client.disconnect(), 10)
    user = mtcall("login", "{}", "--bot-token", BOT_TOKEN)
    assert user.get("bot") is True and user["username"] == "helper_bot", user
    print("ok   mtcall login --bot-token", flush=True)


async def telethon_shows_our_client_accepts(mtcall, ready, workdir):
    bob_session = os.path.join(workdir, "bob.sqlite")
    mtcall("users.getUsers", '{"id": [{"_": "inputUserSelf"}]}', "--session", bob_session, "--phone", "9996610002",
           "--code", "11111")
    client = telethon_client(ready)
    try:
        await asyncio.wait_for(client.connect(), 30)
        qr = await asyncio.wait_for(client.qr_login(), 30)
        token = token_of(qr.url)
        # Telethon listens for updateLoginToken only inside wait(), so it waits before the token is scanned.
        waiting = asyncio.ensure_future(qr.wait(30))
        await asyncio.sleep(0.2)
        await asyncio.to_thread(mtcall, "auth.acceptLoginToken", json.dumps({"token": token.hex()}),
                                "--session", bob_session)
        me = await asyncio.wait_for(waiting, 40)
        assert me.first_name == "Bob", me
        assert client.session.dc_id == 1, client.session.dc_id
        print("ok   QR: Telethon showed, our client accepted, Telethon moved to DC 1 and signed in", flush=True)
    finally:
        await asyncio.wait_for(client.disconnect(), 10)


async def our_client_shows_telethon_accepts(mtcall, ready, workdir):
    alice = telethon_client(ready)
    process = None
    try:
        await asyncio.wait_for(alice.connect(), 30)
        await asyncio.wait_for(alice.send_code_request("9996620001"), 30)
        try:
            await asyncio.wait_for(alice.sign_in("9996620001", "22222"), 30)
        except errors.SessionPasswordNeededError:
            await asyncio.wait_for(alice.sign_in(password=PASSWORD), 60)
        process = await asyncio.create_subprocess_exec(
            *mtcall.argv("qr-login", "{}", ("--session", os.path.join(workdir, "qr.sqlite"), "--password", PASSWORD)),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        url = (await asyncio.wait_for(process.stdout.readline(), 60)).decode().strip()
        await asyncio.wait_for(alice(functions.auth.AcceptLoginTokenRequest(token=token_of(url))), 30)
        out, err = await asyncio.wait_for(process.communicate(), 90)
        assert process.returncode == 0, f"mtcall qr-login: exit {process.returncode}: {err.decode()}"
        user = json.loads(out.decode().strip().splitlines()[-1])
        assert user["first_name"] == "Alice", user
        # The session is signed in: a later call needs no sign-in.
        again = await asyncio.to_thread(mtcall, "users.getUsers", '{"id": [{"_": "inputUserSelf"}]}',
                                        "--session", os.path.join(workdir, "qr.sqlite"))
        assert again[0]["first_name"] == "Alice", again
        print("ok   QR: our client showed, Telethon accepted, our client finished with the password", flush=True)
    finally:
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        await asyncio.wait_for(alice.disconnect(), 10)


def login_on_a_terminal(mtcall, workdir):
    """Types at `mtcall login`'s prompts through a pseudo-terminal and returns what the terminal showed."""
    argv = mtcall.argv("login", "{}", ("--session", os.path.join(workdir, "carol.sqlite")))
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    shown = b""

    def until(text, seconds=120, times=1):
        nonlocal shown
        end = time.monotonic() + seconds
        while shown.count(text.encode()) < times:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {text!r} on the terminal: {shown.decode(errors='replace')!r}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"mtcall ended before {text!r}: {shown.decode(errors='replace')!r}")
                shown += chunk

    try:
        until("Phone number: ")
        os.write(fd, b"9996620003\n")
        until("Code (")
        os.write(fd, b"22222\n")
        until("Cloud password (hint: carol's): ")
        os.write(fd, b"typed-wrong\n")
        until("try again")
        until("Cloud password (hint: carol's): ", times=2)
        os.write(fd, b"carol-secret\n")
        until('"first_name"')
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, shown
    text = shown.decode(errors="replace")
    assert "9996620003" in text, text  # the terminal echoes what is typed…
    assert "typed-wrong" not in text and "carol-secret" not in text, text  # …but not a password
    assert '"Carol"' in text, text
    print("ok   mtcall login on a terminal: the passwords were not echoed", flush=True)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall", required=True)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        keyfile = os.path.join(workdir, "key.pem")
        log = open(os.path.join(workdir, "mtserver.log"), "a")
        process, ready = start_mtserver(args.mtserver, [
            "--dcs", "2", "--timeout", "300", "--user", "9996620001:Alice::alice_test",
            "--user", "9996610002:Bob::bob_test", "--user", "9996620003:Carol:::carol-secret:carol's",
            "--bot", BOT_TOKEN + ":helper_bot", "--log-level", "info"],
            stderr=log)
        try:
            with open(keyfile, "w") as handle:
                handle.write(ready["public_key"])
            rsa.add_key(ready["public_key"], old=False)
            mtcall = Mtcall(args.mtcall, ready, keyfile)
            for name, step in [("password set by our client", password_set_by_our_client(mtcall, ready, workdir)),
                               ("bots", bots(mtcall, ready)),
                               ("QR: Telethon shows", telethon_shows_our_client_accepts(mtcall, ready, workdir)),
                               ("QR: our client shows", our_client_shows_telethon_accepts(mtcall, ready, workdir)),
                               ("mtcall login on a terminal", asyncio.to_thread(login_on_a_terminal, mtcall, workdir))]:
                try:
                    await asyncio.wait_for(step, 480)
                    results.append((name, None))
                except Exception as error:  # report and go on
                    results.append((name, error))
                    print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
        finally:
            stop_mtserver(process)
            log.close()
    failed = [name for name, error in results if error is not None]
    print(f"sign-in interop: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
