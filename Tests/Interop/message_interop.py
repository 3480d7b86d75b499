#!/usr/bin/env python3
"""Message operations between Telethon 1.45 and our client (`mtcall`) on `mtserver`, each way:

1. Alice on Telethon sends Bob a message, edits it, forwards it to him and deletes it for both; Bob's
   `mtcall events` prints each as a typed event: newMessage, editedMessage, a newMessage whose `fwd_from` names
   Alice, deletedMessages with Bob's id of it.
2. Bob on mtcall sends, edits (`mtcall edit`), forwards (`forward`), pins (`pin`), reads (`read`) and deletes
   (`delete`); Telethon sees each: NewMessage, MessageEdited, a NewMessage with `fwd_from`, UpdatePinnedMessages,
   MessageRead of her outbox, MessageDeleted.

Every subprocess and await is bounded in time; mtserver is stopped on the way out.

Usage: message_interop.py --mtserver PATH --mtcall PATH
"""
import asyncio
import json
import os
import subprocess
import sys

from telethon import events, types

from telethon_common import run_against_mtserver, signed_in, tool_arguments

ALICE = ("9996620001", "22222")
BOB = ("9996610002", "11111")


class Mtcall:
    def __init__(self, path, ready, keyfile, session):
        self.path = path
        self.flags = ["--server", f"127.0.0.1:{ready['ports']['2']}", "--rsa-key", keyfile, "--session", session]

    def __call__(self, *arguments, timeout="20"):
        done = subprocess.run([self.path, *self.flags, "--timeout", timeout, *arguments], capture_output=True,
                              text=True, timeout=60)
        if done.returncode != 0:
            raise AssertionError(f"mtcall {' '.join(arguments)}: exit {done.returncode}: {done.stderr.strip()}")
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    async def events(self, seconds):
        return await asyncio.create_subprocess_exec(self.path, *self.flags, "--timeout", str(seconds), "events",
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def next_event(process, match, what, seconds=20):
    """The first JSON line of `process` that `match` accepts, within `seconds`."""
    async def read():
        while True:
            line = await process.stdout.readline()
            if not line:
                raise AssertionError(f"mtcall ended before {what}: {(await process.stderr.read()).decode()}")
            event = json.loads(line)
            if match(event):
                return event
    return await asyncio.wait_for(read(), seconds)


def ok(name):
    print(f"ok   {name}", flush=True)


async def telethon_acts(mtcall, alice, bob_id):
    """Part 1: Alice acts on Telethon, Bob's `mtcall events` sees it."""
    # A first short run saves Bob's update box, so the next run catches up on whatever it starts after.
    mtcall("events", timeout="3")
    listener = await mtcall.events(40)
    try:
        sent = await asyncio.wait_for(alice.send_message("@bob_test", "from telethon"), 15)
        new = await next_event(listener, lambda e: e["event"] == "newMessage"
                               and e["message"].get("message") == "from telethon", "the new message")
        bobs_id = new["message"]["id"]
        assert new["sender"] == new["chat"] and not new["outgoing"], new
        ok("our client sees Telethon's message as newMessage")

        await asyncio.wait_for(alice.edit_message("@bob_test", sent, "edited by telethon"), 15)
        edited = await next_event(listener, lambda e: e["event"] == "editedMessage", "the edit")
        assert edited["message"]["id"] == bobs_id and edited["message"]["message"] == "edited by telethon", edited
        ok("our client sees Telethon's edit as editedMessage, under its own id")

        await asyncio.wait_for(alice.forward_messages("@bob_test", sent), 15)
        forwarded = await next_event(listener, lambda e: e["event"] == "newMessage"
                                     and e["message"].get("fwd_from") is not None, "the forward")
        header = forwarded["message"]["fwd_from"]
        assert forwarded["message"]["message"] == "edited by telethon", forwarded
        assert header["from_id"] == {"_": "peerUser", "user_id": str(alice.me_id)}, header
        assert forwarded["message"]["id"] > bobs_id, forwarded
        ok("our client sees Telethon's forward as a newMessage with fwd_from naming Alice")

        await asyncio.wait_for(alice.delete_messages("@bob_test", [sent.id], revoke=True), 15)
        deleted = await next_event(listener, lambda e: e["event"] == "deletedMessages", "the deletion")
        assert [int(i) for i in deleted["ids"]] == [int(bobs_id)] and deleted["channel"] is None, deleted
        ok("our client sees Telethon's deletion as deletedMessages with its own id")
    finally:
        if listener.returncode is None:
            listener.terminate()
        await asyncio.wait_for(listener.wait(), 15)


async def our_client_acts(mtcall, alice):
    """Part 2: Bob acts through mtcall's message commands, Telethon sees each."""
    queue = asyncio.Queue()

    async def put(event):
        queue.put_nowait(event)

    alice.add_event_handler(put, events.NewMessage(incoming=True))
    alice.add_event_handler(put, events.MessageEdited(incoming=True))
    alice.add_event_handler(put, events.MessageDeleted())
    alice.add_event_handler(put, events.MessageRead(inbox=False))
    alice.add_event_handler(put, events.Raw(types.UpdatePinnedMessages))

    async def expect(kind, match=lambda _: True):
        async def take():
            while True:
                event = await queue.get()
                if isinstance(event, kind) and match(event):
                    return event
        return await asyncio.wait_for(take(), 20)

    sent = mtcall("send", "@alice_test", "from swift")[0]
    bobs_id = next(u["id"] for u in sent["updates"] if u["_"] == "updateMessageID")
    new = await expect(events.NewMessage.Event, lambda e: e.message.message == "from swift")
    hers = new.message.id
    ok("Telethon receives our message")

    edited = mtcall("edit", "@alice_test", str(bobs_id), "<b>edited</b> by swift", "--html")[0]
    assert edited["message"] == "edited by swift" and edited.get("edit_date") is not None, edited
    event = await expect(events.MessageEdited.Event)
    assert event.message.id == hers and event.message.message == "edited by swift", event.message
    assert isinstance(event.message.entities[0], types.MessageEntityBold), event.message.entities
    ok("mtcall edit: Telethon sees MessageEdited with the bold entity")

    forwarded = mtcall("forward", "@alice_test", str(bobs_id), "--to", "@alice_test")[0]
    assert forwarded["fwd_from"] is not None, forwarded
    event = await expect(events.NewMessage.Event, lambda e: e.message.fwd_from is not None)
    assert event.message.message == "edited by swift" and event.message.id != hers, event.message
    dropped = mtcall("forward", "@alice_test", str(bobs_id), "--to", "@alice_test", "--drop-author")[0]
    assert dropped.get("fwd_from") is None, dropped
    event = await expect(events.NewMessage.Event, lambda e: e.message.fwd_from is None)
    assert event.message.message == "edited by swift", event.message
    ok("mtcall forward: Telethon sees the forward with fwd_from, and with --drop-author without it")

    mtcall("pin", "@alice_test", str(bobs_id))
    event = await expect(types.UpdatePinnedMessages, lambda u: u.pinned)
    assert event.messages == [hers], event
    ok("mtcall pin: Telethon sees UpdatePinnedMessages for its own id")

    mine = await asyncio.wait_for(alice.send_message("@bob_test", "read this"), 15)
    mtcall("read", "@alice_test")
    event = await expect(events.MessageRead.Event)
    assert event.max_id >= mine.id, event.max_id
    ok("mtcall read: Telethon sees its outbox read")

    mtcall("delete", "@alice_test", str(bobs_id))
    event = await expect(events.MessageDeleted.Event)
    assert event.deleted_ids == [hers], event.deleted_ids
    ok("mtcall delete: Telethon sees MessageDeleted with its own id")


async def scenario(ready, keyfile, workdir, log_path):
    mtcall = Mtcall(TOOLS.mtcall, ready, keyfile, os.path.join(workdir, "bob.sqlite"))
    me = mtcall("--phone", BOB[0], "--code", BOB[1], "users.getUsers", '{"id": [{"_": "inputUserSelf"}]}')[0][0]
    alice = await signed_in(ready, *ALICE)
    try:
        alice.me_id = (await asyncio.wait_for(alice.get_me(), 15)).id
        await telethon_acts(mtcall, alice, me["id"])
        await our_client_acts(mtcall, alice)
    finally:
        await asyncio.wait_for(alice.disconnect(), 10)


if __name__ == "__main__":
    TOOLS = tool_arguments()
    sys.exit(asyncio.run(run_against_mtserver(
        "message interop", TOOLS.mtserver,
        ["--dcs", "2", "--timeout", "300", "--user", f"{ALICE[0]}:Alice::alice_test",
         "--user", f"{BOB[0]}:Bob::bob_test"], scenario)))
