#!/usr/bin/env python3
"""Bots between Telethon 1.45 and our client (`mtcall`) on `mtserver`, each way:

1. Telethon's bot answers our user: Alice (`mtcall send`) writes to Telethon's bot, which replies with an inline
   keyboard (Button.inline); `mtcall press --button 0,0` presses it, Telethon's CallbackQuery handler answers with
   event.answer(alert=True), and mtcall prints that answer.
2. Our bot (`mtcall bot`) answers Telethon's user: Bob's inline_query to it gets our two articles, and clicking one
   sends it to Alice via the bot (`mtcall history` shows it with via_bot_id); Bob writes to our bot, gets the echo
   with its inline keyboard, clicks the button (message.click) and gets our bot's answer.

Every subprocess and await is bounded in time; mtserver and mtcall bot are stopped on the way out.

Usage: bots_interop.py --mtserver PATH --mtcall PATH
"""
import asyncio
import json
import os
import sys

from telethon import Button, TelegramClient, events
from telethon.sessions import MemorySession

from message_interop import next_event, ok
from telethon_common import run_against_mtserver, signed_in, tool_arguments

ALICE = ("9996620001", "22222")
BOB = ("9996620002", "22222")
OUR_BOT = "5151:our-bot-secret-token"
TELETHON_BOT = "6161:telethon-bot-secret"


class Mtcall:
    def __init__(self, path, ready, keyfile, session):
        self.path = path
        self.flags = ["--server", f"127.0.0.1:{ready['ports']['2']}", "--rsa-key", keyfile, "--session", session]

    async def __call__(self, *arguments, timeout="20"):
        process = await asyncio.create_subprocess_exec(self.path, *self.flags, "--timeout", timeout, *arguments,
                                                       stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 60)
        if process.returncode != 0:
            raise AssertionError(f"mtcall {' '.join(arguments)}: exit {process.returncode}: {err.decode().strip()}")
        return [json.loads(line) for line in out.decode().splitlines() if line.strip()]

    async def start(self, *arguments, timeout="90"):
        return await asyncio.create_subprocess_exec(self.path, *self.flags, "--timeout", timeout, *arguments,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def telethon_bot(ready):
    client = TelegramClient(MemorySession(), api_id=1, api_hash="0" * 32, timeout=10, connection_retries=3)
    client.session.set_dc(2, "127.0.0.1", ready["ports"]["2"])
    await asyncio.wait_for(client.start(bot_token=TELETHON_BOT), 30)
    return client


async def telethons_bot_answers_us(alice, bot):
    """Part 1: our user presses Telethon's bot's button and gets its answer."""
    pressed = asyncio.get_running_loop().create_future()

    async def reply(event):
        await event.respond("choose", buttons=[[Button.inline("ok", b"ok-data"), Button.url("docs", "https://t.me")]])

    async def answer(event):
        if not pressed.done():
            pressed.set_result(event.data)
        await event.answer("from telethon", alert=True)

    bot.add_event_handler(reply, events.NewMessage(incoming=True, pattern="hi bot"))
    bot.add_event_handler(answer, events.CallbackQuery())
    await alice("send", "@tele_bot", "hi bot")

    async def keyboard_arrived():
        for _ in range(60):
            history = await alice("history", "@tele_bot", "--limit", "1")
            if history and history[0].get("message") == "choose":
                return history[0]
            await asyncio.sleep(0.5)
        raise AssertionError("the bot's keyboard never arrived")
    message = await asyncio.wait_for(keyboard_arrived(), 40)
    rows = message["reply_markup"]["rows"]
    assert [b["text"] for b in rows[0]["buttons"]] == ["ok", "docs"], rows
    ok("our client gets Telethon's bot's inline keyboard")

    answer_line = (await alice("press", "@tele_bot", str(message["id"]), "--button", "0,0"))[0]
    assert await asyncio.wait_for(pressed, 15) == b"ok-data"
    assert answer_line == {"message": "from telethon", "alert": True, "url": None, "cache_time": 0}, answer_line
    ok("mtcall press: Telethon's CallbackQuery.answer(alert=True) reaches our client")


async def our_bot_answers_telethon(alice, bob, our_bot):
    """Part 2: Telethon's user asks our bot inline, and clicks our bot's button."""
    results = await asyncio.wait_for(bob.inline_query("our_bot", "hello"), 30)
    assert [r.title for r in results] == ["echo hello", "upper case"], [r.title for r in results]
    assert results[1].description == "HELLO", results[1].description
    await next_event(our_bot, lambda e: e["event"] == "answeredInline" and e["query"] == "hello", "the inline answer")
    ok("our bot answers Telethon's inline_query with its articles")

    await asyncio.wait_for(results[1].click("@alice_test"), 30)
    history = await alice("history", "@bob_test", "--limit", "1")
    assert history[0]["message"] == "HELLO" and history[0].get("via_bot_id") is not None, history
    ok("Telethon sends our bot's result to our user, via the bot")

    arrived = asyncio.get_running_loop().create_future()

    async def echoed(event):
        if event.message.buttons and not arrived.done():
            arrived.set_result(event.message)

    bob.add_event_handler(echoed, events.NewMessage(incoming=True, from_users="our_bot"))
    await asyncio.wait_for(bob.send_message("our_bot", "hi from telethon"), 15)
    message = await asyncio.wait_for(arrived, 30)
    assert message.message == "echo: hi from telethon", message.message
    assert [b.text for row in message.buttons for b in row] == ["press", "about bots"], message.buttons
    ok("Telethon gets our bot's message with its inline keyboard")

    answer = await asyncio.wait_for(message.click(0), 30)
    assert answer.message.startswith("you pressed: pressed ") and not answer.alert, answer
    await next_event(our_bot, lambda e: e["event"] == "answeredCallback", "the callback answer")
    ok("Telethon's message.click gets our bot's answer")


async def scenario(ready, keyfile, workdir, log_path):
    alice = Mtcall(TOOLS.mtcall, ready, keyfile, os.path.join(workdir, "alice.sqlite"))
    await alice("--phone", ALICE[0], "--code", ALICE[1], "users.getUsers", '{"id": [{"_": "inputUserSelf"}]}')
    ours = Mtcall(TOOLS.mtcall, ready, keyfile, os.path.join(workdir, "bot.sqlite"))
    await ours("login", "--bot-token", OUR_BOT)
    our_bot = await ours.start("bot")
    bot = bob = None
    try:
        await next_event(our_bot, lambda e: e["event"] == "ready", "ready")
        bot = await telethon_bot(ready)
        await telethons_bot_answers_us(alice, bot)
        bob = await signed_in(ready, *BOB)
        await our_bot_answers_telethon(alice, bob, our_bot)
    finally:
        if our_bot.returncode is None:
            our_bot.terminate()
        await asyncio.wait_for(our_bot.wait(), 15)
        for client in (bot, bob):
            if client is not None:
                await asyncio.wait_for(client.disconnect(), 10)


if __name__ == "__main__":
    TOOLS = tool_arguments()
    sys.exit(asyncio.run(run_against_mtserver(
        "bots interop", TOOLS.mtserver,
        ["--dcs", "2", "--timeout", "300", "--user", f"{ALICE[0]}:Alice::alice_test",
         "--user", f"{BOB[0]}:Bob::bob_test", "--bot", f"{OUR_BOT}:our_bot", "--bot", f"{TELETHON_BOT}:tele_bot"],
        scenario, limit=120)))
