"""What the interop scripts share: starting and stopping mtserver, Telethon's seven TCP connection classes and how
each reaches mtserver, and a Telethon user signed in on it."""
import asyncio
import json
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
