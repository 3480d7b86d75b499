"""What the interop scripts share: starting and stopping mtserver, Telethon's seven TCP connection classes and how
each reaches mtserver."""
import json
import subprocess

from telethon import connection

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
