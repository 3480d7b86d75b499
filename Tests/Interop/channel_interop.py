#!/usr/bin/env python3
"""Channel updates across implementations: Telethon 1.45 and our client (`mtcall updates`) in one supergroup on
`mtserver`.

Alice (Telethon) makes a supergroup and invites Carol (Telethon) and Bob (our client); then she posts p1…p5, deletes
p2 and posts p6:
  - Carol listens throughout. The server withholds the push of p4 (fault withhold-push), so Carol's next push, p5,
    skips a channel pts: Telethon's own update handling must find the gap and fill it with
    `updates.getChannelDifference` from our server. Carol must see p1…p5, each once, in order; then p2's deletion
    (`updateDeleteChannelMessages`, pts_count 1) and p6 with no further getChannelDifference.
  - Bob runs `mtcall updates` while p1 arrives (his channel box starts there), then stops. p2…p5 come while no client
    of his runs; his next `mtcall updates` asks `updates.getDifference`, which carries `updateChannelTooLong`, and
    then the channel's difference from his saved box: he must print p2…p6, each once, in order.
  - The server's log must show both Carol's and Bob's `updates.getChannelDifference`.
Every subprocess and await is bounded in time. Exit status 0 only if every check passed.

Usage: channel_interop.py --mtserver PATH --mtcall PATH
"""
import argparse
import asyncio
import json
import os
import sys

from telethon import events
from telethon.tl.functions.channels import CreateChannelRequest, InviteToChannelRequest

from telethon_common import run_against_mtserver, signed_in

ALICE = ("9996620001", "22222")
BOB = ("9996610002", "11111")
CAROL = ("9996620003", "22222")
POSTS = ["p1", "p2", "p3", "p4", "p5"]
WITHHELD = 4  # the fourth message sent on the server (all are posts) is not pushed


async def mtcall_updates(args, ready, keyfile, session, seconds, sign_in=False):
    """Starts `mtcall updates` for `seconds`; returns the process (stdout: one tl-json line per Updates)."""
    flags = ["--server", f"127.0.0.1:{ready['ports']['2']}", "--dc", "2", "--rsa-key", keyfile, "--session", session,
             "--timeout", str(seconds)]
    if sign_in:
        flags += ["--phone", BOB[0], "--code", BOB[1]]
    return await asyncio.create_subprocess_exec(args.mtcall, *flags, "updates", stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)


def channel_texts(line):
    """The texts of the channel messages in one printed Updates."""
    value = json.loads(line)
    texts = []
    for update in value.get("updates", []):
        if update.get("_") == "updateNewChannelMessage" and update["message"].get("_") == "message":
            texts.append(update["message"]["message"])
    return texts


async def read_texts(process, until=None, limit=30):
    """Channel texts from `process`'s lines until `until` is among them (or the process ends), within `limit` s."""
    texts = []

    async def read():
        while True:
            line = await process.stdout.readline()
            if not line:
                return
            texts.extend(channel_texts(line))
            if until is not None and until in texts:
                return

    await asyncio.wait_for(read(), limit)
    return texts


async def scenario(args, ready, keyfile, workdir, log_path):
    bob_session = os.path.join(workdir, "bob.sqlite")
    # Bob signs in (his home is DC 1: PHONE_MIGRATE_1) and keeps his box.
    first = await mtcall_updates(args, ready, keyfile, bob_session, 2, sign_in=True)
    _, err = await asyncio.wait_for(first.communicate(), 60)
    assert first.returncode == 0, f"mtcall sign-in run: {err.decode()}"

    alice = await signed_in(ready, *ALICE)
    carol = await signed_in(ready, *CAROL)
    try:
        seen = []
        arrived = asyncio.Event()
        deletions = asyncio.Queue()

        async def on_message(event):
            seen.append(event.message.message)
            if len(seen) >= len(POSTS):
                arrived.set()

        async def on_deleted(event):
            deletions.put_nowait(sorted(event.deleted_ids))

        created = await asyncio.wait_for(alice(CreateChannelRequest(title="Interop group", about="", megagroup=True)),
                                         30)
        group = created.chats[0]
        await asyncio.wait_for(alice(InviteToChannelRequest(group, ["@carol_test", "@bob_test"])), 30)
        carol.add_event_handler(on_message, events.NewMessage(chats=[group]))
        carol.add_event_handler(on_deleted, events.MessageDeleted())
        # What Carol's Telethon asks of the server, by request type (its update loop calls through `_call` too).
        carol_asked = []
        original_call = carol._call

        async def recording_call(sender, request, *rest, **options):
            carol_asked.append(type(request).__name__)
            return await original_call(sender, request, *rest, **options)

        carol._call = recording_call
        # Telethon learns the group from the pushes' chats; Carol reads the first dialog list to know it already.
        await asyncio.wait_for(carol.get_dialogs(limit=10), 30)

        listening = await mtcall_updates(args, ready, keyfile, bob_session, 6)
        await asyncio.sleep(3)  # connected and caught up
        await asyncio.wait_for(alice.send_message(group, POSTS[0]), 15)
        bob_first = await read_texts(listening, until=POSTS[0])
        # It ends by itself: closing saves the channel's box (a killed client may not have written it yet).
        await asyncio.wait_for(listening.wait(), 30)
        assert listening.returncode == 0, f"mtcall updates exited {listening.returncode}"
        assert bob_first == [POSTS[0]], f"Bob's first run printed {bob_first}"
        print("ok   our client got p1 pushed in the group", flush=True)

        sent = {POSTS[0]: 1}
        for text in POSTS[1:]:
            sent[text] = (await asyncio.wait_for(alice.send_message(group, text), 15)).id
        await asyncio.wait_for(arrived.wait(), 30)
        await asyncio.sleep(1)  # nothing more may come
        assert seen == POSTS, f"Carol (Telethon) saw {seen}"
        fills = carol_asked.count("GetChannelDifferenceRequest")
        assert fills >= 1, f"Carol's Telethon asked {carol_asked}"
        print(f"ok   Telethon filled the withheld p4 with {fills} getChannelDifference and saw p1..p5 once, in order",
              flush=True)

        # A deletion moves the channel's pts by its count: Telethon's box must follow it without asking again.
        await asyncio.wait_for(alice.delete_messages(group, [sent["p2"]]), 15)
        gone = await asyncio.wait_for(deletions.get(), 15)
        assert gone == [sent["p2"]], f"Carol saw {gone} deleted"
        arrived.clear()
        await asyncio.wait_for(alice.send_message(group, "p6"), 15)
        for _ in range(100):
            if "p6" in seen:
                break
            await asyncio.sleep(0.1)
        assert seen == POSTS + ["p6"], f"Carol (Telethon) saw {seen}"
        assert carol_asked.count("GetChannelDifferenceRequest") == fills, f"Carol's Telethon asked {carol_asked}"
        print("ok   Telethon applied the deletion (updateDeleteChannelMessages, pts_count 1) and p6 with no new gap",
              flush=True)

        again = await mtcall_updates(args, ready, keyfile, bob_session, 6)
        bob_later = await read_texts(again, limit=60)
        await asyncio.wait_for(again.wait(), 30)
        assert bob_later == POSTS[1:] + ["p6"], f"Bob's second run printed {bob_later}"
        print("ok   our client caught up p2..p6 once, in order, after it was closed", flush=True)
    finally:
        for client in (alice, carol):
            await asyncio.wait_for(client.disconnect(), 10)
    with open(log_path) as handle:
        asked = sum("updates.getChannelDifference" in line for line in handle)
    assert asked >= 2, f"the server saw {asked} updates.getChannelDifference"
    print(f"ok   the server answered {asked} updates.getChannelDifference", flush=True)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtserver", required=True)
    parser.add_argument("--mtcall", required=True)
    args = parser.parse_args()
    return await run_against_mtserver(
        "channel interop", args.mtserver,
        ["--dcs", "2", "--timeout", "300", "--faults", f"withhold-push={WITHHELD}",
         "--user", "9996620001:Alice::alice_test", "--user", "9996610002:Bob::bob_test",
         "--user", "9996620003:Carol::carol_test"],
        lambda ready, keyfile, workdir, log_path: scenario(args, ready, keyfile, workdir, log_path))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
