#!/usr/bin/env python3
"""Files between our client (`mtcall upload` / `mtcall download`) and Telethon 1.45 with cryptg, through mtserver.

1. Bob (home DC 1) uploads 24 MB with `mtcall upload --to @alice_test` (a big file: saveBigFilePart, parts in
   flight over media connections). Alice on Telethon (home DC 2) finds the document in her dialog with Bob and
   downloads it (Telethon follows FILE_MIGRATE_1); its SHA-256 must be the file's.
2. Alice uploads 24 MB with Telethon's send_file to Bob; Bob downloads it with `mtcall download` from the document's
   location (the file lives on DC 2, so the download follows FILE_MIGRATE_2 and imports his authorization there);
   its SHA-256 must be what Telethon sent.
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
    finally:
        await asyncio.wait_for(alice.disconnect(), 10)


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
