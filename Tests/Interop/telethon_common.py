"""What the Telethon interop scripts share: the seven TCP connection classes and how each reaches mtserver."""
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
