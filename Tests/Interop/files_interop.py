#!/usr/bin/env python3
"""Files between our client (`mtcall upload` / `mtcall download`) and Telethon 1.45 with cryptg, through mtserver.

1. Bob (home DC 1) uploads 24 MB with `mtcall upload --to @alice_test` (a big file: saveBigFilePart, parts in
   flight over media connections). Alice on Telethon (home DC 2) finds the document in her dialog with Bob and
   downloads it (Telethon follows FILE_MIGRATE_1); its SHA-256 must be the file's.
2. Alice uploads 24 MB with Telethon's send_file to Bob; Bob downloads it with `mtcall download` from the document's
   location (the file lives on DC 2, so the download follows FILE_MIGRATE_2 and imports his authorization there);
   its SHA-256 must be what Telethon sent.
3. Whole 1 MiB parts, Telegram's largest `upload.getFile` limit: Alice's Telethon downloads Bob's document again with
   `download_file(part_size_kb=1024)`. Telethon 1.45 cuts a request to 512 KiB (its MAX_CHUNK_SIZE) and joins two
   answers into each 1 MiB chunk, so the script raises that cap to 1 MiB first; every `upload.getFile` it then sends
   is recorded and must ask for 1,048,576 bytes, and the bytes must match.
4. Telethon's largest upload part: `upload_file(part_size_kb=1024)` must be refused by Telethon itself, then Alice
   uploads 12 MiB and 4097 bytes with `part_size_kb=512` and sends it to Bob, who downloads it with `mtcall download
   --part-size 1048576`; the SHA-256 must be what Telethon sent.
Every subprocess and await is bounded in time. Exit status 0 only if both checks passed.

Usage: files_interop.py --mtserver PATH --mtcall PATH
"""
import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys

import cryptg  # noqa: F401  Telethon uses it for AES when it is importable; the check needs it there
import telethon.client.downloads
from telethon.tl import functions

from telethon_common import run_against_mtserver, signed_in

SIZE = 24 * 1024 * 1024


def mtcall(path, ready, keyfile, session, *arguments, timeout=300):
    argv = [path, "--server", f"127.0.0.1:{ready['ports']['2']}", "--rsa-key", keyfile, "--timeout", "30",
            "--session", session, *arguments]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"mtcall {' '.join(arguments[:2])}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


async def run(args, ready, keyfile, workdir):
    session = os.path.join(workdir, "bob.sqlite")
    ours = os.urandom(SIZE)
    upload_path = os.path.join(workdir, "ours.bin")
    with open(upload_path, "wb") as handle:
        handle.write(ours)
    alice = await signed_in(ready, "9996620001", "22222")
    try:
        sent = mtcall(args.mtcall, ready, keyfile, session, "--phone", "9996610002", "--code", "11111",
                      "upload", upload_path, "--to", "@alice_test")
        assert sent["sha256"] == hashlib.sha256(ours).hexdigest() and sent["size"] == SIZE, sent
        messages = await asyncio.wait_for(alice.get_messages("@bob_test", limit=1), 30)
        assert messages and messages[0].document, f"no document from Bob: {messages}"
        got = await asyncio.wait_for(alice.download_media(messages[0], file=bytes), 300)
        assert hashlib.sha256(got).digest() == hashlib.sha256(ours).digest(), f"Telethon got {len(got)} other bytes"
        print(f"ok   Telethon downloaded the {SIZE} bytes our client uploaded (SHA-256 equal)", flush=True)

        theirs = os.urandom(SIZE)
        message = await asyncio.wait_for(alice.send_file("@bob_test", theirs, force_document=True,
                                                         file_name="theirs.bin"), 300)
        document = message.document
        location = {"_": "inputDocumentFileLocation", "id": str(document.id), "access_hash": str(document.access_hash),
                    "file_reference": document.file_reference.hex(), "thumb_size": ""}
        out = os.path.join(workdir, "theirs.bin")
        got = mtcall(args.mtcall, ready, keyfile, session, "download", json.dumps(location), "--out", out)
        with open(out, "rb") as handle:
            written = handle.read()
        assert hashlib.sha256(written).digest() == hashlib.sha256(theirs).digest(), \
            f"our client wrote {len(written)} other bytes"
        assert got["sha256"] == hashlib.sha256(theirs).hexdigest() and got["size"] == SIZE, got
        print(f"ok   our client downloaded the {SIZE} bytes Telethon uploaded (SHA-256 equal)", flush=True)

        await one_mebibyte_parts(args, ready, keyfile, session, workdir, alice, messages[0].document, ours)
    finally:
        await asyncio.wait_for(alice.disconnect(), 10)


async def one_mebibyte_parts(args, ready, keyfile, session, workdir, alice, document, ours):
    limits = []
    call = alice._call

    async def recording(sender, request, *rest, **named):
        if isinstance(request, functions.upload.GetFileRequest):
            limits.append(request.limit)
        return await call(sender, request, *rest, **named)

    alice._call = recording
    cap = telethon.client.downloads.MAX_CHUNK_SIZE
    telethon.client.downloads.MAX_CHUNK_SIZE = 1 << 20
    try:
        got = await asyncio.wait_for(alice.download_file(document, file=bytes, part_size_kb=1024), 300)
    finally:
        telethon.client.downloads.MAX_CHUNK_SIZE = cap
        alice._call = call
    assert got == ours, f"Telethon got {len(got)} other bytes with 1 MiB parts"
    assert len(limits) >= SIZE >> 20 and set(limits) == {1 << 20}, f"limits asked: {sorted(set(limits))} x{len(limits)}"
    print(f"ok   Telethon downloaded {SIZE} bytes in {len(limits)} requests of 1,048,576 bytes (bytes equal)", flush=True)

    theirs = os.urandom((12 << 20) + 4097)
    try:
        await alice.upload_file(theirs, part_size_kb=1024)
        raise AssertionError("Telethon accepted upload parts of 1024 KiB")
    except ValueError:
        pass
    uploaded = await asyncio.wait_for(alice.upload_file(theirs, part_size_kb=512, file_name="half.bin"), 300)
    message = await asyncio.wait_for(alice.send_file("@bob_test", uploaded, force_document=True), 60)
    document = message.document
    location = {"_": "inputDocumentFileLocation", "id": str(document.id), "access_hash": str(document.access_hash),
                "file_reference": document.file_reference.hex(), "thumb_size": ""}
    out = os.path.join(workdir, "half.bin")
    got = mtcall(args.mtcall, ready, keyfile, session, "download", json.dumps(location), "--out", out,
                 "--part-size", str(1 << 20))
    with open(out, "rb") as handle:
        written = handle.read()
    assert written == theirs, f"our client wrote {len(written)} other bytes"
    assert got["sha256"] == hashlib.sha256(theirs).hexdigest() and got["size"] == len(theirs), got
    print(f"ok   our client downloaded in 1 MiB parts the {len(theirs)} bytes Telethon uploaded in 512 KiB parts "
          "(bytes equal)", flush=True)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall", required=True)
    args = parser.parse_args()
    return await run_against_mtserver(
        "files interop", args.mtserver,
        ["--dcs", "2", "--timeout", "600", "--user", "9996620001:Alice::alice_test",
         "--user", "9996610002:Bob::bob_test"],
        lambda ready, keyfile, workdir, log_path: run(args, ready, keyfile, workdir), limit=900)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
