#!/usr/bin/env python3
"""Telethon 1.45 against `mtserver` over the MTProto HTTP transport (`ConnectionHttp`, core.telegram.org/mtproto/
transports#http): the independent check of our server's HTTP role.

Telethon 1.45's HTTP reader cannot read any response: `HttpPacketCodec.read_packet` tests `line[-1] != b'\n'`, an
int against bytes, which is always true, so it raises IncompleteReadError on the status line. The script first
measures that on a response of our server, then runs Telethon with a reader that differs only in that test
(`line.endswith(b"\n")`); the rest of its HTTP handling (requests, Content-Length parsing, MTProtoSender) is
Telethon's.

One DC with two accounts, Alice and Bob. Both Telethon clients connect to mtserver's `http_port` only, so the key
exchange, sign-in and everything after it travel as `POST /api` requests:
  - both sign in with the test code and `get_me` names the right account;
  - Alice sends Bob a message; Bob, idle, receives it as a NewMessage event: the update reaches him in the response
    to a request our server held (Telethon never sends `http_wait`, so it is held for the implicit wait);
  - Bob answers, Alice receives the answer the same way, and both read the conversation's history;
  - with --mtcall, our client signs in as Bob over HTTP too (`mtcall --transport http`) and sends Alice a message,
    which her Telethon receives;
  - a raw request checks the quirk Telethon depends on: Content-Length is the last field of our response head
    (Telethon reads lines until Content-Length and then takes the empty line as the next two bytes).
Then two DCs: Carol (home DC 1) on Telethon's ConnectionHttp, pointed at DC 2's own port (every DC port of mtserver
serves HTTP as well as the TCP transports, told apart by the first bytes, as Telegram's do), signs in: her login is
answered PHONE_MIGRATE_1 and Telethon reconnects over HTTP to DC 1's port from `help.getConfig`, where `get_me`
names her.
Every await is bounded in time. Exit status 0 only if every check passed.

Usage: http_interop.py --mtserver PATH [--mtcall PATH]
"""
import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys

from telethon import TelegramClient, events
from telethon.network.connection import ConnectionHttp
from telethon.network.connection.http import HttpPacketCodec
from telethon.sessions import MemorySession

from telethon_common import run_against_mtserver
from telethon_scenario import sign_in

ALICE = ("9996620001", "22222", "alice_test")
BOB = ("9996620002", "22222", "bob_test")
CAROL = ("9996610003", "11111", "carol_test")


class LineFixedHttpPacketCodec(HttpPacketCodec):
    """Telethon's reader with the end-of-line test corrected; like Telethon's, it reads header lines until one
    starts with "content-length: " (any case) and takes the next two bytes as the empty line."""
    async def read_packet(self, reader):
        for _ in range(128):
            line = await reader.readline()
            if not line.endswith(b"\n"):
                raise asyncio.IncompleteReadError(line, None)
            if line.lower().startswith(b"content-length: "):
                await reader.readexactly(2)
                return await reader.readexactly(int(line[16:-2]))
        raise ValueError("no Content-Length in 128 lines")


class LineFixedConnectionHttp(ConnectionHttp):
    packet_codec = LineFixedHttpPacketCodec


async def telethon_reader_quirk(port):
    """Feeds a response of our server (to a req_pq_multi) to Telethon's own reader and to the corrected one:
    returns (what Telethon's raised, the length of the body the corrected one read)."""
    import os
    import struct
    import time
    body = bytes(8) + struct.pack("<q", int(time.time()) << 32) + struct.pack("<i", 20) \
        + struct.pack("<I", 0xbe7e8ef1) + os.urandom(16)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /api HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    data = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    length = int([line for line in data.split(b"\r\n") if line.lower().startswith(b"content-length:")][0][15:])
    data += await asyncio.wait_for(reader.readexactly(length), 10)
    writer.close()
    results = []
    for codec in (HttpPacketCodec, LineFixedHttpPacketCodec):
        stream = asyncio.StreamReader()
        stream.feed_data(data)
        stream.feed_eof()
        try:
            results.append(len(await codec(None).read_packet(stream)))
        except Exception as error:
            results.append(f"{type(error).__name__}: {error}")
    return results


def http_client(ready):
    session = MemorySession()
    session.set_dc(2, "127.0.0.1", ready["http_port"])
    return TelegramClient(session, api_id=1, api_hash="0" * 32, connection=LineFixedConnectionHttp, timeout=10,
                          connection_retries=2, retry_delay=0.2, request_retries=3)


MTCALL = None


async def mtcall(flags, method, params):
    """Runs `mtcall FLAGS METHOD PARAMS` off the event loop (Telethon keeps reading meanwhile); returns its JSON."""
    done = await asyncio.to_thread(subprocess.run, [MTCALL, *flags, method, json.dumps(params)], capture_output=True,
                                   text=True, timeout=60, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise AssertionError(f"mtcall {method}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def response_head(port):
    """Sends a request our server refuses (GET) and returns the field names of its response head, in order."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 8192:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
    lines = data.split(b"\r\n\r\n")[0].split(b"\r\n")
    return lines[0].decode(), [line.split(b":")[0].decode().lower() for line in lines[1:]]


async def scenario(ready, keyfile, workdir, log_path):
    assert ready.get("http_port"), f"mtserver printed no http_port: {ready}"
    telethons, fixed = await telethon_reader_quirk(ready["http_port"])
    assert isinstance(fixed, int) and fixed > 0, f"the corrected reader failed: {fixed}"
    print(f"ok   Telethon's own HTTP reader on our resPQ response: {telethons}; corrected: {fixed}-byte body",
          flush=True)
    TelegramClient._config = None
    alice, bob = http_client(ready), http_client(ready)
    try:
        await sign_in(alice, ALICE)
        await sign_in(bob, BOB)
        print("ok   both signed in over HTTP", flush=True)

        inboxes = {"alice": asyncio.Queue(), "bob": asyncio.Queue()}
        for name, client in (("alice", alice), ("bob", bob)):
            async def deliver(event, name=name):
                inboxes[name].put_nowait(event.message)
            client.add_event_handler(deliver, events.NewMessage(incoming=True))
        # Bob is idle now: his next message arrives in the response to a held request.
        await asyncio.sleep(1)
        sent = await asyncio.wait_for(alice.send_message("@" + BOB[2], "hello bob, over http"), 15)
        got = await asyncio.wait_for(inboxes["bob"].get(), 20)
        assert got.message == "hello bob, over http" and got.sender_id == alice._self_id, f"Bob got {got.message!r}"
        reply = await asyncio.wait_for(bob.send_message("@" + ALICE[2], "hello alice"), 15)
        back = await asyncio.wait_for(inboxes["alice"].get(), 20)
        assert back.message == "hello alice" and back.sender_id == bob._self_id, f"Alice got {back.message!r}"
        print(f"ok   round trip: Alice's {sent.id} reached Bob, Bob's {reply.id} reached Alice", flush=True)

        history = await asyncio.wait_for(alice.get_messages("@" + BOB[2], limit=10), 15)
        assert [m.message for m in history] == ["hello alice", "hello bob, over http"], \
            f"history: {[m.message for m in history]}"
        print("ok   history", flush=True)

        if MTCALL:
            flags = ["--server", f"127.0.0.1:{ready['http_port']}", "--rsa-key", keyfile, "--transport", "http",
                     "--timeout", "20", "--session", os.path.join(workdir, "bob.sqlite")]
            resolved = await mtcall(flags + ["--phone", BOB[0], "--code", BOB[1]], "contacts.resolveUsername",
                                    {"username": ALICE[2]})
            user = resolved["users"][0]
            peer = {"_": "inputPeerUser", "user_id": user["id"], "access_hash": user["access_hash"]}
            await mtcall(flags, "messages.sendMessage", {"peer": peer, "message": "from mtcall over http",
                                                         "random_id": "9"})
            got = await asyncio.wait_for(inboxes["alice"].get(), 20)
            assert got.message == "from mtcall over http" and got.sender_id == bob._self_id, f"Alice got {got.message!r}"
            print("ok   mtcall --transport http signed in as Bob; Alice's Telethon received its message", flush=True)
    finally:
        for client in (alice, bob):
            await asyncio.wait_for(client.disconnect(), 10)

    status, fields = response_head(ready["http_port"])
    assert status.startswith("HTTP/1.1 405"), f"GET answered {status!r}"
    assert fields and fields[-1] == "content-length", f"response fields {fields}: Content-Length is not last"
    print(f"ok   {status}; Content-Length is the last of {fields}", flush=True)


async def migration_scenario(ready, keyfile, workdir, log_path):
    ports = ready["ports"]
    assert set(ports) == {"1", "2"}, f"two DCs expected: {ports}"
    session = MemorySession()
    session.set_dc(2, "127.0.0.1", ports["2"])
    TelegramClient._config = None
    carol = TelegramClient(session, api_id=1, api_hash="0" * 32, connection=LineFixedConnectionHttp, timeout=10,
                           connection_retries=2, retry_delay=0.2, request_retries=3)
    try:
        await sign_in(carol, CAROL)
        assert (carol.session.dc_id, carol.session.port) == (1, ports["1"]), \
            f"Telethon is on DC {carol.session.dc_id} port {carol.session.port}, not DC 1's {ports['1']}"
    finally:
        await asyncio.wait_for(carol.disconnect(), 10)
    with open(log_path) as handle:
        log = handle.read()
    assert "PHONE_MIGRATE_1" in log, "the server never moved Carol's login"
    print(f"ok   Carol's login moved from DC 2's port {ports['2']} to DC 1's {ports['1']}, over HTTP on both",
          flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall")
    args = parser.parse_args()
    global MTCALL
    MTCALL = args.mtcall
    arguments = ["--user", f"{ALICE[0]}:Alice::{ALICE[2]}", "--user", f"{BOB[0]}:Bob::{BOB[2]}", "--timeout", "200"]
    status = asyncio.run(run_against_mtserver("http_interop", args.mtserver, arguments, scenario, limit=180))
    two_dcs = ["--dcs", "2", "--user", f"{CAROL[0]}:Carol::{CAROL[2]}", "--timeout", "120"]
    status |= asyncio.run(run_against_mtserver("http_interop (two DCs)", args.mtserver, two_dcs, migration_scenario,
                                               limit=90))
    sys.exit(status)


if __name__ == "__main__":
    main()
