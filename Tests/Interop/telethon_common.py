"""What the interop scripts share: starting and stopping mtserver, Telethon's seven TCP connection classes and how
each reaches mtserver, and a Telethon user signed in on it."""
import argparse
import asyncio
import json
import socket
import subprocess

from telethon import TelegramClient, connection
from telethon.sessions import MemorySession

CLASSES = [
    connection.ConnectionTcpFull,
    connection.ConnectionTcpAbridged,
    connection.ConnectionTcpIntermediate,
    connection.ConnectionTcpObfuscated,
    connection.ConnectionTcpMTProxyAbridged,
    connection.ConnectionTcpMTProxyIntermediate,
    connection.ConnectionTcpMTProxyRandomizedIntermediate,
]
# A plain secret: the proxy port then accepts every framing, and a client that prefixes "dd" uses padded intermediate.
SECRET = "0123456789abcdef" * 2


def proxy_arguments(cls, ready):
    """TelegramClient's `proxy` argument for an MTProxy class (the randomized one with a `dd` secret), else none."""
    if "MTProxy" not in cls.__name__:
        return {}
    dd = cls is connection.ConnectionTcpMTProxyRandomizedIntermediate
    return {"proxy": ("127.0.0.1", ready["proxy_port"], ("dd" if dd else "") + ready["secret"])}


def tool_arguments():
    """The `--mtserver PATH --mtcall PATH` every script that drives both tools takes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall", required=True)
    return parser.parse_args()


def free_port():
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_mtserver(path, arguments, stderr=None):
    """Runs `mtserver --generate-key ARGUMENTS` and returns (process, the JSON line it printed when ready)."""
    process = subprocess.Popen([path, "--generate-key", *arguments], stdout=subprocess.PIPE, stderr=stderr, text=True)
    line = process.stdout.readline()
    if not line:
        process.kill()
        raise SystemExit("mtserver exited before it was ready")
    return process, json.loads(line)


def stop_mtserver(process):
    """SIGTERM, then SIGKILL if it has not stopped within 10 s."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()


async def signed_in(ready, phone, code):
    """A Telethon client on an in-memory session that starts on DC 2 of `ready`'s mtserver, connected and signed in
    as the test account `phone`; disconnected again if that fails."""
    client = TelegramClient(MemorySession(), api_id=1, api_hash="0" * 32, timeout=10, connection_retries=3)
    client.session.set_dc(2, "127.0.0.1", ready["ports"]["2"])
    try:
        await asyncio.wait_for(client.connect(), 30)
        await asyncio.wait_for(client.send_code_request(phone), 30)
        await asyncio.wait_for(client.sign_in(phone, code), 30)
    except BaseException:
        await asyncio.wait_for(client.disconnect(), 10)
        raise
    return client


async def run_against_mtserver(name, mtserver, arguments, scenario, limit=240):
    """Starts `mtserver --generate-key --log-level debug ARGUMENTS` (its log in a file), trusts its key, runs
    `scenario(ready, keyfile, workdir, log_path)` within `limit` seconds, stops the server and prints the verdict;
    returns the exit status (0 only if the scenario passed)."""
    import os
    import tempfile

    from telethon.crypto import rsa

    with tempfile.TemporaryDirectory() as workdir:
        keyfile = os.path.join(workdir, "key.pem")
        log_path = os.path.join(workdir, "mtserver.log")
        with open(log_path, "w") as log:
            process, ready = start_mtserver(mtserver, ["--log-level", "debug", *arguments], stderr=log)
            try:
                with open(keyfile, "w") as handle:
                    handle.write(ready["public_key"])
                rsa.add_key(ready["public_key"], old=False)
                await asyncio.wait_for(scenario(ready, keyfile, workdir, log_path), limit)
                failed = None
            except Exception as error:
                failed = error
                print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
            finally:
                stop_mtserver(process)
    print(f"{name}: {'1 passed, 0 failed' if failed is None else '0 passed, 1 failed'}")
    return 0 if failed is None else 1
