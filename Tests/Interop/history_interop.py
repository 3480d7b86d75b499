#!/usr/bin/env python3
"""History paging across implementations: Telethon 1.45's iter_messages and our client's iterator (`mtcall history`)
over one chat of 1,000 messages seeded on `mtserver` (--seed-history).

Alice's chat with Bob holds ids 1...1000. Checks:
  - Telethon's iter_messages, newest first and reverse=True, yields 1000...1 and 1...1000, each once.
  - `mtcall history bob_test` (our iterator: resolve through the peer cache, then getHistory pages) prints the same
    ids as Telethon's newest-first pass; with --limit 37 the newest 37.
  - `mtcall send bob_test TEXT` then reaches Bob (Telethon's iter_messages on Bob's side sees it as his newest);
    with --html, Bob's entities equal Telethon's own parse of the markup; with --markdown, MarkdownV2's.
  - The server's log shows one contacts.resolveUsername during the first mtcall run and none during the later two:
    they named Bob from the session's peer cache.
Every subprocess and await is bounded in time. Exit status 0 only if every check passed.

Usage: history_interop.py --mtserver PATH --mtcall PATH
"""
import argparse
import asyncio
import json
import os
import sys

import telethon.extensions.html
from telethon_common import run_against_mtserver, signed_in

ALICE = ("9996620001", "22222")
BOB = ("9996610002", "11111")
COUNT = 1000


async def mtcall(args, ready, keyfile, session, *words, sign_in=False):
    """Runs mtcall as Alice with `words`; returns its stdout lines (exit status 0 required)."""
    flags = ["--server", f"127.0.0.1:{ready['ports']['2']}", "--dc", "2", "--rsa-key", keyfile, "--session", session]
    if sign_in:
        flags += ["--phone", ALICE[0], "--code", ALICE[1]]
    process = await asyncio.create_subprocess_exec(args.mtcall, *flags, *words, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, f"mtcall {' '.join(words)}: {err.decode()}"
    return out.decode().splitlines()


def resolves(log_path):
    """How many contacts.resolveUsername the server's log shows so far."""
    with open(log_path) as handle:
        return sum("contacts.resolveUsername" in line for line in handle)


def entity_tuples(entities):
    return [(type(e).__name__, e.offset, e.length, getattr(e, "url", None)) for e in entities or []]


async def scenario(args, ready, keyfile, workdir, log_path):
    alice = await signed_in(ready, *ALICE)
    bob = await signed_in(ready, *BOB)
    try:
        newest_first = [m.id async for m in alice.iter_messages("bob_test")]
        oldest_first = [m.id async for m in alice.iter_messages("bob_test", reverse=True)]
        assert newest_first == list(range(COUNT, 0, -1)), f"Telethon newest first: {newest_first[:5]}... " \
                                                          f"({len(newest_first)})"
        assert oldest_first == list(range(1, COUNT + 1)), f"Telethon reverse: {oldest_first[:5]}... ({len(oldest_first)})"
        print(f"ok   Telethon's iter_messages paged {COUNT} messages both ways", flush=True)

        session = os.path.join(workdir, "alice.sqlite")
        before = resolves(log_path)
        lines = await mtcall(args, ready, keyfile, session, "history", "bob_test", sign_in=True)
        first_run = resolves(log_path) - before
        ours = [json.loads(line)["id"] for line in lines]
        assert ours == newest_first, f"mtcall history printed {ours[:5]}... ({len(ours)})"
        limited = [json.loads(line)["id"] for line in await mtcall(args, ready, keyfile, session, "history", "bob_test",
                                                                   "--limit", "37")]
        assert limited == newest_first[:37], f"mtcall history --limit 37 printed {limited}"
        print(f"ok   our iterator yields the same {len(ours)} ids as Telethon, and --limit 37 the newest 37", flush=True)

        await mtcall(args, ready, keyfile, session, "send", "bob_test", "from the peer cache")
        later_runs = resolves(log_path) - before - first_run
        assert (first_run, later_runs) == (1, 0), \
            f"contacts.resolveUsername: {first_run} in the first mtcall run, {later_runs} in the two after"
        print("ok   one contacts.resolveUsername in the first mtcall run, none in the two after (the peer cache)",
              flush=True)
        newest = [m async for m in bob.iter_messages("alice_test", limit=1)]
        assert newest and newest[0].message == "from the peer cache", f"Bob's newest: {newest}"
        print("ok   mtcall send reached Bob", flush=True)

        # Formatted sends: the entities Bob's Telethon reads are the ones Telethon's own HTML parser makes of the
        # same markup (UTF-16 offsets past an astral-plane emoji), and MarkdownV2's as the Bot API defines them.
        markup = '<b>bold</b> \U0001F600 <a href="https://example.com/">link</a> <i>s</i>'
        await mtcall(args, ready, keyfile, session, "send", "bob_test", "--html", markup)
        text, entities = telethon.extensions.html.parse(markup)
        newest = [m async for m in bob.iter_messages("alice_test", limit=1)]
        assert newest and newest[0].message == text, f"Bob's newest: {newest}"
        assert entity_tuples(newest[0].entities) == entity_tuples(entities), \
            f"entities {entity_tuples(newest[0].entities)} != Telethon's parse {entity_tuples(entities)}"
        await mtcall(args, ready, keyfile, session, "send", "bob_test", "--markdown", "*b* _i_ ||s|| \\.")
        newest = [m async for m in bob.iter_messages("alice_test", limit=1)]
        assert newest and newest[0].message == "b i s .", f"Bob's newest: {newest}"
        assert entity_tuples(newest[0].entities) == [("MessageEntityBold", 0, 1, None), ("MessageEntityItalic", 2, 1, None),
                                                     ("MessageEntitySpoiler", 4, 1, None)], newest[0].entities
        print("ok   mtcall send --html and --markdown: Bob's entities are Telethon's parse of the HTML, and MarkdownV2's",
              flush=True)
    finally:
        for client in (alice, bob):
            await asyncio.wait_for(client.disconnect(), 10)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall", required=True)
    args = parser.parse_args()
    return await run_against_mtserver(
        "history interop", args.mtserver,
        ["--dcs", "2", "--timeout", "300", "--user", "9996620001:Alice::alice_test", "--user", "9996610002:Bob::bob_test",
         "--seed-history", f"9996620001:9996610002:{COUNT}"],
        lambda ready, keyfile, workdir, log_path: scenario(args, ready, keyfile, workdir, log_path))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
