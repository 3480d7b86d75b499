#!/usr/bin/env python3
"""Reactions and chat rights between Telethon 1.45 and our client (`mtcall`) on `mtserver`, each way:

1. Alice on Telethon sends Bob a message; Bob reacts with `mtcall react` (👍, then ❤ in its place, then --remove) and
   Telethon's raw UpdateMessageReactions shows each: the counts, and Bob in recent_reactions.
2. Alice reacts to Bob's message with the raw messages.SendReactionRequest (Telethon 1.45 has no helper for it);
   Bob's `mtcall events` prints a typed messageReactions event under his own id of the message, with Alice in it.
3. In a supergroup Alice made: Bob's `mtcall react` on Alice's post reaches Telethon as UpdateMessageReactions on the
   channel. Bad input is a typed error that changes nothing: `mtcall title` by Bob, no admin, exits 1 with
   CHAT_ADMIN_REQUIRED and Telethon still reads the old title; a reaction on a message that does not exist fails
   with MESSAGE_ID_INVALID for both (Telethon's RPCError, mtcall's exit 1), an emoji Telegram does not offer with
   REACTION_INVALID, and messages.getMessagesReactions then shows the reactions as they were.

Every subprocess and await is bounded in time; mtserver is stopped on the way out.

Usage: reactions_interop.py --mtserver PATH --mtcall PATH
"""
import asyncio
import os
import subprocess
import sys

from telethon import errors, events, functions, types

import message_interop
from message_interop import next_event, ok
from telethon_common import run_against_mtserver, signed_in, tool_arguments

ALICE = ("9996620001", "22222")
BOB = ("9996610002", "11111")


class Mtcall(message_interop.Mtcall):
    """message_interop's mtcall, with `run` for a failure the caller checks."""
    def run(self, *arguments, timeout="20"):
        return subprocess.run([self.path, *self.flags, "--timeout", timeout, *arguments], capture_output=True,
                              text=True, timeout=60)


def counts(reactions):
    """{emoticon or document id: count} of a Telethon MessageReactions."""
    found = {}
    for result in reactions.results:
        key = getattr(result.reaction, "emoticon", None) or getattr(result.reaction, "document_id", None)
        found[key] = result.count
    return found


class Updates:
    """Telethon's raw UpdateMessageReactions, queued."""
    def __init__(self, client):
        self.queue = asyncio.Queue()

        async def put(update):
            self.queue.put_nowait(update)
        client.add_event_handler(put, events.Raw(types.UpdateMessageReactions))

    async def expect(self, match, what):
        async def take():
            while True:
                update = await self.queue.get()
                if match(update):
                    return update
        try:
            return await asyncio.wait_for(take(), 30)
        except asyncio.TimeoutError:
            raise AssertionError(f"Telethon saw no UpdateMessageReactions {what}") from None


async def our_client_reacts(mtcall, alice, seen, bob_id):
    """Part 1."""
    sent = await asyncio.wait_for(alice.send_message("@bob_test", "react to this"), 15)
    history = mtcall("history", "@alice_test", "--limit", "1")
    bobs_id = history[0]["id"]
    assert history[0]["message"] == "react to this", history

    done = mtcall("react", "@alice_test", str(bobs_id), "👍")[0]
    assert done["reactions"]["counts"] == [{"reaction": "👍", "count": 1, "mine": True}], done
    update = await seen.expect(lambda u: u.msg_id == sent.id and counts(u.reactions) == {"👍": 1}, "with 👍")
    assert isinstance(update.peer, types.PeerUser) and update.peer.user_id == bob_id, update.peer
    recent = update.reactions.recent_reactions or []
    assert [r.peer_id.user_id for r in recent] == [bob_id] and not recent[0].my, recent
    assert update.reactions.results[0].chosen_order is None, update.reactions
    ok("mtcall react 👍: Telethon's UpdateMessageReactions counts it under its own id, Bob in recent_reactions")

    mtcall("react", "@alice_test", str(bobs_id), "❤️")
    await seen.expect(lambda u: u.msg_id == sent.id and counts(u.reactions) == {"❤": 1}, "with ❤ in place of 👍")
    done = mtcall("react", "@alice_test", str(bobs_id), "--remove")[0]
    assert done["reactions"]["counts"] == [], done
    await seen.expect(lambda u: u.msg_id == sent.id and counts(u.reactions) == {}, "with the reaction taken back")
    ok("mtcall react ❤ replaces it, react --remove takes it back: Telethon sees both")


async def telethon_reacts(mtcall, alice):
    """Part 2."""
    mtcall("events", timeout="3")  # saves Bob's update box, so the listener catches up on what comes after
    listener = await mtcall.events(45)
    try:
        sent = mtcall("send", "@alice_test", "from swift")[0]
        bobs_id = next(u["id"] for u in sent["updates"] if u["_"] == "updateMessageID")
        # Reactions carry no pts, so getDifference cannot bring one that came before the listener connected: once
        # it prints Bob's own message it has caught up and is subscribed (measured: 2 runs in 12 failed without this,
        # the listener's first call reaching the server after Alice's reaction).
        await next_event(listener, lambda e: e["event"] == "newMessage" and e["message"].get("id") == bobs_id,
                         "Bob's own message", seconds=30)
        hers = None
        for _ in range(50):
            message = (await asyncio.wait_for(alice.get_messages("@bob_test", limit=1), 15))[0]
            if message.message == "from swift":
                hers = message.id
                break
            await asyncio.sleep(0.2)
        assert hers is not None, "Telethon never saw Bob's message"

        await asyncio.wait_for(alice(functions.messages.SendReactionRequest(
            peer="@bob_test", msg_id=hers, reaction=[types.ReactionEmoji(emoticon="🔥")])), 15)
        event = await next_event(listener, lambda e: e["event"] == "messageReactions"
                                 and e["reactions"]["counts"], "Telethon's reaction", seconds=30)
        assert event["msg_id"] == bobs_id, event
        assert event["reactions"]["counts"] == [{"reaction": "🔥", "count": 1, "mine": False}], event
        assert event["reactions"]["recent"] == [{"peer": f"user#{alice.me_id}", "reaction": "🔥"}], event
        assert event["chat"] == f"user#{alice.me_id}", event
        ok("Telethon's raw SendReactionRequest: our messageReactions event under Bob's id, Alice as who reacted")

        await asyncio.wait_for(alice(functions.messages.SendReactionRequest(
            peer="@bob_test", msg_id=hers, reaction=[])), 15)
        event = await next_event(listener, lambda e: e["event"] == "messageReactions"
                                 and not e["reactions"]["counts"], "Telethon taking it back", seconds=30)
        assert event["msg_id"] == bobs_id, event
        ok("Telethon's SendReactionRequest with no reaction: our event shows none")
    finally:
        if listener.returncode is None:
            listener.terminate()
        await asyncio.wait_for(listener.wait(), 15)


async def in_a_group(mtcall, alice, seen, bob_id):
    """Part 3."""
    made = await asyncio.wait_for(alice(functions.channels.CreateChannelRequest(
        title="Club", about="", megagroup=True)), 15)
    group = made.chats[0]
    await asyncio.wait_for(alice(functions.channels.InviteToChannelRequest(channel=group, users=["@bob_test"])), 15)
    post = await asyncio.wait_for(alice.send_message(group, "vote"), 15)
    chat = f"channel:{group.id}"

    done = mtcall.run("title", chat, "Bob's club")
    assert done.returncode == 1 and "CHAT_ADMIN_REQUIRED" in done.stderr, (done.returncode, done.stderr)
    entity = await asyncio.wait_for(alice.get_entity(types.PeerChannel(group.id)), 15)
    assert entity.title == "Club", entity.title
    ok("mtcall title by a member without change_info: exit 1 with CHAT_ADMIN_REQUIRED; the title is unchanged")

    mtcall("react", chat, str(post.id), "🎉")
    update = await seen.expect(lambda u: isinstance(u.peer, types.PeerChannel) and u.msg_id == post.id
                               and counts(u.reactions) == {"🎉": 1}, "in the group")
    assert [r.peer_id.user_id for r in update.reactions.recent_reactions or []] == [bob_id], update.reactions
    ok("mtcall react in a supergroup: Telethon, the author, sees UpdateMessageReactions on the channel")

    # Telethon raises a class per error name; its `message` is the class's HTTP-style group (BAD_REQUEST), so the
    # name is checked through the class Telethon maps it to.
    for reaction, message_id, expected in ((types.ReactionEmoji(emoticon="👍"), 9999, errors.MessageIdInvalidError),
                                           (types.ReactionEmoji(emoticon="🦖"), post.id, errors.ReactionInvalidError)):
        try:
            await asyncio.wait_for(alice(functions.messages.SendReactionRequest(
                peer=group, msg_id=message_id, reaction=[reaction])), 15)
            raise AssertionError(f"Telethon's reaction {reaction.emoticon} on {message_id} was accepted")
        except errors.RPCError as error:
            assert isinstance(error, expected), (type(error).__name__, error)
    done = mtcall.run("react", chat, "9999", "👍")
    assert done.returncode == 1 and "MESSAGE_ID_INVALID" in done.stderr, (done.returncode, done.stderr)
    now = await asyncio.wait_for(alice(functions.messages.GetMessagesReactionsRequest(peer=group, id=[post.id])), 15)
    update = next(u for u in now.updates if isinstance(u, types.UpdateMessageReactions))
    assert counts(update.reactions) == {"🎉": 1}, update.reactions
    ok("a reaction on a message that does not exist (both clients) and one Telegram does not offer: typed errors; "
       "getMessagesReactions shows the reactions unchanged")


async def scenario(ready, keyfile, workdir, log_path):
    mtcall = Mtcall(TOOLS.mtcall, ready, keyfile, os.path.join(workdir, "bob.sqlite"))
    me = mtcall("--phone", BOB[0], "--code", BOB[1], "users.getUsers", '{"id": [{"_": "inputUserSelf"}]}')[0][0]
    bob_id = int(me["id"])
    alice = await signed_in(ready, *ALICE)
    try:
        alice.me_id = (await asyncio.wait_for(alice.get_me(), 15)).id
        seen = Updates(alice)
        await our_client_reacts(mtcall, alice, seen, bob_id)
        await telethon_reacts(mtcall, alice)
        await in_a_group(mtcall, alice, seen, bob_id)
    finally:
        await asyncio.wait_for(alice.disconnect(), 10)


if __name__ == "__main__":
    TOOLS = tool_arguments()
    sys.exit(asyncio.run(run_against_mtserver(
        "reactions interop", TOOLS.mtserver,
        ["--dcs", "2", "--timeout", "300", "--user", f"{ALICE[0]}:Alice::alice_test",
         "--user", f"{BOB[0]}:Bob::bob_test"], scenario)))
