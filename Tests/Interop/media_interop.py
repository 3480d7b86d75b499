#!/usr/bin/env python3
"""Media and albums between Telethon 1.45 and our client (`mtcall`) on `mtserver`, each way:

1. Alice on Telethon sends Bob an album of three PNG photos (`send_file` with a list), each caption in HTML with an
   emoji or a ZWJ sequence before its formatting; Bob's `mtcall events` prints ONE album event with the three
   messages, their captions and entities at the UTF-16 offsets Telethon sent.
2. Bob on `mtcall send-file` sends an album of two photos and a video (with its duration and size); Telethon's
   `events.Album` sees the album as one event with the caption, and `message.video` the video with the duration and
   size sent, and for an MP4 sent without them, the duration and size read from its boxes.
3. Alice on Telethon sends Bob a photo and a 3 MB document; Bob's `mtcall download-media` downloads each, byte for
   byte the file Telethon sent and what Telethon's own `download_media` gets, with its progress on standard error.
   The server renews a file reference after every MiB served (`--faults expire-reference=1048576`), so the
   document's download renews its reference twice on the way by fetching the message again.

Every subprocess and await is bounded in time; mtserver is stopped on the way out.

Usage: media_interop.py --mtserver PATH --mtcall PATH
"""
import asyncio
import hashlib
import json
import os
import struct
import subprocess
import sys
import zlib

from telethon import events, types

from message_interop import Mtcall, next_event
from telethon_common import run_against_mtserver, signed_in, tool_arguments

ALICE = ("9996620001", "22222")
BOB = ("9996610002", "11111")

# Captions whose entities come after characters of two (🐈) and eight (👩‍👩‍👧) UTF-16 code units.
CAPTIONS = ["🐈 <b>one</b>", "👩‍👩‍👧 two <i>2</i>", "plain 🐈🐈 <code>x</code>"]
TEXTS = ["🐈 one", "👩‍👩‍👧 two 2", "plain 🐈🐈 x"]


def png(width, height, shade):
    """A valid PNG of one grey shade."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes([shade]) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def ok(name):
    print(f"ok   {name}", flush=True)


def entity_spans(entities):
    """(kind, offset, length) of tl-json entities as mtcall prints them."""
    return [(e["_"], int(e["offset"]), int(e["length"])) for e in entities or []]


def telethon_spans(entities):
    names = {types.MessageEntityBold: "messageEntityBold", types.MessageEntityItalic: "messageEntityItalic",
             types.MessageEntityCode: "messageEntityCode"}
    return [(names.get(type(e), type(e).__name__), e.offset, e.length) for e in entities or []]


async def telethon_sends_an_album(mtcall, alice, workdir):
    """Part 1: Alice sends an album on Telethon; Bob's `mtcall events` sees one album event."""
    paths = []
    for index in range(3):
        path = os.path.join(workdir, f"telethon-{index}.png")
        with open(path, "wb") as f:
            f.write(png(8 + index, 6, 40 * index))
        paths.append(path)
    # A first short run saves Bob's update box, so the next run catches up on whatever it starts after.
    mtcall("events", timeout="3")
    listener = await mtcall.events(40)
    try:
        sent = await asyncio.wait_for(alice.send_file("@bob_test", paths, caption=CAPTIONS, parse_mode="html"), 30)
        assert len(sent) == 3 and len({m.grouped_id for m in sent}) == 1, sent
        album = await next_event(listener, lambda e: e["event"] in ("album", "newMessage"), "the album")
        assert album["event"] == "album", f"the album came as {album['event']}: {album}"
        messages = album["messages"]
        assert len(messages) == 3, album
        assert {m["grouped_id"] for m in messages} == {album["grouped_id"]}, album
        assert [m["message"] for m in messages] == TEXTS, [m["message"] for m in messages]
        assert all(m["media"]["_"] == "messageMediaPhoto" for m in messages), messages
        ours = [entity_spans(m.get("entities")) for m in messages]
        theirs = [telethon_spans(m.entities) for m in sent]
        assert ours == theirs, (ours, theirs)
        assert ours == [[("messageEntityBold", 3, 3)], [("messageEntityItalic", 13, 1)],
                        [("messageEntityCode", 11, 1)]], ours
        ok("our client gets Telethon's album of three photos as one album event, entities at their UTF-16 offsets")
    finally:
        if listener.returncode is None:
            listener.terminate()
        await asyncio.wait_for(listener.wait(), 15)


async def our_client_sends(mtcall, alice, workdir):
    """Part 2: Bob sends an album and a video with `mtcall send-file`; Telethon sees them."""
    queue = asyncio.Queue()

    async def put(event):
        queue.put_nowait(event)

    alice.add_event_handler(put, events.Album())
    alice.add_event_handler(put, events.NewMessage(incoming=True))

    async def expect(kind, match=lambda _: True):
        async def take():
            while True:
                event = await queue.get()
                if isinstance(event, kind) and match(event):
                    return event
        return await asyncio.wait_for(take(), 20)

    first, second = os.path.join(workdir, "swift-a.png"), os.path.join(workdir, "swift-b.png")
    for path, shade in ((first, 10), (second, 200)):
        with open(path, "wb") as f:
            f.write(png(16, 9, shade))
    # Run here rather than through Mtcall, for its standard error: the upload's progress.
    done = subprocess.run([mtcall.path, *mtcall.flags, "--timeout", "20", "send-file", "@alice_test", first,
                           "--caption", "🐈 <b>ours</b>", "--html", "--album", second],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    printed = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert len(printed) == 2 and len({m["grouped_id"] for m in printed}) == 1, printed
    assert "uploaded" in done.stderr, done.stderr
    album = await expect(events.Album.Event)
    assert len(album.messages) == 2 and all(m.photo is not None for m in album.messages), album.messages
    assert album.messages[0].message == "🐈 ours" and album.messages[1].message == "", album.messages
    assert telethon_spans(album.messages[0].entities) == [("messageEntityBold", 3, 4)], album.messages[0].entities
    ok("mtcall send-file --album: Telethon's events.Album sees both photos, the caption's bold at its offset")

    video = os.path.join(workdir, "clip.mp4")
    with open(video, "wb") as f:
        f.write(os.urandom(300_000))
    mtcall("send-file", "@alice_test", video, "--caption", "clip", "--duration", "7", "--width", "320",
           "--height", "240")
    event = await expect(events.NewMessage.Event, lambda e: e.message.message == "clip")
    message = event.message
    assert message.video is not None, message.media
    assert message.video.size == 300_000 and message.file.duration == 7, (message.video.size, message.file.duration)
    assert (message.file.width, message.file.height) == (320, 240), (message.file.width, message.file.height)
    ok("mtcall send-file of a video: Telethon's message.video has the size and duration sent")

    # Without --duration, --width and --height they are read from the file's MP4 boxes (Fixtures/media).
    fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Fixtures", "media", "faststart.mp4")
    mtcall("send-file", "@alice_test", fixture, "--caption", "read")
    event = await expect(events.NewMessage.Event, lambda e: e.message.message == "read")
    message = event.message
    assert message.video is not None and message.video.size == os.path.getsize(fixture), message.media
    assert abs(message.file.duration - 5.005) < 0.01, message.file.duration
    assert (message.file.width, message.file.height) == (640, 360), (message.file.width, message.file.height)
    ok("mtcall send-file of an MP4 without attributes: Telethon sees the duration and size read from its boxes")


def log_count(log_path, text):
    with open(log_path) as handle:
        return sum(text in line for line in handle)


async def our_client_downloads(mtcall, alice, workdir, log_path):
    """Part 3: Alice sends a photo and a document on Telethon; Bob's `mtcall download-media` gets them whole."""
    photo_path, document_path = os.path.join(workdir, "telethon.png"), os.path.join(workdir, "telethon.bin")
    with open(photo_path, "wb") as f:
        f.write(png(64, 48, 90))
    with open(document_path, "wb") as f:
        f.write(os.urandom(3 * 1024 * 1024))
    photo = await asyncio.wait_for(alice.send_file("@bob_test", photo_path, caption="photo to fetch"), 30)
    document = await asyncio.wait_for(alice.send_file("@bob_test", document_path, caption="document to fetch",
                                                      force_document=True), 60)
    telethon_photo = await asyncio.wait_for(alice.download_media(photo, file=bytes), 30)
    # Bob's ids of the two messages: his own box's, as `history` prints them.
    ids = {m["message"]: m["id"] for m in mtcall("history", "@alice_test", "--limit", "10")}
    for caption, sent_path, expected in (("photo to fetch", photo_path, telethon_photo),
                                         ("document to fetch", document_path, None)):
        fetches = log_count(log_path, "messages.getMessages")
        out = os.path.join(workdir, f"ours-{ids[caption]}")
        done = subprocess.run([mtcall.path, *mtcall.flags, "--timeout", "20", "download-media", "@alice_test",
                               str(ids[caption]), "--out", out], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "downloaded" in done.stderr, done.stderr
        printed = json.loads(done.stdout.strip().splitlines()[-1])
        with open(out, "rb") as f:
            ours = f.read()
        with open(sent_path, "rb") as f:
            theirs = f.read()
        assert ours == theirs, (caption, len(ours), len(theirs))
        assert expected is None or ours == expected, (caption, len(ours), len(expected))
        assert printed["size"] == len(theirs) and printed["sha256"] == hashlib.sha256(theirs).hexdigest(), printed
        # mtcall fetches the message once itself; the 3 MiB document's reference is renewed after its first and
        # second MiB served, and each renewal fetches it again.
        fetched = log_count(log_path, "messages.getMessages") - fetches
        assert fetched == (1 if expected is not None else 3), (caption, fetched)
    ok("mtcall download-media: Telethon's photo byte for byte as Telethon sent and downloads it")
    ok("mtcall download-media: Telethon's 3 MB document byte for byte, the message fetched again for each of the"
       " two references that expired on the way")


async def scenario(ready, keyfile, workdir, log_path):
    mtcall = Mtcall(TOOLS.mtcall, ready, keyfile, os.path.join(workdir, "bob.sqlite"))
    mtcall("--phone", BOB[0], "--code", BOB[1], "users.getUsers", '{"id": [{"_": "inputUserSelf"}]}')
    alice = await signed_in(ready, *ALICE)
    try:
        await telethon_sends_an_album(mtcall, alice, workdir)
        await our_client_sends(mtcall, alice, workdir)
        await our_client_downloads(mtcall, alice, workdir, log_path)
    finally:
        await asyncio.wait_for(alice.disconnect(), 10)


if __name__ == "__main__":
    TOOLS = tool_arguments()
    sys.exit(asyncio.run(run_against_mtserver(
        "media interop", TOOLS.mtserver,
        ["--dcs", "2", "--timeout", "300", "--user", f"{ALICE[0]}:Alice::alice_test",
         "--user", f"{BOB[0]}:Bob::bob_test", "--faults", "expire-reference=1048576"], scenario, limit=120)))
